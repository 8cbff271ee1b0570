//! dm-cache (lvmcache) on a cache volume of its own (`<lv>_cache`, tagged like a writecache's):
//! attached with `lvconvert --type cache --cachevol`, its mode changed online, detached with a
//! flush (`--splitcache`) when the file drops it, changes its size, or switches to a writecache.
//! Detaches run before the LV's writecache steps and attaches after them, so an LV switching
//! from one kind to the other is detached first.

use super::*;
use crate::config::dm_cachevol_name;
use crate::config::raw::CacheMode;
use crate::observe::LvCache;
use crate::plan::step::{AttachCache, DetachCache, SetCacheMode};

impl<'a> Planner<'a> {
    /// Detaching the observed dm-cache when the file has none (or a writecache), or has one of
    /// another size. Returns whether the LV is planned without a dm-cache afterwards.
    pub(in crate::plan) fn dm_cache_detach(
        &mut self,
        vg: &VgSpec,
        lv: &LvSpec,
        observed: Option<&crate::observe::Lv>,
        out: &mut Vec<PlannedStep>,
    ) -> Option<bool> {
        let Some(have) = observed.and_then(|l| l.cache.as_ref()) else {
            return Some(false);
        };
        let object = format!("lv {}/{}", vg.name, lv.name);
        let cv = self.ix.lv(&vg.name, &have.cachevol);
        let ours = cv.is_some_and(|c| c.tags.iter().any(|t| t == CACHEVOL_TAG));
        let old = have
            .cachevol
            .strip_suffix("_cvol")
            .unwrap_or(&have.cachevol);
        let why = match &lv.cache {
            None => "the file has no dm-cache for this LV".to_string(),
            Some(want) => {
                let new = self.cachevol_bytes(vg, want.size);
                match cv {
                    Some(c) if c.size != new && ours => {
                        format!("resize the dm-cache {} → {}", human(c.size), human(new))
                    }
                    Some(c) if c.size != new => {
                        self.refuse(&object, format!("dm-cache is {}, the file says {}; its cache volume {} was not made by hyraid (no tag {CACHEVOL_TAG}), and hyraid removes only its own", human(c.size), human(new), have.cachevol), format!("set the cache size to {} in the file", human(c.size)));
                        return None;
                    }
                    _ => return Some(false),
                }
            }
        };
        out.push(ps(
            Step::DetachCache(DetachCache {
                vg: vg.name.clone(),
                lv: lv.name.clone(),
                remove_cachevol: ours.then(|| old.to_string()),
            }),
            Risk::Safe,
            format!("{why}: {}", flush_text(have)),
        ));
        Some(true)
    }

    /// The file's dm-cache after the detaches: its mode changed, or a cache volume created and
    /// attached; a leftover of an interrupted detach or resize is removed.
    pub(in crate::plan) fn dm_cache_attach(
        &mut self,
        vg: &VgSpec,
        lv: &LvSpec,
        have: Option<&LvCache>,
        out: &mut Vec<PlannedStep>,
    ) {
        let object = format!("lv {}/{}", vg.name, lv.name);
        let cv = dm_cachevol_name(&lv.name);
        let leftover = self
            .o
            .lv(&vg.name, &cv)
            .filter(|l| !l.hidden && l.cache.is_none() && l.writecache.is_none());
        let ours = leftover.is_some_and(|l| l.tags.iter().any(|t| t == CACHEVOL_TAG));
        let Some(want) = &lv.cache else {
            if ours {
                out.push(ps(Step::RemoveLv(RemoveLv { vg: vg.name.clone(), lv: cv }), Risk::Safe, "leftover cache volume of an interrupted dm-cache detach (tagged hyraid_cachevol; flushed, holds no data)"));
            }
            return;
        };
        let redundant = want.pvs.iter().all(|r| matches!(r, DeviceRef::Mirror(_)));
        let at_risk = want.mode == CacheMode::Writeback && !redundant;
        if let Some(h) = have {
            if h.mode != want.mode.as_str() {
                let (risk, why) = if at_risk {
                    (
                        Risk::DataAtRisk,
                        format!(
                            "the file says {}: writeback on a non-redundant PV keeps acknowledged writes only on that device until they are written back; losing it loses them",
                            want.mode.as_str()
                        ),
                    )
                } else {
                    (
                        Risk::Safe,
                        format!(
                            "the file says {} (was {}; leaving writeback, lvm2 writes the dirty blocks back first)",
                            want.mode.as_str(),
                            h.mode
                        ),
                    )
                };
                out.push(ps(
                    Step::SetCacheMode(SetCacheMode {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                        mode: want.mode.as_str().into(),
                    }),
                    risk,
                    why,
                ));
            }
            return;
        }
        if self.o.boot.cache_check == Some(false) {
            self.refuse(&object, "dm-cache needs cache_check, which is not installed (lvm2 runs it to activate a cache LV: the LV would not come up)", "install thin-provisioning-tools (Debian, Ubuntu) or device-mapper-persistent-data (EL), then plan again");
            return;
        }
        if let Some(m) = want.pvs.iter().find_map(|r| match r {
            DeviceRef::Mirror(n) if self.blocked.contains(n) => Some(n.clone()),
            _ => None,
        }) {
            self.refuse(
                &object,
                format!("dm-cache waits for mirror {m}"),
                "resolve the refusal of that mirror first",
            );
            return;
        }
        let Some(media) = self.cache_media(vg, lv, "dm-cache", &want.pvs) else {
            return;
        };
        let size = self.cachevol_bytes(vg, want.size);
        match leftover {
            Some(_) if !ours => {
                self.refuse(&object, format!("LV {}/{cv} exists and was not made by hyraid; attaching it as the cache volume would erase it", vg.name), "rename or remove that LV");
                return;
            }
            Some(l) if l.size == size => self.notes.push(format!("{object}: cache volume {cv} already exists (an earlier apply was interrupted); it is reused")),
            other => {
                if let Some(l) = other {
                    out.push(ps(Step::RemoveLv(RemoveLv { vg: vg.name.clone(), lv: cv.clone() }), Risk::Safe, format!("cache volume left at {} by an interrupted dm-cache resize (tagged {CACHEVOL_TAG}; flushed, holds no data); one of {} replaces it", human(l.size), human(size))));
                }
                let pvs: Vec<String> = want.pvs.iter().map(|r| self.pv_device(r).0).collect();
                out.push(ps(Step::CreateCachevol(CreateCachevol { vg: vg.name.clone(), lv: lv.name.clone(), cachevol: cv.clone(), size: want.size, pvs }), Risk::Safe, "cache volume for the dm-cache"));
            }
        }
        let (risk, why) = match (want.mode, at_risk) {
            (_, true) => (
                Risk::DataAtRisk,
                format!(
                    "dm-cache writeback on a non-redundant PV ({media}): acknowledged writes live only on that device until written back; losing it loses them"
                ),
            ),
            (CacheMode::Writeback, false) => (
                Risk::Safe,
                format!(
                    "dm-cache writeback on {media}: reads and writes of hot blocks are served by it"
                ),
            ),
            (CacheMode::Writethrough, _) => (
                Risk::Safe,
                format!(
                    "dm-cache writethrough on {media}: every write reaches the LV's PVs before it completes; losing the cache loses nothing"
                ),
            ),
        };
        out.push(ps(
            Step::AttachCache(AttachCache {
                vg: vg.name.clone(),
                lv: lv.name.clone(),
                cachevol: cv,
                mode: want.mode.as_str().into(),
            }),
            risk,
            why,
        ));
    }
}

/// What a detach has to write back, as the observation shows it.
fn flush_text(c: &LvCache) -> String {
    match (c.mode.as_str(), c.dirty_blocks, c.total_blocks) {
        ("writeback", Some(0), _) => "writeback cache with no dirty block".into(),
        ("writeback", Some(d), Some(t)) => format!(
            "writeback cache with {d} of {t} blocks dirty: they are written back to the LV's PVs first (lvm2 switches to the cleaner policy and waits; may take long)"
        ),
        ("writeback", ..) => "writeback cache, LV inactive (no cache status): lvm2 activates it and writes back what is dirty first".into(),
        (m, ..) => format!("{m} cache: nothing to write back"),
    }
}
