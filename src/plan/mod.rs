//! The pure diff of desired against observed state into ordered, typed steps. Never runs
//! anything.

pub mod address;
pub mod capacity;
mod diff;
pub mod fingerprint;
pub mod persist;
pub mod planfile;
pub mod step;

pub use address::Address;
pub use diff::{disk_for, plan};
pub use planfile::FORMAT as PLAN_FORMAT;
pub use step::{ArrayDevice, CacheTool, Command, Risk, SizeArg, Step};

use crate::config::Desired;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    pub allow_destroy: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedStep {
    #[serde(flatten)]
    pub step: Step,
    pub risk: Risk,
    /// Why this step is needed; for display only, never read by apply.
    pub reason: String,
}

/// A change the file asks for that hyraid will not make now, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub object: String,
    pub reason: String,
    pub fix: String,
}

/// Something observed that the file does not name: reported, never touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Foreign {
    pub object: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: u32,
    pub hyraid_version: String,
    /// Hostname the plan was made on.
    pub host: String,
    /// Fingerprint of the observation the plan was made from.
    pub basis: String,
    pub policy: Policy,
    /// First in the JSON as in every format: any refusal means apply runs nothing.
    pub refused: Vec<Refusal>,
    pub steps: Vec<PlannedStep>,
    pub foreign: Vec<Foreign>,
    /// Observations worth knowing (degraded arrays, running resyncs, LVs larger than the file).
    pub notes: Vec<String>,
    /// The desired state the plan converges to: apply plans again from it and runs the plan
    /// only when it is the same as this file's.
    pub desired: Desired,
    /// The observation the plan was made from, as fingerprinted: when a saved plan is stale,
    /// apply says what changed since. Never used to plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<crate::observe::Observed>,
    /// The file does not fit the disks: every step is withheld (the refusals say what does not
    /// fit), so apply runs nothing and `hyraid plan` exits 1.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub withheld: bool,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
    /// Counts of steps by symbol: (create, change, remove).
    pub fn counts(&self) -> (usize, usize, usize) {
        let c = |s: char| self.steps.iter().filter(|p| p.step.symbol() == s).count();
        (c('+'), c('~'), c('-'))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(
        "the file is for host `{wanted}`, but this machine is `{actual}`; refusing to plan (check you picked the right file, or fix `host:`)"
    )]
    HostMismatch { wanted: String, actual: String },
    #[error("disk `{disk}`: {detail}")]
    Identity { disk: String, detail: String },
    #[error("mirror `{mirror}`: {detail}")]
    Mirror { mirror: String, detail: String },
}
