//! LVM: PVs, volume groups, logical volumes and their writecaches, and removing VGs.

use super::*;
use crate::plan::step::{
    AttachWritecache, CreateCachevol, CreateLv, CreatePv, CreateVg, DeactivateLv, DetachWritecache,
    ExtendLv, ExtendVg, RemoveLv, RemoveVg, SetWritecacheSettings, WipeSignatures,
};

impl<'a> Planner<'a> {
    /// Path and kernel name of a PV reference (kernel name None when it is created by this plan).
    pub(super) fn pv_device(&self, r: &DeviceRef) -> (String, Option<String>) {
        match r {
            DeviceRef::Mirror(n) => self.mirror_pv(n),
            DeviceRef::Disk(n) => {
                let res = &self.disks[n];
                (res.path.clone(), res.dev.map(|d| d.kname.clone()))
            }
        }
    }

    pub(super) fn volume_group(&mut self, vg: &VgSpec) {
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
                                Step::WipeSignatures(WipeSignatures {
                                    disk: n.clone(),
                                    device: path.clone(),
                                    found: content.clone(),
                                }),
                                Risk::Destroys,
                                "erases what is on the disk before it becomes a PV",
                            ));
                        }
                    }
                    steps.push(ps(
                        Step::CreatePv(CreatePv {
                            device: path.clone(),
                            object: r.name().to_string(),
                        }),
                        Risk::Safe,
                        "LVM physical volume label",
                    ));
                }
            }
            new_pvs.push(path);
        }
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
        self.steps.extend(wc_steps);
        self.steps.extend(removals);
    }

    pub(super) fn destroying(&mut self, step: Step, reason: &str, out: &mut Vec<PlannedStep>) {
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

    pub(super) fn logical_volume(
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
                    Step::CreateLv(CreateLv {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                        size,
                        stripes: lv.stripes,
                        pvs: placement,
                    }),
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
                            self.steps.push(ps(Step::ExtendLv(ExtendLv { vg: vg.name.clone(), lv: lv.name.clone(), size: SizeArg::Bytes(want) }), Risk::Safe, format!("grow {} → {} bytes; the filesystem on it is not resized (grow it yourself)", cur, want)));
                        } else if want < cur {
                            self.refuse(&object, format!("is {}, larger than the file's {}; hyraid never shrinks an LV", human(cur), human(want)), format!("set its size to {} (or more) in the file; shrinking loses the data past the new end", human(cur)));
                        }
                    }
                    LvSize::PercentVg(p) => {
                        let want = o_vg
                            .map(|v| v.extent_count() * p as u64 / 100 / stripes * stripes * ext)
                            .unwrap_or(0);
                        if want > cur || vg_grows {
                            self.steps.push(ps(Step::ExtendLv(ExtendLv { vg: vg.name.clone(), lv: lv.name.clone(), size: SizeArg::Extents(format!("{p}%VG")) }), Risk::Safe, format!("grow to {p}% of the VG (evaluated by LVM when it runs); the filesystem is not resized")));
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

    pub(super) fn writecache(
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
                        Step::RemoveLv(RemoveLv { vg: vg.name.clone(), lv: cv }),
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
                    Step::DetachWritecache(DetachWritecache { vg: vg.name.clone(), lv: lv.name.clone(), remove_cachevol: ours.then(|| cachevol_name(&lv.name)) }),
                    Risk::Safe,
                    "the file has no writecache for this LV: dirty blocks are written back to the main PVs first (slow), then the cache volume is removed",
                ));
            }
            (Some(want), Some(wc)) => {
                let want_settings: BTreeMap<String, String> = want.settings.clone();
                if want_settings != wc.settings {
                    out.push(ps(
                        Step::SetWritecacheSettings(SetWritecacheSettings {
                            vg: vg.name.clone(),
                            lv: lv.name.clone(),
                            settings: want.settings_arg(),
                        }),
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
                    None => out.push(ps(Step::CreateCachevol(CreateCachevol { vg: vg.name.clone(), lv: lv.name.clone(), cachevol: cv.clone(), size: want.size, pvs }), Risk::Safe, "cache volume for the writecache")),
                    Some(e) if e.size < want.size => {
                        self.refuse(&object, format!("LV {}/{cv} exists ({} bytes) but is smaller than the writecache size {}", vg.name, e.size, want.size), "remove that LV, or change the writecache size");
                        return;
                    }
                    Some(_) => self.notes.push(format!("{object}: cache volume {cv} already exists (an earlier apply was interrupted); it is reused")),
                }
                if existing.is_none_or(|e| e.active) {
                    out.push(ps(
                        Step::DeactivateLv(DeactivateLv {
                            vg: vg.name.clone(),
                            lv: cv.clone(),
                        }),
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
                    Step::AttachWritecache(AttachWritecache {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                        cachevol: cv,
                        settings: want.settings_arg(),
                    }),
                    risk,
                    why,
                ));
            }
        }
    }

    pub(super) fn remove_vg(&mut self, vg: &VgSpec) -> Vec<PlannedStep> {
        let mut out = Vec::new();
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
                "the file says `state: absent`: every LV in the VG is removed",
                &mut out,
            );
        }
        out
    }
}
