//! A mirror's checks: where a paused pass resumes, the mismatches its earlier runs counted
//! (md resets `mismatch_cnt` at each start), the last completed pass and the recent runs.

use super::{DIR, file_name};
use crate::host::Host;
use serde::{Deserialize, Serialize};

/// How many runs a record keeps.
pub const KEEP_RUNS: usize = 20;

/// How one run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The pass reached the end of the array.
    Completed,
    /// Stopped at its budget, or by Ctrl-C or `systemctl stop`: the next run resumes.
    Paused,
    /// Not started: degraded, rebuilding, frozen, not running.
    Skipped,
    /// Stopped by something else (a member failed, another program set it idle).
    Interrupted,
    Failed,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Paused => "paused",
            Outcome::Skipped => "skipped",
            Outcome::Interrupted => "interrupted",
            Outcome::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// Seconds since the epoch.
    pub start: u64,
    pub end: u64,
    pub outcome: Outcome,
    /// Sectors: where the run started and where it stopped.
    pub from: u64,
    pub to: u64,
    pub total: u64,
    /// Sectors that differ, counted by this run.
    pub mismatches: u64,
    /// KiB/s over the run's checking time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_kib: Option<u64>,
    /// Why it did not run or stopped (skipped, interrupted, failed), or what it waited for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `scheduled` (the timer) or `manual`.
    pub trigger: String,
}

/// A pass that ended: every run of it, summed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pass {
    /// When its first run started, and when its last ended.
    pub start: u64,
    pub end: u64,
    /// Sectors that differ over the whole pass (every run's `mismatch_cnt`, summed).
    pub mismatches: u64,
    pub runs: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRecord {
    /// The mirror's name in the file, and the array's UUID (the record's key).
    pub mirror: String,
    pub uuid: String,
    /// A pass under way: where the next run resumes (sectors), the mismatches so far, when it
    /// began, and how many runs it took so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_at: Option<u64>,
    #[serde(default)]
    pub pass_mismatches: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_start: Option<u64>,
    #[serde(default)]
    pub pass_runs: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_completed: Option<Pass>,
    /// The most recent runs, newest last.
    #[serde(default)]
    pub runs: Vec<Run>,
}

impl CheckRecord {
    pub fn new(mirror: &str, uuid: &str) -> CheckRecord {
        CheckRecord {
            mirror: mirror.into(),
            uuid: uuid.into(),
            ..Default::default()
        }
    }

    /// Add a run: a completed one closes the pass, a paused one carries it on.
    pub fn push(&mut self, run: Run, resume_at: Option<u64>) {
        match run.outcome {
            Outcome::Completed => {
                self.last_completed = Some(Pass {
                    start: self.pass_start.unwrap_or(run.start),
                    end: run.end,
                    mismatches: self.pass_mismatches + run.mismatches,
                    runs: self.pass_runs + 1,
                });
                self.resume_at = None;
                self.pass_mismatches = 0;
                self.pass_start = None;
                self.pass_runs = 0;
            }
            Outcome::Paused | Outcome::Interrupted if run.to > run.from || resume_at.is_some() => {
                self.pass_start.get_or_insert(run.start);
                self.pass_mismatches += run.mismatches;
                self.pass_runs += 1;
                self.resume_at = resume_at.or(Some(run.to));
            }
            _ => {}
        }
        self.runs.push(run);
        if self.runs.len() > KEEP_RUNS {
            let extra = self.runs.len() - KEEP_RUNS;
            self.runs.drain(..extra);
        }
    }

    pub fn last_run(&self) -> Option<&Run> {
        self.runs.last()
    }
}

/// Where a mirror's record is: by its array's UUID, so a renamed mirror keeps its history.
pub fn path(uuid: &str) -> String {
    format!(
        "{DIR}/checks/{}.json",
        file_name(&crate::observe::names::norm_uuid(uuid))
    )
}

pub fn read(host: &dyn Host, uuid: &str) -> Result<Option<CheckRecord>, String> {
    super::read(host, &path(uuid))
}

pub fn write(host: &dyn Host, r: &CheckRecord) -> Result<(), String> {
    super::write(host, &path(&r.uuid), r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(outcome: Outcome, from: u64, to: u64, mismatches: u64, start: u64) -> Run {
        Run {
            start,
            end: start + 10,
            outcome,
            from,
            to,
            total: 1000,
            mismatches,
            speed_kib: None,
            reason: None,
            trigger: "scheduled".into(),
        }
    }

    #[test]
    fn a_pass_over_several_runs_sums_their_mismatches() {
        let mut r = CheckRecord::new("data0", "u");
        r.push(run(Outcome::Paused, 0, 400, 16, 100), Some(400));
        assert_eq!(
            (r.resume_at, r.pass_mismatches, r.pass_runs),
            (Some(400), 16, 1)
        );
        r.push(run(Outcome::Skipped, 400, 400, 0, 200), None);
        assert_eq!(r.resume_at, Some(400), "a skipped run keeps the place");
        r.push(run(Outcome::Completed, 400, 1000, 8, 300), None);
        let p = r.last_completed.clone().unwrap();
        assert_eq!((p.start, p.end, p.mismatches, p.runs), (100, 310, 24, 2));
        assert_eq!(
            (r.resume_at, r.pass_mismatches, r.pass_start),
            (None, 0, None)
        );
        assert_eq!(r.runs.len(), 3);
        for i in 0..30 {
            r.push(run(Outcome::Skipped, 0, 0, 0, 400 + i), None);
        }
        assert_eq!(r.runs.len(), KEEP_RUNS);
    }
}
