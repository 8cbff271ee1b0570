//! The key of an encrypted mirror with a header: the file's key file opens it, or it is rotated
//! from the key file hyraid's crypttab line names (add, prove, remove the old), each a step.

use super::*;
use crate::config::encryption::EncryptionSpec;
use crate::observe::luks::Luks;
use crate::plan::step::{AddLuksKey, CreateKeyFile, RemoveLuksKey, TestLuksKey};

impl Planner<'_> {
    /// The key steps of mirror `m` with header `h`; `old`: the key file hyraid's crypttab line
    /// opens it with, when that is not the file's. Some(whether the key slots change), or None
    /// when refused.
    pub(in crate::plan) fn keys(
        &mut self,
        m: &MirrorSpec,
        e: &EncryptionSpec,
        h: &Luks,
        device: &str,
        key_there: bool,
        old: Option<&str>,
    ) -> Option<bool> {
        let object = format!("mirror {}", m.name);
        let opens = |k: &str| h.opens_with.get(k).copied();
        let new_opens = key_there && opens(&e.key_file) == Some(true);
        let Some(old) = old else {
            if !key_there {
                self.refuse(&object, format!("the key file {} is missing or empty: the LUKS header on {device} opens only with its key", e.key_file), "restore the key file from your copy (mode 0400, root's), then plan again");
                return None;
            }
            if opens(&e.key_file) == Some(false) {
                self.refuse(&object, format!("the key file {} does not open the LUKS header on {device}", e.key_file), "name the key file that opens it (`cryptsetup open --test-passphrase --key-file FILE DEVICE` tells)");
                return None;
            }
            return Some(false);
        };
        let step = |s: Step, why: &str| ps(s, Risk::Safe, why);
        match (new_opens, opens(old)) {
            // Added and proven before (an apply stopped after it): the old slot goes.
            (true, Some(true)) => {
                self.steps.push(step(
                    Step::RemoveLuksKey(RemoveLuksKey {
                        mirror: m.name.clone(),
                        device: device.into(),
                        key_file: old.into(),
                    }),
                    "the new key opens the header; the old one is removed",
                ));
                Some(true)
            }
            // Removed already: crypttab follows.
            (true, _) => Some(false),
            (false, Some(true)) => {
                if !key_there {
                    self.steps.push(step(
                        Step::CreateKeyFile(CreateKeyFile {
                            mirror: m.name.clone(),
                            path: e.key_file.clone(),
                        }),
                        "the new key file the file names is not there",
                    ));
                }
                self.steps.extend([
                    step(
                        Step::AddLuksKey(AddLuksKey { mirror: m.name.clone(), device: device.into(), with: old.into(), key_file: e.key_file.clone() }),
                        &format!("the file changes the key file from {old}: the new key goes into a free slot first"),
                    ),
                    step(
                        Step::TestLuksKey(TestLuksKey { mirror: m.name.clone(), device: device.into(), key_file: e.key_file.clone() }),
                        "the old key is removed only once the new one is proven",
                    ),
                    step(
                        Step::RemoveLuksKey(RemoveLuksKey { mirror: m.name.clone(), device: device.into(), key_file: old.into() }),
                        "the new key opens the header; the old one is removed",
                    ),
                ]);
                Some(true)
            }
            (false, _) => {
                self.refuse(&object, format!("neither the file's key file {} nor the one /etc/crypttab names ({old}) opens the LUKS header on {device}", e.key_file), "restore a key file that opens it, then plan again");
                None
            }
        }
    }
}

/// Mount points the initramfs must open the device of (Debian's cryptsetup-initramfs opens those
/// of `/` and `/usr` from its copy of crypttab; the rest is opened by systemd after it).
const EARLY_MOUNTS: [&str; 2] = ["/", "/usr"];

impl Planner<'_> {
    /// When crypttab changes and a filesystem the initramfs mounts is on an encrypted mirror, the
    /// initramfs is made again after it (unless this plan already does so later).
    pub(in crate::plan) fn crypttab_initramfs(&mut self) {
        use crate::observe::luks::CRYPTTAB_PATH;
        let Some(at) = self
            .steps
            .iter()
            .position(|s| matches!(&s.step, Step::WriteFile(w) if w.path == CRYPTTAB_PATH))
        else {
            return;
        };
        let Some(lv) = self.early_lv_on_encrypted() else {
            return;
        };
        if self.steps[at..]
            .iter()
            .any(|s| matches!(s.step, Step::RegenerateInitramfs(_)))
        {
            return;
        }
        match self.o.boot.initramfs_tool.clone() {
            Some(tool) => self.steps.push(ps(
                Step::RegenerateInitramfs(crate::plan::step::RegenerateInitramfs { tool }),
                Risk::Safe,
                format!("lv {lv} is mounted at boot by the initramfs and lies on an encrypted mirror: the initramfs opens it from its copy of /etc/crypttab"),
            )),
            None => self.notes.push(format!("lv {lv} lies on an encrypted mirror and is mounted early, but no update-initramfs or dracut was found: the initramfs keeps its old crypttab")),
        }
    }

    /// An LV (`vg/lv`) mounted at `/` or `/usr` (by the file or on the machine) in a VG with an
    /// encrypted mirror among its PVs.
    fn early_lv_on_encrypted(&self) -> Option<String> {
        let encrypted = |r: &DeviceRef| matches!(r, DeviceRef::Mirror(n) if self.d.mirrors.get(n).is_some_and(|m| m.encryption.is_some()));
        for vg in self
            .d
            .volume_groups
            .values()
            .filter(|v| !v.absent && v.pvs.iter().any(encrypted))
        {
            for lv in vg.lvs.values() {
                let wanted = lv.filesystem.as_ref().and_then(|f| f.mount.as_deref());
                let observed = self
                    .o
                    .filesystems
                    .iter()
                    .find(|f| !f.md && f.vg == vg.name && f.lv == lv.name)
                    .and_then(|f| f.mountpoint.as_deref());
                if [wanted, observed]
                    .into_iter()
                    .flatten()
                    .any(|m| EARLY_MOUNTS.contains(&m))
                {
                    return Some(format!("{}/{}", vg.name, lv.name));
                }
            }
        }
        None
    }
}
