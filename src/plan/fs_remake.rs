//! A mounted filesystem of another type than the file's is made again (only with
//! --allow-destroy, marked `destroys`): unmounted, its signatures wiped, made with the file's
//! type and a new UUID (MakeFilesystem with `unmount`), its fstab line replaced, mounted again.

use super::*;
use crate::config::filesystem::FilesystemSpec;
use crate::observe::Filesystem;
use crate::plan::fstab::{FSTAB_BEGIN, FSTAB_END, FstabEntry};
use crate::plan::step::FsOn;

/// Why a mounted filesystem is made again: the data on it is lost.
pub(in crate::plan) fn remake_reason(have: &Filesystem, fs: &FilesystemSpec, noun: &str) -> String {
    format!(
        "the {noun} carries {} mounted at {}; the file wants {}: it is unmounted, wiped and made again, and everything on it is lost",
        have.fstype,
        have.mountpoint.as_deref().unwrap_or_default(),
        fs.fstype.as_str()
    )
}

impl<'a> Planner<'a> {
    /// This plan unmounts the filesystem on `on` to make it again (it is mounted again after
    /// its new fstab line).
    pub(in crate::plan) fn remakes_mounted(&self, on: &FsOn) -> bool {
        self.steps.iter().any(
            |s| matches!(&s.step, Step::MakeFilesystem(m) if m.on == *on && m.unmount.is_some()),
        )
    }

    /// The line of hyraid's fstab block that lists the filesystem on `on` now (by its UUID), as
    /// it stands: kept when the file's filesystem is not made in this plan (its re-creation
    /// refused, or what the LV holds unknown).
    /// A filesystem nobody could read (its LV inactive, its node not seen) keeps the line of
    /// the block at the file's mount point `mp`: it mounts again once the LV is back.
    pub(in crate::plan) fn kept_fstab_entry(&self, on: &FsOn, mp: &str) -> Option<FstabEntry> {
        let uuid = self.observed_fs(on).and_then(|f| f.uuid);
        let text = self.o.boot.fstab.as_deref()?;
        let block = text.split_once(FSTAB_BEGIN)?.1.split_once(FSTAB_END)?.0;
        block.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let line_uuid = f.first()?.strip_prefix("UUID=")?;
            let same = match &uuid {
                Some(u) => line_uuid == u,
                None => f.get(1) == Some(&mp),
            };
            (f.len() == 6 && same).then(|| FstabEntry {
                uuid: line_uuid.to_string(),
                mountpoint: f[1].into(),
                fstype: f[2].into(),
                options: f[3].into(),
                pass: f[5].parse().unwrap_or(0),
            })
        })
    }
}
