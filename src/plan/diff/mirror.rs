//! Mirrors: creating them, which members are write-mostly, removing them, and the ARRAY lines of mdadm.conf.

use super::*;
use crate::plan::step::{CreateArray, RegenerateInitramfs, StopArray, WipeSignatures, WriteFile};

impl<'a> Planner<'a> {
    /// mdadm.conf lists the mirrors (by the UUID hyraid gave new ones), then the initramfs follows.
    pub(super) fn mdadm_conf(&mut self) {
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
            Step::WriteFile(WriteFile {
                path,
                old,
                content: new,
                purpose: "ARRAY lines of the mirrors in the file".into(),
            }),
            Risk::Safe,
            "without ARRAY lines the arrays come up as /dev/md127 (or NAME_0) after a reboot",
        ));
        match tool {
            Some(t) => self.steps.push(ps(
                Step::RegenerateInitramfs(RegenerateInitramfs { tool: t }),
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
    pub(super) fn write_mostly_set(&self, m: &MirrorSpec) -> BTreeSet<String> {
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

    pub(super) fn mirror(&mut self, m: &MirrorSpec) -> Result<Vec<PlannedStep>, PlanError> {
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

    pub(super) fn create_mirror(
        &mut self,
        m: &MirrorSpec,
        wm: &BTreeSet<String>,
    ) -> Vec<PlannedStep> {
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
                    Step::WipeSignatures(WipeSignatures {
                        disk,
                        device: path,
                        found: found.clone(),
                    }),
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
            Step::CreateArray(CreateArray {
                array: m.name.clone(),
                devices,
                bitmap_chunk: m.bitmap_chunk,
                write_behind: m.write_behind,
                uuid: uuid.clone(),
            }),
            risk,
            reason,
        ));
        self.creating.insert(m.name.clone(), uuid);
        out
    }

    pub(super) fn remove_mirror(&mut self, m: &MirrorSpec) -> Vec<PlannedStep> {
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
            Step::StopArray(StopArray {
                array: m.name.clone(),
                md_device: m.md_device(),
                members,
            }),
            "the file says `state: absent`: the array is stopped and its member superblocks erased",
            &mut out,
        );
        out
    }
}
