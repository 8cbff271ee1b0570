//! What is on the machine and not in the file: reported in the plan, never touched.

use super::*;

impl<'a> Planner<'a> {
    pub(in crate::plan) fn foreign(&self) -> Vec<Foreign> {
        let mut f = Vec::new();
        for a in &self.o.arrays {
            if !self.is_file_array(a) {
                let members: Vec<&str> = a.members.iter().map(|m| m.kname.as_str()).collect();
                f.push(Foreign {
                    object: format!(
                        "array {}",
                        a.name
                            .clone()
                            .map(|n| format!("/dev/md/{n}"))
                            .unwrap_or(format!("/dev/{}", a.kname))
                    ),
                    detail: format!(
                        "{} of {}{}",
                        a.level,
                        members.join(", "),
                        match &a.bitmap {
                            Some(b) if b.kind != crate::observe::BitmapKind::Internal =>
                                format!(", bitmap {}", b.describe()),
                            _ => String::new(),
                        }
                    ),
                });
            }
        }
        let mut lvs_of: BTreeMap<&str, Vec<&crate::observe::Lv>> = BTreeMap::new();
        for l in self.o.lvm.lvs.iter().filter(|l| !l.hidden) {
            lvs_of.entry(l.vg.as_str()).or_default().push(l);
        }
        for v in &self.o.lvm.vgs {
            match self.d.volume_groups.get(&v.name) {
                None => f.push(Foreign {
                    object: format!("vg {}", v.name),
                    detail: format!("{} bytes ({})", v.size, human(v.size)),
                }),
                // A VG the file removes takes its LVs with it: none of them is "left alone".
                Some(spec) if spec.absent => {}
                Some(spec) => {
                    // Cache volumes hyraid made for this VG's LVs: `<lv>_wc`, `<lv>_cache`.
                    let cachevols: BTreeMap<String, bool> =
                        spec.lvs
                            .values()
                            .map(|x| (cachevol_name(&x.name), x.writecache.is_some()))
                            .chain(spec.lvs.values().map(|x| {
                                (crate::config::dm_cachevol_name(&x.name), x.cache.is_some())
                            }))
                            .collect();
                    for l in lvs_of.get(v.name.as_str()).into_iter().flatten() {
                        let ours_cv = cachevols
                            .get(&l.name)
                            .is_some_and(|wc| *wc || l.tags.iter().any(|t| t == CACHEVOL_TAG));
                        let scratch = (l.name == crate::config::TUNE_LV
                            && l.tags.iter().any(|t| t == crate::config::TUNE_TAG))
                            || (l.name == cachevol_name(crate::config::TUNE_LV)
                                && l.tags.iter().any(|t| t == CACHEVOL_TAG));
                        if !spec.lvs.contains_key(&l.name) && !ours_cv && !scratch {
                            f.push(Foreign {
                                object: format!("lv {}/{}", v.name, l.name),
                                detail: format!("{} bytes ({})", l.size, human(l.size)),
                            });
                        }
                    }
                }
            }
        }
        f
    }
}
