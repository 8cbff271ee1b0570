//! Lines of hyraid's fstab block for filesystems the file leaves alone. An LV or mirror the file
//! does not name, or names without a `filesystem:`, is left as it is, and so is the line that
//! mounts its filesystem at boot: taking the line away would leave it unmounted at the next boot
//! while the plan says it was not touched. A line goes when the file governs its filesystem (it
//! gives the LV or mirror a `filesystem:`, whose own line replaces it, or none without `mount:`),
//! when the plan removes the filesystem's LV, VG or mirror, or when its filesystem is on nothing
//! that runs (kept only while an LV or array is not running: a disk may be missing).

use super::fstab::block_lines;
use super::*;
use crate::observe::Filesystem;

/// A line of hyraid's block that stays as it is.
pub(in crate::plan) struct KeptLine {
    pub(in crate::plan) line: String,
    pub(in crate::plan) mountpoint: String,
    /// The filesystem it mounts, when it is on the machine (`LV vg0/home`, `/dev/md/data`).
    pub(in crate::plan) on: Option<String>,
}

impl<'a> Planner<'a> {
    /// The lines of hyraid's block the file does not govern, in their order.
    pub(in crate::plan) fn left_alone_lines(&self) -> Vec<KeptLine> {
        let Some(text) = self.o.boot.fstab.as_deref() else {
            return Vec::new();
        };
        let wanted = self.wanted_filesystems();
        let governed: BTreeSet<String> = wanted
            .iter()
            .filter_map(|(on, _)| self.observed_fs(on)?.uuid)
            .collect();
        let mounted_by_file: BTreeSet<&str> = wanted
            .iter()
            .filter_map(|(_, fs)| fs.mount.as_deref())
            .collect();
        let hidden = self.o.lvm.lvs.iter().any(|l| !l.hidden && !l.active)
            || self.o.arrays.iter().any(|a| a.array_state == "inactive");
        block_lines(text)
            .into_iter()
            .filter(|(_, uuid, _)| !governed.contains(uuid))
            .filter_map(|(line, uuid, mountpoint)| {
                let fs = self
                    .o
                    .filesystems
                    .iter()
                    .find(|f| f.uuid.as_deref() == Some(uuid.as_str()));
                match fs {
                    Some(f) if self.removes_fs_device(f) => None,
                    Some(f) => Some(KeptLine {
                        line,
                        mountpoint,
                        on: Some(f.describe()),
                    }),
                    None if mounted_by_file.contains(mountpoint.as_str()) => None,
                    // Its filesystem may be on an LV or array that does not run now (a disk
                    // missing): the line stays, so it mounts again when it is back.
                    None if hidden => Some(KeptLine {
                        line,
                        mountpoint,
                        on: None,
                    }),
                    // On nothing that runs: removed (an LV this file removed, an apply stopped
                    // between lvremove and the fstab write, or by hand). A line for a device
                    // that never comes would hold the next boot.
                    None => None,
                }
            })
            .collect()
    }

    /// The file removes the LV, VG or mirror `f` is on (`state: absent`).
    fn removes_fs_device(&self, f: &Filesystem) -> bool {
        if f.md {
            return self
                .d
                .mirrors
                .values()
                .any(|m| m.absent && self.array_of(m).is_some_and(|a| a.kname == f.kname));
        }
        self.d
            .volume_groups
            .get(&f.vg)
            .is_some_and(|vg| vg.absent || vg.lvs.get(&f.lv).is_some_and(|lv| lv.absent))
    }
}
