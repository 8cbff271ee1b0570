//! Logical volumes and their writecaches.

use super::*;

/// What a grown LV's filesystem does.
fn fs_note(lv: &LvSpec) -> &'static str {
    if lv.filesystem.is_some() {
        "its filesystem grows in the step after the LV's"
    } else {
        "it carries no filesystem of the file's, so nothing on it is resized (grow what it holds yourself)"
    }
}

/// `--cachesettings` of a writecache attach: the file's settings, and over a filesystem of the
/// file the block size lvm2 takes for it (lvconvert would otherwise pick it from libblkid, or
/// warn): 4096 over hyraid's own filesystem (4096-byte blocks) and over one already there whose
/// block libblkid reports as 4096 or more, 512 under that. lvm2 knows only these two
/// (`block_size` is 512 or 4096, "Invalid setting" else) and refuses a writecache block larger
/// than the filesystem's: an adopted ext4 of a small LV has 1 KiB blocks, an xfs 512-byte sectors.
fn attach_settings(
    lv: &LvSpec,
    want: &crate::config::WritecacheSpec,
    fs_block: Option<u64>,
) -> String {
    let s = want.settings_arg();
    if lv.filesystem.is_none() || want.settings.contains_key("block_size") {
        return s;
    }
    let fs = fs_block.unwrap_or(crate::plan::step::FS_BLOCK_SIZE);
    let b = format!("block_size={}", if fs >= 4096 { 4096 } else { 512 });
    if s.is_empty() { b } else { format!("{b} {s}") }
}

impl<'a> Planner<'a> {
    pub(in crate::plan) fn logical_volume(
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
        if let Some(l) = observed.filter(|l| {
            !matches!(l.segtype.as_str(), "linear" | "striped" | "writecache") && l.cache.is_none()
        }) {
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
        if observed.is_none()
            && let Some(s) = lv.stripe_size.filter(|s| *s > ext)
        {
            self.refuse(
                &object,
                format!(
                    "stripe size {} is larger than the extent size {} of VG {}; lvcreate would reduce it to {}",
                    human(s),
                    human(ext),
                    vg.name,
                    human(ext)
                ),
                format!("set `stripe_size: {}` or less", human(ext).replace(".00 ", "").replace(' ', "")),
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
                        stripe_size: lv.stripe_size,
                        pvs: placement,
                        tags: lv.tags.clone(),
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
                            self.steps.push(ps(
                                Step::ExtendLv(ExtendLv {
                                    vg: vg.name.clone(),
                                    lv: lv.name.clone(),
                                    size: SizeArg::Bytes(want),
                                }),
                                Risk::Safe,
                                format!("grow {} → {} bytes; {}", cur, want, fs_note(lv)),
                            ));
                        } else if want < cur {
                            self.shrink_lv(vg, lv, l, want);
                        }
                    }
                    LvSize::PercentVg(p) => {
                        let want = o_vg
                            .map(|v| v.extent_count() * p as u64 / 100 / stripes * stripes * ext)
                            .unwrap_or(0);
                        if want > cur || vg_grows {
                            self.steps.push(ps(Step::ExtendLv(ExtendLv { vg: vg.name.clone(), lv: lv.name.clone(), size: SizeArg::Extents(format!("{p}%VG")) }), Risk::Safe, format!("grow to {p}% of the VG (evaluated by LVM when it runs); the filesystem is not resized")));
                        } else if o_vg.is_some() && cur > want + stripes * ext {
                            // Larger than its share by more than LVM's rounding: a shrink, as
                            // for a size in bytes (never silently "matches").
                            self.shrink_lv(vg, lv, l, want);
                        }
                    }
                    LvSize::PercentFree(_) => {}
                }
                self.keep_stripes(vg, lv, l, &object);
            }
        }
        let Some(detached) = self.dm_cache_detach(vg, lv, observed, wc_steps) else {
            return;
        };
        self.writecache(vg, lv, observed, wc_steps);
        let have = observed
            .and_then(|l| l.cache.as_ref())
            .filter(|_| !detached);
        self.dm_cache_attach(vg, lv, have, wc_steps);
    }

    /// An existing LV keeps its stripes and stripe size: a different one in the file is refused.
    fn keep_stripes(&mut self, vg: &VgSpec, lv: &LvSpec, l: &crate::observe::Lv, object: &str) {
        // A writecache's stripes are those of its hidden data LV.
        let data = match (&l.writecache, &l.cache) {
            (Some(wc), _) => self.o.lv(&vg.name, &wc.origin),
            (None, Some(c)) => self.o.lv(&vg.name, &c.origin),
            (None, None) => Some(l),
        };
        if let Some(s) = lv.stripes {
            let have = data.map(|x| x.stripes).unwrap_or(1);
            if have != s {
                self.refuse(
                    object,
                    format!(
                        "has {have} stripe(s), the file says {s}; an existing LV is not restriped"
                    ),
                    format!("set `stripes: {have}` in the file"),
                );
            }
        }
        if let (Some(want), Some(have)) = (lv.stripe_size, data.and_then(|x| x.stripe_size))
            && want != have
        {
            self.refuse(object, format!("has a stripe size of {}, the file says {}; the stripe size of an existing LV cannot be changed in place", human(have), human(want)), format!("set `stripe_size: {}` in the file (a different one means a new LV and copying the data)", human(have).replace(".00 ", "").replace(' ', "")));
        }
    }

    /// The block size libblkid reports for the filesystem already on the LV (`None`: none there,
    /// another type than the file's, which this plan makes again, or a size no tool gave).
    fn fs_block_size(&self, vg: &VgSpec, lv: &LvSpec) -> Option<u64> {
        self.o
            .filesystems
            .iter()
            .find(|f| f.vg == vg.name && f.lv == lv.name && f.mapper.is_none())
            .filter(|f| {
                lv.filesystem
                    .as_ref()
                    .is_none_or(|w| f.fstype == w.fstype.as_str())
            })
            .and_then(|f| f.block_size)
    }

    pub(in crate::plan) fn writecache(
        &mut self,
        vg: &VgSpec,
        lv: &LvSpec,
        observed: Option<&crate::observe::Lv>,
        out: &mut Vec<PlannedStep>,
    ) {
        let mut have = observed.and_then(|l| l.writecache.as_ref());
        let object = format!("lv {}/{}", vg.name, lv.name);
        if let (Some(want), Some(wc)) = (&lv.writecache, have) {
            match self.writecache_resize(vg, lv, want, wc, out) {
                writecache_resize::Resize::Same => {}
                writecache_resize::Resize::Detached => have = None,
                writecache_resize::Resize::Refused => return,
            }
        }
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
                    Step::DetachWritecache(DetachWritecache { vg: vg.name.clone(), lv: lv.name.clone(), remove_cachevol: ours.then(|| detached_name(&wc.cachevol)) }),
                    Risk::Safe,
                    if ours {
                        format!("the file has no writecache for this LV: dirty blocks are written back to the main PVs first (slow), then hyraid's cache volume {} is removed", detached_name(&wc.cachevol))
                    } else {
                        format!("the file has no writecache for this LV: dirty blocks are written back to the main PVs first (slow); the cache volume {} was not made by hyraid (no {CACHEVOL_TAG} tag) and stays, detached, as an LV of its own", detached_name(&wc.cachevol))
                    },
                ));
                if !ours {
                    let cv = detached_name(&wc.cachevol);
                    self.notes.push(format!("lv {}/{}: once the writecache is detached, its cache volume {}/{cv} stays as an LV hyraid leaves alone; `lvremove {}/{cv}` frees its space", vg.name, lv.name, vg.name, vg.name));
                }
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
            }
            (Some(want), None) => {
                let fs_block = self.fs_block_size(vg, lv);
                let set = want
                    .settings
                    .get("block_size")
                    .and_then(|b| b.parse::<u64>().ok());
                if let (Some(b), Some(fs)) = (set, fs_block)
                    && b > fs
                {
                    self.refuse(
                        &object,
                        format!("the writecache's block_size {b} is larger than the block of the filesystem on the LV ({fs} bytes): lvconvert refuses a writecache block larger than the filesystem's"),
                        "set the writecache's block_size to 512, or leave it out (hyraid then takes 512 for this filesystem, as lvm2 does)",
                    );
                    return;
                }
                let cv = cachevol_name(&lv.name);
                let existing = self
                    .o
                    .lv(&vg.name, &cv)
                    .filter(|l| !l.hidden && l.writecache.is_none());
                let Some(media) = self.cache_media(vg, lv, "writecache", &want.pvs) else {
                    return;
                };
                let existing = self.stale_cachevol(vg, want, existing, out);
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
                        format!(
                            "dm-writecache: writes land on {media} and are written back to the LV's PVs later"
                        ),
                    )
                } else {
                    (
                        Risk::DataAtRisk,
                        format!(
                            "dm-writecache on a non-redundant PV ({media}): dirty data lives only on that device until written back; losing it loses data and makes the LV unactivatable"
                        ),
                    )
                };
                out.push(ps(
                    Step::AttachWritecache(AttachWritecache {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                        cachevol: cv,
                        settings: attach_settings(lv, want, fs_block),
                    }),
                    risk,
                    why,
                ));
            }
        }
    }
}

/// The name a cache volume takes back when it is split off: attached, LVM hides it as `NAME_cvol`
/// (the name it had, even if the LV it caches was renamed since).
pub(super) fn detached_name(attached: &str) -> String {
    attached
        .strip_suffix("_cvol")
        .unwrap_or(attached)
        .to_string()
}
