//! Disks: drive write caches and their udev rule, GPT partitions, and whether a device is free to take.

use super::*;

mod grow;
mod partitions;
mod write_cache;

/// A disk of the file, matched to the machine.
pub(in crate::plan) struct Resolved<'a> {
    pub(in crate::plan) spec: &'a DiskSpec,
    pub(in crate::plan) dev: Option<&'a BlockDevice>,
    /// The stable path commands use.
    pub(in crate::plan) path: String,
    pub(in crate::plan) rotational: bool,
    /// For `disk:partition`: the partition's number, and whether this plan creates it.
    pub(in crate::plan) part: Option<(u32, bool)>,
    /// False for a missing disk whose media nothing tells (no `media:`, no `write_cache`, no
    /// line in hyraid's udev rule): `rotational` is then a guess that decides nothing.
    pub(in crate::plan) media_known: bool,
}

/// Partition number from a kernel name: `sda2` → 2, `nvme0n1p3` → 3.
pub(in crate::plan) fn part_number(kname: &str) -> Option<u32> {
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

/// A device's most stable /dev/disk/by-id name: the WWN when it has one.
pub(in crate::plan) fn stable_id(d: &BlockDevice) -> Option<&String> {
    d.by_id
        .iter()
        .find(|i| i.starts_with("wwn-"))
        .or(d.by_id.first())
}

impl<'a> Planner<'a> {
    /// The path hyraid uses for an observed device: its stable by-id name, else /dev/KNAME.
    pub(in crate::plan) fn stable_path(&self, kname: &str) -> String {
        self.o
            .device(kname)
            .and_then(stable_id)
            .map(|i| format!("/dev/disk/by-id/{i}"))
            .unwrap_or(format!("/dev/{kname}"))
    }

    /// A PV by its stable name: `/dev/md/NAME` for an array, the by-id name for a disk or
    /// partition; LVM's own name when neither is known.
    pub(in crate::plan) fn stable_pv_path(&self, kname: &str, lvm_name: &str) -> String {
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

    /// Match every disk of the file to the machine: by `id:` (checked against `serial:`), else
    /// by serial; its stable path, its media, and its partitions by GPT name.
    pub(in crate::plan) fn resolve_disks(&mut self) -> Result<(), PlanError> {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        let mut partitions_of: BTreeMap<&str, Vec<&BlockDevice>> = BTreeMap::new();
        for b in &self.o.block_devices {
            if let Some(p) = &b.parent {
                partitions_of.entry(p.as_str()).or_default().push(b);
            }
        }
        for spec in self.d.disks.values() {
            let dev = self.find_disk(spec)?;
            if let Some(dv) = dev {
                if dv.kind != DevKind::Disk {
                    return Err(identity(
                        spec,
                        format!("{} is a partition, not a whole disk", dv.kname),
                    ));
                }
                if let Some(other) = seen.insert(dv.kname.clone(), spec.name.clone()) {
                    return Err(identity(
                        spec,
                        format!(
                            "/dev/{} is also disk `{other}`: one physical disk under two names, and a mirror of the two would hold one copy; declare each disk once, by one of its ids",
                            dv.kname
                        ),
                    ));
                }
            }
            let path = match (&spec.id, dev) {
                (Some(id), _) => format!("/dev/disk/by-id/{id}"),
                (None, Some(dv)) => match stable_id(dv) {
                    Some(i) => format!("/dev/disk/by-id/{i}"),
                    None => {
                        return Err(identity(
                            spec,
                            format!(
                                "/dev/{} has no /dev/disk/by-id name; hyraid only addresses disks by stable names",
                                dv.kname
                            ),
                        ));
                    }
                },
                (None, None) => String::new(),
            };
            let whole = Resolved {
                spec,
                dev,
                path,
                rotational: false,
                part: None,
                media_known: false,
            };
            let whole = self.with_media(whole);
            let children: Vec<&BlockDevice> = dev
                .and_then(|dv| partitions_of.get(dv.kname.as_str()).cloned())
                .unwrap_or_default();
            self.resolve_partitions(&whole, &children);
            self.disks.insert(spec.name.clone(), whole);
        }
        self.file_knames = self
            .disks
            .values()
            .filter_map(|r| r.dev.map(|d| d.kname.clone()))
            .collect();
        Ok(())
    }

    /// The device a disk of the file names: by `id:` (and then its serial must match), else by
    /// serial (which must match one disk). `None` when it is not on the machine.
    fn find_disk(&self, spec: &'a DiskSpec) -> Result<Option<&'a BlockDevice>, PlanError> {
        Ok(match (&spec.id, &spec.serial) {
            (Some(id), serial) => {
                let dev = self.ix.by_id(id);
                if let (Some(dv), Some(s)) = (dev, serial)
                    && dv.serial.as_deref() != Some(s.as_str())
                {
                    return Err(identity(
                        spec,
                        format!(
                            "/dev/disk/by-id/{id} is now /dev/{} with serial {}, but the file says serial {s}; the disk was swapped or recabled — nothing will be touched until the file and the machine agree",
                            dv.kname,
                            dv.serial.as_deref().unwrap_or("(none)")
                        ),
                    ));
                }
                if dev.is_none()
                    && let Some(s) = serial
                    && let Some(other) = self
                        .o
                        .block_devices
                        .iter()
                        .find(|b| b.serial.as_deref() == Some(s.as_str()))
                {
                    return Err(identity(
                        spec,
                        format!(
                            "serial {s} is present as /dev/{} but /dev/disk/by-id/{id} does not exist; the id in the file does not name this disk",
                            other.kname
                        ),
                    ));
                }
                dev
            }
            (None, Some(s)) => {
                let all: Vec<&BlockDevice> = self
                    .o
                    .block_devices
                    .iter()
                    .filter(|b| b.kind == DevKind::Disk && b.serial.as_deref() == Some(s.as_str()))
                    .collect();
                if all.len() > 1 {
                    return Err(identity(
                        spec,
                        format!(
                            "serial {s} matches {} disks; add `id:` to say which",
                            all.len()
                        ),
                    ));
                }
                all.first().copied()
            }
            (None, None) => None,
        })
    }

    /// A disk's media: `media:` in the file, else what the kernel reports. A missing disk keeps
    /// the media it had when last seen: `write_cache` (hyraid takes it for rotational disks
    /// only) or its line in hyraid's udev rule say it was an HDD.
    fn with_media(&self, mut r: Resolved<'a>) -> Resolved<'a> {
        let spec = r.spec;
        let last_seen_hdd = spec.write_cache.is_some()
            || self
                .o
                .boot
                .write_cache_rule
                .as_deref()
                .is_some_and(|rule| persist::rule_entry(rule, &spec.name).is_some());
        let media = spec
            .rotational_override
            .or(r.dev.map(|d| d.rotational))
            .or(last_seen_hdd.then_some(true));
        r.media_known = media.is_some();
        r.rotational = media.unwrap_or(false);
        r
    }

    /// The partitions of a disk of the file, matched by GPT name among `children`; missing ones
    /// get the next numbers (created by this plan when the disk is present).
    fn resolve_partitions(&mut self, whole: &Resolved<'a>, children: &[&'a BlockDevice]) {
        let spec = whole.spec;
        // A partition in the table on the disk that the kernel does not know yet (its re-read
        // failed while the disk was in use) keeps its number: this plan registers it.
        let table = whole
            .dev
            .and_then(|d| self.o.partition_tables.get(&d.kname));
        let mut next = children
            .iter()
            .filter_map(|b| part_number(&b.kname))
            .chain(table.into_iter().flatten().map(|e| e.number))
            .max()
            .unwrap_or(0);
        for ps_ in &spec.partitions {
            let found = children
                .iter()
                .find(|b| b.partlabel.as_deref() == Some(ps_.name.as_str()))
                .copied();
            let listed = table
                .into_iter()
                .flatten()
                .find(|e| e.name.as_deref() == Some(ps_.name.as_str()));
            let (pdev, number, pending) = match (found, listed) {
                (Some(b), _) => (Some(b), part_number(&b.kname).unwrap_or(0), false),
                (None, Some(e)) => (None, e.number, true),
                (None, None) => {
                    next += 1;
                    (None, next, whole.dev.is_some())
                }
            };
            self.disks.insert(
                format!("{}:{}", spec.name, ps_.name),
                Resolved {
                    spec,
                    dev: pdev,
                    path: format!("{}-part{number}", whole.path),
                    rotational: whole.rotational,
                    part: Some((number, pending)),
                    media_known: whole.media_known,
                },
            );
        }
    }

    /// What the file alone could not show to defeat a mirror: write-mostly on every fast member,
    /// by the media the machine reports (validate catches it when the file declares `media:`).
    pub(in crate::plan) fn check_observed_media(&self) -> Result<(), PlanError> {
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
}

impl<'a> Planner<'a> {
    /// The whole disks on the machine that the file does not name, by stable name, size and
    /// model: what a missing disk's refusal lists, so a wrong id can be fixed from the message.
    pub(in crate::plan) fn disks_present(&self) -> String {
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
    pub(in crate::plan) fn use_of(&self, b: &BlockDevice) -> Option<String> {
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

    /// What to do when [`Self::usable`] says no, by why.
    pub(in crate::plan) fn unusable_fix(&self, r: &Resolved) -> &'static str {
        match (r.part, r.dev) {
            (Some((_, true)), _) => "fix the refusal of the disk's partitions first (see it above)",
            (_, None) => {
                "check the disk's `id` (or `serial`) against `ls -l /dev/disk/by-id/`, or connect the disk"
            }
            _ => "free the device, or change the file; hyraid never takes a device that is in use",
        }
    }

    /// Can hyraid put new content on this device? Some(signatures) when it carries data.
    pub(in crate::plan) fn usable(&self, r: &Resolved) -> Result<Vec<String>, String> {
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
            // A mistyped id: the one it is close to comes first, before the list.
            let close = r
                .spec
                .id
                .as_deref()
                .and_then(|id| self.close_id(id))
                .map(|c| format!("the id is close to /dev/disk/by-id/{c}, which is on this machine (if that is this disk, correct `disks.{}.id`); ", r.spec.name))
                .unwrap_or_default();
            format!(
                "disk `{}` ({}) is not present on this machine; {close}{}",
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
}

/// The whole disk a file's disk names: by its by-id name, else by its serial. (The plan itself
/// resolves with more care, in `resolve_disks`: a serial that contradicts the id, or matches two
/// disks, is an error there.)
pub fn disk_for<'o>(o: &'o Observed, spec: &DiskSpec) -> Option<&'o BlockDevice> {
    spec.id.as_ref().and_then(|i| o.by_id(i)).or_else(|| {
        spec.serial.as_ref().and_then(|s| {
            o.block_devices
                .iter()
                .find(|b| b.kind == DevKind::Disk && b.serial.as_ref() == Some(s))
        })
    })
}

/// A disk of the file cannot be matched to the machine safely.
fn identity(spec: &DiskSpec, detail: String) -> PlanError {
    PlanError::Identity {
        disk: spec.name.clone(),
        detail,
    }
}
