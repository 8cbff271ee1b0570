//! LUKS: the headers lsblk sees (`crypto_LUKS` and its UUID, from udev's blkid probe), the
//! mappings open on them (lsblk TYPE `crypt`, NAME the device-mapper name), /etc/crypttab, and
//! the key files and header backups the file names (`stat`: mode, owner and size; never read).

use super::lsblk::Node;
use serde::{Deserialize, Serialize};

pub const CRYPTTAB_PATH: &str = "/etc/crypttab";
/// lsblk's FSTYPE of a LUKS header.
pub const LUKS_FSTYPE: &str = "crypto_LUKS";

/// Where cryptsetup's LUKS2 puts the data by default: after 16 MiB of header (the opened
/// device is the array less that).
pub const LUKS2_DATA_OFFSET: u64 = 16 << 20;

/// A LUKS header on a block device, and the mapping open on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Luks {
    /// Kernel name of the device the header is on (`md127`).
    pub device: String,
    pub uuid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<Mapping>,
    /// What `luksDump` says of it: read for the file's encrypted mirrors only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<super::luks_dump::LuksHeader>,
    /// Whether a key file opens it (`cryptsetup open --test-passphrase`), asked only of the key
    /// files of a mirror whose key the file changes.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub opens_with: std::collections::BTreeMap<String, bool>,
    /// Whether the old and the new key file of a key change hold the same key (`cmp -s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_key: Option<bool>,
}

/// An open dm-crypt mapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mapping {
    /// /dev/mapper/NAME.
    pub name: String,
    /// Its kernel name (`dm-3`): what LVM names a PV on it by.
    pub kname: String,
}

/// The LUKS headers among lsblk's devices, with the `crypt` device stacked on each.
pub fn from_lsblk(nodes: &[Node]) -> Vec<Luks> {
    nodes
        .iter()
        .filter(|n| n.fstype.as_deref() == Some(LUKS_FSTYPE))
        .map(|n| Luks {
            device: n.kname.clone(),
            uuid: n.uuid.clone(),
            mapping: nodes
                .iter()
                .find(|c| c.kind == "crypt" && c.parents.contains(&n.kname))
                .map(|c| Mapping {
                    name: c.name.clone(),
                    kname: c.kname.clone(),
                }),
            header: None,
            opens_with: Default::default(),
            same_key: None,
        })
        .collect()
}

/// A file hyraid keeps a secret in (a key file, a header backup), as `stat` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretFile {
    /// Permission bits (`0o400`).
    pub mode: u32,
    pub uid: u32,
    pub size: u64,
    /// Of a header backup: the UUID of the header it holds (`cryptsetup luksUUID FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_uuid: Option<String>,
    /// Of a header backup: the key slots in it (`luksDump --dump-json-metadata FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_slots: Option<Vec<u32>>,
}

impl SecretFile {
    /// Whether anyone but its owner may read or write it, or root does not own it.
    pub fn exposed(&self) -> bool {
        self.mode & 0o077 != 0 || self.uid != 0
    }
}

/// What a header backup is, against the header (UUID `uuid`, key slots `slots`) it backs up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackupState {
    Missing,
    /// It holds the header with this other UUID.
    OtherHeader(String),
    /// Its key slots (first) are not the header's (second): a key was added or removed since.
    SlotsDiffer(Vec<u32>, Vec<u32>),
    /// This header, readable by others than root.
    Exposed,
    Current,
}

/// The state of the backup `file` (None: not there) of the header `uuid` with `slots`; a
/// backup whose UUID or slots could not be read is taken as matching in them.
pub fn backup_state(
    file: Option<&SecretFile>,
    uuid: &str,
    slots: Option<&Vec<u32>>,
) -> BackupState {
    let Some(f) = file else {
        return BackupState::Missing;
    };
    match (&f.header_uuid, &f.header_slots, slots) {
        (Some(u), _, _) if u != uuid => BackupState::OtherHeader(u.clone()),
        (_, Some(b), Some(h)) if b != h => BackupState::SlotsDiffer(b.clone(), h.clone()),
        _ if f.exposed() => BackupState::Exposed,
        _ => BackupState::Current,
    }
}

/// `stat` of one file: octal mode, owner's uid and size.
pub fn stat_argv(path: &str) -> Vec<String> {
    ["stat", "--format=%a %u %s", "--", path]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The answer of [`stat_argv`]; None when it is not one.
pub fn parse_stat(text: &str) -> Option<SecretFile> {
    let mut f = text.split_whitespace();
    let mode = u32::from_str_radix(f.next()?, 8).ok()?;
    let uid = f.next()?.parse().ok()?;
    let size = f.next()?.parse().ok()?;
    Some(SecretFile {
        mode,
        uid,
        size,
        header_uuid: None,
        header_slots: None,
    })
}

/// `stat` each of `paths` that is not known yet; a file that is not there is left out. A path
/// that cannot be read otherwise is left out too: the plan then makes or refuses it as absent.
pub fn probe_secret_files(host: &dyn crate::host::Host, boot: &mut super::Boot, paths: &[String]) {
    for p in paths {
        if boot.secret_files.contains_key(p) {
            continue;
        }
        if let Ok(o) = host.run(&stat_argv(p))
            && o.status == 0
            && let Some(f) = parse_stat(&o.stdout)
        {
            boot.secret_files.insert(p.clone(), f);
        }
    }
}

/// `cryptsetup luksUUID` of each header backup in `paths` that is there.
pub fn probe_backups(host: &dyn crate::host::Host, boot: &mut super::Boot, paths: &[String]) {
    for p in paths {
        let Some(f) = boot.secret_files.get_mut(p) else {
            continue;
        };
        let argv: Vec<String> = ["cryptsetup", "luksUUID", p]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let Ok(o) = host.run(&argv)
            && o.status == 0
        {
            f.header_uuid = Some(o.stdout.trim().to_string()).filter(|u| !u.is_empty());
        }
        if let Ok(o) = host.run(&super::luks_dump::argv(p))
            && o.status == 0
        {
            f.header_slots = super::luks_dump::parse_json(&o.stdout).map(|h| h.keyslots);
        }
    }
}

/// `luksDump` of the headers on the arrays `knames` (the JSON area, else the text form).
pub fn probe_headers(host: &dyn crate::host::Host, luks: &mut [Luks], knames: &[String]) {
    use super::luks_dump::{argv, parse_json, parse_text, text_argv};
    for l in luks.iter_mut().filter(|l| knames.contains(&l.device)) {
        let dev = format!("/dev/{}", l.device);
        let ok = |a: Vec<String>| {
            host.run(&a)
                .ok()
                .filter(|o| o.status == 0)
                .map(|o| o.stdout)
        };
        l.header = ok(argv(&dev))
            .and_then(|t| parse_json(&t))
            .or_else(|| ok(text_argv(&dev)).and_then(|t| parse_text(&t)));
    }
}

/// Whether each of `keys` opens the header on array `kname` (`cryptsetup open --test-passphrase`:
/// exit 0 yes, 2 no; anything else leaves it unknown).
pub fn probe_keys(host: &dyn crate::host::Host, luks: &mut [Luks], kname: &str, keys: &[String]) {
    let Some(l) = luks.iter_mut().find(|l| l.device == kname) else {
        return;
    };
    if let [new, old] = keys {
        let argv: Vec<String> = ["cmp", "-s", "--", old, new]
            .iter()
            .map(|s| s.to_string())
            .collect();
        l.same_key = match host.run(&argv).map(|o| o.status) {
            Ok(0) => Some(true),
            Ok(1) => Some(false),
            _ => None,
        };
    }
    for k in keys {
        let argv: Vec<String> = [
            "cryptsetup",
            "open",
            "--test-passphrase",
            "--key-file",
            k,
            &format!("/dev/{kname}"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        match host.run(&argv).map(|o| o.status) {
            Ok(0) => l.opens_with.insert(k.clone(), true),
            Ok(2) => l.opens_with.insert(k.clone(), false),
            _ => None,
        };
    }
}

/// One line of /etc/crypttab: `name device key options`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrypttabLine {
    pub name: String,
    pub device: String,
    /// The key file; None for `none` or `-` (a passphrase asked at boot).
    pub key: Option<String>,
    pub options: Vec<String>,
}

/// The lines of a crypttab (comments and blank lines left out).
pub fn crypttab_lines(text: &str) -> Vec<CrypttabLine> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?.to_string();
            let device = f.next()?.to_string();
            let key = f
                .next()
                .filter(|k| !matches!(*k, "none" | "-"))
                .map(str::to_string);
            let options = f
                .next()
                .map(|o| o.split(',').map(str::to_string).collect())
                .unwrap_or_default();
            Some(CrypttabLine {
                name,
                device,
                key,
                options,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crypttab_and_stat() {
        let t = "# <target name> <source device> <key file> <options>\ndata0_crypt UUID=6f1c0e3a-4b8e-4d7a-9d51-0b7f2c1e9a10 /etc/hyraid/keys/data0.key luks,discard\n\nswap_crypt /dev/sda3 /dev/urandom swap\nhome_crypt UUID=x none luks\n";
        let l = crypttab_lines(t);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].name, "data0_crypt");
        assert_eq!(l[0].key.as_deref(), Some("/etc/hyraid/keys/data0.key"));
        assert_eq!(l[0].options, vec!["luks", "discard"]);
        assert_eq!(l[2].key, None);
        let s = parse_stat("400 0 512\n").unwrap();
        assert_eq!((s.mode, s.uid, s.size), (0o400, 0, 512));
        assert!(!s.exposed());
        assert!(parse_stat("644 0 512").unwrap().exposed());
        assert!(parse_stat("400 1000 512").unwrap().exposed());
        assert_eq!(parse_stat("stat: cannot"), None);
    }
}
