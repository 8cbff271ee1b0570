//! pvmove and vgreduce as lvm2 2.03.16 does them (tools/pvmove.c, tools/pvmove_poll.c,
//! lib/metadata/vg.c `vgreduce_single`). A move is a hidden mirror LV `pvmove0` (attr `p`) that
//! holds the extents on the source and their new place; the LVs it moves are locked and their
//! moved segments point to it. Here an LV's moved extents are kept under the key
//! `pvmove0:DEST` of its extent map (no PV has that name, so no PV segment shows them), and the
//! move LV's `copy_percent` advances while something polls it (each second of waiting: a quarter);
//! at 100% the extents are on DEST, the move LV is gone and the LVs are unlocked.

use super::lvm::pv_target;
use crate::observe::{Lv, PvMove};
use crate::sim::world::SimState;
use std::collections::BTreeMap;

/// `pvmove --background SRC [DEST...]`, or bare `pvmove --background` (restart every
/// interrupted move).
pub(super) fn pvmove(st: &mut SimState, args: &[&str]) -> Result<String, String> {
    let Some((src, dests)) = args.split_first() else {
        // polldaemon.c `_poll_vg`: an inactive move LV is skipped, the others polled.
        st.moves_stalled = false;
        let skipped: String = st
            .world
            .lvm
            .lvs
            .iter()
            .filter(|l| !l.active)
            .filter_map(|l| l.pvmove.as_ref())
            .map(|m| {
                format!(
                    "  {}: Skipping inactive LV. Try lvchange or vgchange.\n",
                    m.source
                )
            })
            .collect();
        return Ok(skipped);
    };
    let k = pv_target(st, src)?;
    let Some(pv) = st.world.pv(&k).filter(|p| p.vg.is_some()).cloned() else {
        return Err(format!("  Failed to find physical volume \"{src}\".\n"));
    };
    let vg = pv.vg.clone().unwrap();
    if st
        .world
        .lvm
        .lvs
        .iter()
        .any(|l| l.pvmove.as_ref().is_some_and(|m| m.source_kname == k))
    {
        st.moves_stalled = false;
        return Ok(format!("  Detected pvmove in progress for {src}.\n"));
    }
    let on = |l: &Lv| l.extents.get(&k).copied().unwrap_or(0);
    let lvs: Vec<Lv> = st
        .world
        .lvm
        .lvs
        .iter()
        .filter(|l| l.vg == vg && on(l) > 0)
        .cloned()
        .collect();
    if lvs.is_empty() {
        return Err(format!("  No data to move for {vg}.\n"));
    }
    if lvs.iter().any(|l| is_cachevol(st, l)) {
        return Err("  Unable to pvmove device used for writecache.\n".into());
    }
    let dest_knames: Vec<String> = if dests.is_empty() {
        st.world.pvs_of(&vg).map(|p| p.kname.clone()).collect()
    } else {
        dests
            .iter()
            .map(|d| pv_target(st, d))
            .collect::<Result<_, _>>()?
    };
    let mut free: Vec<(String, u64)> = st
        .world
        .pvs_of(&vg)
        .filter(|p| p.kname != k && dest_knames.contains(&p.kname))
        .map(|p| (p.kname.clone(), p.free / super::lvm::EXTENT))
        .collect();
    let needed: u64 = lvs.iter().map(on).sum();
    let name = next_name(st, &vg);
    let mut plan: Vec<(String, String, u64)> = Vec::new();
    for l in &lvs {
        let mut rest = on(l);
        for (d, f) in free.iter_mut() {
            // A stripe never goes to a PV that holds another stripe of the same LV.
            if rest == 0 || *f == 0 || (l.stripes > 1 && l.extents.contains_key(d)) {
                continue;
            }
            let take = rest.min(*f);
            *f -= take;
            rest -= take;
            plan.push((l.name.clone(), d.clone(), take));
        }
        if rest > 0 {
            let available: u64 = st
                .world
                .pvs_of(&vg)
                .filter(|p| p.kname != k && dest_knames.contains(&p.kname))
                .map(|p| p.free / super::lvm::EXTENT)
                .sum();
            return Err(format!(
                "  Insufficient free space: {needed} extents needed, but only {available} available\n  Unable to allocate mirror extents for {vg}/{name}.\n  Failed to convert pvmove LV to mirrored.\n"
            ));
        }
    }
    let mut mirror = BTreeMap::from([(k.clone(), needed)]);
    for (lv, d, n) in &plan {
        *mirror.entry(d.clone()).or_insert(0) += n;
        let l = lv_mut(st, &vg, lv);
        l.extents.remove(&k);
        *l.extents.entry(format!("{name}:{d}")).or_insert(0) += n;
        l.locked = true;
    }
    let n = st.next_serial();
    st.world.lvm.lvs.push(Lv {
        vg: vg.clone(),
        name,
        uuid: format!("lv{n:04}-sim"),
        hidden: true,
        size: needed * super::lvm::EXTENT,
        segtype: "mirror".into(),
        stripes: 1,
        stripe_size: None,
        active: true,
        extents: mirror,
        writecache: None,
        cache: None,
        tags: vec![],
        snapshot_of: None,
        pvmove: Some(PvMove {
            source: pv.name.clone(),
            source_kname: k,
            copy_percent: Some(0.0),
        }),
        locked: false,
    });
    st.moves_stalled = false;
    // With --background the command returns once the mirror is active; the poller prints
    // nothing.
    Ok(String::new())
}

fn is_cachevol(st: &SimState, l: &Lv) -> bool {
    st.world
        .lvm
        .lvs
        .iter()
        .any(|w| w.vg == l.vg && w.writecache.as_ref().is_some_and(|c| c.cachevol == l.name))
}

fn lv_mut<'a>(st: &'a mut SimState, vg: &str, name: &str) -> &'a mut Lv {
    st.world
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.vg == vg && l.name == name)
        .expect("an LV of the VG")
}

/// `pvmove%d`, the first number no LV of the VG has.
fn next_name(st: &SimState, vg: &str) -> String {
    (0..)
        .map(|i| format!("pvmove{i}"))
        .find(|n| st.world.lv(vg, n).is_none())
        .unwrap()
}

/// Time passes: every polled move copies a quarter more (or all); at 100% it is finished. A
/// move nothing polls (the machine died) stays where it is.
pub(crate) fn advance_moves(st: &mut SimState, all_the_way: bool) {
    if st.moves_stalled {
        return;
    }
    let mut done = Vec::new();
    for l in st.world.lvm.lvs.iter_mut().filter(|l| l.active) {
        if let Some(m) = l.pvmove.as_mut() {
            let p = if all_the_way {
                100.0
            } else {
                m.copy_percent.unwrap_or(0.0) + 25.0
            };
            m.copy_percent = Some(p.min(100.0));
            if p >= 100.0 {
                done.push((l.vg.clone(), l.name.clone()));
            }
        }
    }
    for (vg, name) in done {
        finish(st, &vg, &name);
    }
    super::lvm::recompute(st);
}

/// The moved extents are on their new PVs; the move LV is removed and the LVs unlocked.
fn finish(st: &mut SimState, vg: &str, name: &str) {
    let prefix = format!("{name}:");
    for l in st.world.lvm.lvs.iter_mut().filter(|l| l.vg == vg) {
        let moved: Vec<(String, u64)> = l
            .extents
            .iter()
            .filter_map(|(k, n)| Some((k.strip_prefix(&prefix)?.to_string(), *n)))
            .collect();
        if moved.is_empty() {
            continue;
        }
        l.extents.retain(|k, _| !k.starts_with(&prefix));
        for (d, n) in moved {
            *l.extents.entry(d).or_insert(0) += n;
        }
        l.locked = false;
    }
    st.world.lvm.lvs.retain(|l| !(l.vg == vg && l.name == name));
}

/// `vgreduce VG PV`.
pub(super) fn vgreduce(st: &mut SimState, vg: &str, dev: &str) -> Result<String, String> {
    if st.world.vg(vg).is_none() {
        return Err(format!("  Volume group \"{vg}\" not found\n"));
    }
    let k = pv_target(st, dev)?;
    let Some(pv) = st
        .world
        .pv(&k)
        .filter(|p| p.vg.as_deref() == Some(vg))
        .cloned()
    else {
        return Err(format!("  Failed to find physical volume \"{dev}\".\n"));
    };
    if pv.free < pv.size {
        return Err(format!("  Physical volume \"{}\" still in use\n", pv.name));
    }
    if st.world.pvs_of(vg).count() == 1 {
        return Err(format!(
            "  Can't remove final physical volume \"{}\" from volume group \"{vg}\"\n",
            pv.name
        ));
    }
    let p = st.world.lvm.pvs.iter_mut().find(|p| p.kname == k).unwrap();
    p.vg = None;
    Ok(format!(
        "  Removed \"{}\" from volume group \"{vg}\"\n",
        pv.name
    ))
}

/// `vgchange --activate y --poll n VG`: every LV of the VG active, a move LV too, and no
/// poller started for an interrupted move (`--poll n`).
pub(super) fn activate_vg(st: &mut SimState, vg: &str) -> Result<String, String> {
    if st.world.vg(vg).is_none() {
        return Err(format!(
            "  Volume group \"{vg}\" not found\n  Cannot process volume group {vg}\n"
        ));
    }
    let mut n = 0;
    for l in st.world.lvm.lvs.iter_mut().filter(|l| l.vg == vg) {
        l.active = true;
        n += usize::from(!l.hidden);
    }
    Ok(format!(
        "  {n} logical volume(s) in volume group \"{vg}\" now active\n"
    ))
}
