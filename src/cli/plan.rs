//! `hyraid plan`: observe, plan, print; with the lints of the machine as the plan leaves it, and
//! the saved plan (`-o`) or JSON with each touched object before and after.

use super::{color, early_reads, machine, write_out};
use crate::apply;
use crate::error::Error;
use crate::machine::Lock;
use crate::observe::EarlyReads;
use crate::plan::planfile;
use crate::plan::{Plan, Policy};
use crate::render::{self, Format};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct PlanArgs {
    /// hyraid.yaml (`-` reads it from standard input).
    file: PathBuf,
    /// Also save the plan as JSON (for `hyraid apply PLAN.json` or `hyraid show`).
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// How to print the plan: text, markdown (for a pull request), json, or shell (the exact
    /// commands, as a script).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Exit 0 when the machine matches the file, 2 when there are changes or it is not yet as the file
    /// says (a mirror rebuilding), 1 on error or when anything is refused.
    #[arg(long)]
    detailed_exitcode: bool,
    /// Allow the steps that destroy data or reduce redundancy for good (a disk wiped, a
    /// filesystem or LV or array removed or re-created, an LV shrunk, a member removed); without
    /// it they are refused. Never allows touching anything in use.
    #[arg(long)]
    allow_destroy: bool,
    /// Put disk NAME (the file's name) back into its mirror although it left it without
    /// hyraid: md failed it, or it was missing when the array started. Only for a transient
    /// cause (a loose cable, a power cut) and a clean `smartctl -a`; a disk md failed for I/O
    /// errors is replaced instead (name the new disk's id under `disks.NAME`). Repeatable.
    #[arg(long = "re-add", value_name = "NAME")]
    re_add: Vec<String>,
}

pub(super) fn run(sim: &Option<PathBuf>, a: PlanArgs, early: EarlyReads) -> Result<u8, Error> {
    // A file on standard input may take any time to come: the machine is read after it.
    let early = match a.file.as_os_str() == "-" {
        true => EarlyReads::default(),
        false => early.or_else(|| early_reads(sim)),
    };
    let (d, config) = super::input::read_config(&a.file)?;
    crate::timings::mark("file read");
    let m = machine(sim)?;
    if let Some(pid) = Lock::holder(&m.lock_path()) {
        super::err_line(&format!(
            "warning: an apply (pid {pid}) is running on this machine; this plan shows the machine in the middle of it — plan again when it has finished"
        ));
    }
    let obs = crate::machine::observe_started_for(m.host(), Some(&d), early)?;
    let policy = Policy {
        allow_destroy: a.allow_destroy,
        re_add: a.re_add,
    };
    crate::timings::mark("observed");
    let mut p = apply::preview::review(&d, &obs, policy)?;
    // A saved plan (and the JSON, which can be saved) carries the file it was made from.
    p.config = Some(config);
    crate::timings::mark("planned, with the lints after it");
    if let Some(o) = a.out {
        write_out(&o, &planfile::json(&p))?;
    }
    if a.format == Format::Json {
        // For tools (Ansible's diff mode): each touched object before and after, from a
        // simulated run of the plan on a copy of what was observed.
        let mut v = planfile::json_value(&p);
        if let Some(objects) = apply::preview::object_states(&p, &obs) {
            v["objects"] = serde_json::to_value(objects).expect("serializes");
        }
        super::out(serde_json::to_string_pretty(&v).expect("serializes") + "\n")?;
    } else {
        super::out(render::render(
            &p,
            a.format,
            a.format == Format::Text && color(),
        ))?;
    }
    Ok(exit_code(&p, a.detailed_exitcode))
}

/// `plan`'s exit status: 1 when anything is refused (with or without --detailed-exitcode: a
/// refusal is never "no changes"); with --detailed-exitcode, 2 when there are steps or the
/// machine is not yet as the file says (a mirror rebuilding).
fn exit_code(p: &Plan, detailed_exitcode: bool) -> u8 {
    if !p.refused.is_empty() {
        1
    } else if detailed_exitcode && !p.matches() {
        2
    } else {
        0
    }
}
