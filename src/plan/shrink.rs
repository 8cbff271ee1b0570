//! An LV the file makes smaller: with an ext4 the filesystem is shrunk first (unmounted,
//! checked, resized to exactly the LV's new size), `data-at-risk`; without a filesystem the data
//! past the new end is lost, `destroys`; an xfs cannot shrink. Both need --allow-destroy.

use super::*;
use crate::plan::step::ShrinkLv;

impl<'a> Planner<'a> {
    /// `want` is the file's size rounded to whole extents (and stripes).
    pub(in crate::plan) fn shrink_lv(
        &mut self,
        vg: &VgSpec,
        lv: &LvSpec,
        have: &crate::observe::Lv,
        want: u64,
    ) {
        let object = format!("lv {}/{}", vg.name, lv.name);
        let cur = have.size;
        if lv.encryption.is_some() {
            self.refuse(&object, format!("is {}, larger than the file's {}; hyraid does not shrink an encrypted LV (its filesystem, then its mapping, then the LV)", human(cur), human(want)), format!("set its size to {} in the file", crate::config::size::writable(cur)));
            return;
        }
        if have.writecache.is_some() {
            self.refuse(&object, format!("is {}, larger than the file's {}; hyraid never shrinks an LV with a writecache (LVM does not reduce one)", human(cur), human(want)), format!("set its size to {} in the file; or remove `writecache`, apply, shrink, then add it back", crate::config::size::writable(cur)));
            return;
        }
        let fs = self
            .o
            .filesystems
            .iter()
            .find(|f| f.mapper.is_none() && f.vg == vg.name && f.lv == lv.name);
        let ext4 = match fs.map(|f| f.fstype.as_str()) {
            Some("xfs") => {
                self.refuse(&object, format!("is {}, larger than the file's {}, and carries xfs, which cannot shrink", human(cur), human(want)), format!("set its size to {} in the file (an xfs can only be copied to a smaller LV)", crate::config::size::writable(cur)));
                return;
            }
            Some("ext4") => true,
            Some(other) => {
                self.refuse(&object, format!("is {}, larger than the file's {}, and carries {other}, which hyraid does not shrink", human(cur), human(want)), format!("set its size to {} in the file", crate::config::size::writable(cur)));
                return;
            }
            None => false,
        };
        if let Some(min) = fs.and_then(|f| f.min_size).filter(|m| want < *m) {
            self.refuse(
                &object,
                format!(
                    "is {}, and the file's {} is smaller than its ext4 can shrink to ({}, resize2fs -P): resize2fs would refuse after the filesystem was unmounted",
                    human(cur),
                    human(want),
                    human(min)
                ),
                format!(
                    "set its size to {} or more in the file, or free space on the filesystem first",
                    crate::config::size::writable(min.div_ceil(1 << 20) << 20)
                ),
            );
            return;
        }
        let step = Step::ShrinkLv(ShrinkLv {
            vg: vg.name.clone(),
            lv: lv.name.clone(),
            size: want,
            ext4,
            unmount: fs.and_then(|f| f.mountpoint.clone()),
        });
        let (risk, why) = if ext4 {
            (
                Risk::DataAtRisk,
                format!(
                    "the file makes the LV {} smaller: the ext4 is unmounted, checked and shrunk to {} first (resize2fs moves the blocks past the new end; an interruption during it leaves a filesystem to check)",
                    human(cur - want),
                    human(want)
                ),
            )
        } else {
            (
                Risk::Destroys,
                format!(
                    "the file makes the LV {} smaller and it has no filesystem hyraid can shrink: the data past the new end is lost",
                    human(cur - want)
                ),
            )
        };
        if !self.policy.allow_destroy {
            self.refuse(
                &object,
                format!(
                    "is {}, larger than the file's {}; hyraid never shrinks an LV without --allow-destroy ({}: {why})",
                    human(cur),
                    human(want),
                    step.summary()
                ),
                format!("run with --allow-destroy to shrink it, or set its size to {} in the file", crate::config::size::writable(cur)),
            );
            return;
        }
        self.steps.push(ps(step, risk, why));
    }

    /// This plan shrinks the LV (its filesystem is then not grown, and is mounted again after).
    pub(in crate::plan) fn shrinks(&self, vg: &str, lv: &str) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(&s.step, Step::ShrinkLv(x) if x.vg == vg && x.lv == lv))
    }
}
