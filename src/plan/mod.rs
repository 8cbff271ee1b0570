//! The pure diff of desired against observed state into ordered, typed steps. Never runs
//! anything. [`plan`] is the order of the stages; each kind of object has its room: `disk`
//! (identity, partitions, drive caches), `mirror` (arrays, members, bitmaps, adoption), `boot`
//! (mdadm.conf, initramfs), `lvm` (PVs, VGs, LVs, writecaches) and `foreign` (what the file does
//! not name). `capacity` proves the space, `persist` renders the managed files, `step` is what
//! runs and `planfile` the saved plan.

pub mod address;
mod boot;
pub mod capacity;
pub mod crypttab;
mod disk;
pub mod encryption;
mod encryption_keys;
mod encryption_lv;
mod encryption_tpm2;
mod filesystem;
pub mod fingerprint;
mod foreign;
mod fs_label;
mod fs_left_alone;
mod fs_remake;
pub mod fstab;
pub mod loader;
mod lvm;
mod mirror;
mod monitoring;
pub mod passphrases;
pub mod persist;
pub mod planfile;
mod shrink;
pub mod step;
mod unmet;

pub use address::Address;
pub use disk::disk_for;
pub use mirror::array_for;
pub use monitoring::describe as monitoring_describe;
pub use planfile::FORMAT as PLAN_FORMAT;
pub use step::{ArrayDevice, CacheTool, Command, Risk, SizeArg, Step, StepKindName};

use self::disk::Resolved;
use self::step::NewPartition;
use crate::config::size::{LvSize, human};
use crate::config::{
    CACHEVOL_TAG, Desired, DeviceRef, DiskSpec, LvSpec, MirrorSpec, VgSpec, WriteMostly,
    cachevol_name,
};
use crate::observe::{BlockDevice, DevKind, Lookup, MdArray, Observed, WRITE_CACHE_RULE_PATH};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    pub allow_destroy: bool,
    /// Disks (by the file's names) the user asks to put back into their mirror although they
    /// left it without hyraid (md failed them, or they were missing): `--re-add NAME`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub re_add: Vec<String>,
}

impl Policy {
    /// The policy of a run that allows destruction or not, and asks for no re-add.
    pub const fn destroying(allow_destroy: bool) -> Policy {
        Policy {
            allow_destroy,
            re_add: Vec::new(),
        }
    }
    /// Whether the user asked for disk `name` to go back into its mirror.
    pub fn re_adds(&self, name: &str) -> bool {
        self.re_add.iter().any(|n| n == name)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlannedStep {
    #[serde(flatten)]
    pub step: Step,
    pub risk: Risk,
    /// Why this step is needed; for display only, never read by apply.
    pub reason: String,
    /// What a saved plan's file shows of the step for tools (`display`: symbol, object, summary,
    /// commands), as read back: never written from here (the file's writer derives it), and
    /// checked against hyraid's own before a saved plan runs or is shown.
    #[serde(default, skip_serializing)]
    pub display: Option<serde_json::Value>,
}

/// Two steps are the same when their step, risk and reason are: `display` is derived from them
/// (and checked on its own where a saved plan is read).
impl PartialEq for PlannedStep {
    fn eq(&self, other: &PlannedStep) -> bool {
        self.step == other.step && self.risk == other.risk && self.reason == other.reason
    }
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
    pub basis: fingerprint::Basis,
    pub policy: Policy,
    /// First in the JSON as in every format: any refusal means apply runs nothing.
    pub refused: Vec<Refusal>,
    pub steps: Vec<PlannedStep>,
    pub foreign: Vec<Foreign>,
    /// Observations worth knowing (degraded arrays, running resyncs, LVs larger than the file).
    pub notes: Vec<String>,
    /// What is not yet as the file says although no step is needed: md is rebuilding a mirror's
    /// member. The plan never says "matches the file" while one is listed, and
    /// `--detailed-exitcode` exits 2.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<String>,
    /// Mirrors this plan starts (assembled, not running) or opens (encrypted) whose content it
    /// could not see: what stands on them is planned once they run and are open (`hyraid apply`
    /// plans again, shows and asks before it runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behind_open: Vec<String>,
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
    /// The configuration file the plan was made from, as written (a saved plan carries it:
    /// apply and show validate it as `hyraid validate` does and plan again from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<planfile::PlanConfig>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
    /// The machine is as the file says: nothing to change, nothing refused, nothing under way.
    pub fn matches(&self) -> bool {
        self.steps.is_empty() && self.refused.is_empty() && self.waiting.is_empty()
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

struct Planner<'a> {
    d: &'a Desired,
    o: &'a Observed,
    /// Name lookups over `o`.
    ix: Lookup<'a>,
    policy: Policy,
    disks: BTreeMap<String, Resolved<'a>>,
    steps: Vec<PlannedStep>,
    refused: Vec<Refusal>,
    notes: Vec<String>,
    /// See [`Plan::waiting`].
    waiting: Vec<String>,
    /// Mirrors that cannot be built now: what depends on them waits.
    blocked: BTreeSet<String>,
    /// Disks whose partitions could not be planned.
    blocked_parts: BTreeSet<String>,
    /// Mirrors created by this plan, with the UUID hyraid gives them.
    creating: BTreeMap<String, String>,
    /// Fingerprint of the observation (seeds the UUIDs of new arrays and filesystems).
    basis: fingerprint::Basis,
    /// Kernel names of the devices the file names (disks and partitions), once resolved.
    file_knames: BTreeSet<String>,
    /// Mirror members' partitions that can grow (by kernel name): their growpart waits for the
    /// mirror's grow to be planned as a whole (`mirror/size.rs`).
    member_growth: BTreeMap<String, step::GrowPartition>,
    /// Encrypted mirrors and LVs whose existing LUKS header this plan opens (by the mirror's
    /// name or `vg/lv`, to what a person reads: `mirror data0`, `lv vg0/home`): what is inside is
    /// seen only once it is open, so what stands on them is planned then.
    opening: BTreeMap<String, String>,
    /// Mirrors assembled but not running that this plan starts (also in `opening`): what stands
    /// on them (a PV, a LUKS header, a filesystem) cannot be read before they run, so it is
    /// unknown, never blank, and planned once they run.
    starting: BTreeSet<String>,
    /// The crypttab lines of the encrypted mirrors and LVs, written once every one is planned.
    crypttab_wanted: Vec<encryption::Wanted>,
    /// /etc/crypttab as the steps planned so far leave it: a key rotation writes it (naming the
    /// new key) before the old key's slot is removed.
    crypttab_now: Option<String>,
}

/// The plan of `d` on the machine `o`: the stages in the order their steps run.
pub fn plan(d: &Desired, o: &Observed, policy: Policy) -> Result<Plan, PlanError> {
    if let Some(h) = &d.host
        && *h != o.hostname
    {
        return Err(PlanError::HostMismatch {
            wanted: h.clone(),
            actual: o.hostname.clone(),
        });
    }
    let mut p = Planner::new(d, o, policy.clone());
    // Which device each disk of the file is (never guessed), and what media it is.
    p.resolve_disks()?;
    p.check_observed_media()?;
    // Drive write caches and their udev rule, then GPT partitions.
    p.write_caches();
    p.partitions();
    // Arrays: every wipe first, then creation, members, write-mostly, bitmaps, write-behind.
    p.mirrors()?;
    // Mirrors whose member partitions grow: growpart on each, the array, then its PV.
    p.mirror_sizes();
    // The LUKS2 layer of encrypted mirrors (key file, format, header backup, open); an
    // encrypted LV's comes with its VG's LVs, and hyraid's crypttab block after both.
    p.encryption();
    // The ARRAY lines of mdadm.conf (and md's monitor lines), and the initramfs that carries
    // them; the mirrors' check timers and hyraid's monitoring settings.
    p.mdadm_conf();
    p.crypttab_initramfs();
    p.monitoring();
    // PVs, VGs, LVs and writecaches; removals last: VGs, then mirrors.
    let mut removals = p.volume_groups();
    p.crypttab_block();
    p.plaintext_caches();
    // hyraid's fstab block and the mounts, once every filesystem is made; labels set in place.
    p.filesystems();
    p.relabel_filesystems();
    // The boot disks' ESPs, loaders (after their /boot copy is rebuilt), firmware entries, hooks.
    p.boot_loaders();
    removals.extend(p.removed_mirrors());
    p.steps.extend(removals);
    // What the file names that the machine lacks and no step makes: refused, never "matches".
    p.unmet();
    // Space is proven on the whole plan; when anything does not fit, no step is kept.
    let withheld = capacity::prove(d, o, &mut p.steps, &mut p.refused, &mut p.notes);
    let foreign = p.foreign();
    if let Some(t) = &o.boot.monitoring.tune_run {
        p.notes.push(tune_note(t, p.steps.is_empty()));
    }
    Ok(Plan {
        format: PLAN_FORMAT,
        hyraid_version: env!("CARGO_PKG_VERSION").to_string(),
        host: o.hostname.clone(),
        basis: p.basis,
        policy,
        steps: p.steps,
        refused: p.refused,
        foreign,
        notes: p.notes,
        waiting: p.waiting,
        behind_open: p.opening.values().cloned().collect(),
        desired: d.clone(),
        observed: None,
        withheld,
        config: None,
    })
}

/// What a plan says of a tune run that did not end.
fn tune_note(t: &crate::observe::monitoring::TuneRun, converged: bool) -> String {
    format!(
        "a `hyraid tune` run of lv {} did not end (it was measuring `{}`); {}",
        t.lv,
        t.measuring,
        if converged {
            "the machine is as the file says again: `hyraid apply` ends the run's record"
        } else {
            "the settings it changed differ from the file and the steps above put them back: `hyraid apply` runs them and ends the run's record"
        }
    )
}

fn ps(step: Step, risk: Risk, reason: impl Into<String>) -> PlannedStep {
    PlannedStep {
        step,
        risk,
        reason: reason.into(),
        display: None,
    }
}

impl<'a> Planner<'a> {
    fn new(d: &'a Desired, o: &'a Observed, policy: Policy) -> Self {
        Planner {
            d,
            o,
            ix: Lookup::new(o),
            policy,
            disks: BTreeMap::new(),
            steps: vec![],
            refused: vec![],
            notes: vec![],
            waiting: vec![],
            blocked: BTreeSet::new(),
            creating: BTreeMap::new(),
            blocked_parts: BTreeSet::new(),
            basis: fingerprint::Basis::of(o),
            file_knames: BTreeSet::new(),
            member_growth: BTreeMap::new(),
            opening: BTreeMap::new(),
            starting: BTreeSet::new(),
            crypttab_wanted: vec![],
            crypttab_now: o.boot.crypttab.clone(),
        }
    }

    fn refuse(
        &mut self,
        object: impl Into<String>,
        reason: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.refused.push(Refusal {
            object: object.into(),
            reason: reason.into(),
            fix: fix.into(),
        });
    }
}
