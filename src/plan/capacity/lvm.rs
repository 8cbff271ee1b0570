//! LVs and cache volumes against the extents their VG will have when they are created.

use super::{Ask, Model, ext_text, place};
use crate::config::size::human;
use crate::plan::SizeArg;

/// `-l` argument → (percentage, of the whole VG?).
fn percent(arg: &str) -> Option<(u64, bool)> {
    let (n, what) = arg.split_once('%')?;
    Some((n.parse().ok()?, what == "VG"))
}

impl Model<'_> {
    fn free_of(&self, key: &str) -> u64 {
        self.free.get(key).copied().unwrap_or(0)
    }

    /// Keys of the PVs an allocation may use: the listed ones, else the whole VG.
    fn allowed(&self, vg: &str, paths: &[String]) -> Vec<String> {
        let all = &self.vgs[vg].pvs;
        if paths.is_empty() {
            return all.clone();
        }
        paths
            .iter()
            .map(|p| self.key(p))
            .filter(|k| all.contains(k))
            .collect()
    }

    fn vg_free(&self, vg: &str) -> u64 {
        self.vgs[vg].pvs.iter().map(|k| self.free_of(k)).sum()
    }

    /// "data0 (1.00 GiB), data1 (0 B)": what each allowed PV will have free.
    fn free_list(&self, keys: &[String], extent: u64) -> String {
        keys.iter()
            .map(|k| format!("{} ({})", self.label(k), human(self.free_of(k) * extent)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Take up to `need` extents (a multiple of `k`) from `keys` as lvm places them.
    fn take(&mut self, keys: &[String], need: u64, k: u64) {
        let free: Vec<u64> = keys.iter().map(|x| self.free_of(x)).collect();
        let (given, _) = place(&free, need / k, k as usize);
        for (x, g) in keys.iter().zip(given) {
            if let Some(f) = self.free.get_mut(x) {
                *f -= g;
            }
        }
    }

    pub(super) fn create_lv(
        &mut self,
        vg: &str,
        lv: &str,
        size: &SizeArg,
        stripes: u32,
        paths: &[String],
    ) {
        let Some(v) = self.vg(vg) else { return };
        let (ext, total) = (v.extent, v.total);
        let k = stripes as u64;
        let object = format!("lv {vg}/{lv}");
        let vg_free = self.vg_free(vg);
        let keys = self.allowed(vg, paths);
        // lvcreate's size in extents (tools/lvcreate.c, lib/metadata/lv_manip.c).
        let (ask, mut need) = match size {
            SizeArg::Bytes(b) => (Ask::Bytes(*b), b.div_ceil(ext).div_ceil(k) * k),
            SizeArg::Extents(e) => match percent(e) {
                Some((p, true)) => (Ask::PercentVg(p), total * p / 100),
                Some((p, false)) => (Ask::PercentFree(p), vg_free * p / 100),
                None => return,
            },
        };
        let asked = match ask {
            Ask::Bytes(b) => format!("{} ({b} bytes, {need} extents)", human(b)),
            Ask::PercentVg(p) => format!("{p}%VG = {}", ext_text(need, ext)),
            Ask::PercentFree(p) => format!("{p}%FREE = {}", ext_text(need, ext)),
        };
        if !matches!(ask, Ask::Bytes(_)) {
            let rest = need % k;
            need = if rest != 0 && vg_free < need - rest + k {
                need - rest
            } else {
                need.div_ceil(k) * k
            };
        }
        let fixed = format!(
            "or add PVs to {vg}; sizes are whole {} extents{}",
            human(ext),
            if k > 1 {
                format!(", {k} at a time for {k} stripes")
            } else {
                String::new()
            }
        );
        if need == 0 {
            self.refuse(
                object,
                format!(
                    "{vg} will have {} free when {lv} is created; {lv} asks {asked}, which is nothing",
                    human(vg_free * ext)
                ),
                format!("make the LVs created before it smaller, {fixed}"),
            );
            return;
        }
        // The most this LV can get where it may go, with its stripes on different PVs.
        let room: Vec<u64> = keys.iter().map(|x| self.free_of(x)).collect();
        let max = place(&room, room.iter().sum(), k as usize).1 * k;
        if matches!(ask, Ask::PercentFree(_)) {
            // N%FREE takes what it finds, up to its share.
            need = need.min(max);
        }
        if need > 0 && need <= max {
            self.take(&keys, need, k);
            return;
        }
        let placed = keys.len() < self.vgs[vg].pvs.len();
        let reason = if need > vg_free {
            format!(
                "{vg} will have {} free ({vg_free} extents) when {lv} is created; {lv} asks {asked}{}",
                human(vg_free * ext),
                if placed {
                    format!(", and may only use {}", self.free_list(&keys, ext))
                } else {
                    String::new()
                }
            )
        } else if k > 1 {
            format!(
                "{lv} asks {asked}: that is {k} stripes of {} on {k} different PVs, but the PVs it may use will have {}",
                human(need / k * ext),
                self.free_list(&keys, ext)
            )
        } else {
            format!(
                "{lv} asks {asked}, but the PVs it may use will have {}",
                self.free_list(&keys, ext)
            )
        };
        let how = match (k > 1, placed) {
            (true, true) => "use fewer stripes, let it use more PVs, ",
            (true, false) => "use fewer stripes, ",
            (false, true) => "let it use more PVs, ",
            (false, false) => "",
        };
        let fix = match ask {
            Ask::Bytes(_) => format!(
                "make {lv} at most {} bytes ({}), {how}{fixed}",
                max * ext,
                human(max * ext)
            ),
            _ => match (1..=100u64).rev().find(|p| total * p / 100 / k * k <= max) {
                Some(p) if max > 0 => {
                    format!("use at most {p}%VG for {lv} (or a fixed size), {how}{fixed}")
                }
                _ => format!("make the LVs created before {lv} smaller, {how}{fixed}"),
            },
        };
        self.refuse(object, reason, fix);
    }

    /// Growing an existing LV: by bytes (rounded by the planner) or to N%VG of the grown VG.
    pub(super) fn extend_lv(&mut self, vg: &str, lv: &str, size: &SizeArg) {
        let Some(v) = self.vg(vg) else { return };
        let (ext, total) = (v.extent, v.total);
        let Some(l) = self.o.lv(vg, lv) else { return };
        let data = l
            .writecache
            .as_ref()
            .and_then(|w| self.o.lv(vg, &w.origin))
            .unwrap_or(l);
        let cur = data.size / ext;
        let k = data.stripes.max(1) as u64;
        // A striped LV grows on the PVs it is on; a linear one anywhere in the VG.
        let keys: Vec<String> = if k > 1 {
            data.extents.keys().cloned().collect()
        } else {
            self.vgs[vg].pvs.clone()
        };
        let (want, least) = match size {
            SizeArg::Bytes(b) => {
                let n = b.div_ceil(ext).div_ceil(k) * k;
                (n, n)
            }
            SizeArg::Extents(e) => match percent(e) {
                // lvextend rounds a percentage up, but cuts it to what is free; the planner
                // is content with the share rounded down.
                Some((p, true)) => (
                    (total * p).div_ceil(100).div_ceil(k) * k,
                    total * p / 100 / k * k,
                ),
                _ => return,
            },
        };
        if want <= cur {
            return;
        }
        let room: Vec<u64> = keys.iter().map(|x| self.free_of(x)).collect();
        let can = place(&room, u64::MAX / 2, k as usize).1 * k;
        let add = (want - cur).min(can);
        if cur + add < least {
            self.refuse(
                format!("lv {vg}/{lv}"),
                format!(
                    "{lv} is {}; growing it to {} needs {} more, but {}",
                    ext_text(cur, ext),
                    ext_text(least, ext),
                    human((least - cur) * ext),
                    if k > 1 {
                        format!(
                            "its {k} stripes can only grow by {} on {}",
                            human(can * ext),
                            self.free_list(&keys, ext)
                        )
                    } else {
                        format!("{vg} will have {} free", human(self.vg_free(vg) * ext))
                    }
                ),
                format!("add PVs to {vg}, or grow {lv} less"),
            );
            return;
        }
        self.take(&keys, add, k);
    }

    /// The cache volume of a writecache: a linear LV on its PVs, after all the LVs.
    pub(super) fn cachevol(&mut self, vg: &str, lv: &str, size: u64, paths: &[String]) {
        let Some(v) = self.vg(vg) else { return };
        let ext = v.extent;
        let need = size.div_ceil(ext);
        let keys = self.allowed(vg, paths);
        let vg_free = self.vg_free(vg);
        let on: u64 = keys.iter().map(|x| self.free_of(x)).sum();
        if need > on {
            let max = on * ext;
            self.refuse(
                format!("lv {vg}/{lv}"),
                format!(
                    "its writecache asks {} ({size} bytes, {need} extents) on {}, which will have {} free ({on} extents) when the cache volume is created ({vg} as a whole: {})",
                    human(size),
                    keys.iter().map(|k| self.label(k)).collect::<Vec<_>>().join(", "),
                    human(on * ext),
                    human(vg_free * ext)
                ),
                format!(
                    "make the writecache at most {max} bytes ({}), or give it more or larger PVs",
                    human(max)
                ),
            );
            return;
        }
        self.take(&keys, need, 1);
    }

    /// An LV that exists and is removed (with the hidden LVs of its writecache): its extents are
    /// free for what comes after it.
    pub(super) fn release(&mut self, vg: &str, lv: &str) {
        if self.vg(vg).is_none() {
            return;
        }
        let Some(l) = self.o.lv(vg, lv) else { return };
        let mut gone = vec![l];
        if let Some(w) = &l.writecache {
            gone.extend(self.o.lv(vg, &w.origin));
            gone.extend(self.o.lv(vg, &w.cachevol));
        }
        if let Some(c) = &l.cache {
            gone.extend(self.o.lv(vg, &c.origin));
            gone.extend(self.o.lv(vg, &c.cachevol));
        }
        for g in gone {
            for (k, n) in &g.extents {
                *self.free.entry(k.clone()).or_insert(0) += n;
            }
        }
    }

    /// A writecache or dm-cache detached with its cache volume removed: the cache volume's
    /// extents are free.
    pub(super) fn release_cachevol(&mut self, vg: &str, lv: &str) {
        if self.vg(vg).is_none() {
            return;
        }
        let Some(cv) = self
            .o
            .lv(vg, lv)
            .and_then(|l| {
                l.writecache
                    .as_ref()
                    .map(|w| &w.cachevol)
                    .or(l.cache.as_ref().map(|c| &c.cachevol))
            })
            .and_then(|name| self.o.lv(vg, name))
        else {
            return;
        };
        for (k, n) in &cv.extents {
            *self.free.entry(k.clone()).or_insert(0) += n;
        }
    }
}
