//! `encryption:` of a mirror: a LUKS2 layer between the array and what is on it (a PV). The key
//! is a key file the file names (hyraid makes a random one, mode 0400, when it is absent).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A LUKS2 layer on the mirror: the array is formatted with LUKS2 (only while blank), opened as
/// /dev/mapper/NAME from /etc/crypttab, and the PV is made on the opened device.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEncryption {
    /// Absolute path of the key file (e.g. `/etc/hyraid/keys/data0.key`): hyraid creates it when absent (512 random bytes, mode 0400, root's; its key slot then uses PBKDF2, as a random key cannot be guessed) and never prints it; an existing one is used as it is (with cryptsetup's default Argon2). Keep a copy off the machine: without it the data is lost. Give this or `passphrase: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<String>,
    /// `true`: the key is a passphrase a person types: at the terminal during `hyraid apply` (or from `--passphrase-file`; refused under `--yes` without one), and on the console at boot (crypttab's key field `none`). For a box someone is at when it boots. Give this or `key_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passphrase: Option<bool>,
    /// `true`: also enrol the machine's TPM2 (`systemd-cryptenroll --tpm2-device=auto --tpm2-pcrs=7`) in a key slot, so that systemd opens the device at boot without anyone typing; the passphrase (`passphrase: true`, required with it) stays as the recovery key when the TPM cannot unseal (a firmware update, a new board). Data volumes only: Debian's initramfs does not unlock with a TPM2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm2: Option<bool>,
    /// device-mapper name of the opened device, `/dev/mapper/NAME` (default `MIRROR_crypt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// cryptsetup cipher of a new header (e.g. `aes-xts-plain64`); absent = cryptsetup's default. Set it only to differ from the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    /// Pass discards (TRIM) through the encryption (`discard` in crypttab, `--allow-discards` when opened): faster SSDs, but it shows which blocks are free. Default `false`, as Debian's crypttab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard: Option<bool>,
    /// Where to keep a backup of the LUKS header, taken right after the format (`cryptsetup luksHeaderBackup`, mode 0400). Copy it off the machine too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_backup: Option<String>,
}

/// The lint a file accepts for an LV whose cache holds its data in plaintext.
pub const PLAINTEXT_CACHE: &str = "plaintext-cache";

/// The `key_file` of a passphrase: cryptsetup's `--key-file -`, the key read from standard
/// input, where hyraid writes the passphrase typed at the terminal.
pub const PASSPHRASE: &str = "-";

/// The validated `encryption:` of a mirror.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct EncryptionSpec {
    /// /dev/mapper/NAME.
    pub name: String,
    /// The key file's path, or [`PASSPHRASE`] (`-`) for a passphrase typed at the terminal.
    pub key_file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    #[serde(default)]
    pub discard: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_backup: Option<String>,
    /// A TPM2 enrolled beside the passphrase; crypttab's `tpm2-device=auto`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tpm2: bool,
}

/// The type of the LUKS2 token systemd-cryptenroll writes for a TPM2 enrolment.
pub const TPM2_TOKEN: &str = "systemd-tpm2";
/// The PCRs hyraid binds a TPM2 enrolment to: 7, the Secure Boot state (systemd's default),
/// given explicitly so that every release binds the same.
pub const TPM2_PCRS: &str = "7";

impl EncryptionSpec {
    /// `default`: the mapping name when the file gives none ([`default_name`], [`default_lv_name`]).
    pub fn from_raw(default: &str, r: &RawEncryption) -> EncryptionSpec {
        EncryptionSpec {
            name: r.name.clone().unwrap_or_else(|| default.to_string()),
            key_file: r.key_file.clone().unwrap_or_else(|| PASSPHRASE.to_string()),
            cipher: r.cipher.clone(),
            discard: r.discard.unwrap_or(false),
            header_backup: r.header_backup.clone(),
            tpm2: r.tpm2.unwrap_or(false),
        }
    }
    /// The key file, when the key is one (not a passphrase).
    pub fn key_path(&self) -> Option<&str> {
        (!self.is_passphrase()).then_some(self.key_file.as_str())
    }
    /// Whether the key is a passphrase typed at the terminal.
    pub fn is_passphrase(&self) -> bool {
        self.key_file == PASSPHRASE
    }
    /// The key field of its crypttab line: the key file, or `none` (asked at boot).
    pub fn crypttab_key(&self) -> &str {
        self.key_path().unwrap_or("none")
    }
    /// The key as a person reads it: `the key file PATH`, `the passphrase`.
    pub fn key_words(&self) -> String {
        match self.key_path() {
            Some(k) => format!("the key file {k}"),
            None => "the passphrase".into(),
        }
    }
    /// The opened device.
    pub fn mapper_path(&self) -> String {
        format!("/dev/mapper/{}", self.name)
    }
    /// The options field of its crypttab line.
    pub fn crypttab_options(&self) -> String {
        let mut o = vec!["luks"];
        if self.discard {
            o.push("discard");
        }
        if self.tpm2 {
            o.push("tpm2-device=auto");
        }
        o.join(",")
    }
}

/// The mapping name of a mirror's encryption when the file gives none.
pub fn default_name(mirror: &str) -> String {
    format!("{mirror}_crypt")
}

/// The mapping name of an LV's encryption when the file gives none: its device-mapper name
/// and `_crypt` (`vg0-home_crypt`).
pub fn default_lv_name(vg: &str, lv: &str) -> String {
    format!("{}_crypt", crate::observe::filesystems::dm_name(vg, lv))
}

/// What is wrong with a path the file gives a key file or a header backup, if anything: it is
/// absolute, a crypttab field (no whitespace), and not under /dev, /proc, /sys or /run.
pub fn path_problem(path: &str) -> Option<String> {
    if !path.starts_with('/') || path.ends_with('/') {
        return Some(format!("`{path}` is not an absolute path of a file"));
    }
    if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some(format!(
            "`{path}` has whitespace: /etc/crypttab separates its fields by whitespace"
        ));
    }
    if path.split('/').any(|s| s == ".." || s == ".") {
        return Some(format!("`{path}` has `.` or `..` in it"));
    }
    // One spelling per file: `//tmp/k` is /tmp/k, and every rule below reads the path as
    // written.
    if path.contains("//") {
        let one: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        return Some(format!(
            "`{path}` has an empty part (`//`): write it as /{}",
            one.join("/")
        ));
    }
    for top in ["/dev/", "/proc/", "/sys/", "/run/", "/tmp/"] {
        if path.starts_with(top) {
            return Some(format!(
                "`{path}` is under {top}, which does not keep a file across a reboot"
            ));
        }
    }
    if path.starts_with("/var/tmp/") {
        return Some(format!(
            "`{path}` is under /var/tmp/, which the release empties: systemd-tmpfiles removes what is unused there for 30 days"
        ));
    }
    written_by_hyraid(path)
}

/// A file hyraid itself writes (or a directory of its own): a key or a header backup there
/// would be written over by a later apply, the only copy of the key gone.
fn written_by_hyraid(path: &str) -> Option<String> {
    use crate::observe::{filesystems::FSTAB_PATH, luks::CRYPTTAB_PATH, monitoring as m};
    let files = [
        (CRYPTTAB_PATH, "its crypttab block"),
        (FSTAB_PATH, "its fstab block"),
        ("/etc/mdadm/mdadm.conf", "the mirrors' ARRAY lines"),
        ("/etc/mdadm.conf", "the mirrors' ARRAY lines"),
        (m::MONITORING_PATH, "its monitoring settings"),
        (crate::observe::WRITE_CACHE_RULE_PATH, "its udev rule"),
        (
            crate::observe::lvm_devices::LVM_DEVICES_PATH,
            "LVM's devices file",
        ),
        (m::CRON_MDADM, "md's check schedule"),
        (m::DEFAULT_MDADM, "md's check schedule"),
    ];
    if let Some((_, what)) = files.iter().find(|(f, _)| *f == path) {
        return Some(format!(
            "`{path}` is a file hyraid writes itself ({what}): it would be written over"
        ));
    }
    let dirs = [
        (m::RECORDS_DIR, "its records"),
        (m::UNIT_DIR, "the systemd units it installs"),
    ];
    dirs.iter()
        .find(|(d, _)| path.starts_with(&format!("{d}/")))
        .map(|(d, what)| {
            format!("`{path}` is under {d}/, where hyraid writes {what}: keep keys and header backups elsewhere")
        })
}

/// What is wrong with a device-mapper name, if anything (`dm_check_name` in libdevmapper: at
/// most 127 characters, no `/`; hyraid also keeps to what crypttab and udev quote nowhere).
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > 127 {
        return Some(format!("`{name}` is not 1 to 127 characters"));
    }
    if matches!(name, "control" | "." | "..") {
        return Some(format!("`{name}` is reserved in /dev/mapper"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
    {
        return Some(format!(
            "`{name}` has characters other than letters, digits, `_`, `.`, `+` and `-`"
        ));
    }
    None
}

/// What is wrong with a cipher spec, if anything (`cipher-chainmode-ivmode`, as cryptsetup takes it).
pub fn cipher_problem(cipher: &str) -> Option<String> {
    let ok = !cipher.is_empty()
        && cipher.contains('-')
        && cipher
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-:_".contains(c));
    (!ok).then(|| {
        format!("`{cipher}` is not a cipher spec as cryptsetup takes it (`aes-xts-plain64`)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_names_and_ciphers() {
        assert_eq!(path_problem("/etc/hyraid/keys/data0.key"), None);
        assert!(path_problem("keys/data0.key").is_some());
        assert!(
            path_problem("/etc/my keys/k")
                .unwrap()
                .contains("whitespace")
        );
        assert!(path_problem("/run/k").unwrap().contains("reboot"));
        assert!(path_problem("/etc/../k").is_some());
        assert_eq!(name_problem("data0_crypt"), None);
        assert!(name_problem("a/b").is_some());
        assert!(name_problem("control").is_some());
        assert!(name_problem(&"x".repeat(128)).is_some());
        assert_eq!(cipher_problem("aes-xts-plain64"), None);
        assert!(cipher_problem("aes xts").is_some());
    }

    #[test]
    fn crypttab_options_and_default_name() {
        let r = RawEncryption {
            key_file: Some("/etc/k".into()),
            passphrase: None,
            tpm2: None,
            name: None,
            cipher: None,
            discard: Some(true),
            header_backup: None,
        };
        let s = EncryptionSpec::from_raw(&default_name("data0"), &r);
        assert_eq!(default_lv_name("vg-a", "home"), "vg--a-home_crypt");
        assert_eq!(s.name, "data0_crypt");
        assert_eq!(s.mapper_path(), "/dev/mapper/data0_crypt");
        assert_eq!(s.crypttab_options(), "luks,discard");
    }
}
