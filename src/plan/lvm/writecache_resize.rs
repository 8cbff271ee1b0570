//! Resizing a writecache: the cache volume cannot change size while attached, so the plan
//! detaches it (lvm2 flushes the dirty blocks first), removes the old cache volume, creates one of
//! the file's size and attaches it with the file's settings. A run killed anywhere converges: a
//! flushed cache volume of hyraid's left at the wrong size is removed and made again.

use super::*;
use crate::config::WritecacheSpec;
use crate::observe::{Lv, LvWritecache};

/// What the resize check decided.
pub(in crate::plan) enum Resize {
    /// The cache volume has the file's size.
    Same,
    /// The detach is planned: the caller attaches a new cache volume as for an LV without one.
    Detached,
    /// Refused: nothing more is planned for this writecache.
    Refused,
}

impl<'a> Planner<'a> {
    /// Bytes a cache volume of `size` takes in the VG (whole extents, as lvcreate rounds); for a
    /// writecache's and a dm-cache's alike.
    pub(in crate::plan) fn cachevol_bytes(&self, vg: &VgSpec, size: u64) -> u64 {
        let ext = self
            .ix
            .vg(&vg.name)
            .map_or(4 << 20, |v| v.extent_size)
            .max(1);
        size.div_ceil(ext) * ext
    }

    /// An attached writecache whose cache volume is not the file's size: plan the flushing detach
    /// that also removes the old cache volume, with the dirty amount the observation shows.
    pub(in crate::plan) fn writecache_resize(
        &mut self,
        vg: &VgSpec,
        lv: &LvSpec,
        want: &WritecacheSpec,
        wc: &LvWritecache,
        out: &mut Vec<PlannedStep>,
    ) -> Resize {
        let Some(cv) = self.ix.lv(&vg.name, &wc.cachevol) else {
            return Resize::Same;
        };
        let new = self.cachevol_bytes(vg, want.size);
        if cv.size == new {
            return Resize::Same;
        }
        let object = format!("lv {}/{}", vg.name, lv.name);
        if !cv.tags.iter().any(|t| t == CACHEVOL_TAG) {
            self.refuse(
                &object,
                format!(
                    "writecache is {}, the file says {}; its cache volume {} was not made by hyraid (no tag {CACHEVOL_TAG}), and hyraid removes only its own",
                    human(cv.size),
                    human(new),
                    wc.cachevol
                ),
                format!(
                    "set the writecache size to {} in the file; or remove `writecache`, apply (the dirty blocks are flushed, the volume is kept), remove that LV yourself, then add `writecache` back with the new size",
                    human(cv.size)
                ),
            );
            return Resize::Refused;
        }
        if let Some(m) = want.pvs.iter().find_map(|r| match r {
            DeviceRef::Mirror(n) if self.blocked.contains(n) => Some(n.clone()),
            _ => None,
        }) {
            self.refuse(
                &object,
                format!("writecache resize waits for mirror {m}"),
                "resolve the refusal of that mirror first",
            );
            return Resize::Refused;
        }
        let old = wc.cachevol.strip_suffix("_cvol").unwrap_or(&wc.cachevol);
        out.push(ps(
            Step::DetachWritecache(DetachWritecache {
                vg: vg.name.clone(),
                lv: lv.name.clone(),
                remove_cachevol: Some(old.to_string()),
            }),
            Risk::Safe,
            format!(
                "resize the writecache {} → {}: {}; the old cache volume is then removed, a new one created and attached",
                human(cv.size),
                human(new),
                dirty_text(wc)
            ),
        ));
        Resize::Detached
    }

    /// A detached cache volume of hyraid's (tagged, not attached) that is not the file's size: a
    /// resize killed after its detach. It was flushed and holds nothing: it is removed and the
    /// caller creates one of the right size. Returns the cache volume that may still be reused.
    pub(in crate::plan) fn stale_cachevol<'o>(
        &mut self,
        vg: &VgSpec,
        want: &WritecacheSpec,
        existing: Option<&'o Lv>,
        out: &mut Vec<PlannedStep>,
    ) -> Option<&'o Lv> {
        let e = existing?;
        let ours = e.tags.iter().any(|t| t == CACHEVOL_TAG);
        if !ours || e.size == self.cachevol_bytes(vg, want.size) {
            return Some(e);
        }
        out.push(ps(
            Step::RemoveLv(RemoveLv {
                vg: vg.name.clone(),
                lv: e.name.clone(),
            }),
            Risk::Safe,
            format!(
                "cache volume left at {} by an interrupted writecache resize (tagged {CACHEVOL_TAG}; flushed, holds no data); one of {} replaces it",
                human(e.size),
                human(self.cachevol_bytes(vg, want.size))
            ),
        ));
        None
    }
}

/// The dirty amount of a writecache as the observation shows it.
fn dirty_text(wc: &LvWritecache) -> String {
    match (wc.dirty_bytes(), wc.total_blocks, wc.free_blocks) {
        (Some(0), ..) => "the cache is clean (nothing to write back)".into(),
        (Some(b), Some(t), Some(f)) => format!(
            "{} dirty ({} of {t} blocks of {} B) are written back to the LV's PVs first (lvconvert --splitcache; may take long)",
            human(b),
            t - f,
            wc.block_size.unwrap_or(0)
        ),
        _ => "the LV is inactive (no cache status): lvconvert activates it to write back what is dirty first".into(),
    }
}
