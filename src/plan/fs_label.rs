//! A label of the file that a filesystem (on an LV, or on a mirror used without LVM) does not
//! carry is set in place: e2label on an ext4 (mounted or not); xfs_admin on an xfs, which must
//! be unmounted for it, so a mounted xfs is unmounted and mounted again (`degrades`: its data is
//! offline for that moment). A filesystem this plan makes gets the label from mkfs; one whose
//! label the file leaves out keeps the one it has.

use super::*;
use crate::plan::step::RelabelFilesystem;

impl<'a> Planner<'a> {
    /// The relabels, after the fstab block is written: each before the mount of its filesystem
    /// when this plan mounts it (unmounted, then), else last (a mounted xfs is mounted again
    /// by its fstab line).
    pub(in crate::plan) fn relabel_filesystems(&mut self) {
        for (on, fs) in self.wanted_filesystems() {
            let Some(label) = &fs.label else { continue };
            let made = self
                .steps
                .iter()
                .any(|s| matches!(&s.step, Step::MakeFilesystem(m) if m.on == on));
            let Some(have) = self
                .observed_fs(&on)
                .filter(|f| f.fstype == fs.fstype.as_str())
            else {
                continue;
            };
            if made || have.label.as_ref() == Some(label) {
                continue;
            }
            let xfs = fs.fstype == crate::config::filesystem::FsType::Xfs;
            let (risk, how) = match (xfs, &have.mountpoint) {
                (false, _) => (
                    Risk::Safe,
                    "e2label rewrites the superblock, mounted or not",
                ),
                (true, Some(_)) => (
                    Risk::Degrades,
                    "xfs_admin relabels an xfs only unmounted: its data is offline until it is mounted again (a busy mount point stops apply at the umount, nothing changed)",
                ),
                (true, None) => (
                    Risk::Safe,
                    "xfs_admin rewrites the superblock of the unmounted xfs",
                ),
            };
            let at = self
                .steps
                .iter()
                .position(|s| matches!(&s.step, Step::MountFilesystem(m) if m.on == on));
            let step = ps(
                Step::RelabelFilesystem(RelabelFilesystem {
                    on,
                    fstype: fs.fstype,
                    label: label.clone(),
                    old: have.label.clone(),
                    mountpoint: have.mountpoint.clone(),
                }),
                risk,
                format!("the file labels the filesystem {label}; {how}"),
            );
            match at {
                Some(i) => self.steps.insert(i, step),
                None => self.steps.push(step),
            }
        }
    }
}
