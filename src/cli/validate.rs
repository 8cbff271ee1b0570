//! `hyraid validate`: the file's schema and semantic rules, every error with file:line:col, as
//! text or as JSON for editors and CI; `-` reads the file from standard input.

use super::load;
use crate::config::{ConfigErrors, Desired};
use crate::error::Error;
use serde::Serialize;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct ValidateArgs {
    /// hyraid.yaml, or `-` for standard input.
    file: PathBuf,
    /// `text`: one line per error (file:line:col: field: message, then the fix); `json`: one
    /// document with every error's position, field, message and fix.
    #[arg(long, value_enum, default_value = "text")]
    format: ValidateFormat,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ValidateFormat {
    Text,
    Json,
}

/// `validate --format json`: `valid`, the counts when valid, every error otherwise.
#[derive(Serialize)]
struct Report<'a> {
    file: String,
    valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    counts: Option<Counts>,
    errors: &'a [crate::config::ConfigError],
}

#[derive(Serialize)]
struct Counts {
    disks: usize,
    mirrors: usize,
    volume_groups: usize,
    logical_volumes: usize,
}

impl Counts {
    fn of(d: &Desired) -> Counts {
        Counts {
            disks: d.disks.len(),
            mirrors: d.mirrors.len(),
            volume_groups: d.volume_groups.len(),
            logical_volumes: d.volume_groups.values().map(|v| v.lvs.len()).sum(),
        }
    }
}

pub(super) fn run(a: ValidateArgs) -> Result<u8, Error> {
    let name = if a.file.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        a.file.display().to_string()
    };
    let loaded = load(&a.file);
    if a.format == ValidateFormat::Json {
        let (counts, errors) = match loaded {
            Ok(d) => (Some(Counts::of(&d)), vec![]),
            Err(Error::Config(ConfigErrors(e))) => (None, e),
            Err(e) => return Err(e),
        };
        let valid = counts.is_some();
        let r = Report {
            file: name,
            valid,
            counts,
            errors: &errors,
        };
        super::out(serde_json::to_string_pretty(&r).unwrap() + "\n")?;
        return Ok(if valid { 0 } else { 1 });
    }
    let c = Counts::of(&loaded?);
    let n = |count: usize, one: &str| match count {
        1 => format!("1 {one}"),
        _ => format!("{count} {one}s"),
    };
    super::out(format!(
        "{name}: valid ({}, {}, {}, {})\n",
        n(c.disks, "disk"),
        n(c.mirrors, "mirror"),
        n(c.volume_groups, "volume group"),
        n(c.logical_volumes, "logical volume")
    ))?;
    Ok(0)
}
