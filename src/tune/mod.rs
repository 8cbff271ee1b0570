//! `hyraid tune`: the field report's matrix (six fio jobs) measured under each configuration the
//! layout allows (the file's own, write-mostly on or off, write-behind values, the HDDs' drive
//! caches, a writecache), with repeats so that a run-to-run spread is known, and a
//! recommendation for the workload the user names: the change to the file, as a diff, of the
//! settings that win beyond that spread, or "keep what you have".
//!
//! Every change is an apply of a variant of the file's desired state (so the planner orders it,
//! the journal records it, and an interrupted one converges), and the file is the restore point:
//! it is applied again when the run ends, however it ends. A record under /var/lib/hyraid says,
//! until then, that a run is changing settings; `plan` and `status` read it after a crash, and
//! the apply that converges ends it.

mod configs;
pub mod recommend;
mod report;
mod run;
mod target;
pub mod yaml_edit;

pub use configs::{Change, Config, configs, mirrors_of};
pub use recommend::{Cell, Recommendation, recommend};
pub use report::{bars, table};
pub use run::{Event, run};

use crate::bench::Report;
use crate::host::Host;
use crate::observe::monitoring::{TUNE_RUN_PATH, TuneRun};
use serde::{Deserialize, Serialize};

/// Version of the run's JSON (`-o`).
pub const TUNE_FORMAT: u32 = 1;

/// The field report's six jobs, in its order.
pub const JOBS: [&str; 6] = [
    "seq-read-1m",
    "seq-write-1m",
    "rand-read-512k",
    "rand-write-512k",
    "rand-read-4k-qd32",
    "rand-write-4k-qd32",
];

/// What the user's machine mostly does: the jobs a recommendation weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    Sequential,
    RandomRead,
    RandomWrite,
    Mixed,
}

impl Workload {
    pub const ALL: [Workload; 4] = [
        Workload::Sequential,
        Workload::RandomRead,
        Workload::RandomWrite,
        Workload::Mixed,
    ];

    pub fn word(self) -> &'static str {
        match self {
            Workload::Sequential => "sequential",
            Workload::RandomRead => "random-read",
            Workload::RandomWrite => "random-write",
            Workload::Mixed => "mixed",
        }
    }

    /// The jobs of [`JOBS`] it weighs.
    pub fn jobs(self) -> Vec<&'static str> {
        JOBS.iter()
            .copied()
            .filter(|j| match self {
                Workload::Sequential => j.starts_with("seq-"),
                Workload::RandomRead => j.starts_with("rand-read"),
                Workload::RandomWrite => j.starts_with("rand-write"),
                Workload::Mixed => true,
            })
            .collect()
    }
}

/// The job of [`JOBS`] named `name`, or what the names are.
pub fn job_named(name: &str) -> Result<&'static str, String> {
    JOBS.iter()
        .copied()
        .find(|j| *j == name)
        .ok_or_else(|| format!("no job `{name}`; tune's jobs are {}", JOBS.join(", ")))
}

/// `jobs` in [`JOBS`]' order, each once; refused when none of them is one `w` weighs (the
/// recommendation would have nothing to go on).
pub fn chosen_jobs(jobs: &[&'static str], w: Workload) -> Result<Vec<&'static str>, String> {
    if jobs.is_empty() {
        return Ok(JOBS.to_vec());
    }
    let chosen: Vec<&'static str> = JOBS.iter().copied().filter(|j| jobs.contains(j)).collect();
    if !w.jobs().iter().any(|j| chosen.contains(j)) {
        return Err(format!(
            "a {} workload is weighed on {}, and none of them is measured: add one with --job",
            w.word(),
            w.jobs().join(", ")
        ));
    }
    Ok(chosen)
}

impl std::str::FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.word() == s)
            .ok_or_else(|| {
                let all: Vec<&str> = Workload::ALL.iter().map(|w| w.word()).collect();
                format!("no workload `{s}`; the workloads are {}", all.join(", "))
            })
    }
}

/// How long and how often each job runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    /// Bytes of the test file (or of the scratch LV the jobs use).
    pub size: u64,
    /// Seconds each job measures; with `loops`, the most a job may take.
    pub runtime_s: u32,
    pub ramp_s: u32,
    /// fio's `--loops` (the field report's 5): the job runs the whole size that many times.
    pub loops: Option<u32>,
    /// How many times each configuration is measured (the spread comes from these).
    pub repeats: u32,
    /// Measure more write-behind values (the field report's 512 and 2048, and 8192).
    pub full: bool,
}

impl Profile {
    /// A few minutes on real disks: 256 MiB, 4 s per job after a 1 s ramp, two rounds.
    pub fn quick() -> Profile {
        Profile {
            name: "quick".into(),
            size: 256 << 20,
            runtime_s: 4,
            ramp_s: 1,
            loops: None,
            repeats: 2,
            full: false,
        }
    }

    /// The field report's own fio parameters (`--size=1000m --loops=5`), each job capped at
    /// 60 s, three rounds.
    pub fn full() -> Profile {
        Profile {
            name: "full".into(),
            size: 1000 << 20,
            runtime_s: 60,
            ramp_s: 0,
            loops: Some(5),
            repeats: 3,
            full: true,
        }
    }

    /// The most one job can take, in seconds.
    pub fn job_seconds(&self) -> u64 {
        (self.runtime_s + self.ramp_s) as u64
    }
}

/// Where the jobs run.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A directory on a mounted filesystem on an LV of the file (a test file is made in it).
    Directory(String),
    /// A temporary LV of this size in the VG's free space on its mirror (`None`: the file's only
    /// VG), removed at the end.
    Scratch { size: u64, vg: Option<String> },
}

#[derive(Debug, Clone)]
pub struct Options {
    /// The file's path, as the record and the report name it.
    pub file: String,
    /// The file's text (the recommendation is an edit of it).
    pub text: String,
    pub target: Target,
    pub profile: Profile,
    pub workload: Workload,
    /// The jobs of [`JOBS`] measured, in its order (`--job`; all six by default).
    pub jobs: Vec<&'static str>,
    /// Where apply's journal goes.
    pub journal: Option<std::path::PathBuf>,
}

/// One configuration as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub name: String,
    /// What it changes from the file (empty: the file's own).
    pub changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
    /// Why it was not measured (the plan refused it, or the layout has no room for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// One report per round.
    pub runs: Vec<Report>,
}

/// A whole run, as `-o` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    pub format: u32,
    pub hyraid_version: String,
    pub host: String,
    pub file: String,
    /// `vg/lv` measured.
    pub lv: String,
    /// The directory or device fio ran against.
    pub target: String,
    pub scratch: bool,
    pub profile: Profile,
    pub jobs: Vec<String>,
    pub configs: Vec<Measured>,
    pub recommendation: Recommendation,
}

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("refused: {0}")]
    Refused(String),
    #[error(transparent)]
    Observe(#[from] crate::observe::ObserveError),
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    /// A change, a measurement or the restore failed; what happened to the machine is said.
    #[error("{error}\n{state}")]
    Failed { error: String, state: String },
    #[error("interrupted; {0}")]
    Interrupted(String),
}

/// Write the record that a run is changing settings (before its first change, and at each).
pub fn write_record(host: &dyn Host, r: &TuneRun) -> Result<(), String> {
    crate::history::write(host, TUNE_RUN_PATH, r)
}

/// End the record: the machine is as the file says again (a run's restore, or the apply that
/// converged after a run was killed). Returns whether there was one.
pub fn end_record(host: &dyn Host) -> bool {
    if host.read_file(TUNE_RUN_PATH).is_err() {
        return false;
    }
    host.run(&["rm".to_string(), "-f".into(), TUNE_RUN_PATH.into()])
        .is_ok_and(|o| o.status == 0)
}
