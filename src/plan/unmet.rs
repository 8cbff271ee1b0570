//! What the file names that is not on the machine and that no step of this plan makes: a disk
//! not found (gone, or its id mistyped), a VG missing a PV, a mirror, VG or LV neither observed
//! nor created. Each is a refusal, so the plan never says "matches the file" while it is not
//! true and exits 1 (a drift check sees it); the refusal says what to do. Runs after every other
//! stage: an object another stage already refused is not refused twice.

use super::*;

impl<'a> Planner<'a> {
    /// Refuses every object of the file the machine does not have and this plan does not make.
    pub(in crate::plan) fn unmet(&mut self) {
        self.unknown_re_adds();
        self.re_adds_with_nothing_to_do();
        self.missing_disks();
        self.partial_vgs();
        self.objects_not_made();
    }

    /// A refusal already names `object`, or says something about `needle` (a disk's path).
    fn refused_about(&self, object: &str, needle: &str) -> bool {
        self.refused.iter().any(|r| {
            r.object == object
                || (!needle.is_empty() && (r.reason.contains(needle) || r.object.contains(needle)))
        })
    }

    /// `--re-add NAME` of a member that nothing puts back (it is in sync, or being rebuilt):
    /// said, so that the flag is never silently ignored.
    fn re_adds_with_nothing_to_do(&mut self) {
        for name in self.policy.re_add.clone() {
            let put_back = self.steps.iter().any(|s| match &s.step {
                Step::ReAddMember(r) => r.device.disk == name,
                Step::AddMember(a) => a.device.disk == name,
                _ => false,
            });
            let member = self.d.mirrors.values().any(|m| m.members.contains(&name));
            if member && !put_back && !self.refused.iter().any(|r| r.reason.contains(&name)) {
                self.notes.push(format!("--re-add {name}: nothing to put back: it is a member of its mirror already (in sync, or being rebuilt)"));
            }
        }
    }

    /// `--re-add NAME` for a name that is no member of any mirror of the file.
    fn unknown_re_adds(&mut self) {
        for name in self.policy.re_add.clone() {
            let members: BTreeSet<&String> = self
                .d
                .mirrors
                .values()
                .filter(|m| !m.absent)
                .flat_map(|m| &m.members)
                .collect();
            if !members.contains(&name) {
                let list: Vec<&str> = members.iter().map(|s| s.as_str()).collect();
                let fix = if list.is_empty() {
                    "--re-add puts a mirror's member back, and the file declares no mirror: leave the flag out".to_string()
                } else {
                    format!(
                        "give the name of a member under `mirrors:` (members: {})",
                        list.join(", ")
                    )
                };
                self.refuse(
                    format!("--re-add {name}"),
                    format!("the file has no mirror member named `{name}`"),
                    fix,
                );
            }
        }
    }

    /// What a disk of the file is for, in words: the mirrors and VGs that use it, its cache.
    fn roles_of(&self, spec: &DiskSpec) -> Vec<String> {
        let own =
            |n: &str| n == spec.name || n.split_once(':').is_some_and(|(d, _)| d == spec.name);
        let mut roles: Vec<String> = self
            .d
            .mirrors
            .values()
            .filter(|m| !m.absent && m.members.iter().any(|n| own(n)))
            .map(|m| {
                let state = match self.array_of(m) {
                    // md counts no missing member of an array it has not started.
                    Some(a) if a.array_state == "inactive" => {
                        "its array is assembled without it and not running: nothing on it can be used"
                    }
                    Some(a) if a.degraded > 0 => "the array runs without it: one copy fewer",
                    Some(_) => "its array runs complete all the same: is the id mistyped?",
                    None => "the mirror cannot be built without it",
                };
                format!("it is a member of mirror {} ({state})", m.name)
            })
            .collect();
        roles.extend(
            self.d
                .volume_groups
                .values()
                .filter(|v| {
                    !v.absent
                        && v.pvs
                            .iter()
                            .any(|r| matches!(r, DeviceRef::Disk(n) if own(n)))
                })
                .map(|v| format!("it is a PV of vg {}", v.name)),
        );
        if let Some(on) = spec.write_cache {
            roles.push(format!(
                "its write cache is to be {} (not set, and not checked, while the disk is not found)",
                if on { "on" } else { "off" }
            ));
        }
        roles
    }

    /// A disk the file names that is not on the machine. Not for a disk only absent objects use.
    fn missing_disks(&mut self) {
        let missing: Vec<&'a DiskSpec> = self
            .d
            .disks
            .values()
            .filter(|s| self.disks.get(&s.name).is_some_and(|r| r.dev.is_none()))
            .collect();
        for spec in missing {
            let path = self.disks[&spec.name].path.clone();
            let object = format!("disk {}", spec.name);
            if self.refused_about(&object, &path) || self.only_in_absent(&spec.name) {
                continue;
            }
            let roles = self.roles_of(spec);
            let named = match (&spec.id, &spec.serial) {
                (Some(_), _) => path.clone(),
                (None, Some(s)) => format!("serial {s}"),
                (None, None) => "no id".into(),
            };
            let reason = match roles.is_empty() {
                true => format!("disk `{}` ({named}) is not on this machine", spec.name),
                false => format!(
                    "disk `{}` ({named}) is not on this machine; {}",
                    spec.name,
                    roles.join("; ")
                ),
            };
            let mut fix = String::new();
            if let Some(close) = spec.id.as_deref().and_then(|id| self.close_id(id)) {
                fix.push_str(&format!(
                    "the id is close to /dev/disk/by-id/{close}, which is on this machine: if that is this disk, correct `disks.{}.id`; otherwise ",
                    spec.name
                ));
            }
            fix.push_str(&format!(
                "reconnect it (check its cable and power; `ls -l /dev/disk/by-id/` lists what the kernel sees), or replace it: put the new disk's id under `disks.{}`; {}",
                spec.name,
                self.disks_present()
            ));
            if let Some((m, dev)) = self.inactive_mirror_of(&spec.name) {
                // The kernel's device: an adopted array may have no /dev/md/NAME.
                fix.push_str(&format!(
                    "; mirror {m} is assembled but not running: `mdadm --run {dev}` starts it without this disk until then"
                ));
            }
            self.refuse(object, reason, fix);
        }
    }

    /// Every use of the disk is in a mirror or VG the file removes (and it sets nothing itself).
    fn only_in_absent(&self, disk: &str) -> bool {
        let own = |n: &str| n == disk || n.split_once(':').is_some_and(|(d, _)| d == disk);
        let spec = &self.d.disks[disk];
        let in_absent = self
            .d
            .mirrors
            .values()
            .any(|m| m.absent && m.members.iter().any(|n| own(n)));
        let in_present = self
            .d
            .mirrors
            .values()
            .any(|m| !m.absent && m.members.iter().any(|n| own(n)))
            || self.d.volume_groups.values().any(|v| {
                v.pvs
                    .iter()
                    .any(|r| matches!(r, DeviceRef::Disk(n) if own(n)))
            });
        in_absent && !in_present && spec.write_cache.is_none()
    }

    /// A mirror of the file with this disk among its members that is assembled but not running.
    fn inactive_mirror_of(&self, disk: &str) -> Option<(String, String)> {
        self.d
            .mirrors
            .values()
            .filter(|m| {
                m.members
                    .iter()
                    .any(|n| n == disk || n.starts_with(&format!("{disk}:")))
            })
            .find_map(|m| {
                self.array_of(m)
                    .filter(|a| a.array_state == "inactive")
                    .map(|a| (m.name.clone(), format!("/dev/{}", a.kname)))
            })
    }

    /// A by-id name on the machine one typo away from `id` (a character or two in a long id).
    pub(in crate::plan) fn close_id(&self, id: &str) -> Option<String> {
        let limit = (id.len() / 8).clamp(1, 3);
        self.o
            .block_devices
            .iter()
            .filter(|b| b.kind == DevKind::Disk && !self.file_knames.contains(&b.kname))
            .flat_map(|b| &b.by_id)
            .map(|i| (strsim::damerau_levenshtein(id, i), i))
            .filter(|(d, _)| *d <= limit)
            .min()
            .map(|(_, i)| i.clone())
    }

    /// A VG of the file that LVM reports partial (a PV is missing), unless this plan starts the
    /// mirror that is its missing PV: nothing of it can be planned or checked.
    fn partial_vgs(&mut self) {
        for vg in self.d.volume_groups.values().filter(|v| !v.absent) {
            if !self.ix.vg(&vg.name).is_some_and(|v| v.partial) {
                continue;
            }
            let starting = vg.pvs.iter().any(|r| {
                matches!(r, DeviceRef::Mirror(n) if self.steps.iter().any(|s| matches!(&s.step, Step::StartArray(x) if &x.array == n)))
            });
            if starting || self.refused_about(&format!("vg {}", vg.name), "") {
                continue;
            }
            self.refuse(
                format!("vg {}", vg.name),
                format!("vg {} is missing a PV (LVM reports it partial): its LVs on that PV have no device under them, and nothing of the VG is planned or checked", vg.name),
                "bring the missing PV back (see the refusals of its disks and mirrors; `pvs -o pv_name,vg_name,pv_missing` lists it); `vgreduce --removemissing` only once its data is given up",
            );
        }
    }

    /// A mirror, VG or LV of the file that is not observed, no step of this plan makes, and no
    /// refusal explains: the plan must not end in "matches the file" while it is missing.
    fn objects_not_made(&mut self) {
        let made: BTreeSet<String> = self
            .steps
            .iter()
            .map(|s| s.step.object().to_string())
            .collect();
        let mut unmet: Vec<String> = Vec::new();
        for m in self.d.mirrors.values().filter(|m| !m.absent) {
            let object = format!("mirror {}", m.name);
            if self.array_of(m).is_none() && !made.contains(&object) {
                unmet.push(object);
            }
        }
        for vg in self.d.volume_groups.values().filter(|v| !v.absent) {
            let object = format!("vg {}", vg.name);
            let observed = self.ix.vg(&vg.name);
            let opening = vg
                .pvs
                .iter()
                .any(|r| matches!(r, DeviceRef::Mirror(n) if self.opening.contains_key(n)));
            if opening {
                continue;
            }
            if observed.is_none() && !made.contains(&object) {
                unmet.push(object);
                continue;
            }
            if observed.is_some_and(|v| v.partial) {
                continue;
            }
            for lv in vg.lvs.values().filter(|l| !l.absent) {
                let object = format!("lv {}/{}", vg.name, lv.name);
                if self.ix.lv(&vg.name, &lv.name).is_none() && !made.contains(&object) {
                    unmet.push(object);
                }
            }
        }
        let blocked = !self.refused.is_empty();
        for object in unmet {
            // Anything refused stops the whole apply: an object that waits for it is explained.
            if blocked {
                continue;
            }
            self.refuse(
                &object,
                format!("{object} is not on this machine, and this plan does not make it"),
                "plan again with `HYRAID_TIMINGS=1` and report it: hyraid should have planned or refused it",
            );
        }
    }
}
