//! dm-cache on a cache volume as lvm2 2.03.16 does it (tools/lvconvert.c,
//! lib/metadata/cache_manip.c): `lvconvert --type cache --cachevol` (the cache volume is wiped,
//! renamed `[X_cvol]`, the data moved to a hidden `[lv_corig]`), `--splitcache` (a writeback
//! cache is flushed first: "Flushing N blocks for cache vg/lv."), and `lvchange --cachemode`.

use super::lvm_lv::{lv_mut, split_lv};
use crate::observe::{Lv, LvCache};
use crate::sim::world::SimState;
use std::collections::BTreeMap;

/// Cache blocks (chunks) of a cache volume: lvm2's default chunk for a small cache is 64 KiB;
/// the metadata takes a part of the volume.
fn total_blocks(cachevol_bytes: u64) -> u64 {
    cachevol_bytes.saturating_sub(8 << 20) / (64 << 10)
}

pub(super) fn is_cached(st: &SimState, path: &str) -> bool {
    split_lv(path).is_ok_and(|(vg, name)| {
        st.world
            .lv(&vg, &name)
            .is_some_and(|l| !l.hidden && l.cache.is_some())
    })
}

pub(super) fn attach(
    st: &mut SimState,
    cv: &str,
    mode: &str,
    path: &str,
) -> Result<String, String> {
    let (vg, name) = split_lv(path)?;
    if !matches!(mode, "writethrough" | "writeback" | "passthrough") {
        return Err(format!("  Unknown cache mode: {mode}.\n"));
    }
    let Some(main) = st.world.lv(&vg, &name).filter(|l| !l.hidden).cloned() else {
        return Err(format!("  Failed to find logical volume \"{path}\"\n"));
    };
    let Some(fast) = st.world.lv(&vg, cv).filter(|l| !l.hidden).cloned() else {
        return Err(format!("  LV {cv} not found.\n"));
    };
    if main.writecache.is_some() || main.cache.is_some() {
        return Err(format!(
            "  Command on LV {path} does not accept LV type {}.\n",
            main.segtype
        ));
    }
    if fast.writecache.is_some() || fast.cache.is_some() || fast.segtype != "linear" {
        return Err(format!(
            "  LV {vg}/{cv} with type {} cannot be converted to a cache pool.\n",
            fast.segtype
        ));
    }
    if st.world.boot.cache_check == Some(false) {
        return Err(
            "  /usr/sbin/cache_check: execvp failed: No such file or directory\n  Check of pool vg/lv failed (status:2). Manual repair required!\n".replace("vg/lv", &format!("{vg}/{cv}_cvol")),
        );
    }
    let origin = format!("{name}_corig");
    let cvol = format!("{cv}_cvol");
    for l in st.world.lvm.lvs.iter_mut().filter(|l| l.vg == vg) {
        if l.name == name {
            l.name = origin.clone();
            l.hidden = true;
            l.tags.clear();
        } else if l.name == cv {
            l.name = cvol.clone();
            l.hidden = true;
            l.active = main.active;
        }
    }
    let n = st.next_serial();
    if let Some(o) = st
        .world
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.vg == vg && l.name == origin)
    {
        o.uuid = format!("lv{n:04}-sim");
    }
    let blocks = total_blocks(fast.size);
    st.world.lvm.lvs.push(Lv {
        vg: vg.clone(),
        name: name.clone(),
        uuid: main.uuid.clone(),
        hidden: false,
        size: main.size,
        segtype: "cache".into(),
        stripes: 1,
        stripe_size: None,
        active: main.active,
        extents: BTreeMap::new(),
        writecache: None,
        cache: Some(LvCache {
            cachevol: cvol,
            origin,
            mode: mode.into(),
            dirty_blocks: main.active.then_some(0),
            used_blocks: main.active.then_some(0),
            total_blocks: main.active.then_some(blocks),
        }),
        tags: main.tags.clone(),
        snapshot_of: None,
        pvmove: None,
        locked: false,
    });
    Ok(format!("  Logical volume {path} is now cached.\n"))
}

pub(super) fn split(st: &mut SimState, path: &str) -> Result<String, String> {
    let (vg, name) = split_lv(path)?;
    let lv = st.world.lv(&vg, &name).filter(|l| !l.hidden).cloned();
    let Some(c) = lv.as_ref().and_then(|l| l.cache.clone()) else {
        return Err(format!("  Failed to find logical volume \"{path}\"\n"));
    };
    let lv = lv.unwrap_or_else(|| unreachable!("checked above"));
    // lv_cache_wait_for_clean: a writeback cache is switched to the cleaner policy and polled
    // until no block is dirty; writethrough has none to flush.
    let mut out = String::new();
    if c.mode == "writeback" {
        let dirty = c.dirty_blocks.unwrap_or(0);
        out.push_str(&format!("  Flushing {dirty} blocks for cache {path}.\n"));
    }
    let cv = super::lvm_lv::unstack(st, &lv, &c.origin, &c.cachevol);
    out.push_str(&format!(
        "  Logical volume {path} is not cached and {vg}/{cv} is unused.\n"
    ));
    Ok(out)
}

pub(super) fn set_mode(st: &mut SimState, mode: &str, path: &str) -> Result<String, String> {
    if !matches!(mode, "writethrough" | "writeback" | "passthrough") {
        return Err(format!("  Unknown cache mode: {mode}.\n"));
    }
    let lv = lv_mut(st, path)?;
    let Some(c) = lv.cache.as_mut() else {
        return Err(format!(
            "  Command on LV {path} uses options that require LV types cache or cachepool.\n"
        ));
    };
    // lvchange.c _lvchange_cache: leaving writeback waits for the dirty blocks to be written.
    let mut out = String::new();
    if c.mode == "writeback" && mode != "writeback" {
        let d = c.dirty_blocks.unwrap_or(0);
        out.push_str(&format!("  Flushing {d} blocks for cache {path}.\n"));
        c.dirty_blocks = c.dirty_blocks.map(|_| 0);
    }
    c.mode = mode.into();
    out.push_str(&format!("  Logical volume {path} changed.\n"));
    Ok(out)
}
