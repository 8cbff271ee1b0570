//! Filesystems on the file's LVs and on its mirrors used without LVM: made on a blank device (an
//! LV before its writecache is attached, an array right after its creation, during the initial
//! resync), listed by UUID in hyraid's block of /etc/fstab, mounted. A filesystem of the file's
//! type is adopted; anything else on the device is overwritten only with --allow-destroy.

use super::fs_remake::remake_reason;
use super::fstab::{FstabEntry, foreign_lines, foreign_mountpoints, managed_fstab};
use super::*;
use crate::config::filesystem::FilesystemSpec;
use crate::observe::{FSTAB_PATH, Filesystem};
use crate::plan::step::{FsOn, GrowFilesystem, MakeFilesystem, MountFilesystem, WriteFile};

/// A UUID for a new filesystem, in the 8-4-4-4-12 form mkfs takes: a hash of the host, the
/// device (an LV by VG and name, a mirror as `/dev/md` and its name: no VG is named with a `/`)
/// and the observation (version 5-style bits), so a saved plan re-derives the same one and the
/// fstab line is known at plan time.
fn new_fs_uuid(host: &str, on: &FsOn, basis: &str) -> String {
    let (outer, inner) = match on {
        FsOn::Lv { vg, lv, .. } => (vg.as_str(), lv.as_str()),
        FsOn::Mirror { mirror, .. } => ("/dev/md", mirror.as_str()),
    };
    derived_uuid(&["filesystem", host, outer, inner, basis])
}

/// A version-5-style UUID hashed from `parts`: the same observation gives the same one.
pub(super) fn derived_uuid(parts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in parts {
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

/// The step's device, for the three filesystem steps.
fn step_on(s: &Step) -> Option<&FsOn> {
    match s {
        Step::MakeFilesystem(m) => Some(&m.on),
        Step::MountFilesystem(m) => Some(&m.on),
        Step::GrowFilesystem(g) => Some(&g.on),
        _ => None,
    }
}

impl<'a> Planner<'a> {
    /// The filesystems the file asks for: on the LVs of its VGs, then on its mirrors.
    pub(in crate::plan) fn wanted_filesystems(&self) -> Vec<(FsOn, &'a FilesystemSpec)> {
        let d = self.d;
        let lvs = d
            .volume_groups
            .values()
            .filter(|v| !v.absent)
            .flat_map(|vg| {
                vg.lvs.values().filter(|l| !l.absent).filter_map(|lv| {
                    let on = FsOn::Lv {
                        vg: vg.name.clone(),
                        lv: lv.name.clone(),
                        crypt: lv.encryption.as_ref().map(|e| e.name.clone()),
                    };
                    lv.filesystem.as_ref().map(|f| (on, f))
                })
            });
        let mirrors = d.mirrors.values().filter(|m| !m.absent).filter_map(|m| {
            let on = FsOn::Mirror {
                mirror: m.name.clone(),
                device: m.md_device(),
            };
            m.filesystem.as_ref().map(|f| (on, f))
        });
        lvs.chain(mirrors).collect()
    }

    /// The observed array of a mirror the file names.
    fn fs_array(&self, mirror: &str) -> Option<&'a crate::observe::MdArray> {
        self.d.mirrors.get(mirror).and_then(|m| self.array_of(m))
    }

    /// What the device carries: lsblk's filesystem or signature, or, on an array, its PV label.
    pub(in crate::plan) fn observed_fs(&self, on: &FsOn) -> Option<Filesystem> {
        let fs = &self.o.filesystems;
        match on {
            FsOn::Lv { vg, lv, crypt } => fs
                .iter()
                .find(|f| !f.md && f.vg == *vg && f.lv == *lv && f.mapper == *crypt)
                .cloned(),
            FsOn::Mirror { mirror, .. } => {
                let a = self.fs_array(mirror)?;
                fs.iter()
                    .find(|f| f.md && f.kname == a.kname)
                    .cloned()
                    .or_else(|| Some(Filesystem::on_array(&a.kname, a.fstype.clone()?)))
            }
        }
    }

    /// Every name a line of /etc/fstab may give this filesystem (see [`super::fstab::sources`]): the
    /// label observed, and its device's paths (/dev/VG/LV and /dev/mapper/VG-LV; /dev/md/NAME
    /// and /dev/mdN).
    fn fs_names(&self, on: &FsOn, uuid: Option<&str>) -> Vec<String> {
        let label = self.observed_fs(on).and_then(|f| f.label);
        let paths = match on {
            FsOn::Lv { crypt: Some(c), .. } => vec![format!("/dev/mapper/{c}")],
            FsOn::Lv { vg, lv, .. } => vec![
                format!("/dev/{vg}/{lv}"),
                format!(
                    "/dev/mapper/{}",
                    crate::observe::filesystems::dm_name(vg, lv)
                ),
            ],
            FsOn::Mirror { mirror, .. } => std::iter::once(format!("/dev/md/{mirror}"))
                .chain(self.fs_array(mirror).map(|a| format!("/dev/{}", a.kname)))
                .collect(),
        };
        super::fstab::sources(uuid, label.as_deref(), &paths)
    }

    /// The LV or the array exists, or this plan creates it.
    fn fs_device_will_exist(&self, on: &FsOn) -> bool {
        match on {
            // Encrypted: its mapping is open, or this plan opens it.
            FsOn::Lv { vg, lv, crypt } => {
                let lv_there = self.ix.lv(vg, lv).is_some_and(|l| !l.hidden)
                    || self.steps.iter().any(
                        |s| matches!(&s.step, Step::CreateLv(c) if c.vg == *vg && c.lv == *lv),
                    );
                let key = format!("{vg}/{lv}");
                lv_there
                    && !self.opening.contains_key(&key)
                    && !self.blocked.contains(&key)
                    && crypt.as_ref().is_none_or(|c| {
                        self.mapping_size(c).is_some()
                            || self
                                .steps
                                .iter()
                                .any(|s| matches!(&s.step, Step::OpenLuks(o) if o.name == *c))
                    })
            }
            // An array this plan starts or opens: what it carries is read only then.
            FsOn::Mirror { mirror, .. } => {
                !self.blocked.contains(mirror)
                    && !self.opening.contains_key(mirror)
                    && (self.creating.contains_key(mirror) || self.fs_array(mirror).is_some())
            }
        }
    }

    /// Bytes of the LV or the array the filesystem sits on, as observed.
    fn fs_device_size(&self, on: &FsOn) -> Option<u64> {
        match on {
            FsOn::Lv {
                vg,
                lv,
                crypt: Some(_),
            } => self.mapping_target(vg, lv),
            FsOn::Lv { vg, lv, .. } => self.ix.lv(vg, lv).map(|l| l.size),
            FsOn::Mirror { mirror, .. } => self.fs_array(mirror).map(|a| a.size_kib * 1024),
        }
    }

    /// This plan shrinks the LV (never an array).
    fn fs_shrinks(&self, on: &FsOn) -> bool {
        matches!(on, FsOn::Lv { vg, lv, .. } if self.shrinks(vg, lv))
    }

    /// mkfs for the VG's LVs that have no filesystem of the file's type yet; runs after the LVs
    /// are created and before their writecaches are attached.
    pub(in crate::plan) fn make_filesystems(&mut self, vg: &VgSpec) {
        for lv in vg.lvs.values().filter(|l| !l.absent) {
            // An encrypted LV: its LUKS layer first; what is inside only once it can be seen.
            if let Some(e) = &lv.encryption
                && self.encrypted_lv(&vg.name, &lv.name, e).is_none()
            {
                continue;
            }
            let Some(fs) = &lv.filesystem else { continue };
            let on = FsOn::Lv {
                vg: vg.name.clone(),
                lv: lv.name.clone(),
                crypt: lv.encryption.as_ref().map(|e| e.name.clone()),
            };
            let out = self.make_filesystem(&on, fs);
            self.steps.extend(out);
        }
    }

    /// mkfs for a mirror used without LVM, among its md steps: after its creation and before
    /// anything waits for its resync (mkfs runs during the initial resync).
    pub(in crate::plan) fn make_mirror_filesystem(
        &mut self,
        m: &MirrorSpec,
        md_steps: &mut Vec<PlannedStep>,
    ) {
        let Some(fs) = &m.filesystem else { return };
        if self.starting.contains(&m.name) {
            self.notes.push(format!("mirror {}: the array is assembled but not running, so whether it carries its {} cannot be read yet; this plan starts it, and `hyraid apply` then plans the filesystem and its mount, shows them and asks", m.name, fs.fstype.as_str()));
            return;
        }
        let on = FsOn::Mirror {
            mirror: m.name.clone(),
            device: m.md_device(),
        };
        if let Some(vg) = self
            .fs_array(&m.name)
            .and_then(|a| self.ix.pv(&a.kname))
            .and_then(|pv| pv.vg.clone())
            .filter(|vg| !vg.is_empty())
        {
            let reason =
                format!("is a PV of volume group {vg}; the file gives the array a filesystem");
            let fix = format!(
                "hyraid never removes a VG to make a filesystem: move its data away and remove it (`vgremove {vg}`, `pvremove`), or drop the mirror's `filesystem`"
            );
            self.refuse(format!("mirror {}", m.name), reason, fix);
            return;
        }
        let at = md_steps
            .iter()
            .position(|s| matches!(s.step, Step::WaitIdle(_)))
            .unwrap_or(md_steps.len());
        let out = self.make_filesystem(&on, fs);
        md_steps.splice(at..at, out);
    }

    /// mkfs on a device that has no filesystem of the file's type yet: on a blank one, or over
    /// another signature with --allow-destroy; never over a mounted one.
    fn make_filesystem(&mut self, on: &FsOn, fs: &FilesystemSpec) -> Vec<PlannedStep> {
        let mut out = Vec::new();
        if !self.fs_device_will_exist(on) {
            return out;
        }
        let have = self.observed_fs(on);
        let noun = on.noun();
        if have
            .as_ref()
            .is_some_and(|h| h.fstype == fs.fstype.as_str())
        {
            return out;
        }
        // An LV that exists but whose device nobody saw (inactive, or its node not shown): its
        // content is unknown, and mkfs would write over whatever it holds.
        if let FsOn::Lv { vg, lv, .. } = on
            && have.is_none()
            && let Some(l) = self.ix.lv(vg, lv)
            && !self.o.lvm.nodes.contains(&format!("{vg}/{lv}"))
        {
            let why = if l.active {
                "its device node was not seen (is it under a pvmove, or suspended?)"
            } else {
                "it is not active, so it has no device to read"
            };
            self.refuse(
                format!("lv {vg}/{lv}"),
                format!("the file asks for a {} on it, and hyraid cannot tell what it holds now: {why}; mkfs could write over a filesystem", fs.fstype.as_str()),
                format!("activate it (`lvchange -ay {vg}/{lv}`), let a pvmove finish (`hyraid apply` waits for it), then plan again"),
            );
            return out;
        }
        let step = Step::MakeFilesystem(MakeFilesystem {
            on: on.clone(),
            fstype: fs.fstype,
            uuid: new_fs_uuid(&self.o.hostname, on, self.basis.as_str()),
            label: fs.label.clone(),
            replaces: have.as_ref().map(|h| h.fstype.clone()),
            unmount: have.as_ref().and_then(|h| h.mountpoint.clone()),
        });
        match have {
            None => out.push(ps(
                step,
                Risk::Safe,
                format!("the {noun} carries no filesystem or other signature yet"),
            )),
            Some(h) if h.mountpoint.is_some() => {
                let reason = remake_reason(&h, fs, noun);
                self.destroying(step, &reason, &mut out);
            }
            Some(h) => {
                let reason = format!(
                    "the {noun} carries {}, the file wants {}: everything on the {noun} is lost",
                    h.fstype,
                    fs.fstype.as_str()
                );
                self.destroying(step, &reason, &mut out);
            }
        }
        out
    }

    /// The UUID the filesystem of an LV or a mirror has, or will have after this plan.
    fn fs_uuid(&self, on: &FsOn, fs: &FilesystemSpec) -> Option<String> {
        self.steps
            .iter()
            .find_map(|s| match &s.step {
                Step::MakeFilesystem(m) if m.on == *on => Some(m.uuid.clone()),
                _ => None,
            })
            .or_else(|| {
                self.observed_fs(on)
                    .filter(|h| h.fstype == fs.fstype.as_str())
                    .and_then(|h| h.uuid.clone())
            })
    }

    /// What else is mounted at `mp`, or listed there by a line of fstab hyraid does not own.
    fn mountpoint_taken(&self, on: &FsOn, mp: &str) -> Option<String> {
        let own = self.observed_fs(on).map(|f| (f.md, f.kname));
        let o = self.o;
        let dev = o
            .block_devices
            .iter()
            .filter(|d| d.mountpoint.as_deref() == Some(mp))
            .map(|d| format!("/dev/{}", d.kname))
            .chain(
                o.other_devices
                    .iter()
                    // An encrypted LV's mapping is its filesystem's own device.
                    .filter(|d| d.mountpoint.as_deref() == Some(mp))
                    .filter(|d| own.as_ref().is_none_or(|(_, k)| *k != d.kname))
                    .map(|d| format!("/dev/{}", d.kname)),
            )
            .chain(
                o.filesystems
                    .iter()
                    .filter(|f| {
                        f.mountpoint.as_deref() == Some(mp)
                            && own.as_ref() != Some(&(f.md, f.kname.clone()))
                    })
                    .map(|f| f.describe()),
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
        let kept = self.left_alone_lines();
        for (on, fs) in self.wanted_filesystems() {
            let Some(mp) = &fs.mount else { continue };
            let object = on.address().to_string();
            if let Some(other) = seen.insert(mp.clone(), object.clone()) {
                self.refuse(
                    &object,
                    format!("mount point {mp} is also {other}'s"),
                    "give each filesystem its own mount point",
                );
                continue;
            }
            let uuid = self.fs_uuid(&on, fs);
            // A line of the machine's own (say, from before `hyraid import`) that mounts this
            // filesystem there already does what the file asks: it stays, and hyraid adds none.
            // A line may name it by UUID, label or any path of its device, as mount does.
            let names = self.fs_names(&on, uuid.as_deref());
            let own_line = self.o.boot.fstab.as_deref().is_some_and(|t| {
                foreign_lines(t)
                    .iter()
                    .any(|l| names.contains(&l.0) && l.1 == *mp)
            });
            let taken = if own_line {
                None
            } else {
                // A filesystem the file leaves alone keeps its line in hyraid's block, and the
                // mount point with it.
                let left_alone = kept.iter().find(|k| k.mountpoint == *mp).map(|k| {
                    let what = k.on.as_deref().unwrap_or("another device");
                    (
                        format!(
                            "hyraid's block of {FSTAB_PATH} mounts the filesystem of {what} there at boot, and the file no longer describes that filesystem (an LV or mirror renamed in the file is a new, empty one: the old one keeps its data and its line)"
                        ),
                        format!(
                            "to rename, rename by hand (`lvrename VG OLD NEW`) and plan again; to leave {what} unmounted, describe it in the file with a `filesystem:` and no `mount:`; or choose another mount point"
                        ),
                    )
                });
                left_alone.or_else(|| {
                    self.mountpoint_taken(&on, mp).map(|why| {
                        (
                            why,
                            "choose another mount point, or free that one".to_string(),
                        )
                    })
                })
            };
            if let Some((why, fix)) = taken {
                self.refuse(&object, format!("cannot mount at {mp}: {why}"), fix);
                continue;
            }
            let have = self.observed_fs(&on);
            if let Some(at) = have
                .as_ref()
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
                entries.extend(self.kept_fstab_entry(&on, mp));
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
            if have.and_then(|h| h.mountpoint).is_none()
                || self.fs_shrinks(&on)
                || self.remakes_mounted(&on)
            {
                mounts.push(ps(
                    Step::MountFilesystem(MountFilesystem {
                        on,
                        mountpoint: mp.clone(),
                        systemd: self.o.boot.systemd,
                    }),
                    Risk::Safe,
                    "mounted now as at boot, by its fstab line",
                ));
            }
        }
        let old = self.o.boot.fstab.clone();
        let owned = old
            .as_deref()
            .is_some_and(|t| t.contains(super::fstab::FSTAB_BEGIN));
        if !entries.is_empty() || owned {
            let kept: Vec<String> = kept.into_iter().map(|k| k.line).collect();
            let new = managed_fstab(old.as_deref(), &kept, &entries);
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

    /// A filesystem grows after its device: after this plan's lvextend, or after one an
    /// interrupted apply ran, or on an array larger than it (the filesystem is then smaller than
    /// its device, observed). Last, so that an xfs is mounted.
    fn grow_filesystems(&mut self) {
        use crate::config::filesystem::FsType;
        self.grow_mappings();
        for (on, fs) in self.wanted_filesystems() {
            let Some(have) = self
                .observed_fs(&on)
                .filter(|h| h.fstype == fs.fstype.as_str())
            else {
                continue;
            };
            let extends = self.steps.iter().any(|s| match (&s.step, &on) {
                (Step::ExtendLv(e), FsOn::Lv { vg, lv, .. }) => e.vg == *vg && e.lv == *lv,
                _ => false,
            });
            // xfs leaves out a last allocation group under 64 blocks: less than 1 MiB short
            // is the filesystem's full size.
            let short = match (have.size, self.fs_device_size(&on)) {
                (Some(s), Some(d)) => d.saturating_sub(s) >= 1 << 20,
                _ => false,
            };
            if !extends && !short || self.fs_shrinks(&on) {
                continue;
            }
            let mounts = self.steps.iter().any(|s| {
                matches!(&s.step, Step::MountFilesystem(_)) && step_on(&s.step) == Some(&on)
            });
            let mountpoint = have
                .mountpoint
                .clone()
                .or_else(|| fs.mount.clone().filter(|_| mounts));
            let object = on.address().to_string();
            if fs.fstype == FsType::Xfs && mountpoint.is_none() {
                self.refuse(&object, "xfs grows only while mounted (xfs_growfs takes its mount point), and it is not mounted", "give the filesystem a `mount` in the file, or mount it, then plan again");
                continue;
            }
            let tool = match (fs.fstype, &mountpoint) {
                (FsType::Xfs, _) => "xfs_growfs on the mounted filesystem",
                (_, Some(_)) => "resize2fs grows a mounted ext4 online",
                (_, None) => "resize2fs, after the e2fsck -f it demands of an unmounted ext4",
            };
            let reason = match (&on, extends) {
                (_, true) => format!("the LV grows in this plan; {tool}"),
                (FsOn::Lv { .. }, false) => format!(
                    "the filesystem is smaller than its LV (an earlier lvextend ran without it); {tool}"
                ),
                (FsOn::Mirror { .. }, false) => {
                    format!("the filesystem is smaller than its array; {tool}")
                }
            };
            self.steps.push(ps(
                Step::GrowFilesystem(GrowFilesystem {
                    on,
                    fstype: fs.fstype,
                    mountpoint,
                }),
                Risk::Safe,
                reason,
            ));
        }
    }
}
