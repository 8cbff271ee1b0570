//! Disks: drive write caches and their udev rule, GPT partitions, and whether a device is free to take.

use super::*;
use crate::plan::step::{CreatePartitions, ReloadUdev, SetWriteCache, WipeSignatures, WriteFile};

impl<'a> Planner<'a> {
    pub(super) fn write_caches(&mut self) {
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
            match dev.serial.as_deref().filter(|s| crate::observe::names::rule_safe(s)) {
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
                Step::SetWriteCache(SetWriteCache {
                    disk: name.clone(),
                    device: r.path.clone(),
                    on: want,
                    tool,
                    kname: (tool == CacheTool::Sdparm).then(|| dev.kname.clone()),
                }),
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
                Step::WriteFile(WriteFile { path: WRITE_CACHE_RULE_PATH.into(), old: cur.map(str::to_string), content: new, purpose: "udev rule that re-applies drive write caches at boot and hotplug".into() }),
                Risk::Safe,
                "hdparm -W is lost at every power cycle; the rule sets it again whenever the disk appears",
            ));
            self.steps.push(ps(
                Step::ReloadUdev(ReloadUdev {}),
                Risk::Safe,
                "udevd reads the new rule",
            ));
        }
    }

    /// GPT partitions the file declares and the disk lacks: a new table on a blank disk, or new
    /// partitions in free space. Existing ones are matched by name, never moved or resized.
    pub(super) fn partitions(&mut self) {
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
                    Step::WipeSignatures(WipeSignatures {
                        disk: spec.name.clone(),
                        device: path.clone(),
                        found: content.clone(),
                    }),
                    Risk::Destroys,
                    "erases what is on the disk before it is partitioned",
                ));
            }
            steps.push(ps(
                Step::CreatePartitions(CreatePartitions {
                    disk: spec.name.clone(),
                    device: path,
                    new_table: new_table || !content.is_empty(),
                    parts: new,
                }),
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

    /// The whole disks on the machine that the file does not name, by stable name, size and
    /// model: what a missing disk's refusal lists, so a wrong id can be fixed from the message.
    pub(super) fn disks_present(&self) -> String {
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
    pub(super) fn use_of(&self, b: &BlockDevice) -> Option<String> {
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
    pub(super) fn usable(&self, r: &Resolved) -> Result<Vec<String>, String> {
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
