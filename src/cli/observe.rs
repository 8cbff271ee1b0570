//! `hyraid observe`: the observed state as JSON (the snapshot `--sim` loads), and with
//! `--capture` every exchange with the machine; `hyraid import`: a configuration of what is there.

use super::{machine, write_out};
use crate::error::{Error, msg};
use crate::host::record::Recorder;
use crate::observe::capture::Capture;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct ObserveArgs {
    /// Write the snapshot to FILE instead of standard output.
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// Also record every command, file and link hyraid read, with the answers, into FILE
    /// (for parser fixtures and simulator parity tests).
    #[arg(long, value_name = "FILE")]
    capture: Option<PathBuf>,
}

pub(super) fn run(sim: &Option<PathBuf>, a: ObserveArgs) -> Result<u8, Error> {
    let m = machine(sim)?;
    let recorder = Recorder::new(m.host());
    let obs = crate::machine::observe_for(&recorder, None)?;
    if let Some(path) = a.capture {
        let cap = Capture {
            hostname: m.host().hostname(),
            exchanges: recorder.take_exchanges(),
            observed: obs.clone(),
        };
        write_out(&path, &(serde_json::to_string_pretty(&cap).unwrap() + "\n"))?;
    }
    let text = serde_json::to_string_pretty(&obs).unwrap() + "\n";
    match a.out {
        Some(p) => write_out(&p, &text)?,
        None => super::out(&text)?,
    }
    Ok(0)
}

#[derive(clap::Args, Debug)]
pub(super) struct ImportArgs {
    /// Write to FILE instead of standard output (an existing file is never overwritten).
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
}

pub(super) fn import(sim: &Option<PathBuf>, a: ImportArgs) -> Result<u8, Error> {
    let m = machine(sim)?;
    let obs = crate::machine::observe_for(m.host(), None)?;
    let mut imp = crate::import::import(&obs);
    imp.boot = crate::status::boot_redundancy(&obs)
        .into_iter()
        .map(|f| format!("{}: {} (fix: {})", f.message, f.reason, f.fix))
        .collect();
    let text = crate::import::to_yaml(&imp);
    for s in &imp.skipped {
        super::err_line(&format!("not imported: {s}"));
    }
    for n in &imp.notes {
        super::err_line(&format!("note: {n}"));
    }
    for b in &imp.boot {
        super::err_line(&format!("boot: {b}"));
    }
    match a.out {
        Some(p) if p.exists() => {
            return Err(msg(format!(
                "{} exists; hyraid import does not overwrite files",
                p.display()
            )));
        }
        Some(p) => write_out(&p, &text)?,
        None => super::out(&text)?,
    }
    Ok(0)
}
