//! Mirrors: creating them, which members are write-mostly, removing them, and the ARRAY lines of mdadm.conf.

use super::*;

mod adopt;
pub use adopt::array_for;
mod bitmap;
pub(in crate::plan) mod converge;
mod former;
mod members;
mod size;
mod width;
use crate::plan::step::{CreateArray, StopArray, WipeSignatures};

impl<'a> Planner<'a> {
    /// The md work of the file's mirrors: every wipe first, then the rest, in mirror order.
    pub(in crate::plan) fn mirrors(&mut self) -> Result<(), PlanError> {
        let mut md_steps = Vec::new();
        for m in self.d.mirrors.values().filter(|m| !m.absent) {
            let mut steps = self.mirror(m)?;
            self.make_mirror_filesystem(m, &mut steps);
            md_steps.extend(steps);
        }
        let (wipes, rest): (Vec<_>, Vec<_>) = md_steps
            .into_iter()
            .partition(|s| matches!(s.step, Step::WipeSignatures(_)));
        self.steps.extend(wipes);
        self.steps.extend(rest);
        Ok(())
    }

    /// The removal of the mirrors the file marks `absent`.
    pub(in crate::plan) fn removed_mirrors(&mut self) -> Vec<PlannedStep> {
        let absent: Vec<&MirrorSpec> = self.d.mirrors.values().filter(|m| m.absent).collect();
        absent
            .into_iter()
            .flat_map(|m| self.remove_mirror(m))
            .collect()
    }

    /// Desired write-mostly set of a mirror, by disk name.
    pub(in crate::plan) fn write_mostly_set(&self, m: &MirrorSpec) -> BTreeSet<String> {
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

    pub(in crate::plan) fn mirror(
        &mut self,
        m: &MirrorSpec,
    ) -> Result<Vec<PlannedStep>, PlanError> {
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
        let a = self.array_of(m);
        if a.is_none()
            && m.adopted.is_none()
            && let Some(st) = self.o.dev_md_strays.iter().find(|s| s.name == m.name)
        {
            self.refuse(format!("mirror {}", m.name), format!("{}; mdadm cannot create an array under that name", st.describe()), format!("remove the leftover if no array uses it (`rm /dev/md/{}`), or name the mirror differently", m.name));
            self.blocked.insert(m.name.clone());
            return Ok(vec![]);
        }
        if a.is_none()
            && m.adopted.is_none()
            && self.d.host.is_none()
            && let Some(why) = crate::config::superblock_name_too_long(&self.o.hostname, &m.name)
        {
            let fix = format!(
                "shorten the mirror's name to at most {} characters, or the hostname",
                crate::config::MD_NAME_MAX.saturating_sub(self.o.hostname.len() + 1)
            );
            self.refuse(
                format!("mirror {}", m.name),
                format!("cannot create: {why}"),
                fix,
            );
            self.blocked.insert(m.name.clone());
            return Ok(vec![]);
        }
        match a {
            None => Ok(self.create_mirror(m, &wm)),
            Some(a) => Ok(self.converge_mirror(m, &wm, a)),
        }
    }

    pub(in crate::plan) fn create_mirror(
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
                    let fix = self.unusable_fix(r);
                    self.refuse(&object, format!("cannot create: {why}"), fix);
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
        let uuid = new_array_uuid(&self.o.hostname, &m.name, &devices, self.basis.as_str());
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
                metadata: m.metadata,
            }),
            risk,
            reason,
        ));
        self.creating.insert(m.name.clone(), uuid);
        out
    }

    pub(in crate::plan) fn remove_mirror(&mut self, m: &MirrorSpec) -> Vec<PlannedStep> {
        let mut out = Vec::new();
        let Some(a) = self.array_of(m) else {
            return out;
        };
        if self.adoption_refused(m) {
            return out;
        }
        if let Some(vg) = self.ix.pv(&a.kname).and_then(|p| p.vg.clone()) {
            let vg_goes = self.d.volume_groups.get(&vg).is_some_and(|v| v.absent);
            // The file also drops it from the VG: the plan moves its extents off first.
            let path = self.stable_pv_path(&a.kname, &a.kname);
            let taken_out = self
                .steps
                .iter()
                .any(|s| matches!(&s.step, Step::ReducePv(r) if r.vg == vg && r.pv == path));
            if !vg_goes && !taken_out {
                self.refuse(
                    format!("mirror {}", m.name),
                    format!("is a PV of volume group {vg}"),
                    format!("remove it from `{vg}` first, or mark `{vg}` absent"),
                );
                return out;
            }
        }
        if let Some((fstype, mp)) = self
            .o
            .filesystems
            .iter()
            .find(|f| f.md && f.kname == a.kname)
            .and_then(|f| Some((&f.fstype, f.mountpoint.as_ref()?)))
        {
            self.refuse(
                format!("mirror {}", m.name),
                format!("carries {fstype} mounted at {mp}; mdadm --stop cannot take a mounted array"),
                format!("move the data away, unmount it (`umount {mp}`) and drop its line from /etc/fstab, then plan again"),
            );
            return out;
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

/// A UUID for a new array, in mdadm's form: derived from the host, the name, the members and the
/// observation, so the same plan always names the same UUID and a re-created array gets a new one.
pub(in crate::plan) fn new_array_uuid(
    host: &str,
    name: &str,
    devices: &[ArrayDevice],
    basis: &str,
) -> String {
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
