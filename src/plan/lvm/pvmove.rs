//! A PV the file drops from a VG's `pvs`: its extents moved onto the PVs that stay (`pvmove`,
//! in the background, waited for), then out of the VG and its label wiped (`vgreduce`,
//! `pvremove`); an interrupted move resumed first. Refused at plan time for what pvmove would
//! refuse or fail on: too little free space on the PVs that stay, a writecache's cache volume on
//! the PV, a stripe with no PV free of its other stripes to go to, an LV the file pins, a VG with
//! a missing PV, LV changes in the same apply.

use super::*;
use crate::config::size::human;
use crate::observe::{Lv, Pv};
use crate::plan::step::{MovePv, ReducePv, RemovePvLabel, ResumeMove, WaitMove};

/// Steps that change LVs: they and a move in the same VG do not go together (LVM locks the LVs
/// it moves, and the space the move takes is space they were planned on).
fn changes_lvs(s: &Step, vg: &str) -> bool {
    match s {
        Step::CreateLv(x) => x.vg == vg,
        Step::ExtendLv(x) => x.vg == vg,
        Step::CreateCachevol(x) => x.vg == vg,
        Step::AttachWritecache(x) => x.vg == vg,
        Step::DeactivateLv(x) => x.vg == vg,
        _ => false,
    }
}

impl<'a> Planner<'a> {
    /// The observed VG's PVs the file does not list, and the VG's moves in progress. `new_pvs`
    /// are the PVs this plan adds to the VG (they exist when the move runs); `lv_steps_from`
    /// is where this VG's LV steps start in `self.steps`.
    pub(in crate::plan) fn remove_pvs(
        &mut self,
        vg: &VgSpec,
        new_pvs: &[String],
        lv_steps_from: usize,
    ) {
        let object = format!("vg {}", vg.name);
        let wanted: BTreeSet<Option<String>> = vg.pvs.iter().map(|r| self.pv_device(r).1).collect();
        let extra: Vec<&Pv> = self
            .ix
            .pvs_of(&vg.name)
            .filter(|p| !wanted.contains(&Some(p.kname.clone())))
            .collect();
        let gone = self.removed_lvs(&vg.name, lv_steps_from);
        let lvs: Vec<&Lv> = self
            .o
            .lvm
            .lvs
            .iter()
            .filter(|l| l.vg == vg.name && !gone.contains(&l.name))
            .collect();
        let moving: Vec<&Lv> = lvs.iter().copied().filter(|l| l.pvmove.is_some()).collect();
        if extra.is_empty() && moving.is_empty() {
            return;
        }
        if self.steps[lv_steps_from..]
            .iter()
            .any(|s| changes_lvs(&s.step, &vg.name))
        {
            let what = if extra.is_empty() {
                "a pvmove is in progress".to_string()
            } else {
                format!("the file takes {} out", names(&extra))
            };
            self.refuse(
                &object,
                format!("{what} and changes LVs of the VG in the same apply"),
                "apply one change at a time: keep the PV in `pvs` (or let the move finish) and apply the LV change, then remove the PV",
            );
            return;
        }
        let mut steps = Vec::new();
        let mut moving_from = BTreeSet::new();
        if let Some(m) = moving.first().and_then(|l| l.pvmove.as_ref()) {
            moving_from.extend(
                moving
                    .iter()
                    .filter_map(|l| l.pvmove.as_ref())
                    .map(|m| m.source_kname.clone()),
            );
            if !extra.iter().any(|p| p.kname == m.source_kname) {
                self.notes.push(format!(
                    "vg {}: a pvmove off {} that the file did not ask for is in progress; it is resumed and waited for, never aborted",
                    vg.name, m.source
                ));
            }
            let source = self.stable_pv_path(&m.source_kname, &m.source);
            let inactive = moving.iter().any(|l| !l.active);
            steps.push(ps(
                Step::ResumeMove(ResumeMove {
                    vg: vg.name.clone(),
                    pv: source.clone(),
                    activate: inactive,
                }),
                Risk::Safe,
                format!(
                    "a pvmove off {source} is in progress or was interrupted (hyraid or the machine stopped): bare `pvmove` restarts the polling of an interrupted move where it stopped and leaves one being polled alone; the extents not yet copied are still on the source{}",
                    if inactive { "; the move LV is inactive (the boot did not activate the VG) and bare pvmove skips an inactive one, so the VG is activated first, with no poller of its own" } else { "" }
                ),
            ));
            steps.push(wait_step(&vg.name));
        }
        let Some(moves) = self.plan_moves(vg, &extra, &lvs, new_pvs, &moving_from) else {
            return;
        };
        steps.extend(moves);
        for p in &extra {
            let path = self.stable_pv_path(&p.kname, &p.name);
            steps.push(ps(
                Step::ReducePv(ReducePv {
                    vg: vg.name.clone(),
                    pv: path,
                }),
                Risk::Safe,
                "the file no longer lists this PV; it holds no extent by then (vgreduce refuses one that does), so only the LVM label of an empty PV is wiped, nothing on the array or disk is lost",
            ));
        }
        self.steps.extend(steps);
    }

    /// LVs this plan removes before the moves run (`state: absent`, and hyraid's cache volume of
    /// a writecache it detaches), with their hidden parts: their extents do not move.
    fn removed_lvs(&self, vg: &str, from: usize) -> BTreeSet<String> {
        let mut gone = BTreeSet::new();
        for s in &self.steps[from..] {
            match &s.step {
                Step::RemoveLv(r) if r.vg == vg => {
                    gone.insert(r.lv.clone());
                    if let Some(wc) = self.ix.lv(vg, &r.lv).and_then(|l| l.writecache.as_ref()) {
                        gone.insert(wc.cachevol.clone());
                        gone.insert(wc.origin.clone());
                    }
                }
                // lvm2 names an attached cache volume NAME_cvol and gives it back its name on
                // --splitcache; hyraid then removes its own.
                Step::DetachWritecache(d) if d.vg == vg && d.remove_cachevol.is_some() => {
                    gone.extend(d.remove_cachevol.clone());
                    if let Some(wc) = self.ix.lv(vg, &d.lv).and_then(|l| l.writecache.as_ref()) {
                        gone.insert(wc.cachevol.clone());
                    }
                }
                _ => {}
            }
        }
        gone
    }

    /// The moves off the PVs leaving, each waited for, or None when one is refused.
    fn plan_moves(
        &mut self,
        vg: &VgSpec,
        extra: &[&Pv],
        lvs: &[&Lv],
        new_pvs: &[String],
        moving_from: &BTreeSet<String>,
    ) -> Option<Vec<PlannedStep>> {
        let object = format!("vg {}", vg.name);
        let ext = self
            .ix
            .vg(&vg.name)
            .map(|v| v.extent_size)
            .unwrap_or(4 << 20)
            .max(1);
        let leaving: BTreeSet<&str> = extra.iter().map(|p| p.kname.as_str()).collect();
        // The PVs that stay, with their free extents (new ones: their whole device).
        let mut stay: Vec<(String, u64)> = self
            .ix
            .pvs_of(&vg.name)
            .filter(|p| !leaving.contains(p.kname.as_str()))
            .map(|p| (p.kname.clone(), p.free / ext))
            .collect();
        for path in new_pvs {
            let r = vg.pvs.iter().find(|r| self.pv_device(r).0 == *path)?;
            let (_, kname) = self.pv_device(r);
            let size = kname.as_deref().and_then(|k| match r {
                DeviceRef::Mirror(n) => self
                    .array_of_mirror(n)
                    .filter(|a| a.kname == k)
                    .map(|a| a.size_kib * 1024),
                DeviceRef::Disk(_) => self.ix.device(k).map(|d| d.size),
            });
            let (Some(k), Some(size)) = (kname, size) else {
                self.refuse(
                    &object,
                    format!(
                        "{path} is new and {} is taken out in the same apply",
                        names(extra)
                    ),
                    "apply once with both PVs listed, then take the old one out",
                );
                return None;
            };
            stay.push((k, crate::plan::capacity::pv_extents(size, ext)));
        }
        let dests: Vec<String> = vg.pvs.iter().map(|r| self.pv_device(r).0).collect();
        let mut steps = Vec::new();
        let mut needed = 0;
        for p in extra {
            let on = |l: &Lv| l.extents.get(&p.kname).copied().unwrap_or(0);
            let here: Vec<&Lv> = lvs.iter().copied().filter(|l| on(l) > 0).collect();
            let n: u64 = here.iter().map(|l| on(l)).sum();
            if n == 0 || moving_from.contains(&p.kname) {
                continue;
            }
            self.movable(vg, p, &here, lvs, &stay, ext)?;
            needed += n;
            let path = self.stable_pv_path(&p.kname, &p.name);
            steps.push(ps(
                Step::MovePv(MovePv {
                    vg: vg.name.clone(),
                    pv: path,
                    to: dests.clone(),
                    extents: n,
                }),
                Risk::Safe,
                format!(
                    "the file no longer lists this PV: its {n} extents ({}) are copied through a temporary mirror and each segment switches only once its copy is complete, so the data is never in one place only; a kill or crash leaves the move to be resumed",
                    human(n * ext)
                ),
            ));
            steps.push(wait_step(&vg.name));
        }
        let free: u64 = stay.iter().map(|(_, f)| f).sum();
        if needed > free {
            self.refuse(
                &object,
                format!(
                    "{} hold {needed} extents ({}) but the PVs that stay have {free} free ({})",
                    names(extra),
                    human(needed * ext),
                    human(free * ext)
                ),
                "add a PV to the VG's `pvs`, shrink or remove LVs by hand, or keep the PV",
            );
            return None;
        }
        Some(steps)
    }

    /// Refusals for what pvmove cannot move off `p`: a writecache's cache volume, an LV the file
    /// pins, a stripe with no PV free of the LV's other stripes.
    fn movable(
        &mut self,
        vg: &VgSpec,
        p: &Pv,
        here: &[&Lv],
        lvs: &[&Lv],
        stay: &[(String, u64)],
        ext: u64,
    ) -> Option<()> {
        let object = format!("vg {}", vg.name);
        for l in here {
            let top = lvs.iter().find(|w| {
                w.writecache
                    .as_ref()
                    .is_some_and(|c| c.cachevol == l.name || c.origin == l.name)
            });
            if let Some(w) = top.filter(|w| w.writecache.as_ref().unwrap().cachevol == l.name) {
                self.refuse(
                    &object,
                    format!("{} holds {}, the cache volume of the writecache on {}; LVM cannot move it (pvmove: \"Unable to pvmove device used for writecache.\")", p.name, l.name, w.name),
                    format!("detach the writecache first (drop `writecache:` from {} and apply), then take the PV out", w.name),
                );
                return None;
            }
            let name = top.map(|w| w.name.as_str()).unwrap_or(&l.name);
            if let Some(spec) = vg.lvs.get(name).filter(|s| s.pvs.is_some()) {
                self.refuse(
                    &object,
                    format!(
                        "LV {} has extents on {} and the file pins it to {}",
                        spec.name,
                        p.name,
                        spec.pvs
                            .iter()
                            .flatten()
                            .map(|r| r.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    format!(
                        "drop `pvs:` from {} (then LVM places the moved extents), or keep the PV",
                        spec.name
                    ),
                );
                return None;
            }
            if l.stripes > 1 {
                let n = l.extents.get(&p.kname).copied().unwrap_or(0);
                let room: u64 = stay
                    .iter()
                    .filter(|(k, _)| !l.extents.contains_key(k))
                    .map(|(_, f)| f)
                    .sum();
                if room < n {
                    self.refuse(
                        &object,
                        format!("{name} is striped over {} PVs; its stripe on {} ({n} extents, {}) must go to a PV that holds none of its other stripes, and those that stay have {room} free extents", l.stripes, p.name, human(n * ext)),
                        "add a PV to the VG's `pvs` for the stripe, or keep the PV",
                    );
                    return None;
                }
            }
        }
        Some(())
    }

    /// A VG with a missing PV: taking a PV out is refused (LVM cannot move or reduce then).
    pub(in crate::plan) fn refuse_removal_in_partial(&mut self, vg: &VgSpec) {
        let wanted: BTreeSet<Option<String>> = vg.pvs.iter().map(|r| self.pv_device(r).1).collect();
        let extra: Vec<&Pv> = self
            .ix
            .pvs_of(&vg.name)
            .filter(|p| p.name != "[unknown]" && !wanted.contains(&Some(p.kname.clone())))
            .collect();
        if !extra.is_empty() {
            let what = names(&extra);
            self.refuse(
                format!("vg {}", vg.name),
                format!("the file takes {what} out, but a PV of the VG is missing"),
                "bring the missing PV back (start its mirror) first, then plan again",
            );
        }
    }

    /// PV labels in no VG on the file's mirrors and disks that no VG of the file lists: what a
    /// removal interrupted between `vgreduce` and `pvremove` leaves. Wiped (an orphan PV holds
    /// no extent). Not on a mirror the file gives a filesystem: its mkfs overwrites the label,
    /// marked `destroys`.
    pub(in crate::plan) fn orphan_labels(&mut self) {
        let mut listed = BTreeSet::new();
        for vg in self.d.volume_groups.values() {
            for r in &vg.pvs {
                listed.extend(self.pv_device(r).1);
            }
        }
        let mut refs: Vec<DeviceRef> = self
            .d
            .mirrors
            .values()
            .filter(|m| m.filesystem.is_none())
            .map(|m| DeviceRef::Mirror(m.name.clone()))
            .collect();
        refs.extend(self.disks.keys().map(|n| DeviceRef::Disk(n.clone())));
        for r in refs {
            if matches!(&r, DeviceRef::Mirror(n) if self.blocked.contains(n)) {
                continue;
            }
            let (path, kname) = self.pv_device(&r);
            let Some(k) = kname.filter(|k| !listed.contains(k)) else {
                continue;
            };
            if self.ix.pv(&k).is_some_and(|p| p.vg.is_none()) {
                self.steps.push(ps(
                    Step::RemovePvLabel(RemovePvLabel { pv: path }),
                    Risk::Safe,
                    format!("{} carries the label of a PV in no VG that no VG of the file lists (a removal stopped between vgreduce and pvremove); a PV in no VG holds no data", r.name()),
                ));
            }
        }
    }
}

fn wait_step(vg: &str) -> PlannedStep {
    ps(
        Step::WaitMove(WaitMove { vg: vg.into() }),
        Risk::Safe,
        "vgreduce needs every extent moved; the move goes on in LVM's poller if hyraid stops waiting",
    )
}

fn names(pvs: &[&Pv]) -> String {
    pvs.iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
