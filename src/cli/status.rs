//! `hyraid status`: health and lints of the machine, with what the file asks and hyraid refuses.

use super::{early_reads, load, machine};
use crate::error::Error;
use crate::observe::EarlyReads;
use crate::status as lint;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct StatusArgs {
    /// The machine's file (adds checks of the disks and drive caches it names).
    file: Option<PathBuf>,
    /// prometheus: node_exporter's textfile format (metrics with HELP and TYPE lines).
    #[arg(long, value_enum, default_value = "text")]
    format: StatusFormat,
    /// Write the output to this file instead of stdout, atomically (a temporary file in the same
    /// directory renamed over it), so node_exporter's textfile collector never reads half of it.
    #[arg(long, short = 'o', value_name = "PATH")]
    output: Option<PathBuf>,
    /// Send what this status finds (and the drift, with a file) where the alerts of hyraid's
    /// settings go: each problem when new, again when its reminder is due, once more when
    /// resolved (the drift unit's use).
    #[arg(long)]
    alert: bool,
    /// With --sim and --alert: write the simulated machine (what was sent, its ledger) back to
    /// its snapshot.
    #[arg(long, requires = "alert")]
    sim_write: bool,
    /// Also write node_exporter's textfile (the prometheus format) to this file, atomically, from
    /// the same observation, whatever the health: one run gives the monitoring its metrics and
    /// the caller the status and its exit code (the drift unit's use).
    #[arg(long, value_name = "PATH")]
    textfile: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StatusFormat {
    Text,
    Json,
    Prometheus,
}

pub(super) fn run(sim: &Option<PathBuf>, a: StatusArgs, early: EarlyReads) -> Result<u8, Error> {
    // A file on standard input may take any time to come: the machine is read after it.
    let early = match a.file.as_deref().is_some_and(|f| f.as_os_str() == "-") {
        true => EarlyReads::default(),
        false => early.or_else(|| early_reads(sim)),
    };
    if let (Some(t), Some(o)) = (&a.textfile, &a.output)
        && t == o
    {
        return Err(crate::error::msg(format!(
            "--textfile and --output are both {}: give the textfile its own path",
            t.display()
        )));
    }
    let d = a.file.as_deref().map(load).transpose()?;
    if a.sim_write && sim.is_none() {
        return Err(crate::error::msg(
            "--sim-write needs --sim SNAPSHOT: it writes the simulated machine back to its snapshot",
        ));
    }
    let m = machine(sim)?;
    let obs = crate::machine::observe_started_for(m.host(), d.as_ref(), early)?;
    let conf = lint::MDADM_CONF_PATHS
        .iter()
        .find_map(|p| m.host().read_file(p).ok());
    let (findings, plan) = lint::check(&obs, d.as_ref(), conf.as_deref());
    let records = lint::Records::read(m.host(), &obs);
    let now = crate::history::now_secs();
    let mut health = lint::Health::read(m.host(), &obs, d.as_ref());
    let mut findings = lint::with_records(findings, &obs, d.as_ref(), &records, &health, now);
    // Where the alerts would go, said before anything is sent: none is a finding of its own.
    if a.alert {
        findings.extend(super::alert::sink_findings(m.host(), d.as_ref())?);
    }
    // The drives' counters as first and last seen, for the next run to compare (as root on
    // the machine; a simulated one keeps them only with --sim-write).
    if m.host().is_root()
        && let Err(e) = health.remember(m.host(), now)
    {
        super::err_line(&format!("warning: the drives' counters were not kept: {e}"));
    }
    let code = lint::exit_code(&findings);
    let text = match a.format {
        StatusFormat::Text => lint::render_text(&findings),
        StatusFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(
                &serde_json::json!({ "exit": code, "findings": findings })
            )
            .unwrap()
        ),
        StatusFormat::Prometheus => {
            lint::render_prometheus(&obs, plan.as_ref(), &findings, &records, &health)
        }
    };
    // The textfile is written even when the output cannot be, and the output even when the
    // textfile cannot be: the first failure is the command's.
    let textfile = a.textfile.as_deref().map(|path| {
        write_atomically(
            path,
            &lint::render_prometheus(&obs, plan.as_ref(), &findings, &records, &health),
        )
    });
    let output = match &a.output {
        None => super::out(&text),
        Some(path) => write_atomically(path, &text),
    };
    // The alerts go even when the output cannot be written: a full disk is no reason to stay
    // silent about a failed disk.
    if a.alert {
        match super::alert::findings(m.host(), &findings, plan.as_ref()) {
            Ok(report) => {
                for l in report.lines() {
                    super::err_line(l);
                }
            }
            Err(e) => super::err_line(&format!("alerts: {}", e.report())),
        }
        if let (super::Machine::Sim(h, path), true) = (&m, a.sim_write) {
            super::write_out(
                path,
                &(serde_json::to_string_pretty(&h.world()).unwrap() + "\n"),
            )?;
        }
    }
    textfile.transpose()?;
    output?;
    Ok(code)
}

/// `text` into `path` through a temporary file beside it, renamed over it.
fn write_atomically(path: &std::path::Path, text: &str) -> Result<(), Error> {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string());
    let tmp = path.with_file_name(format!(
        ".{}.{}",
        name.unwrap_or_else(|| "hyraid-status".into()),
        std::process::id()
    ));
    let io = |e: std::io::Error| {
        crate::error::msg(format!(
            "cannot write {}: {e} (its directory must exist and be writable)",
            path.display()
        ))
    };
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}
