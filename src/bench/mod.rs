//! `hyraid bench`: the standard fio matrix against a file on a mounted filesystem or, with
//! `--allow-destroy`, a raw block device; a table of IOPS, MiB/s and latency per job, a JSON
//! report, and side-by-side comparison of reports. When the target is built from other devices
//! (an md array's members, an LV's PVs), the reads and writes each of them served during each job
//! are recorded from /sys/class/block counters, which shows write-mostly at work (the HDD member
//! serves no reads).

pub mod fio;
pub mod plot;
mod report;
mod run;
mod target;
#[cfg(test)]
mod tests;

pub use report::{compare, table};
pub use run::{io_counters, run};
pub use target::{Prepared, prepare};

use crate::host::{Host, HostError};
use fio::{FioError, Job, Measured};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the report format.
pub const REPORT_FORMAT: u32 = 1;

#[derive(Debug, Clone)]
pub struct Options {
    /// A directory on a mounted filesystem, or a block device.
    pub target: String,
    /// Bytes of the file (or of the device's first bytes) the jobs use.
    pub size: u64,
    pub runtime_s: u32,
    pub ramp_s: u32,
    /// fio's `--loops`: each job runs over the whole size this many times (at most `runtime_s`)
    /// instead of for a time.
    pub loops: Option<u32>,
    pub jobs: Vec<Job>,
    pub allow_destroy: bool,
    /// Name of the run in comparisons (default: the target).
    pub label: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    Device,
}

/// I/O one md member served during one job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberIo {
    pub reads: u64,
    pub writes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    pub rw: String,
    pub bs: String,
    pub iodepth: u32,
    #[serde(flatten)]
    pub measured: Measured,
    /// For a stacked target (md, dm): per component kernel name, the I/Os it completed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub members: BTreeMap<String, MemberIo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format: u32,
    pub hyraid_version: String,
    pub host: String,
    pub label: String,
    pub target: String,
    pub kind: TargetKind,
    /// The file or device fio ran against.
    pub filename: String,
    pub size: u64,
    pub runtime_s: u32,
    pub fio_version: String,
    pub jobs: Vec<JobResult>,
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Host(#[from] HostError),
    #[error(transparent)]
    Fio(#[from] FioError),
    #[error(transparent)]
    Parse(#[from] crate::observe::ParseError),
    #[error("refused: {0}")]
    Refused(String),
    #[error("interrupted after {done} of {total} job(s); the test file (if any) was removed")]
    Interrupted { done: usize, total: usize },
    #[error("`{command}` failed (exit {status}): {stderr}")]
    Command {
        command: String,
        status: i32,
        stderr: String,
    },
}

fn run_ok(host: &dyn Host, argv: &[String]) -> Result<String, BenchError> {
    let out = host.run(argv)?;
    if out.status != 0 {
        return Err(BenchError::Command {
            command: argv.join(" "),
            status: out.status,
            stderr: out.stderr.trim().to_string(),
        });
    }
    Ok(out.stdout)
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}
