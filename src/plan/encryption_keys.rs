//! The key of an encrypted mirror with a header: the file's key file opens it, or it is rotated
//! from the key file hyraid's crypttab line names (add, prove, remove the old), each a step.

use super::*;
use crate::config::encryption::{EncryptionSpec, PASSPHRASE};
use crate::observe::luks::Luks;
use crate::plan::step::{AddLuksKey, CreateKeyFile, RemoveLuksKey, TestLuksKey};

impl Planner<'_> {
    /// The key steps of the array or LV `t` with header `h`; `old`: the key file hyraid's crypttab line
    /// opens it with, when that is not the file's. Some(whether the key slots change), or None
    /// when refused.
    pub(in crate::plan) fn keys(
        &mut self,
        t: &super::encryption::Sealed,
        e: &EncryptionSpec,
        h: &Luks,
        key_there: bool,
        old: Option<&str>,
    ) -> Option<bool> {
        let (object, device) = (t.object.clone(), t.device.as_str());
        let opens = |k: &str| h.opens_with.get(k).copied();
        let new_opens = key_there && opens(&e.key_file) == Some(true);
        if let Some(refused) = self.passphrase_keys(t, e, old, new_opens) {
            return refused;
        }
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
            // Both open: the same key in two files (a copy moved) keeps its one slot; what
            // cannot be told apart is refused rather than guessed.
            (true, Some(true)) if h.same_key != Some(false) => {
                if h.same_key == Some(true) {
                    return Some(false);
                }
                self.refuse(&object, format!("both {old} and {} open the header on {device}, and hyraid could not compare them: removing the old key's slot could remove the new key's too", e.key_file), format!("check with `cmp {old} {}`, then plan again", e.key_file));
                None
            }
            // Added and proven before (an apply stopped after it): the old slot goes.
            (true, Some(true)) => {
                self.remove_old_key(t, e, h, old);
                Some(true)
            }
            // Removed already: crypttab follows.
            (true, Some(false)) => Some(false),
            // The old key file cannot be tried (gone, unreadable): its slot may still hold it.
            (true, None) => {
                self.notes.push(format!("{object}: the old key file {old} could not be tried against the header; if its key is still in a slot, remove it by hand (`cryptsetup luksKillSlot`, after `cryptsetup luksDump` shows which)"));
                Some(false)
            }
            (false, Some(true)) => {
                if !key_there {
                    self.steps.push(step(
                        Step::CreateKeyFile(CreateKeyFile {
                            on: t.on.clone(),
                            path: e.key_file.clone(),
                        }),
                        "the new key file the file names is not there",
                    ));
                }
                self.steps.extend([
                    step(
                        Step::AddLuksKey(AddLuksKey { on: t.on.clone(), device: device.into(), with: old.into(), key_file: e.key_file.clone(), random_key: !key_there }),
                        &format!("the file changes the key file from {old}: the new key goes into a free slot first"),
                    ),
                    step(
                        Step::TestLuksKey(TestLuksKey { on: t.on.clone(), device: device.into(), key_file: e.key_file.clone() }),
                        "the old key is removed only once the new one is proven",
                    ),
                ]);
                self.remove_old_key(t, e, h, old);
                Some(true)
            }
            (false, _) => {
                self.refuse(&object, format!("neither the file's key file {} nor the one /etc/crypttab names ({old}) opens the LUKS header on {device}", e.key_file), "restore a key file that opens it, then plan again");
                None
            }
        }
    }
}

impl Planner<'_> {
    /// The old key's slot removed, once crypttab names the new key (so the box boots whichever
    /// step an apply stops at).
    fn remove_old_key(
        &mut self,
        t: &super::encryption::Sealed,
        e: &EncryptionSpec,
        h: &Luks,
        old: &str,
    ) {
        self.crypttab_before_removal(e, h.uuid.as_deref().unwrap_or_default(), old);
        self.steps.push(ps(
            Step::RemoveLuksKey(RemoveLuksKey {
                on: t.on.clone(),
                device: t.device.clone(),
                key_file: old.into(),
            }),
            Risk::Safe,
            "the new key opens the header; the old one is removed",
        ));
    }

    /// The key steps where a passphrase is the file's key or hyraid's crypttab line's: a
    /// passphrase cannot be tried at plan time, and hyraid does not turn one kind of key into
    /// the other. None when the key-file rules apply.
    fn passphrase_keys(
        &mut self,
        t: &super::encryption::Sealed,
        e: &EncryptionSpec,
        old: Option<&str>,
        new_opens: bool,
    ) -> Option<Option<bool>> {
        let (object, device) = (t.object.clone(), t.device.as_str());
        let name = &e.name;
        match (e.is_passphrase(), old) {
            // The passphrase is proven when apply opens the header with it.
            (true, None) => Some(Some(false)),
            (true, Some(old)) => {
                self.refuse(&object, format!("the file gives {device} a passphrase, and hyraid's line in /etc/crypttab opens it with the key file {old}: hyraid does not turn a key file into a passphrase"), format!("add the passphrase by hand (`cryptsetup luksAddKey --key-file {old} {device}`), prove it (`cryptsetup open --test-passphrase {device}`), remove hyraid's line for {name} from /etc/crypttab, and plan again (the key file's slot stays until you `cryptsetup luksRemoveKey {device} {old}`)"));
                Some(None)
            }
            (false, Some(PASSPHRASE)) if new_opens => {
                self.notes.push(format!("{object}: the key file {} opens the header, and crypttab now names it; the passphrase it was opened with still opens it too (remove it with `cryptsetup luksRemoveKey {device}` if no one should)", e.key_file));
                Some(Some(false))
            }
            (false, Some(PASSPHRASE)) => {
                self.refuse(&object, format!("the file gives {device} the key file {}, which does not open it (or is not there), and hyraid's line in /etc/crypttab opens it with a passphrase: hyraid does not turn a passphrase into a key file", e.key_file), format!("make the key file if it is not there (`install -m 0400 -o root -g root /dev/null {0} && dd if=/dev/urandom of={0} bs=512 count=1 iflag=fullblock conv=notrunc status=none`), add it by hand (`cryptsetup luksAddKey --pbkdf pbkdf2 --pbkdf-force-iterations 1000 {device} {0}`, which asks the passphrase), then plan again", e.key_file));
                Some(None)
            }
            (false, _) => None,
        }
    }
}

/// Mount points the initramfs mounts itself: their devices must be open before systemd runs.
const EARLY_MOUNTS: [&str; 2] = ["/", "/usr"];

impl Planner<'_> {
    /// A filesystem the initramfs mounts (`/`, `/usr`) on an encrypted mirror opened with a key
    /// file is refused: Debian's cryptsetup-initramfs skips such a root device.
    pub(in crate::plan) fn crypttab_initramfs(&mut self) {
        let Some(lv) = self.early_lv_on_encrypted() else {
            return;
        };
        self.refuse(
            format!("lv {lv}"),
            format!("lv {lv} would be mounted by the initramfs (at / or /usr) from a LUKS device (an encrypted mirror or the LV itself): Debian's initramfs skips a root device opened with a key file (the key would lie on the filesystem it unlocks) and cannot unlock with a TPM2, and hyraid does not add the initramfs's own crypttab for a passphrase, so the box would not boot"),
            "keep / and /usr off encrypted mirrors and LVs (hyraid encrypts data volumes, opened by systemd after the initramfs)",
        );
    }

    /// An LV (`vg/lv`) mounted at `/` or `/usr` (by the file or on the machine) in a VG with an
    /// encrypted mirror among its PVs, or with encryption of its own.
    fn early_lv_on_encrypted(&self) -> Option<String> {
        let encrypted = |r: &DeviceRef| matches!(r, DeviceRef::Mirror(n) if self.d.mirrors.get(n).is_some_and(|m| m.encryption.is_some()));
        for vg in self.d.volume_groups.values().filter(|v| !v.absent) {
            let on_encrypted = vg.pvs.iter().any(encrypted);
            // On encrypted mirrors, or encrypted itself.
            for lv in
                (vg.lvs.values()).filter(|l| !l.absent && (on_encrypted || l.encryption.is_some()))
            {
                let wanted = lv.filesystem.as_ref().and_then(|f| f.mount.as_deref());
                // A box that already boots so (its own initramfs settings) is left as it is.
                let there = self.o.filesystems.iter().any(|f| {
                    !f.md && f.vg == vg.name && f.lv == lv.name && f.mountpoint.as_deref() == wanted
                });
                if wanted.is_some_and(|m| EARLY_MOUNTS.contains(&m)) && !there {
                    return Some(format!("{}/{}", vg.name, lv.name));
                }
            }
        }
        None
    }
}
