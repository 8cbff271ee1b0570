//! `hyraid status`: health and lints of the machine, with what the file asks and hyraid refuses.

use super::{load, machine};
use crate::apply;
use crate::error::Error;
use crate::plan::{Policy, plan};
use crate::status as lint;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct StatusArgs {
    /// The machine's file (adds checks of the disks and drive caches it names).
    file: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: StatusFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StatusFormat {
    Text,
    Json,
}

pub(super) fn run(sim: &Option<PathBuf>, a: StatusArgs) -> Result<u8, Error> {
    let d = a.file.as_deref().map(load).transpose()?;
    let m = machine(sim)?;
    let obs = apply::observe_for(m.host(), d.as_ref())?;
    // mdadm reads /etc/mdadm.conf when it exists, else /etc/mdadm/mdadm.conf.
    let conf = ["/etc/mdadm.conf", "/etc/mdadm/mdadm.conf"]
        .iter()
        .find_map(|p| m.host().read_file(p).ok());
    let mut findings = lint::status(&obs, d.as_ref(), conf.as_deref());
    if let Some(d) = &d {
        // What the file asks and hyraid refuses is part of the machine's health.
        match plan(d, &obs, Policy::default()) {
            Ok(p) => findings.extend(lint::refusals(&p)),
            Err(e) => findings.push(lint::Finding {
                severity: lint::Severity::Error,
                object: "file".into(),
                message: e.to_string(),
                reason: "hyraid cannot plan this file on this machine".into(),
                fix: "see the message; `hyraid plan` shows the same".into(),
            }),
        }
        findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.object.cmp(&b.object)));
    }
    let code = lint::exit_code(&findings);
    match a.format {
        StatusFormat::Text => print!("{}", lint::render_text(&findings)),
        StatusFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "exit": code, "findings": findings })
            )
            .unwrap()
        ),
    }
    Ok(code)
}
