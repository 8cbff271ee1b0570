//! LVM: PVs, volume groups, logical volumes and their writecaches, and removing VGs.

use super::*;

mod cache;
mod cache_media;
mod devices_file;
mod lv;
mod pvmove;
mod writecache_resize;
use crate::plan::step::{
    AttachWritecache, CreateCachevol, CreateLv, CreatePv, CreateVg, DeactivateLv, DetachWritecache,
    ExtendLv, ExtendVg, RemoveLv, RemoveVg, SetWritecacheSettings, WipeSignatures,
};

impl<'a> Planner<'a> {
    /// The file's volume groups in order; returns the removals of those marked `absent`, which
    /// run after everything else.
    pub(in crate::plan) fn volume_groups(&mut self) -> Vec<PlannedStep> {
        let mut removals = Vec::new();
        for vg in self.d.volume_groups.values() {
            if vg.absent {
                removals.extend(self.remove_vg(vg));
            } else {
                self.volume_group(vg);
            }
        }
        self.orphan_labels();
        removals
    }

    /// Path and kernel name of a PV reference (kernel name None when it is created by this plan).
    pub(in crate::plan) fn pv_device(&self, r: &DeviceRef) -> (String, Option<String>) {
        match r {
            DeviceRef::Mirror(n) => self.mirror_pv(n),
            DeviceRef::Disk(n) => {
                let res = &self.disks[n];
                (res.path.clone(), res.dev.map(|d| d.kname.clone()))
            }
        }
    }

    /// One volume group of the file: its PVs, the VG, then its LVs (writecaches after them, LV
    /// removals last). Nothing is planned for a VG that waits for a mirror or is partial.
    pub(in crate::plan) fn volume_group(&mut self, vg: &VgSpec) {
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
        let opening: Vec<&str> = vg
            .pvs
            .iter()
            .filter_map(|r| match r {
                DeviceRef::Mirror(n) if self.opening.contains_key(n) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        if !opening.is_empty() {
            let (started, opened): (Vec<&str>, Vec<&str>) =
                opening.iter().partition(|n| self.starting.contains(**n));
            if !started.is_empty() {
                self.notes.push(format!("vg {}: mirror {} is assembled but not running, so what is on it (a PV of this VG, or anything else) cannot be read yet; this plan starts it, and `hyraid apply` then plans what stands on it, shows it and asks before it runs it (a plan saved now stops after the start)", vg.name, started.join(", ")));
            }
            if !opened.is_empty() {
                self.notes.push(format!("vg {}: mirror {} is opened by this plan; what is inside is seen only then, so the VG is checked once it is open (apply verifies it)", vg.name, opened.join(", ")));
            }
            return;
        }
        let observed = self.ix.vg(&vg.name);
        if observed.is_some_and(|v| v.partial) {
            self.refuse_removal_in_partial(vg);
            // A PV is missing (e.g. its mirror is only being started): LVM cannot be trusted to
            // describe the VG now. Apply checks it again once everything runs.
            self.notes.push(format!("vg {}: a PV is missing (partial VG); its PVs and LVs are checked once all are present", vg.name));
            return;
        }
        let Some((mut steps, new_pvs)) = self.new_pvs(vg, &object) else {
            return;
        };
        match observed {
            None => steps.push(ps(
                Step::CreateVg(CreateVg {
                    vg: vg.name.clone(),
                    pvs: new_pvs.clone(),
                }),
                Risk::Safe,
                "new volume group",
            )),
            Some(_) if !new_pvs.is_empty() => steps.push(ps(
                Step::ExtendVg(ExtendVg {
                    vg: vg.name.clone(),
                    pvs: new_pvs.clone(),
                }),
                Risk::Safe,
                "PVs the file adds to the VG",
            )),
            Some(_) => {}
        }
        self.steps.extend(steps);
        let vg_grows = observed.is_some() && !new_pvs.is_empty();
        let lv_steps_from = self.steps.len();
        self.lvs(vg, vg_grows);
        if observed.is_some() {
            self.remove_pvs(vg, &new_pvs, lv_steps_from);
        }
    }

    /// The PVs of the file not yet in the VG, with the steps that make them PVs (a wipe first
    /// where allowed). `None` when one of them is refused (then nothing of the VG is planned).
    fn new_pvs(&mut self, vg: &VgSpec, object: &str) -> Option<(Vec<PlannedStep>, Vec<String>)> {
        let mut new_pvs: Vec<String> = Vec::new();
        let mut steps = Vec::new();
        for r in &vg.pvs {
            let (path, kname) = self.pv_device(r);
            let pv = kname.as_ref().and_then(|k| self.ix.pv(k));
            match pv {
                Some(p) if p.vg.as_deref() == Some(vg.name.as_str()) => continue,
                Some(p) if p.vg.is_some() => {
                    self.refuse(
                        object,
                        format!("{path} is a PV of volume group {}", p.vg.clone().unwrap()),
                        "hyraid does not move PVs between VGs; fix the file",
                    );
                    return None;
                }
                Some(_) => {}
                None => steps.extend(self.create_pv(r, &path, object)?),
            }
            new_pvs.push(path);
        }
        Some((steps, new_pvs))
    }

    /// `pvcreate` on a device that is no PV yet, after checking what it carries: a disk's
    /// signatures are wiped only with --allow-destroy, an array's content never.
    fn create_pv(&mut self, r: &DeviceRef, path: &str, object: &str) -> Option<Vec<PlannedStep>> {
        let mut steps = Vec::new();
        let content: Vec<String> = match r {
            // An encrypted mirror's PV is its mapping: what the opened device carries (nothing
            // when this plan formats it).
            DeviceRef::Mirror(n)
                if self
                    .d
                    .mirrors
                    .get(n)
                    .is_some_and(|m| m.encryption.is_some()) =>
            {
                let m = &self.d.mirrors[n];
                self.mapping_kname(m)
                    .and_then(|k| self.o.other_devices.iter().find(|o| o.kname == k))
                    .and_then(|o| o.fstype.clone())
                    .into_iter()
                    .collect()
            }
            DeviceRef::Mirror(n) => self
                .array_of_mirror(n)
                .and_then(|a| a.fstype.clone())
                .into_iter()
                .collect(),
            DeviceRef::Disk(n) => match self.usable(&self.disks[n]) {
                Err(why) => {
                    self.refuse(
                        object,
                        format!("cannot use disk {n} as a PV: {why}"),
                        "free the device or change the file",
                    );
                    return None;
                }
                Ok(f) => f,
            },
        };
        if let Some((why, fix)) = self.hidden_by_devices_file(r, path, &content) {
            self.refuse(object, why, &fix);
            return None;
        }
        if !content.is_empty() {
            if !self.policy.allow_destroy || matches!(r, DeviceRef::Mirror(_)) {
                self.refuse(
                    object,
                    format!(
                        "{path} carries {} — making it a PV destroys that",
                        content.join(", ")
                    ),
                    if matches!(r, DeviceRef::Mirror(_)) {
                        "move the data away and wipe the array by hand (`wipefs`), then plan again"
                    } else {
                        "check the disk holds nothing you need, then run with --allow-destroy"
                    },
                );
                return None;
            }
            if let DeviceRef::Disk(n) = r {
                steps.push(ps(
                    Step::WipeSignatures(WipeSignatures {
                        disk: n.clone(),
                        device: path.to_string(),
                        found: content.clone(),
                    }),
                    Risk::Destroys,
                    "erases what is on the disk before it becomes a PV",
                ));
            }
        }
        steps.push(ps(
            Step::CreatePv(CreatePv {
                device: path.to_string(),
                object: r.name().to_string(),
            }),
            Risk::Safe,
            "LVM physical volume label",
        ));
        Some(steps)
    }

    /// The VG's LVs in order, then their writecaches, then the removals of LVs marked `absent`.
    fn lvs(&mut self, vg: &VgSpec, vg_grows: bool) {
        let mut wc_steps = Vec::new();
        let mut removals = Vec::new();
        for lv in vg.lvs.values() {
            if lv.absent {
                if self.ix.lv(&vg.name, &lv.name).is_some_and(|l| !l.hidden)
                    && !self.mounted_refused(&vg.name, Some(&lv.name))
                    && !self.open_mapping_refused(&vg.name, &lv.name)
                {
                    let step = Step::RemoveLv(RemoveLv {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                    });
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
        self.tune_leftover(vg, &mut removals);
        // Filesystems before writecaches: lvconvert then sees the filesystem's block size.
        self.make_filesystems(vg);
        self.steps.extend(wc_steps);
        self.steps.extend(removals);
    }

    /// The scratch LV of a tune run that did not end (its name and tag, not in the file): removed
    /// as safe, since it holds only fio's test data.
    fn tune_leftover(&mut self, vg: &VgSpec, out: &mut Vec<PlannedStep>) {
        use crate::config::{TUNE_LV, TUNE_TAG};
        // A detach of the scratch LV's writecache interrupted before its cache volume went.
        let cv = crate::config::cachevol_name(TUNE_LV);
        if !vg.lvs.contains_key(TUNE_LV)
            && self.ix.lv(&vg.name, &cv).is_some_and(|c| {
                !c.hidden && c.writecache.is_none() && c.tags.iter().any(|t| t == CACHEVOL_TAG)
            })
        {
            out.push(ps(
                Step::RemoveLv(RemoveLv {
                    vg: vg.name.clone(),
                    lv: cv,
                }),
                Risk::Safe,
                "leftover cache volume of a tune run's scratch LV (tagged hyraid_cachevol; flushed, holds no data)",
            ));
        }
        let Some(l) = self.ix.lv(&vg.name, TUNE_LV) else {
            return;
        };
        if vg.lvs.contains_key(TUNE_LV) || l.hidden || !l.tags.iter().any(|t| t == TUNE_TAG) {
            return;
        }
        if self.mounted_refused(&vg.name, Some(TUNE_LV)) {
            return;
        }
        // A writecache the run attached goes first (flushed; its cache volume is hyraid's).
        if let Some(wc) = &l.writecache {
            let ours = self
                .o
                .lv(&vg.name, &wc.cachevol)
                .is_some_and(|c| c.tags.iter().any(|t| t == CACHEVOL_TAG));
            out.push(ps(
                Step::DetachWritecache(DetachWritecache {
                    vg: vg.name.clone(),
                    lv: TUNE_LV.into(),
                    remove_cachevol: ours.then(|| lv::detached_name(&wc.cachevol)),
                }),
                Risk::Safe,
                "the scratch LV's writecache, before the LV is removed (its dirty blocks are fio's test data)",
            ));
        }
        out.push(ps(
            Step::RemoveLv(RemoveLv {
                vg: vg.name.clone(),
                lv: TUNE_LV.into(),
            }),
            Risk::Safe,
            format!("scratch LV of a `hyraid tune` run that did not end (tagged {TUNE_TAG}; it holds only fio's test data)"),
        ));
    }

    pub(in crate::plan) fn destroying(
        &mut self,
        step: Step,
        reason: &str,
        out: &mut Vec<PlannedStep>,
    ) {
        if self.policy.allow_destroy {
            out.push(ps(step, Risk::Destroys, reason));
        } else {
            self.refuse(
                step.object().to_string(),
                format!("{}: {reason}", step.summary()),
                "run with --allow-destroy if that is what you want",
            );
        }
    }

    /// A filesystem of the VG (or of its LV `lv`) that is mounted: lvremove and vgremove refuse
    /// an LV in use ("contains a filesystem in use"), so the removal is refused here, with the
    /// mount point. True when refused.
    fn mounted_refused(&mut self, vg: &str, lv: Option<&str>) -> bool {
        let mounted: Vec<(String, String)> = self
            .o
            .filesystems
            .iter()
            .filter(|f| !f.md && f.vg == vg && lv.is_none_or(|l| f.lv == l))
            .filter_map(|f| Some((f.lv.clone(), f.mountpoint.clone()?)))
            .collect();
        if mounted.is_empty() {
            return false;
        }
        let list: Vec<String> = mounted
            .iter()
            .map(|(l, mp)| format!("{vg}/{l} at {mp}"))
            .collect();
        let object = match lv {
            Some(l) => format!("lv {vg}/{l}"),
            None => format!("vg {vg}"),
        };
        self.refuse(
            object,
            format!("the file removes it (`state: absent`), and {} mounted: LVM refuses to remove an LV in use", list.join(", ")),
            "unmount it (`umount MOUNTPOINT`) and take its line out of /etc/fstab, then plan again",
        );
        true
    }

    pub(in crate::plan) fn remove_vg(&mut self, vg: &VgSpec) -> Vec<PlannedStep> {
        let mut out = Vec::new();
        if self.mounted_refused(&vg.name, None) {
            return out;
        }
        // An LV of it with a LUKS mapping open: vgremove would fail ("in use").
        let lvs: Vec<String> = (self.o.lvm.lvs.iter())
            .filter(|l| l.vg == vg.name && !l.hidden)
            .map(|l| l.name.clone())
            .collect();
        if lvs.iter().any(|l| self.open_mapping_refused(&vg.name, l)) {
            return out;
        }
        if let Some(o) = self.ix.vg(&vg.name) {
            let pvs: Vec<String> = self
                .ix
                .pvs_of(&o.name)
                .map(|p| self.stable_pv_path(&p.kname, &p.name))
                .collect();
            self.destroying(
                Step::RemoveVg(RemoveVg {
                    vg: vg.name.clone(),
                    pvs,
                }),
                &format!(
                    "the file says `state: absent`: every LV in the VG is removed ({})",
                    self.o
                        .lvm
                        .lvs
                        .iter()
                        .filter(|l| l.vg == vg.name && !l.hidden)
                        .map(|l| l.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                &mut out,
            );
        }
        out
    }
}
