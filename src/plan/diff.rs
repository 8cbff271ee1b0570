//! desired × observed → steps. Order: drive caches, wipes, arrays (create, members,
//! write-mostly, bitmap, write-behind), PVs, VGs, LVs, writecaches, removals last.

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

#[path = "adopt.rs"]
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
    /// Mirrors created by this plan.
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
        .partition(|s| matches!(s.step, Step::WipeSignatures { .. }));
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

    fn write_caches(&mut self) {
        let mut out = Vec::new();
        let mut rule = Vec::new();
        let mut refusals: Vec<Refusal> = Vec::new();
        let notes: Vec<String> = Vec::new();
        for r in self.disks.values().filter(|r| r.part.is_none()) {
            let Some(want) = r.spec.write_cache else {
                continue;
            };
            let name = &r.spec.name;
            let Some(dev) = r.dev else {
                // Missing for now: its line stays in the rule, so the setting is back when it is.
                if let Some((serial, tool)) = self
                    .o
                    .boot
                    .write_cache_rule
                    .as_deref()
                    .and_then(|cur| persist::rule_entry(cur, name))
                {
                    rule.push((name.clone(), serial, want, tool));
                }
                continue;
            };
            let tran = dev.tran.as_deref().unwrap_or("unknown");
            let object = format!("disk {name}");
            if !r.rotational {
                refusals.push(Refusal { object: object.clone(), reason: ("write_cache: hyraid switches the volatile cache of rotational disks only; SSDs and NVMe manage their own (with power-loss protection or not, it is not a setting to flip)").into(), fix: "remove `write_cache` for this disk (or set `media: hdd` if the kernel misreports a rotational disk)".into() });
                continue;
            }
            // ATA disks take hdparm; SCSI/SAS disks (they have a scsi_disk cache_type and are not
            // ATA) take sdparm; anything else (virtio, USB bridges) is refused.
            let scsi = dev
                .write_cache
                .is_some_and(|w| w.source == crate::observe::WriteCacheSource::ScsiCacheType);
            let tool = match tran {
                "sata" | "ata" => CacheTool::Hdparm,
                _ if scsi => CacheTool::Sdparm,
                _ => {
                    refusals.push(Refusal { object: object.clone(), reason: format!("write_cache: this disk ({tran}) has no write cache hyraid can switch: ATA disks take hdparm, SCSI/SAS disks sdparm"), fix: "remove `write_cache` for this disk".into() });
                    continue;
                }
            };
            let cur = dev.write_cache.and_then(|w| w.enabled);
            if cur.is_none() {
                refusals.push(Refusal { object: object.clone(), reason: ("the drive does not report its write cache state (hdparm -W / cache_type), so a change could not be verified").into(), fix: "remove `write_cache` for this disk".into() });
                continue;
            }
            match dev.serial.as_deref().filter(|s| persist::rule_safe(s)) {
                                Some(s) => rule.push((name.clone(), s.to_string(), want, tool)),
                None => refusals.push(Refusal { object: object.clone(), reason: "write_cache: the disk reports no serial a udev rule can match, so the setting could not be made to survive a power cycle".into(), fix: "remove `write_cache` for this disk (a volatile setting hyraid cannot keep is a setting lost at the next boot)".into() }),
            }
            if cur == Some(want) {
                continue;
            }
            let reason = if want {
                "the drive's volatile cache roughly doubles HDD write speed; the kernel flushes it at every barrier"
            } else {
                "the file asks for the drive cache off"
            };
            out.push(ps(
                Step::SetWriteCache {
                    disk: name.clone(),
                    device: r.path.clone(),
                    on: want,
                    tool,
                    kname: (tool == CacheTool::Sdparm).then(|| dev.kname.clone()),
                },
                Risk::Safe,
                reason,
            ));
        }
        self.steps.extend(out);
        self.refused.extend(refusals);
        self.notes.extend(notes);
        // The setting is volatile: hyraid's udev rule re-applies it whenever the disk appears.
        let cur = self.o.boot.write_cache_rule.as_deref();
        if rule.is_empty() && cur.is_none() {
            return;
        }
        let new = match persist::write_cache_rule(&rule) {
            Ok(text) => text,
            Err(e) => {
                let fix = "name the disk by `id:` and leave its write cache as it is (remove `write_cache`)";
                self.refuse(format!("file {WRITE_CACHE_RULE_PATH}"), e.to_string(), fix);
                return;
            }
        };
        if cur != Some(new.as_str()) {
            self.steps.push(ps(
                Step::WriteFile { path: WRITE_CACHE_RULE_PATH.into(), old: cur.map(str::to_string), content: new, purpose: "udev rule that re-applies drive write caches at boot and hotplug".into() },
                Risk::Safe,
                "hdparm -W is lost at every power cycle; the rule sets it again whenever the disk appears",
            ));
            self.steps
                .push(ps(Step::ReloadUdev, Risk::Safe, "udevd reads the new rule"));
        }
    }

    /// GPT partitions the file declares and the disk lacks: a new table on a blank disk, or new
    /// partitions in free space. Existing ones are matched by name, never moved or resized.
    fn partitions(&mut self) {
        let mut steps = Vec::new();
        for spec in self.d.disks.values().filter(|s| !s.partitions.is_empty()) {
            let Some(dev) = self.disks[&spec.name].dev else {
                continue;
            };
            let object = format!("disk {}", spec.name);
            let path = self.disks[&spec.name].path.clone();
            let children: Vec<&BlockDevice> = self
                .o
                .block_devices
                .iter()
                .filter(|b| b.parent.as_deref() == Some(dev.kname.as_str()))
                .collect();
            let mut new = Vec::new();
            for ps_ in &spec.partitions {
                let key = format!("{}:{}", spec.name, ps_.name);
                let r = &self.disks[&key];
                match (r.part, r.dev) {
                    (Some((number, true)), _) => {
                        let typecode = if self.d.mirrors.values().any(|m| m.members.contains(&key))
                        {
                            "fd00"
                        } else if self
                            .d
                            .volume_groups
                            .values()
                            .any(|v| v.pvs.contains(&DeviceRef::Disk(key.clone())))
                        {
                            "8e00"
                        } else {
                            "8300"
                        };
                        new.push(NewPartition {
                            number,
                            name: ps_.name.clone(),
                            size: ps_.size,
                            typecode: typecode.into(),
                        });
                    }
                    (_, Some(b)) => {
                        if let Some(want) = ps_.size
                            && b.size < want
                        {
                            self.refuse(format!("disk {}", spec.name), format!("partition {} is {}, smaller than the file's {}; hyraid never resizes partitions", ps_.name, human(b.size), human(want)), format!("set partition {}'s size to {} in the file, or resize it by hand", ps_.name, human(b.size)));
                        }
                    }
                    _ => {}
                }
            }
            if new.is_empty() {
                continue;
            }
            let foreign_table = dev.pttype.as_deref().is_some_and(|t| t != "gpt");
            let new_table = children.is_empty() && (dev.pttype.is_none() || foreign_table);
            // An empty GPT (left by an interrupted apply, or made by hand) is not content.
            let content: Vec<String> = if !children.is_empty() {
                vec![]
            } else if dev.pttype.as_deref() == Some("gpt") {
                dev.signatures
                    .iter()
                    .flatten()
                    .filter(|s| s.kind != "gpt" && s.kind != "PMBR")
                    .map(|s| format!("{} at {}", s.kind, s.offset))
                    .collect()
            } else {
                dev.signature_summary()
            };
            let used = 2 << 20;
            let existing: u64 = children.iter().map(|b| b.size).sum();
            let needed: u64 = new.iter().map(|p| p.size.unwrap_or(1 << 20)).sum();
            let refuse = |me: &mut Self, reason: String, fix: &str| {
                me.refused.push(Refusal {
                    object: object.clone(),
                    reason,
                    fix: fix.into(),
                });
                me.blocked_parts.insert(spec.name.clone());
            };
            if foreign_table && !children.is_empty() {
                refuse(
                    self,
                    format!(
                        "{path} has a {} partition table with partitions the file does not name",
                        dev.pttype.clone().unwrap_or_default()
                    ),
                    "hyraid only adds to GPT disks; repartition it by hand, or name its partitions",
                );
                continue;
            }
            if existing + needed + used > dev.size {
                refuse(
                    self,
                    format!(
                        "the new partitions need {} but {} is free",
                        human(needed),
                        human(dev.size.saturating_sub(existing + used))
                    ),
                    "make them smaller, or use `rest` for the last one",
                );
                continue;
            }
            if !content.is_empty() {
                if !self.policy.allow_destroy {
                    refuse(
                        self,
                        format!(
                            "{path} carries {} — partitioning it destroys that",
                            content.join(", ")
                        ),
                        "check the disk holds nothing you need, then run with --allow-destroy",
                    );
                    continue;
                }
                steps.push(ps(
                    Step::WipeSignatures {
                        disk: spec.name.clone(),
                        device: path.clone(),
                        found: content.clone(),
                    },
                    Risk::Destroys,
                    "erases what is on the disk before it is partitioned",
                ));
            }
            steps.push(ps(
                Step::CreatePartitions {
                    disk: spec.name.clone(),
                    device: path,
                    new_table: new_table || !content.is_empty(),
                    parts: new,
                },
                Risk::Safe,
                if new_table {
                    "new GPT on a blank disk"
                } else {
                    "new partitions in free space; existing ones are not touched"
                },
            ));
        }
        self.steps.extend(steps);
    }

    /// mdadm.conf lists the mirrors (by the UUID hyraid gave new ones), then the initramfs follows.
    fn mdadm_conf(&mut self) {
        let mut ours = Vec::new();
        for m in self
            .d
            .mirrors
            .values()
            .filter(|m| !m.absent && !self.blocked.contains(&m.name))
        {
            let uuid = self
                .creating
                .get(&m.name)
                .cloned()
                .or_else(|| self.array_of(m).and_then(|a| a.uuid.clone()));
            if let Some(u) = uuid {
                ours.push((Self::conf_entry(m), u));
            }
        }
        let gone: Vec<(String, Option<String>)> = if self.policy.allow_destroy {
            self.d
                .mirrors
                .values()
                .filter(|m| m.absent)
                .map(|m| {
                    (
                        Self::conf_entry(m),
                        self.array_of(m).and_then(|a| a.uuid.clone()),
                    )
                })
                .collect()
        } else {
            vec![]
        };
        if ours.is_empty() && gone.is_empty() {
            return;
        }
        let b = &self.o.boot;
        let path = b.mdadm_conf_path.clone().unwrap_or_else(|| {
            if b.initramfs_tool.as_deref() == Some("dracut") {
                "/etc/mdadm.conf"
            } else {
                "/etc/mdadm/mdadm.conf"
            }
            .into()
        });
        let new = match persist::managed_mdadm_conf(b.mdadm_conf.as_deref(), &ours, &gone) {
            Ok(text) => text,
            Err(e) => {
                let fix = "check the array with `mdadm --detail`; hyraid lists arrays in mdadm.conf only by a name and UUID it can write safely";
                self.refuse(format!("file {path}"), e.to_string(), fix);
                return;
            }
        };
        if b.mdadm_conf.as_deref() == Some(new.as_str()) {
            return;
        }
        let (old, tool) = (b.mdadm_conf.clone(), b.initramfs_tool.clone());
        self.steps.push(ps(
            Step::WriteFile {
                path,
                old,
                content: new,
                purpose: "ARRAY lines of the mirrors in the file".into(),
            },
            Risk::Safe,
            "without ARRAY lines the arrays come up as /dev/md127 (or NAME_0) after a reboot",
        ));
        match tool {
            Some(t) => self.steps.push(ps(
                Step::RegenerateInitramfs { tool: t },
                Risk::Safe,
                "early boot assembles arrays by the mdadm.conf inside the initramfs",
            )),
            None => self.notes.push(
                "no update-initramfs or dracut found: the initramfs keeps its old mdadm.conf"
                    .into(),
            ),
        }
    }

    /// Desired write-mostly set of a mirror, by disk name.
    fn write_mostly_set(&self, m: &MirrorSpec) -> BTreeSet<String> {
        match &m.write_mostly {
            WriteMostly::List(l) => l.iter().cloned().collect(),
            WriteMostly::Auto => {
                let rot = |n: &String| self.disks.get(n).map(|r| r.rotational).unwrap_or(false);
                let known = |n: &&String| self.disks.get(*n).is_some_and(|r| r.media_known);
                if m.members.iter().filter(known).any(|n| !rot(n)) {
                    m.members.iter().filter(|n| rot(n)).cloned().collect()
                } else {
                    BTreeSet::new()
                }
            }
        }
    }

    /// The whole disks on the machine that the file does not name, by stable name, size and
    /// model: what a missing disk's refusal lists, so a wrong id can be fixed from the message.
    fn disks_present(&self) -> String {
        let others: Vec<String> = self
            .o
            .block_devices
            .iter()
            .filter(|b| b.kind == DevKind::Disk && !self.file_knames.contains(&b.kname))
            .map(|b| {
                format!(
                    "{} ({}, {}{})",
                    stable_id(b)
                        .map(|i| format!("/dev/disk/by-id/{i}"))
                        .unwrap_or(format!("/dev/{}", b.kname)),
                    b.kname,
                    human(b.size),
                    b.model
                        .as_deref()
                        .map(|m| format!(", {m}"))
                        .unwrap_or_default()
                )
            })
            .collect();
        if others.is_empty() {
            "every disk on the machine is already named in the file".into()
        } else {
            format!(
                "disks present that the file does not name: {}",
                others.join("; ")
            )
        }
    }

    /// What uses a device right now, if anything: an array it is a member of, what is stacked on
    /// it (dm-crypt, LVM, md), a VG it is a PV of, a mount or active swap.
    fn use_of(&self, b: &BlockDevice) -> Option<String> {
        if let Some(a) = self.ix.array_of_member(&b.kname) {
            return Some(format!(
                "is a member of {}",
                a.name
                    .clone()
                    .map(|n| format!("/dev/md/{n}"))
                    .unwrap_or(format!("/dev/{}", a.kname))
            ));
        }
        if !b.holders.is_empty() {
            return Some(format!("is in use by {}", b.holders.join(", ")));
        }
        if let Some(vg) = self.ix.pv(&b.kname).and_then(|pv| pv.vg.as_ref()) {
            return Some(format!("is a PV of volume group {vg}"));
        }
        match b.mountpoint.as_deref() {
            Some("[SWAP]") => Some("is active swap".into()),
            Some(mp) => Some(format!("is mounted on {mp}")),
            None => None,
        }
    }

    /// Can hyraid put new content on this device? Some(signatures) when it carries data.
    fn usable(&self, r: &Resolved) -> Result<Vec<String>, String> {
        if let Some((n, true)) = r.part {
            // Created by this plan: blank by construction, unless its creation was refused.
            return if self.blocked_parts.contains(&r.spec.name) {
                Err(format!(
                    "partition {n} of disk `{}` cannot be created (see the refusal for disk {})",
                    r.spec.name, r.spec.name
                ))
            } else {
                Ok(vec![])
            };
        }
        let dev = r.dev.ok_or_else(|| {
            format!(
                "disk `{}` ({}) is not present on this machine; {}",
                r.spec.name,
                r.path,
                self.disks_present()
            )
        })?;
        if let Some(a) = self.ix.array_of_member(&dev.kname) {
            return Err(format!(
                "/dev/{} is already a member of {}",
                dev.kname,
                a.name
                    .clone()
                    .map(|n| format!("/dev/md/{n}"))
                    .unwrap_or(format!("/dev/{}", a.kname))
            ));
        }
        if !dev.holders.is_empty() {
            return Err(format!(
                "/dev/{} is in use by {}",
                dev.kname,
                dev.holders.join(", ")
            ));
        }
        if let Some(vg) = self.ix.pv(&dev.kname).and_then(|pv| pv.vg.as_ref()) {
            return Err(format!("/dev/{} is a PV of volume group {vg}", dev.kname));
        }
        if let Some(mp) = &dev.mountpoint {
            return Err(format!("/dev/{} is mounted on {mp}", dev.kname));
        }
        // Every partition, not only the first: one free partition says nothing of the others.
        // (Anything stacked above a partition — dm-crypt, LVM, md — is one of its holders.)
        let in_use: Vec<String> = self
            .o
            .block_devices
            .iter()
            .filter(|b| b.parent.as_deref() == Some(dev.kname.as_str()))
            .filter_map(|p| self.use_of(p).map(|u| format!("/dev/{} {u}", p.kname)))
            .collect();
        if !in_use.is_empty() {
            return Err(format!(
                "partitions of this disk are in use: {}",
                in_use.join("; ")
            ));
        }
        let mut found = dev.signature_summary();
        if self
            .o
            .block_devices
            .iter()
            .any(|b| b.parent.as_deref() == Some(dev.kname.as_str()))
            && found.is_empty()
        {
            found.push("partitions".into());
        }
        Ok(found)
    }

    fn mirror(&mut self, m: &MirrorSpec) -> Result<Vec<PlannedStep>, PlanError> {
        let wm = self.write_mostly_set(m);
        let unknown_media = m
            .members
            .iter()
            .any(|n| self.disks.get(n).is_some_and(|r| !r.media_known));
        if m.write_behind > 0 && wm.is_empty() && !unknown_media {
            // This mirror only: the others are planned as usual.
            self.refuse(
                format!("mirror {}", m.name),
                "write_behind > 0, but no member is write-mostly (`auto` marks rotational members when a non-rotational one exists)",
                "list a member in `write_mostly`, or set `write_behind: 0`",
            );
            self.blocked.insert(m.name.clone());
            return Ok(vec![]);
        }
        if self.adoption_refused(m) {
            return Ok(vec![]);
        }
        match self.array_of(m) {
            None if m.adopted.is_none()
                && let Some(st) = self.o.dev_md_strays.iter().find(|s| s.name == m.name) =>
            {
                self.refuse(format!("mirror {}", m.name), format!("{}; mdadm cannot create an array under that name", st.describe()), format!("remove the leftover if no array uses it (`rm /dev/md/{}`), or name the mirror differently", m.name));
                self.blocked.insert(m.name.clone());
                Ok(vec![])
            }
            None => Ok(self.create_mirror(m, &wm)),
            Some(a) => Ok(self.converge_mirror(m, &wm, a)),
        }
    }

    fn create_mirror(&mut self, m: &MirrorSpec, wm: &BTreeSet<String>) -> Vec<PlannedStep> {
        let object = format!("mirror {}", m.name);
        let mut out = Vec::new();
        let mut devices = Vec::new();
        let mut destroy: Vec<(String, String, Vec<String>)> = Vec::new();
        for name in &m.members {
            let r = &self.disks[name];
            match self.usable(r) {
                Err(why) => {
                    self.refuse(&object, format!("cannot create: {why}"), "free the device, or change the file; hyraid never takes a device that is in use");
                    self.blocked.insert(m.name.clone());
                    return vec![];
                }
                Ok(found) if !found.is_empty() => {
                    destroy.push((name.clone(), r.path.clone(), found))
                }
                Ok(_) => {}
            }
            devices.push(ArrayDevice {
                path: r.path.clone(),
                disk: name.clone(),
                write_mostly: wm.contains(name),
            });
        }
        if !destroy.is_empty() {
            if !self.policy.allow_destroy {
                for (disk, path, found) in &destroy {
                    self.refuse(
                        format!("disk {disk}"),
                        format!("{path} carries {} — creating mirror {} over it destroys that", found.join(", "), m.name),
                        "check the disk holds nothing you need, then run with --allow-destroy (or wipe it yourself)",
                    );
                }
                self.blocked.insert(m.name.clone());
                return vec![];
            }
            for (disk, path, found) in destroy {
                out.push(ps(
                    Step::WipeSignatures {
                        disk,
                        device: path,
                        found: found.clone(),
                    },
                    Risk::Destroys,
                    format!(
                        "erases {} so the new mirror can be created",
                        found.join(", ")
                    ),
                ));
            }
        }
        let sizes: Vec<u64> = m
            .members
            .iter()
            .filter_map(|n| self.disks[n].dev.map(|d| d.size))
            .collect();
        if let (Some(min), Some(max)) = (sizes.iter().min(), sizes.iter().max())
            && *max > min + min / 100
        {
            self.notes.push(format!(
                "mirror {}: members differ in size; the array is as large as the smallest ({})",
                m.name,
                human(*min)
            ));
        }
        // hyraid names the array's UUID itself, so mdadm.conf can list it before it exists.
        let uuid = new_array_uuid(&self.o.hostname, &m.name, &devices, &self.basis);
        let (risk, reason) = if m.write_behind > 0 {
            (
                Risk::DataAtRisk,
                format!(
                    "new mirror; write-behind {}: writes are acknowledged before the write-mostly member has them (it lags by up to {} writes)",
                    m.write_behind, m.write_behind
                ),
            )
        } else {
            (
                Risk::Safe,
                "new mirror; members checked blank; the initial resync runs in the background"
                    .to_string(),
            )
        };
        out.push(ps(
            Step::CreateArray {
                array: m.name.clone(),
                devices,
                bitmap_chunk: m.bitmap_chunk,
                write_behind: m.write_behind,
                uuid: uuid.clone(),
            },
            risk,
            reason,
        ));
        self.creating.insert(m.name.clone(), uuid);
        out
    }

    fn converge_mirror(
        &mut self,
        m: &MirrorSpec,
        wm: &BTreeSet<String>,
        a: &MdArray,
    ) -> Vec<PlannedStep> {
        let object = format!("mirror {}", m.name);
        let mut out = Vec::new();
        if a.level != "raid1" {
            self.refuse(
                &object,
                format!("{} is {}, not RAID1", m.md_path(), a.level),
                "hyraid manages RAID1 mirrors only; rename the mirror in the file",
            );
            self.blocked.insert(m.name.clone());
            return out;
        }
        let foreign = match (&a.metadata, &a.bitmap) {
            (Some(meta), _) => Some(format!(
                "/dev/md/{} has {meta} metadata (a volume of a firmware RAID container)",
                m.name
            )),
            (_, Some(b)) if b.kind != crate::observe::BitmapKind::Internal => Some(format!(
                "the bitmap of /dev/md/{} is {}",
                m.name,
                b.describe()
            )),
            _ => None,
        };
        if let Some(why) = foreign {
            self.refuse(&object, format!("{why}; hyraid manages md RAID1 with internal bitmaps only"), format!("leave it out of the file, or move it to an internal bitmap yourself (`mdadm --grow /dev/{k} --bitmap=none`, then `--bitmap=internal`)", k = a.kname));
            self.blocked.insert(m.name.clone());
            return out;
        }
        // Assembled but not started (a member was missing at boot): start it degraded, then plan
        // against the running array it becomes.
        let started;
        let inactive = a.array_state == "inactive";
        let a = if inactive {
            let n = a.members.iter().filter(|x| !x.faulty()).count();
            out.push(ps(
                Step::StartArray { array: m.name.clone(), md: a.kname.clone() },
                Risk::Degrades,
                format!("assembled but not running: {n} of {} members are present; it runs degraded until the missing member is replaced", a.raid_disks),
            ));
            let mut v = a.clone();
            for (i, x) in v.members.iter_mut().filter(|x| !x.faulty()).enumerate() {
                x.state.retain(|w| w != "spare");
                x.state.insert(0, "in_sync".into());
                x.slot = Some(i as u32);
            }
            v.array_state = "active".into();
            v.degraded = v.raid_disks.saturating_sub(n as u32);
            self.notes.push(format!("mirror {}: write-mostly, bitmap and write-behind are checked once it runs (apply verifies them)", m.name));
            started = v;
            &started
        } else {
            a
        };
        // Members. A disk the file names that is not in the array joins it: back into its old
        // place when it carries this array's superblock (--re-add), into a free slot (--add), or
        // in place of a working member the file no longer names (--replace, no loss of redundancy).
        let array_uuid = a.uuid.as_deref().map(crate::plan::lint::norm_uuid);
        let mut present: Vec<(&String, &str)> = Vec::new();
        let mut joining: Vec<(&String, Option<Vec<String>>)> = Vec::new();
        let mut spares: Vec<&String> = Vec::new(); // None = re-add
        for name in &m.members {
            let r = &self.disks[name];
            let Some(dev) = r.dev else {
                self.notes.push(format!(
                    "mirror {}: disk {name} ({}) is not present; the array runs without it",
                    m.name, r.path
                ));
                continue;
            };
            match a.member(&dev.kname) {
                // A spare without a slot: added by an interrupted hot replace; finish it.
                Some(x)
                    if !x.faulty()
                        && x.slot.is_none()
                        && x.has("spare")
                        && !x.has("replacement") =>
                {
                    present.push((name, dev.kname.as_str()));
                    spares.push(name);
                }
                Some(x) if !x.faulty() => present.push((name, dev.kname.as_str())),
                Some(_) => joining.push((name, None)),
                None => {
                    let ours = dev.signatures.iter().flatten().any(|s| {
                        s.kind == "linux_raid_member"
                            && s.uuid.as_deref().map(crate::plan::lint::norm_uuid) == array_uuid
                            && array_uuid.is_some()
                    });
                    if ours && dev.holders.is_empty() {
                        joining.push((name, None));
                        continue;
                    }
                    match self.usable(r) {
                        Err(why) => self.refuse(&object, format!("cannot add {name}: {why}"), "free the device or change the file"),
                        Ok(found) if !found.is_empty() && !self.policy.allow_destroy => self.refuse(
                            format!("disk {name}"),
                            format!("{} carries {} — adding it to mirror {} destroys that", r.path, found.join(", "), m.name),
                            "check the disk holds nothing you need, then run with --allow-destroy",
                        ),
                        Ok(found) => joining.push((name, Some(found))),
                    }
                }
            }
        }
        if a.members.iter().any(|x| x.faulty()) {
            out.push(ps(
                Step::RemoveFailed {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                },
                Risk::Safe,
                "failed members hold no current copy; removing them frees their slots",
            ));
        }
        let active = a
            .members
            .iter()
            .filter(|x| !x.faulty() && x.slot.is_some())
            .count();
        let mut free = (a.raid_disks as usize).saturating_sub(active);
        let mut leaving: Vec<&crate::observe::MdMember> = a
            .members
            .iter()
            .filter(|x| {
                !x.faulty()
                    && x.has("in_sync")
                    && !x.has("want_replacement")
                    && !self.file_knames.contains(&x.kname)
            })
            .collect();
        let mut replaced = false;
        let joins = !joining.is_empty();
        for (name, kind) in joining {
            let r = &self.disks[name];
            let device = ArrayDevice {
                path: r.path.clone(),
                disk: name.clone(),
                write_mostly: wm.contains(name),
            };
            // A wipe is planned only together with the join that needs it: when the join is
            // refused, nothing is erased.
            let wipe = kind.as_ref().filter(|f| !f.is_empty()).map(|found| {
                ps(
                    Step::WipeSignatures {
                        disk: name.clone(),
                        device: r.path.clone(),
                        found: found.clone(),
                    },
                    Risk::Destroys,
                    format!(
                        "erases {} before the disk joins the mirror",
                        found.join(", ")
                    ),
                )
            });
            if free == 0 && leaving.is_empty() {
                self.refuse(
                    &object,
                    format!("disk {name} is not a member and the array has no free slot"),
                    "name the member it replaces out of the file, or grow the array by hand",
                );
                continue;
            }
            out.extend(wipe);
            if free > 0 {
                free -= 1;
                out.push(match kind {
                    None => ps(Step::ReAddMember { array: m.name.clone(), md_device: m.md_device(), device }, Risk::Degrades, "this disk was a member of the mirror: re-added, only the blocks the bitmap marks as changed are copied"),
                    Some(_) => ps(Step::AddMember { array: m.name.clone(), md_device: m.md_device(), device }, Risk::Degrades, "the mirror is missing a member; it is rebuilt onto this disk (redundancy returns when recovery ends)"),
                });
            } else if let Some(old) = leaving.pop() {
                let old_path = self.stable_path(&old.kname);
                out.push(ps(Step::ReplaceMember { array: m.name.clone(), md_device: m.md_device(), old: old_path, new: device, spare_added: false },
                    Risk::Safe,
                    format!("/dev/{} is no longer in the file: {name} is copied in its place while it stays in service, so redundancy never drops", old.kname),
                ));
                replaced = true;
            }
        }
        for name in spares {
            let Some(old) = leaving.pop() else { break };
            let r = &self.disks[name];
            let old_path = self.stable_path(&old.kname);
            out.push(ps(
                Step::ReplaceMember {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                    old: old_path,
                    new: ArrayDevice {
                        path: r.path.clone(),
                        disk: name.clone(),
                        write_mostly: wm.contains(name),
                    },
                    spare_added: true,
                },
                Risk::Safe,
                format!(
                    "{name} is already a spare: the interrupted replacement of /dev/{} continues",
                    old.kname
                ),
            ));
            replaced = true;
        }
        if replaced {
            out.push(ps(
                Step::WaitIdle {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                },
                Risk::Safe,
                "the replaced member is failed out when the copy is complete",
            ));
            out.push(ps(
                Step::RemoveFailed {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                },
                Risk::Safe,
                "the replaced member leaves the array",
            ));
        }
        for x in leaving {
            // A member the file does not list is a width change hyraid does not make.
            self.refuse(
                &object,
                format!(
                    "member /dev/{} is not in the file; hyraid does not remove a working member",
                    x.kname
                ),
                format!(
                    "list /dev/{} in the mirror's `members`, or remove it from the array by hand (`mdadm --fail`, `--remove`, `--grow --raid-devices`)",
                    x.kname
                ),
            );
        }

        if a.degraded > 0 {
            self.notes.push(format!(
                "mirror {}: degraded ({} member(s) missing)",
                m.name, a.degraded
            ));
        }
        if !a.is_idle() {
            let pct = a
                .sync_completed
                .map(|(d, t)| {
                    if t > 0 {
                        format!(" {:.1}%", d as f64 * 100.0 / t as f64)
                    } else {
                        String::new()
                    }
                })
                .unwrap_or_default();
            self.notes.push(format!(
                "mirror {}: {}{pct} in progress",
                m.name, a.sync_action
            ));
        }
        if inactive {
            return out;
        }
        // Write-mostly on live members: set first, clear last (write-behind needs one).
        let mut set_on = Vec::new();
        let mut set_off = Vec::new();
        for (name, kname) in &present {
            let want = wm.contains(*name);
            let have = a.member(kname).is_some_and(|x| x.write_mostly());
            if want != have {
                let step = Step::SetWriteMostly {
                    array: m.name.clone(),
                    md: a.kname.clone(),
                    member: kname.to_string(),
                    disk: name.to_string(),
                    on: want,
                };
                if want {
                    set_on.push(ps(
                        step,
                        Risk::Safe,
                        "reads go to the fast members; this one only takes writes",
                    ));
                } else {
                    set_off.push(ps(step, Risk::Safe, "the file does not mark this member write-mostly; reads may be served from it"));
                }
            }
        }
        out.extend(set_on);
        // Bitmap.
        let have_chunk = a.bitmap.as_ref().map(|b| b.chunk);
        let recreate = match (m.bitmap_chunk, have_chunk) {
            (Some(w), Some(h)) => w != h,
            (w, h) => w.is_some() != h.is_some(),
        };
        let write_behind_changes = a
            .bitmap
            .as_ref()
            .is_some_and(|b| b.backlog != m.write_behind);
        if (recreate || write_behind_changes) && a.array_state == "readonly" {
            self.refuse(
                &object,
                "the array is read-only (`mdadm --readonly`); md refuses bitmap changes on it",
                format!("make it writable (`mdadm --readwrite {}`) if that is intended, then apply again", m.md_path()),
            );
            return out;
        }
        if recreate && a.auto_read_only() {
            // After boot or assembly an array is read-only until its first write; md refuses
            // bitmap changes until then, and a pending resync starts at that first write.
            out.push(ps(
                Step::ReadWrite {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                },
                Risk::Safe,
                "the array is auto-read-only (after boot or assembly); md refuses bitmap changes until it is read-write",
            ));
        }
        if recreate {
            if (!a.is_idle() || joins || a.auto_read_only() || a.resync_pending) && !replaced {
                out.push(ps(
                    Step::WaitIdle {
                        array: m.name.clone(),
                        md_device: m.md_device(),
                    },
                    Risk::Safe,
                    format!(
                        "the kernel refuses bitmap changes while {} runs",
                        if joins {
                            "the recovery this plan starts"
                        } else if a.is_idle() {
                            "the pending resync (it starts when the array turns read-write)"
                        } else {
                            a.sync_action.as_str()
                        }
                    ),
                ));
            }
            if let Some(have) = have_chunk {
                let why = match m.bitmap_chunk {
                    Some(c) => format!("bitmap chunk {} → {}: md changes it only by removing and re-adding; until re-added an unclean shutdown means a full resync", human(have), human(c)),
                    None => "the file says `bitmap: none`: every unclean shutdown will mean a full resync and a dropped member a full recovery".into(),
                };
                out.push(ps(
                    Step::RemoveBitmap {
                        array: m.name.clone(),
                        md_device: m.md_device(),
                    },
                    Risk::Degrades,
                    why,
                ));
            }
            if let Some(c) = m.bitmap_chunk {
                let risk = if m.write_behind > 0 {
                    Risk::DataAtRisk
                } else {
                    Risk::Safe
                };
                out.push(ps(Step::AddBitmap { array: m.name.clone(), md_device: m.md_device(), chunk: c, write_behind: m.write_behind }, risk, "internal write-intent bitmap: short resyncs after a crash, fast re-add of a dropped member"));
            }
        } else if let Some(b) = &a.bitmap
            && b.backlog != m.write_behind
        {
            let (risk, why) = if m.write_behind > b.backlog {
                (
                    Risk::DataAtRisk,
                    format!(
                        "write-behind {} → {}: writes are acknowledged before the write-mostly member has them",
                        b.backlog, m.write_behind
                    ),
                )
            } else {
                (
                    Risk::Safe,
                    format!("write-behind {} → {}", b.backlog, m.write_behind),
                )
            };
            out.push(ps(
                Step::SetWriteBehind {
                    array: m.name.clone(),
                    md: a.kname.clone(),
                    value: m.write_behind,
                },
                risk,
                why,
            ));
        }
        out.extend(set_off);
        out
    }

    /// Path and kernel name of a PV reference (kernel name None when it is created by this plan).
    fn pv_device(&self, r: &DeviceRef) -> (String, Option<String>) {
        match r {
            DeviceRef::Mirror(n) => self.mirror_pv(n),
            DeviceRef::Disk(n) => {
                let res = &self.disks[n];
                (res.path.clone(), res.dev.map(|d| d.kname.clone()))
            }
        }
    }

    fn volume_group(&mut self, vg: &VgSpec) {
        let object = format!("vg {}", vg.name);
        let waits: Vec<&str> = vg
            .pvs
            .iter()
            .filter_map(|r| match r {
                DeviceRef::Mirror(n) if self.blocked.contains(n) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        if !waits.is_empty() {
            self.refuse(
                &object,
                format!("waits for mirror {}", waits.join(", ")),
                "resolve the refusal of that mirror first",
            );
            return;
        }
        let observed = self.ix.vg(&vg.name);
        if observed.is_some_and(|v| v.partial) {
            // A PV is missing (e.g. its mirror is only being started): LVM cannot be trusted to
            // describe the VG now. Apply checks it again once everything runs.
            self.notes.push(format!("vg {}: a PV is missing (partial VG); its PVs and LVs are checked once all are present", vg.name));
            return;
        }
        let mut new_pvs: Vec<String> = Vec::new();
        let mut steps = Vec::new();
        for r in &vg.pvs {
            let (path, kname) = self.pv_device(r);
            let pv = kname.as_ref().and_then(|k| self.ix.pv(k));
            match pv {
                Some(p) if p.vg.as_deref() == Some(vg.name.as_str()) => continue,
                Some(p) if p.vg.is_some() => {
                    self.refuse(
                        &object,
                        format!("{path} is a PV of volume group {}", p.vg.clone().unwrap()),
                        "hyraid does not move PVs between VGs; fix the file",
                    );
                    return;
                }
                Some(_) => {}
                None => {
                    // Content check before pvcreate.
                    let content: Vec<String> = match r {
                        DeviceRef::Mirror(n) => self
                            .array_of_mirror(n)
                            .and_then(|a| a.fstype.clone())
                            .into_iter()
                            .collect(),
                        DeviceRef::Disk(n) => match self.usable(&self.disks[n]) {
                            Err(why) => {
                                self.refuse(
                                    &object,
                                    format!("cannot use disk {n} as a PV: {why}"),
                                    "free the device or change the file",
                                );
                                return;
                            }
                            Ok(f) => f,
                        },
                    };
                    if !content.is_empty() {
                        if !self.policy.allow_destroy || matches!(r, DeviceRef::Mirror(_)) {
                            self.refuse(
                                &object,
                                format!("{path} carries {} — making it a PV destroys that", content.join(", ")),
                                if matches!(r, DeviceRef::Mirror(_)) { "move the data away and wipe the array by hand (`wipefs`), then plan again" } else { "check the disk holds nothing you need, then run with --allow-destroy" },
                            );
                            return;
                        }
                        if let DeviceRef::Disk(n) = r {
                            steps.push(ps(
                                Step::WipeSignatures {
                                    disk: n.clone(),
                                    device: path.clone(),
                                    found: content.clone(),
                                },
                                Risk::Destroys,
                                "erases what is on the disk before it becomes a PV",
                            ));
                        }
                    }
                    steps.push(ps(
                        Step::CreatePv {
                            device: path.clone(),
                            object: r.name().to_string(),
                        },
                        Risk::Safe,
                        "LVM physical volume label",
                    ));
                }
            }
            new_pvs.push(path);
        }
        match observed {
            None => steps.push(ps(
                Step::CreateVg {
                    vg: vg.name.clone(),
                    pvs: new_pvs.clone(),
                },
                Risk::Safe,
                "new volume group",
            )),
            Some(_) if !new_pvs.is_empty() => steps.push(ps(
                Step::ExtendVg {
                    vg: vg.name.clone(),
                    pvs: new_pvs.clone(),
                },
                Risk::Safe,
                "PVs the file adds to the VG",
            )),
            Some(_) => {}
        }
        if let Some(o) = observed {
            let wanted: BTreeSet<Option<String>> =
                vg.pvs.iter().map(|r| self.pv_device(r).1).collect();
            let extra: Vec<String> = self
                .ix
                .pvs_of(&o.name)
                .filter(|p| !wanted.contains(&Some(p.kname.clone())))
                .map(|p| p.name.clone())
                .collect();
            for p in extra {
                {
                    self.refuse(
                        format!("vg {}", vg.name),
                        format!("PV {p} is not in the file; hyraid does not move data off a PV"),
                        format!("list {p} in the VG's `pvs`, or move its extents off and remove it by hand (`pvmove`, `vgreduce`)"),
                    );
                }
            }
        }
        self.steps.extend(steps);
        let vg_grows = observed.is_some() && !new_pvs.is_empty();
        let mut wc_steps = Vec::new();
        let mut removals = Vec::new();
        for lv in vg.lvs.values() {
            if lv.absent {
                if self.ix.lv(&vg.name, &lv.name).is_some_and(|l| !l.hidden) {
                    let step = Step::RemoveLv {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                    };
                    self.destroying(
                        step,
                        "the file says `state: absent`: the LV and everything on it is removed",
                        &mut removals,
                    );
                }
                continue;
            }
            self.logical_volume(vg, lv, vg_grows, &mut wc_steps);
        }
        self.steps.extend(wc_steps);
        self.steps.extend(removals);
    }

    fn destroying(&mut self, step: Step, reason: &str, out: &mut Vec<PlannedStep>) {
        if self.policy.allow_destroy {
            out.push(ps(step, Risk::Destroys, reason));
        } else {
            self.refuse(
                step.object(),
                format!("{}: {reason}", step.summary()),
                "run with --allow-destroy if that is what you want",
            );
        }
    }

    fn logical_volume(
        &mut self,
        vg: &VgSpec,
        lv: &LvSpec,
        vg_grows: bool,
        wc_steps: &mut Vec<PlannedStep>,
    ) {
        let o_vg = self.ix.vg(&vg.name);
        let ext = o_vg.map(|v| v.extent_size).unwrap_or(4 << 20);
        let stripes = lv.stripes.unwrap_or(1).max(1) as u64;
        let round = |bytes: u64| bytes.div_ceil(ext).div_ceil(stripes) * stripes * ext;
        let placement: Vec<String> = lv
            .pvs
            .as_ref()
            .map(|l| l.iter().map(|r| self.pv_device(r).0).collect())
            .unwrap_or_default();
        let observed = self.ix.lv(&vg.name, &lv.name).filter(|l| !l.hidden);
        let object = format!("lv {}/{}", vg.name, lv.name);
        if let Some(l) =
            observed.filter(|l| !matches!(l.segtype.as_str(), "linear" | "striped" | "writecache"))
        {
            self.refuse(
                &object,
                format!(
                    "is a {} LV; hyraid manages linear, striped and writecache LVs only",
                    l.segtype
                ),
                "leave it out of the file, or rename the LV in the file",
            );
            return;
        }
        match observed {
            None => {
                let size = match lv.size {
                    LvSize::Bytes(b) => {
                        if let Some(v) = o_vg {
                            let free: u64 = match &lv.pvs {
                                Some(l) => l
                                    .iter()
                                    .filter_map(|r| self.pv_device(r).1)
                                    .filter_map(|k| self.ix.pv(&k))
                                    .map(|p| p.free)
                                    .sum(),
                                None => v.free,
                            };
                            if round(b) > free && !vg_grows {
                                self.refuse(
                                    &object,
                                    format!(
                                        "needs {} ({}), but only {} ({}) is free where it may go",
                                        round(b),
                                        human(round(b)),
                                        free,
                                        human(free)
                                    ),
                                    "add PVs to the VG, or make the LV smaller",
                                );
                                return;
                            }
                        }
                        SizeArg::Bytes(b)
                    }
                    LvSize::PercentFree(p) => SizeArg::Extents(format!("{p}%FREE")),
                    LvSize::PercentVg(p) => SizeArg::Extents(format!("{p}%VG")),
                };
                self.steps.push(ps(
                    Step::CreateLv {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                        size,
                        stripes: lv.stripes,
                        pvs: placement,
                    },
                    Risk::Safe,
                    "new logical volume",
                ));
            }
            Some(l) => {
                let cur = l.size;
                match lv.size {
                    LvSize::Bytes(b) => {
                        let want = round(b);
                        if want > cur {
                            self.steps.push(ps(Step::ExtendLv { vg: vg.name.clone(), lv: lv.name.clone(), size: SizeArg::Bytes(want) }, Risk::Safe, format!("grow {} → {} bytes; the filesystem on it is not resized (grow it yourself)", cur, want)));
                        } else if want < cur {
                            self.refuse(&object, format!("is {}, larger than the file's {}; hyraid never shrinks an LV", human(cur), human(want)), format!("set its size to {} (or more) in the file; shrinking loses the data past the new end", human(cur)));
                        }
                    }
                    LvSize::PercentVg(p) => {
                        let want = o_vg
                            .map(|v| v.extent_count() * p as u64 / 100 / stripes * stripes * ext)
                            .unwrap_or(0);
                        if want > cur || vg_grows {
                            self.steps.push(ps(Step::ExtendLv { vg: vg.name.clone(), lv: lv.name.clone(), size: SizeArg::Extents(format!("{p}%VG")) }, Risk::Safe, format!("grow to {p}% of the VG (evaluated by LVM when it runs); the filesystem is not resized")));
                        }
                    }
                    LvSize::PercentFree(_) => {}
                }
                if let Some(s) = lv.stripes {
                    let have = if let Some(wc) = &l.writecache {
                        self.o
                            .lv(&vg.name, &wc.origin)
                            .map(|x| x.stripes)
                            .unwrap_or(1)
                    } else {
                        l.stripes
                    };
                    if have != s {
                        self.refuse(&object, format!("has {have} stripe(s), the file says {s}; an existing LV is not restriped"), format!("set `stripes: {have}` in the file"));
                    }
                }
            }
        }
        self.writecache(vg, lv, observed, wc_steps);
    }

    fn writecache(
        &mut self,
        vg: &VgSpec,
        lv: &LvSpec,
        observed: Option<&crate::observe::Lv>,
        out: &mut Vec<PlannedStep>,
    ) {
        let have = observed.and_then(|l| l.writecache.as_ref());
        let object = format!("lv {}/{}", vg.name, lv.name);
        match (&lv.writecache, have) {
            (None, None) => {
                // A detach interrupted between --splitcache and the removal leaves hyraid's own,
                // already flushed, cache volume behind.
                let cv = cachevol_name(&lv.name);
                if self.ix.lv(&vg.name, &cv).is_some_and(|c| {
                    !c.hidden && c.writecache.is_none() && c.tags.iter().any(|t| t == CACHEVOL_TAG)
                }) {
                    out.push(ps(
                        Step::RemoveLv { vg: vg.name.clone(), lv: cv },
                        Risk::Safe,
                        "leftover cache volume of an interrupted writecache detach (tagged hyraid_cachevol; flushed, holds no data)",
                    ));
                }
            }
            (None, Some(wc)) => {
                let ours = self
                    .o
                    .lv(&vg.name, &wc.cachevol)
                    .is_some_and(|c| c.tags.iter().any(|t| t == CACHEVOL_TAG));
                out.push(ps(
                    Step::DetachWritecache { vg: vg.name.clone(), lv: lv.name.clone(), remove_cachevol: ours.then(|| cachevol_name(&lv.name)) },
                    Risk::Safe,
                    "the file has no writecache for this LV: dirty blocks are written back to the main PVs first (slow), then the cache volume is removed",
                ));
            }
            (Some(want), Some(wc)) => {
                let want_settings: BTreeMap<String, String> = want.settings.clone();
                if want_settings != wc.settings {
                    out.push(ps(
                        Step::SetWritecacheSettings {
                            vg: vg.name.clone(),
                            lv: lv.name.clone(),
                            settings: want.settings_arg(),
                        },
                        Risk::Safe,
                        "writecache settings differ from the file (applied online)",
                    ));
                }
                if let Some(cv) = self.ix.lv(&vg.name, &wc.cachevol)
                    && cv.size != want.size.div_ceil(4 << 20) * (4 << 20)
                {
                    self.refuse(&object, format!("writecache is {}, the file says {}; hyraid does not resize a writecache", human(cv.size), human(want.size)), format!("set the writecache size to {} in the file; or remove `writecache`, apply (dirty blocks are flushed), then add it back with the new size", human(cv.size)));
                }
            }
            (Some(want), None) => {
                let cv = cachevol_name(&lv.name);
                let existing = self
                    .o
                    .lv(&vg.name, &cv)
                    .filter(|l| !l.hidden && l.writecache.is_none());
                let pvs: Vec<String> = want.pvs.iter().map(|r| self.pv_device(r).0).collect();
                let redundant = want.pvs.iter().all(|r| matches!(r, DeviceRef::Mirror(_)));
                if let Some(r) = want.pvs.iter().find_map(|r| match r {
                    DeviceRef::Mirror(n) if self.blocked.contains(n) => Some(n.clone()),
                    _ => None,
                }) {
                    self.refuse(
                        &object,
                        format!("writecache waits for mirror {r}"),
                        "resolve the refusal of that mirror first",
                    );
                    return;
                }
                match existing {
                    None => out.push(ps(Step::CreateCachevol { vg: vg.name.clone(), lv: lv.name.clone(), cachevol: cv.clone(), size: want.size, pvs }, Risk::Safe, "cache volume for the writecache")),
                    Some(e) if e.size < want.size => {
                        self.refuse(&object, format!("LV {}/{cv} exists ({} bytes) but is smaller than the writecache size {}", vg.name, e.size, want.size), "remove that LV, or change the writecache size");
                        return;
                    }
                    Some(_) => self.notes.push(format!("{object}: cache volume {cv} already exists (an earlier apply was interrupted); it is reused")),
                }
                if existing.is_none_or(|e| e.active) {
                    out.push(ps(
                        Step::DeactivateLv {
                            vg: vg.name.clone(),
                            lv: cv.clone(),
                        },
                        Risk::Safe,
                        "lvconvert attaches only an inactive cache volume",
                    ));
                }
                let (risk, why) = if redundant {
                    (
                        Risk::Safe,
                        "dm-writecache: writes land on the fast mirror and are written back to the LV's PVs later",
                    )
                } else {
                    (
                        Risk::DataAtRisk,
                        "dm-writecache on a non-redundant PV: dirty data lives only on that device until written back; losing it loses data and makes the LV unactivatable",
                    )
                };
                out.push(ps(
                    Step::AttachWritecache {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                        cachevol: cv,
                        settings: want.settings_arg(),
                    },
                    risk,
                    why,
                ));
            }
        }
    }

    fn remove_vg(&mut self, vg: &VgSpec) -> Vec<PlannedStep> {
        let mut out = Vec::new();
        if let Some(o) = self.ix.vg(&vg.name) {
            let pvs: Vec<String> = self
                .ix
                .pvs_of(&o.name)
                .map(|p| self.stable_pv_path(&p.kname, &p.name))
                .collect();
            self.destroying(
                Step::RemoveVg {
                    vg: vg.name.clone(),
                    pvs,
                },
                "the file says `state: absent`: every LV in the VG is removed",
                &mut out,
            );
        }
        out
    }

    fn remove_mirror(&mut self, m: &MirrorSpec) -> Vec<PlannedStep> {
        let mut out = Vec::new();
        let Some(a) = self.array_of(m) else {
            return out;
        };
        if self.adoption_refused(m) {
            return out;
        }
        if let Some(vg) = self.ix.pv(&a.kname).and_then(|p| p.vg.clone()) {
            let vg_goes = self.d.volume_groups.get(&vg).is_some_and(|v| v.absent);
            if !vg_goes {
                self.refuse(
                    format!("mirror {}", m.name),
                    format!("is a PV of volume group {vg}"),
                    format!("remove it from `{vg}` first, or mark `{vg}` absent"),
                );
                return out;
            }
        }
        let members: Vec<String> = a
            .members
            .iter()
            .map(|x| self.stable_path(&x.kname))
            .collect();
        self.destroying(
            Step::StopArray {
                array: m.name.clone(),
                md_device: m.md_device(),
                members,
            },
            "the file says `state: absent`: the array is stopped and its member superblocks erased",
            &mut out,
        );
        out
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
