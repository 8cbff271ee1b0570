//! The LUKS2 layer of encrypted mirrors and LVs: the key file, the format of a blank array or
//! LV (never of one that carries anything), the header backup and opening it (hyraid's block of
//! /etc/crypttab is in `crypttab`).

pub use super::crypttab::{CRYPTTAB_BEGIN, CRYPTTAB_END, hyraid_lines, opens};
use super::filesystem::derived_uuid;
use super::*;
use crate::config::encryption::{EncryptionSpec, PASSPHRASE};
use crate::observe::luks::{BackupState, CRYPTTAB_PATH, CrypttabLine, Luks, backup_state};
use crate::plan::step::{
    BackupLuksHeader, CreateKeyFile, CryptOn, FormatLuks, OpenLuks, TestLuksKey,
};

/// An encrypted device's wanted crypttab entry: its encryption, header UUID and the device's
/// paths (space-separated).
pub(in crate::plan) type Wanted = (EncryptionSpec, String, String);

/// What an encryption of the file is on, as the planner sees it.
pub(in crate::plan) struct Sealed {
    pub on: CryptOn,
    /// `mirror data0`, `lv vg0/home`.
    pub object: String,
    /// The path cryptsetup is given (/dev/md/data0, /dev/vg0/home).
    pub device: String,
    /// Its key in `blocked` and `opening`: the mirror's name, or `vg/lv`.
    pub key: String,
    /// The kernel name of the device, when it is there (`md127`, `dm-4`).
    pub kname: Option<String>,
    /// This plan creates the array or the LV.
    pub created: bool,
}

impl Sealed {
    /// What the header is on: `array`, `LV`.
    pub fn noun(&self) -> &'static str {
        match self.on {
            CryptOn::Mirror { .. } => "array",
            CryptOn::Lv { .. } => "LV",
        }
    }
}

/// An encryption of the file and the device it is on.
pub struct EncryptedDevice<'a> {
    /// `mirror data0`, `lv vg0/home`.
    pub object: String,
    /// The path cryptsetup is given.
    pub device: String,
    pub spec: &'a EncryptionSpec,
    /// Its kernel name when it is there (an array's, or an LV's as lsblk saw it carry a
    /// signature).
    pub kname: Option<String>,
}

/// Each encryption of the file (not of what it marks absent), with its device.
pub fn encrypted_devices<'a>(
    d: &'a crate::config::Desired,
    obs: &crate::observe::Observed,
) -> Vec<EncryptedDevice<'a>> {
    let mirrors = d.mirrors.values().filter(|m| !m.absent).filter_map(|m| {
        Some(EncryptedDevice {
            object: format!("mirror {}", m.name),
            device: m.md_path(),
            spec: m.encryption.as_ref()?,
            kname: super::array_for(obs, m).map(|a| a.kname.clone()),
        })
    });
    let lvs = d
        .volume_groups
        .values()
        .filter(|v| !v.absent)
        .flat_map(|vg| {
            vg.lvs.values().filter(|l| !l.absent).filter_map(move |l| {
                let own = obs
                    .filesystems
                    .iter()
                    .find(|f| !f.md && f.mapper.is_none() && f.vg == vg.name && f.lv == l.name);
                Some(EncryptedDevice {
                    object: format!("lv {}/{}", vg.name, l.name),
                    device: format!("/dev/{}/{}", vg.name, l.name),
                    spec: l.encryption.as_ref()?,
                    kname: own.map(|f| f.kname.clone()),
                })
            })
        });
    mirrors.chain(lvs).collect()
}

impl<'a> Planner<'a> {
    /// The header on the file's mirror, when it has one.
    fn luks_of(&self, m: &MirrorSpec) -> Option<&'a Luks> {
        self.luks_at(&self.mirror_sealed(m))
    }

    pub(in crate::plan) fn luks_at(&self, t: &Sealed) -> Option<&'a Luks> {
        let k = t.kname.as_ref()?;
        self.o.luks.iter().find(|l| l.device == *k)
    }

    /// Where the data starts on `t`: its header's offset (LUKS2's default before it is read).
    pub(in crate::plan) fn data_offset(&self, t: &Sealed) -> u64 {
        self.luks_at(t)
            .and_then(|h| h.header.as_ref())
            .map(|x| x.data_offset)
            .unwrap_or(crate::observe::luks::LUKS2_DATA_OFFSET)
    }

    pub(in crate::plan) fn mirror_sealed(&self, m: &MirrorSpec) -> Sealed {
        Sealed {
            on: CryptOn::Mirror {
                mirror: m.name.clone(),
            },
            object: format!("mirror {}", m.name),
            device: m.md_path(),
            key: m.name.clone(),
            kname: self.array_of(m).map(|a| a.kname.clone()),
            created: self.creating.contains_key(&m.name),
        }
    }

    /// The open mapping of an encrypted mirror of the file, by kernel name (`dm-3`).
    pub(in crate::plan) fn mapping_kname(&self, m: &MirrorSpec) -> Option<String> {
        let e = m.encryption.as_ref()?;
        let map = self.luks_of(m)?.mapping.as_ref()?;
        (map.name == e.name).then(|| map.kname.clone())
    }

    /// The lines of hyraid's crypttab block as observed.
    pub(in crate::plan) fn recorded_lines(&self) -> Vec<CrypttabLine> {
        self.o
            .boot
            .crypttab
            .as_deref()
            .map(hyraid_lines)
            .unwrap_or_default()
    }

    /// Each encrypted mirror of the file: made, checked or opened (its crypttab line is kept
    /// for [`Self::crypttab_block`]).
    pub(in crate::plan) fn encryption(&mut self) {
        let ours = self.recorded_lines();
        for m in self.d.mirrors.values() {
            let Some(e) = &m.encryption else { continue };
            if m.absent {
                self.absent_encrypted(m, e);
                continue;
            }
            if self.blocked.contains(&m.name) {
                continue;
            }
            // Its header cannot be read before the array runs: neither formatted nor refused as
            // unknown, but read once this plan's start has run (its crypttab line is kept).
            if self.starting.contains(&m.name) {
                self.notes.push(format!("mirror {}: the array is assembled but not running, so whether it carries its LUKS header cannot be read yet; this plan starts it, and `hyraid apply` then plans the header and what stands on it, shows it and asks", m.name));
                continue;
            }
            let recorded = ours.iter().find(|l| l.name == e.name);
            let t = self.mirror_sealed(m);
            if let Some(uuid) = self.encrypted(&t, e, recorded) {
                // The array by its path and by its kernel name (`/dev/md127`).
                let devs = match &t.kname {
                    Some(k) => format!("{} /dev/{k}", t.device),
                    None => t.device.clone(),
                };
                self.crypttab_wanted.push((e.clone(), uuid, devs));
            }
        }
    }

    /// One encrypted array or LV; the header's UUID when it is or will be there.
    pub(in crate::plan) fn encrypted(
        &mut self,
        t: &Sealed,
        e: &EncryptionSpec,
        recorded: Option<&CrypttabLine>,
    ) -> Option<String> {
        let object = t.object.clone();
        let device = t.device.clone();
        // A passphrase is typed at apply: nothing on the machine holds it.
        let key = e.key_path().and_then(|k| self.o.boot.secret_files.get(k));
        let key_there = e.is_passphrase() || key.is_some_and(|k| k.size > 0);
        if key.is_some_and(|k| k.exposed()) {
            self.refuse(
                &object,
                format!(
                    "the key file {} can be read by users other than root, or is not root's",
                    e.key_file
                ),
                format!(
                    "`chown root:root {0} && chmod 0400 {0}`, then plan again",
                    e.key_file
                ),
            );
            return None;
        }
        let Some(h) = self.luks_at(t) else {
            return self.format_blank(t, e, key_there, recorded);
        };
        let Some(uuid) = h.uuid.clone().filter(|u| !u.is_empty()) else {
            self.refuse(
                &object,
                format!("lsblk shows a LUKS header on {device} but no UUID"),
                "check the header (`cryptsetup luksDump`); hyraid lists it in crypttab by its UUID",
            );
            self.blocked.insert(t.key.clone());
            return None;
        };
        if let Some(r) = recorded
            && !r.device.ends_with(&uuid)
        {
            self.refuse(&object, format!("the LUKS header on {device} has UUID {uuid}, but hyraid's line in {CRYPTTAB_PATH} opens {}: it is not the header hyraid made", r.device), "check what was done to the array; if this header is the right one, remove hyraid's line for it from /etc/crypttab and plan again");
            self.blocked.insert(t.key.clone());
            return None;
        }
        // hyraid's line opens it with another key: a key file, or a passphrase (`-`); or it
        // names the file's key, and keeps the old key file whose slot a rotation stopped before
        // removing.
        let old = recorded
            .map(|r| r.key.clone().unwrap_or_else(|| PASSPHRASE.to_string()))
            .filter(|k| *k != e.key_file)
            .or_else(|| {
                let text = self.o.boot.crypttab.as_deref()?;
                super::crypttab::old_key(text, &e.name).filter(|k| *k != e.key_file)
            });
        let Some(rekeyed) = self.keys(t, e, h, key_there, old.as_deref()) else {
            self.blocked.insert(t.key.clone());
            return None;
        };
        let Some(enrolled) = self.tpm2(t, e, Some(h)) else {
            self.blocked.insert(t.key.clone());
            return None;
        };
        let rekeyed = rekeyed || enrolled;
        match &h.mapping {
            Some(map) if map.name == e.name => self.prove_passphrase(t, e, enrolled),
            Some(map) => {
                self.refuse(&object, format!("{device} is open as /dev/mapper/{}, but the file names it {}", map.name, e.name), format!("set `name: {}` in the mirror's `encryption` (hyraid never renames an open mapping)", map.name));
                self.blocked.insert(t.key.clone());
                return None;
            }
            None => {
                self.open(t, e, "the LUKS header is there and not open");
                self.opening.insert(t.key.clone(), t.object.clone());
            }
        }
        if let (Some(want), Some(have)) = (&e.cipher, h.header.as_ref().map(|x| &x.cipher))
            && want != have
        {
            self.refuse(
                &object,
                format!("the LUKS header on {device} encrypts with {have}, but the file says `cipher: {want}`; a cipher is fixed when the header is made"),
                format!("set `cipher: {have}` (or leave `cipher` out), or move the data away and re-create the mirror"),
            );
            return None;
        }
        let Some(b) = &e.header_backup else {
            return Some(uuid);
        };
        let slots = h.header.as_ref().map(|x| &x.keyslots);
        match backup_state(self.o.boot.secret_files.get(b), &uuid, slots) {
            BackupState::OtherHeader(other) => {
                self.refuse(
                    &object,
                    format!("the header backup {b} holds the header with UUID {other}, not this {}'s ({uuid})", t.noun()),
                    format!("move {b} away (keep it if that header still matters); the next apply backs up this header there"),
                );
                return None;
            }
            _ if rekeyed => self.backup(
                t,
                b,
                "the key slots change: the backup must not keep the old key's",
            ),
            BackupState::Missing => {
                self.backup(t, b, "the header backup the file names is not there")
            }
            BackupState::SlotsDiffer(have, want) => {
                let why = format!(
                    "the backup's key slots ({have:?}) are not the header's ({want:?}): a key was added or removed since it was taken"
                );
                self.backup(t, b, &why);
            }
            // Readable by others: `hyraid status` says so; the backup itself is right.
            BackupState::Exposed | BackupState::Current => {}
        }
        Some(uuid)
    }

    /// What the existing array (or LV) of `t` carries, or Err(why it cannot be known); empty
    /// when blank.
    fn carries(&self, t: &Sealed) -> Result<Vec<String>, String> {
        let stacked = |k: &str| -> Vec<String> {
            let holders = self
                .o
                .other_devices
                .iter()
                .filter(|o| o.parents.iter().any(|p| p == k));
            let parts = self
                .o
                .block_devices
                .iter()
                .filter(|b| b.parent.as_deref() == Some(k));
            holders
                .map(|h| format!("{} stacked on it", h.kname))
                .chain(parts.map(|b| format!("partition {}", b.kname)))
                .collect()
        };
        match &t.on {
            CryptOn::Mirror { mirror } => {
                let m = &self.d.mirrors[mirror];
                let a = self.array_of(m).ok_or("the array is not there")?;
                if a.array_state == "inactive" {
                    return Err("the array is not running, so what it holds is not known".into());
                }
                Ok(a.fstype
                    .iter()
                    .map(|f| format!("a {f} signature"))
                    .chain(self.ix.pv(&a.kname).map(|_| "an LVM PV".to_string()))
                    .chain(stacked(&a.kname))
                    .collect())
            }
            CryptOn::Lv { vg, lv } => {
                let l = self.ix.lv(vg, lv).ok_or("the LV is not there")?;
                if !l.active || !self.o.lvm.nodes.contains(&t.key) {
                    return Err("the LV is not active or its device was not seen, so what it holds is not known".into());
                }
                let own = self
                    .o
                    .filesystems
                    .iter()
                    .filter(|f| !f.md && f.mapper.is_none() && f.vg == *vg && f.lv == *lv);
                Ok(own
                    .map(|f| format!("a {} signature", f.fstype))
                    .chain(t.kname.iter().flat_map(|k| stacked(k)))
                    .collect())
            }
        }
    }

    /// An array or LV without a header: formatted only when blank (created by this plan, or
    /// there with no signature, PV, holder or mount), and never when hyraid's crypttab names one.
    fn format_blank(
        &mut self,
        t: &Sealed,
        e: &EncryptionSpec,
        key_there: bool,
        recorded: Option<&CrypttabLine>,
    ) -> Option<String> {
        let (object, device) = (t.object.as_str(), t.device.as_str());
        let noun = t.noun();
        if !t.created {
            // An array that is not there: what the file names and the machine lacks is refused
            // once, by the mirror's own planning.
            if matches!(t.on, CryptOn::Mirror { .. }) && t.kname.is_none() {
                return None;
            }
            // What cannot be seen is neither blank nor a header that is gone.
            let what = match self.carries(t) {
                Ok(what) => what,
                Err(why) => {
                    let fix = match t.on {
                        CryptOn::Mirror { .. } => format!(
                            "assemble and start the array (`mdadm --run {device}`), then plan again"
                        ),
                        CryptOn::Lv { .. } => format!(
                            "activate the LV (`lvchange -ay {}`), then plan again",
                            t.key
                        ),
                    };
                    self.refuse(object, format!("{why}: hyraid cannot tell whether it carries a LUKS header or anything else"), fix);
                    self.blocked.insert(t.key.clone());
                    return None;
                }
            };
            if let Some(r) = recorded {
                self.refuse(object, format!("{device} has no LUKS header, but hyraid's line in {CRYPTTAB_PATH} says it had one ({}): its header is gone", r.device), format!("restore the header from its backup (`cryptsetup luksHeaderRestore`); hyraid formats only an {noun} it never formatted"));
                self.blocked.insert(t.key.clone());
                return None;
            }
            if !what.is_empty() {
                self.refuse(object, format!("{device} carries {}: hyraid formats LUKS only on a blank {noun}, and never encrypts data in place", what.join(", ")), format!("move the data away and empty the {noun} by hand, or remove `encryption` from it"));
                self.blocked.insert(t.key.clone());
                return None;
            }
        }
        // A key file another device's step makes in this plan is there by now (never made twice).
        let made = self
            .steps
            .iter()
            .any(|s| matches!(&s.step, Step::CreateKeyFile(k) if k.path == e.key_file));
        // The backup path must not hold a file hyraid did not make for this header.
        if let Some(b) = &e.header_backup
            && self.o.boot.secret_files.contains_key(b)
        {
            self.refuse(object, format!("{b}, where the file keeps this {noun}'s header backup, exists already, and the {noun} has no header yet: it is not a backup of it"), format!("move {b} away (keep it if it matters), or give `header_backup` another path"));
            self.blocked.insert(t.key.clone());
            return None;
        }
        let random_key = !key_there && !e.is_passphrase();
        if random_key && !made {
            self.steps.push(ps(
                Step::CreateKeyFile(CreateKeyFile { on: t.on.clone(), path: e.key_file.clone() }),
                Risk::Safe,
                "the key file the file names is not there: keep a copy off the machine, the data cannot be read without it",
            ));
        }
        let (outer, inner) = match &t.on {
            CryptOn::Mirror { mirror } => ("", mirror.as_str()),
            CryptOn::Lv { vg, lv } => (vg.as_str(), lv.as_str()),
        };
        // A mirror's keeps the parts it always had (its UUIDs stay what they were).
        let mut parts = vec!["luks", self.o.hostname.as_str()];
        if !outer.is_empty() {
            parts.push(outer);
        }
        parts.extend([inner, self.basis.as_str()]);
        let uuid = derived_uuid(&parts);
        self.steps.push(ps(
            Step::FormatLuks(FormatLuks {
                on: t.on.clone(),
                device: device.to_string(),
                uuid: uuid.clone(),
                key_file: e.key_file.clone(),
                cipher: e.cipher.clone(),
                random_key,
            }),
            Risk::Safe,
            if t.created {
                format!("on the {noun} this plan creates")
            } else {
                format!("the {noun} is blank: no signature, PV, holder or mount")
            },
        ));
        // Before the backup, which then keeps the TPM2's slot.
        if self.tpm2(t, e, None).is_none() {
            self.blocked.insert(t.key.clone());
            return None;
        }
        if let Some(b) = &e.header_backup {
            self.backup(
                t,
                b,
                "right after the format: without the header the data is lost",
            );
        }
        let then = match t.on {
            CryptOn::Mirror { .. } => "the PV is made on the opened device",
            CryptOn::Lv { .. } => "what the LV holds is made on the opened device",
        };
        self.open(t, e, then);
        Some(uuid)
    }

    /// An open device whose key the file says is a passphrase, which no crypttab line opens
    /// so yet: before crypttab names `none` for it, the passphrase is proven to open the header
    /// (an open or a TPM2 enrolment of this plan reads it anyway).
    fn prove_passphrase(&mut self, t: &Sealed, e: &EncryptionSpec, enrolled: bool) {
        let asks = (self.o.boot.crypttab.as_deref())
            .map(crate::observe::luks::crypttab_lines)
            .unwrap_or_default()
            .iter()
            .any(|l| l.name == e.name && l.key.is_none());
        if !e.is_passphrase() || enrolled || asks {
            return;
        }
        self.steps.push(ps(
            Step::TestLuksKey(TestLuksKey {
                on: t.on.clone(),
                device: t.device.clone(),
                key_file: PASSPHRASE.into(),
            }),
            Risk::Safe,
            "crypttab is to ask for a passphrase at boot: this one must open the header first",
        ));
    }

    fn open(&mut self, t: &Sealed, e: &EncryptionSpec, why: &str) {
        self.steps.push(ps(
            Step::OpenLuks(OpenLuks {
                on: t.on.clone(),
                device: t.device.clone(),
                name: e.name.clone(),
                key_file: e.key_file.clone(),
                discard: e.discard,
            }),
            Risk::Safe,
            why,
        ));
    }

    fn backup(&mut self, t: &Sealed, path: &str, why: &str) {
        self.steps.push(ps(
            Step::BackupLuksHeader(BackupLuksHeader {
                on: t.on.clone(),
                device: t.device.clone(),
                path: path.to_string(),
            }),
            Risk::Safe,
            why,
        ));
    }

    /// An encrypted mirror marked absent whose mapping is open: hyraid does not close it.
    fn absent_encrypted(&mut self, m: &MirrorSpec, e: &EncryptionSpec) {
        if let Some(map) = self.luks_of(m).and_then(|h| h.mapping.as_ref()) {
            self.refuse(format!("mirror {}", m.name), format!("the mirror is open as /dev/mapper/{}: hyraid does not close an encrypted mapping to remove its array", map.name), format!("once nothing on it is used, `cryptsetup close {}` and remove its line from /etc/crypttab, then plan again", e.name));
            self.blocked.insert(m.name.clone());
        }
    }
}
