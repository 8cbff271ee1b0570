//! `hyraid status`: health and lints of the machine, with what the file asks and hyraid refuses.

use super::{load, machine};
use crate::apply;
use crate::error::Error;
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
    let conf = lint::MDADM_CONF_PATHS
        .iter()
        .find_map(|p| m.host().read_file(p).ok());
    let findings = lint::check(&obs, d.as_ref(), conf.as_deref());
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
