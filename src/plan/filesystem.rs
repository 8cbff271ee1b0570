//! Filesystems on the file's LVs: made on a blank LV (before a writecache is attached), listed
//! by UUID in hyraid's block of /etc/fstab, mounted. A filesystem of the file's type is adopted;
//! anything else on the LV is overwritten only with --allow-destroy.

use super::fs_remake::remake_reason;
use super::fstab::{FstabEntry, foreign_lines, foreign_mountpoints, managed_fstab};
use super::*;
use crate::config::filesystem::FilesystemSpec;
use crate::observe::{FSTAB_PATH, Filesystem};
use crate::plan::step::{GrowFilesystem, MakeFilesystem, MountFilesystem, WriteFile};

/// A UUID for a new filesystem, in the 8-4-4-4-12 form mkfs takes: a hash of the host, the LV
/// and the observation (version 5-style bits), so a saved plan re-derives the same one and the
/// fstab line is known at plan time.
fn new_fs_uuid(host: &str, vg: &str, lv: &str, basis: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in ["filesystem", host, vg, lv, basis] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    let mut b: Vec<u8> = h.finalize().iter().take(16).copied().collect();
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

impl<'a> Planner<'a> {
    fn observed_fs(&self, vg: &str, lv: &str) -> Option<&'a Filesystem> {
        self.o.filesystems.iter().find(|f| f.vg == vg && f.lv == lv)
    }

    /// The LV exists, or this plan creates it.
    fn lv_will_exist(&self, vg: &str, lv: &str) -> bool {
        self.ix.lv(vg, lv).is_some_and(|l| !l.hidden)
            || self
                .steps
                .iter()
                .any(|s| matches!(&s.step, Step::CreateLv(c) if c.vg == vg && c.lv == lv))
    }

    /// mkfs for the VG's LVs that have no filesystem of the file's type yet; runs after the LVs
    /// are created and before their writecaches are attached.
    pub(in crate::plan) fn make_filesystems(&mut self, vg: &VgSpec) {
        for lv in vg.lvs.values().filter(|l| !l.absent) {
            let Some(fs) = &lv.filesystem else { continue };
            if !self.lv_will_exist(&vg.name, &lv.name) {
                continue;
            }
            let have = self.observed_fs(&vg.name, &lv.name);
            if have.is_some_and(|h| h.fstype == fs.fstype.as_str()) {
                continue;
            }
            let step = Step::MakeFilesystem(MakeFilesystem {
                vg: vg.name.clone(),
                lv: lv.name.clone(),
                fstype: fs.fstype,
                uuid: new_fs_uuid(&self.o.hostname, &vg.name, &lv.name, &self.basis),
                label: fs.label.clone(),
                replaces: have.map(|h| h.fstype.clone()),
                unmount: have.and_then(|h| h.mountpoint.clone()),
            });
            match have {
                None => self.steps.push(ps(
                    step,
                    Risk::Safe,
                    "the LV carries no filesystem or other signature yet",
                )),
                Some(h) if h.mountpoint.is_some() => {
                    let reason = remake_reason(h, fs);
                    let mut out = Vec::new();
                    self.destroying(step, &reason, &mut out);
                    self.steps.extend(out);
                }
                Some(h) => {
                    let reason = format!(
                        "the LV carries {}, the file wants {}: everything on the LV is lost",
                        h.fstype,
                        fs.fstype.as_str()
                    );
                    let mut out = Vec::new();
                    self.destroying(step, &reason, &mut out);
                    self.steps.extend(out);
                }
            }
        }
    }

    /// The UUID the filesystem of an LV has, or will have after this plan.
    fn fs_uuid(&self, vg: &str, lv: &str, fs: &FilesystemSpec) -> Option<String> {
        self.steps
            .iter()
            .find_map(|s| match &s.step {
                Step::MakeFilesystem(m) if m.vg == vg && m.lv == lv => Some(m.uuid.clone()),
                _ => None,
            })
            .or_else(|| {
                self.observed_fs(vg, lv)
                    .filter(|h| h.fstype == fs.fstype.as_str())
                    .and_then(|h| h.uuid.clone())
            })
    }

    /// What else is mounted at `mp`, or listed there by a line of fstab hyraid does not own.
    fn mountpoint_taken(&self, vg: &str, lv: &str, mp: &str) -> Option<String> {
        let o = self.o;
        let dev = o
            .block_devices
            .iter()
            .filter(|d| d.mountpoint.as_deref() == Some(mp))
            .map(|d| format!("/dev/{}", d.kname))
            .chain(
                o.other_devices
                    .iter()
                    .filter(|d| d.mountpoint.as_deref() == Some(mp))
                    .map(|d| format!("/dev/{}", d.kname)),
            )
            .chain(
                o.filesystems
                    .iter()
                    .filter(|f| f.mountpoint.as_deref() == Some(mp) && (f.vg != vg || f.lv != lv))
                    .map(|f| format!("LV {}/{}", f.vg, f.lv)),
            )
            .next();
        dev.map(|d| format!("{d} is mounted there")).or_else(|| {
            o.boot
                .fstab
                .as_deref()
                .filter(|t| foreign_mountpoints(t).iter().any(|m| m == mp))
                .map(|_| {
                    format!(
                        "a line of {FSTAB_PATH} that hyraid does not own mounts something there"
                    )
                })
        })
    }

    /// hyraid's block of /etc/fstab, then the mounts; after every LV step.
    pub(in crate::plan) fn filesystems(&mut self) {
        let mut entries = Vec::new();
        let mut mounts = Vec::new();
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for vg in self.d.volume_groups.values().filter(|v| !v.absent) {
            for lv in vg.lvs.values().filter(|l| !l.absent) {
                let Some(fs) = &lv.filesystem else { continue };
                let Some(mp) = &fs.mount else { continue };
                let object = format!("lv {}/{}", vg.name, lv.name);
                if let Some(other) = seen.insert(mp.clone(), object.clone()) {
                    self.refuse(
                        &object,
                        format!("mount point {mp} is also {other}'s"),
                        "give each filesystem its own mount point",
                    );
                    continue;
                }
                let uuid = self.fs_uuid(&vg.name, &lv.name, fs);
                // A line of the machine's own (say, from before `hyraid import`) that mounts this
                // filesystem there already does what the file asks: it stays, and hyraid adds none.
                let own_line = uuid.as_ref().is_some_and(|u| {
                    self.o.boot.fstab.as_deref().is_some_and(|t| {
                        foreign_lines(t)
                            .iter()
                            .any(|l| l.0 == format!("UUID={u}") && l.1 == *mp)
                    })
                });
                let taken = if own_line {
                    None
                } else {
                    self.mountpoint_taken(&vg.name, &lv.name, mp)
                };
                if let Some(why) = taken {
                    self.refuse(
                        &object,
                        format!("cannot mount at {mp}: {why}"),
                        "choose another mount point, or free that one",
                    );
                    continue;
                }
                let have = self.observed_fs(&vg.name, &lv.name);
                if let Some(at) = have
                    .and_then(|h| h.mountpoint.as_ref())
                    .filter(|m| *m != mp)
                {
                    self.refuse(
                        &object,
                        format!("its filesystem is mounted at {at}, the file says {mp}"),
                        format!("unmount it (`umount {at}`) and plan again, or set `mount: {at}`"),
                    );
                    continue;
                }
                let Some(uuid) = uuid else {
                    // A re-creation refused: the line of the filesystem that stays is kept.
                    entries.extend(self.kept_fstab_entry(&vg.name, &lv.name));
                    continue;
                };
                if !own_line {
                    entries.push(FstabEntry {
                        uuid,
                        mountpoint: mp.clone(),
                        fstype: fs.fstype.as_str().into(),
                        options: fs.options_field(),
                        pass: fs.fstype.fsck_pass(),
                    });
                }
                if have.and_then(|h| h.mountpoint.as_ref()).is_none()
                    || self.shrinks(&vg.name, &lv.name)
                    || self.remakes_mounted(&vg.name, &lv.name)
                {
                    mounts.push(ps(
                        Step::MountFilesystem(MountFilesystem {
                            vg: vg.name.clone(),
                            lv: lv.name.clone(),
                            mountpoint: mp.clone(),
                            systemd: self.o.boot.systemd,
                        }),
                        Risk::Safe,
                        "mounted now as at boot, by its fstab line",
                    ));
                }
            }
        }
        let old = self.o.boot.fstab.clone();
        let owned = old
            .as_deref()
            .is_some_and(|t| t.contains(super::fstab::FSTAB_BEGIN));
        if !entries.is_empty() || owned {
            let new = managed_fstab(old.as_deref(), &entries);
            if old.as_deref() != Some(new.as_str()) {
                self.steps.push(ps(
                    Step::WriteFile(WriteFile {
                        path: FSTAB_PATH.into(),
                        old,
                        content: new,
                        purpose: "fstab lines of the filesystems in the file".into(),
                    }),
                    Risk::Safe,
                    "the filesystems are mounted at boot by UUID",
                ));
            }
        }
        self.steps.extend(mounts);
        self.grow_filesystems();
    }

    /// A filesystem grows after its LV: in this plan's lvextend, or after one an interrupted
    /// apply ran (the filesystem is then smaller than its LV). Last, so that an xfs is mounted.
    fn grow_filesystems(&mut self) {
        for vg in self.d.volume_groups.values().filter(|v| !v.absent) {
            for lv in vg.lvs.values().filter(|l| !l.absent) {
                let Some(fs) = &lv.filesystem else { continue };
                let Some(have) = self
                    .observed_fs(&vg.name, &lv.name)
                    .filter(|h| h.fstype == fs.fstype.as_str())
                else {
                    continue;
                };
                let extends = self.steps.iter().any(
                    |s| matches!(&s.step, Step::ExtendLv(e) if e.vg == vg.name && e.lv == lv.name),
                );
                // xfs leaves out a last allocation group under 64 blocks: less than 1 MiB short
                // is the filesystem's full size.
                let short = match (have.size, self.ix.lv(&vg.name, &lv.name)) {
                    (Some(s), Some(l)) => l.size.saturating_sub(s) >= 1 << 20,
                    _ => false,
                };
                if !extends && !short || self.shrinks(&vg.name, &lv.name) {
                    continue;
                }
                let mounts = self.steps.iter().any(|s| {
                    matches!(&s.step, Step::MountFilesystem(m) if m.vg == vg.name && m.lv == lv.name)
                });
                let mountpoint = have
                    .mountpoint
                    .clone()
                    .or_else(|| fs.mount.clone().filter(|_| mounts));
                let object = format!("lv {}/{}", vg.name, lv.name);
                if fs.fstype == crate::config::filesystem::FsType::Xfs && mountpoint.is_none() {
                    self.refuse(&object, "xfs grows only while mounted (xfs_growfs takes its mount point), and it is not mounted", "give the filesystem a `mount` in the file, or mount it, then plan again");
                    continue;
                }
                let tool = match (fs.fstype, &mountpoint) {
                    (crate::config::filesystem::FsType::Xfs, _) => {
                        "xfs_growfs on the mounted filesystem"
                    }
                    (_, Some(_)) => "resize2fs grows a mounted ext4 online",
                    (_, None) => "resize2fs, after the e2fsck -f it demands of an unmounted ext4",
                };
                self.steps.push(ps(
                    Step::GrowFilesystem(GrowFilesystem {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                        fstype: fs.fstype,
                        mountpoint,
                    }),
                    Risk::Safe,
                    if extends {
                        format!("the LV grows in this plan; {tool}")
                    } else {
                        format!("the filesystem is smaller than its LV (an earlier lvextend ran without it); {tool}")
                    },
                ));
            }
        }
    }
}
