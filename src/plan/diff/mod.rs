//! desired × observed → steps. Order: drive caches, wipes, arrays (create, members,
//! write-mostly, bitmap, write-behind), PVs, VGs, LVs, writecaches, removals last.

mod converge;
mod disk;
mod lvm;
mod mirror;

use super::fingerprint::fingerprint;
use super::step::{ArrayDevice, CacheTool, NewPartition, Risk, SizeArg, Step};
use super::{Foreign, PLAN_FORMAT, Plan, PlanError, PlannedStep, Policy, Refusal, persist};
use crate::config::size::{LvSize, human};
use crate::config::{
    CACHEVOL_TAG, Desired, DeviceRef, DiskSpec, LvSpec, MirrorSpec, VgSpec, WriteMostly,
    cachevol_name,
};
use crate::observe::{BlockDevice, DevKind, Lookup, MdArray, Observed, WRITE_CACHE_RULE_PATH};
use std::collections::{BTreeMap, BTreeSet};

pub use disk::disk_for;

mod adopt;

/// A disk of the file, matched to the machine.
struct Resolved<'a> {
    spec: &'a DiskSpec,
    dev: Option<&'a BlockDevice>,
    /// The stable path commands use.
    path: String,
    rotational: bool,
    /// For `disk:partition`: the partition's number, and whether this plan creates it.
    part: Option<(u32, bool)>,
    /// False for a missing disk whose media nothing tells (no `media:`, no `write_cache`, no
    /// line in hyraid's udev rule): `rotational` is then a guess that decides nothing.
    media_known: bool,
}

/// Partition number from a kernel name: `sda2` → 2, `nvme0n1p3` → 3.
fn part_number(kname: &str) -> Option<u32> {
    let digits: String = kname
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
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
    /// Mirrors that cannot be built now: what depends on them waits.
    blocked: BTreeSet<String>,
    /// Disks whose partitions could not be planned.
    blocked_parts: BTreeSet<String>,
    /// Mirrors created by this plan, with the UUID hyraid gives them.
    creating: BTreeMap<String, String>,
    /// Fingerprint of the observation (seeds the UUIDs of new arrays).
    basis: String,
    /// Kernel names of the devices the file names (disks and partitions), once resolved.
    file_knames: BTreeSet<String>,
}

pub fn plan(d: &Desired, o: &Observed, policy: Policy) -> Result<Plan, PlanError> {
    if let Some(h) = &d.host
        && *h != o.hostname
    {
        return Err(PlanError::HostMismatch {
            wanted: h.clone(),
            actual: o.hostname.clone(),
        });
    }
    let mut p = Planner {
        d,
        o,
        ix: Lookup::new(o),
        policy,
        disks: BTreeMap::new(),
        steps: vec![],
        refused: vec![],
        notes: vec![],
        blocked: BTreeSet::new(),
        creating: BTreeMap::new(),
        blocked_parts: BTreeSet::new(),
        basis: fingerprint(o),
        file_knames: BTreeSet::new(),
    };
    p.resolve_disks()?;
    p.check_observed_media()?;
    p.write_caches();
    p.partitions();
    let mut md_steps = Vec::new();
    for m in d.mirrors.values().filter(|m| !m.absent) {
        md_steps.extend(p.mirror(m)?);
    }
    // Wipes first, then the rest of the md work, in mirror order.
    let (wipes, rest): (Vec<_>, Vec<_>) = md_steps
        .into_iter()
        .partition(|s| matches!(s.step, Step::WipeSignatures(_)));
    p.steps.extend(wipes);
    p.steps.extend(rest);
    p.mdadm_conf();
    let mut removals = Vec::new();
    for vg in d.volume_groups.values() {
        if vg.absent {
            removals.extend(p.remove_vg(vg));
        } else {
            p.volume_group(vg);
        }
    }
    for m in d.mirrors.values().filter(|m| m.absent) {
        removals.extend(p.remove_mirror(m));
    }
    p.steps.extend(removals);
    // Space is proven on the whole plan; when anything does not fit, no step is kept.
    let withheld = super::capacity::prove(d, o, &mut p.steps, &mut p.refused, &mut p.notes);
    let foreign = p.foreign();
    Ok(Plan {
        format: PLAN_FORMAT,
        hyraid_version: env!("CARGO_PKG_VERSION").to_string(),
        host: o.hostname.clone(),
        basis: p.basis.clone(),
        policy,
        steps: p.steps,
        refused: p.refused,
        foreign,
        notes: p.notes,
        desired: d.clone(),
        observed: None,
        withheld,
    })
}

/// A UUID for a new array, in mdadm's form: derived from the host, the name, the members and the
/// observation, so the same plan always names the same UUID and a re-created array gets a new one.
fn new_array_uuid(host: &str, name: &str, devices: &[ArrayDevice], basis: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [host, name, basis]
        .into_iter()
        .chain(devices.iter().map(|d| d.path.as_str()))
    {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    let hex: String = h
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{}:{}:{}:{}",
        &hex[0..8],
        &hex[8..16],
        &hex[16..24],
        &hex[24..32]
    )
}

/// A device's most stable /dev/disk/by-id name: the WWN when it has one.
fn stable_id(d: &BlockDevice) -> Option<&String> {
    d.by_id
        .iter()
        .find(|i| i.starts_with("wwn-"))
        .or(d.by_id.first())
}

fn ps(step: Step, risk: Risk, reason: impl Into<String>) -> PlannedStep {
    PlannedStep {
        step,
        risk,
        reason: reason.into(),
    }
}

impl<'a> Planner<'a> {
    /// The path hyraid uses for an observed device: its stable by-id name, else /dev/KNAME.
    fn stable_path(&self, kname: &str) -> String {
        self.o
            .device(kname)
            .and_then(stable_id)
            .map(|i| format!("/dev/disk/by-id/{i}"))
            .unwrap_or(format!("/dev/{kname}"))
    }

    /// A PV by its stable name: `/dev/md/NAME` for an array, the by-id name for a disk or
    /// partition; LVM's own name when neither is known.
    fn stable_pv_path(&self, kname: &str, lvm_name: &str) -> String {
        if let Some(n) = self
            .o
            .arrays
            .iter()
            .find(|a| a.kname == kname)
            .and_then(|a| a.name.as_ref())
        {
            return format!("/dev/md/{n}");
        }
        if self.o.device(kname).and_then(stable_id).is_some() {
            return self.stable_path(kname);
        }
        lvm_name.to_string()
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

    fn resolve_disks(&mut self) -> Result<(), PlanError> {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        let mut partitions_of: BTreeMap<&str, Vec<&BlockDevice>> = BTreeMap::new();
        for b in &self.o.block_devices {
            if let Some(p) = &b.parent {
                partitions_of.entry(p.as_str()).or_default().push(b);
            }
        }
        for spec in self.d.disks.values() {
            let ident = |detail: String| PlanError::Identity {
                disk: spec.name.clone(),
                detail,
            };
            let dev = match (&spec.id, &spec.serial) {
                (Some(id), serial) => {
                    let dev = self.ix.by_id(id);
                    if let (Some(dv), Some(s)) = (dev, serial)
                        && dv.serial.as_deref() != Some(s.as_str())
                    {
                        return Err(ident(format!(
                            "/dev/disk/by-id/{id} is now /dev/{} with serial {}, but the file says serial {s}; the disk was swapped or recabled — nothing will be touched until the file and the machine agree",
                            dv.kname,
                            dv.serial.as_deref().unwrap_or("(none)")
                        )));
                    }
                    if dev.is_none()
                        && let Some(s) = serial
                        && let Some(other) = self
                            .o
                            .block_devices
                            .iter()
                            .find(|b| b.serial.as_deref() == Some(s.as_str()))
                    {
                        return Err(ident(format!(
                            "serial {s} is present as /dev/{} but /dev/disk/by-id/{id} does not exist; the id in the file does not name this disk",
                            other.kname
                        )));
                    }
                    dev
                }
                (None, Some(s)) => {
                    let all: Vec<&BlockDevice> = self
                        .o
                        .block_devices
                        .iter()
                        .filter(|b| {
                            b.kind == DevKind::Disk && b.serial.as_deref() == Some(s.as_str())
                        })
                        .collect();
                    if all.len() > 1 {
                        return Err(ident(format!(
                            "serial {s} matches {} disks; add `id:` to say which",
                            all.len()
                        )));
                    }
                    all.first().copied()
                }
                (None, None) => None,
            };
            if let Some(dv) = dev {
                if dv.kind != DevKind::Disk {
                    return Err(ident(format!(
                        "{} is a partition, not a whole disk",
                        dv.kname
                    )));
                }
                if let Some(other) = seen.insert(dv.kname.clone(), spec.name.clone()) {
                    return Err(ident(format!(
                        "/dev/{} is also disk `{other}`: one physical disk under two names, and a mirror of the two would hold one copy; declare each disk once, by one of its ids",
                        dv.kname
                    )));
                }
            }
            let path = match (&spec.id, dev) {
                (Some(id), _) => format!("/dev/disk/by-id/{id}"),
                (None, Some(dv)) => match stable_id(dv) {
                    Some(i) => format!("/dev/disk/by-id/{i}"),
                    None => {
                        return Err(ident(format!(
                            "/dev/{} has no /dev/disk/by-id name; hyraid only addresses disks by stable names",
                            dv.kname
                        )));
                    }
                },
                (None, None) => String::new(),
            };
            // A missing disk keeps the media it had when last seen: `write_cache` (hyraid takes it
            // for rotational disks only) or its line in hyraid's udev rule say it was an HDD.
            let last_seen_hdd = spec.write_cache.is_some()
                || self
                    .o
                    .boot
                    .write_cache_rule
                    .as_deref()
                    .is_some_and(|r| persist::rule_entry(r, &spec.name).is_some());
            let media = spec
                .rotational_override
                .or(dev.map(|d| d.rotational))
                .or(last_seen_hdd.then_some(true));
            let media_known = media.is_some();
            let rotational = media.unwrap_or(false);
            // Partitions: matched by GPT name; missing ones get the next numbers.
            let children: Vec<&BlockDevice> = dev
                .and_then(|dv| partitions_of.get(dv.kname.as_str()).cloned())
                .unwrap_or_default();
            let mut next = children
                .iter()
                .filter_map(|b| part_number(&b.kname))
                .max()
                .unwrap_or(0);
            for ps_ in &spec.partitions {
                let found = children
                    .iter()
                    .find(|b| b.partlabel.as_deref() == Some(ps_.name.as_str()))
                    .copied();
                let (pdev, number, pending) = match found {
                    Some(b) => (Some(b), part_number(&b.kname).unwrap_or(0), false),
                    None => {
                        next += 1;
                        (None, next, dev.is_some())
                    }
                };
                self.disks.insert(
                    format!("{}:{}", spec.name, ps_.name),
                    Resolved {
                        spec,
                        dev: pdev,
                        path: format!("{path}-part{number}"),
                        rotational,
                        part: Some((number, pending)),
                        media_known,
                    },
                );
            }
            self.disks.insert(
                spec.name.clone(),
                Resolved {
                    spec,
                    dev,
                    path,
                    rotational,
                    part: None,
                    media_known,
                },
            );
        }
        self.file_knames = self
            .disks
            .values()
            .filter_map(|r| r.dev.map(|d| d.kname.clone()))
            .collect();
        Ok(())
    }

    /// What the file alone could not show to defeat a mirror: write-mostly on every fast member,
    /// by the media the machine reports (validate catches it when the file declares `media:`).
    fn check_observed_media(&self) -> Result<(), PlanError> {
        let known = |n: &str| {
            let r = self.disks.get(n)?;
            let whole = self.disks.get(&r.spec.name)?;
            (whole.dev.is_some() || r.spec.rotational_override.is_some()).then_some(r.rotational)
        };
        for m in self.d.mirrors.values().filter(|m| !m.absent) {
            if let Some(fast) = m.inverted_write_mostly(known) {
                return Err(PlanError::Mirror {
                    mirror: m.name.clone(),
                    detail: format!(
                        "write_mostly lists every non-rotational member ({}), so md would serve reads from the rotational ones; list the HDDs in `write_mostly`, or write `write_mostly: auto` (set `media:` on a disk whose rotational flag is wrong)",
                        fast.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }

    fn foreign(&self) -> Vec<Foreign> {
        let mut f = Vec::new();
        for a in &self.o.arrays {
            if !self.is_file_array(a) {
                let members: Vec<&str> = a.members.iter().map(|m| m.kname.as_str()).collect();
                f.push(Foreign {
                    object: format!(
                        "array {}",
                        a.name
                            .clone()
                            .map(|n| format!("/dev/md/{n}"))
                            .unwrap_or(format!("/dev/{}", a.kname))
                    ),
                    detail: format!(
                        "{} of {}{}",
                        a.level,
                        members.join(", "),
                        match &a.bitmap {
                            Some(b) if b.kind != crate::observe::BitmapKind::Internal =>
                                format!(", bitmap {}", b.describe()),
                            _ => String::new(),
                        }
                    ),
                });
            }
        }
        let mut lvs_of: BTreeMap<&str, Vec<&crate::observe::Lv>> = BTreeMap::new();
        for l in self.o.lvm.lvs.iter().filter(|l| !l.hidden) {
            lvs_of.entry(l.vg.as_str()).or_default().push(l);
        }
        for v in &self.o.lvm.vgs {
            match self.d.volume_groups.get(&v.name) {
                None => f.push(Foreign {
                    object: format!("vg {}", v.name),
                    detail: format!("{} bytes ({})", v.size, human(v.size)),
                }),
                Some(spec) => {
                    // Cache volumes hyraid made for this VG's LVs: `<lv>_wc`.
                    let cachevols: BTreeMap<String, bool> = spec
                        .lvs
                        .values()
                        .map(|x| (cachevol_name(&x.name), x.writecache.is_some()))
                        .collect();
                    for l in lvs_of.get(v.name.as_str()).into_iter().flatten() {
                        let ours_cv = cachevols
                            .get(&l.name)
                            .is_some_and(|wc| *wc || l.tags.iter().any(|t| t == CACHEVOL_TAG));
                        if !spec.lvs.contains_key(&l.name) && !ours_cv {
                            f.push(Foreign {
                                object: format!("lv {}/{}", v.name, l.name),
                                detail: format!("{} bytes ({})", l.size, human(l.size)),
                            });
                        }
                    }
                }
            }
        }
        f
    }
}
