//! Steps of a mirror's LUKS2 layer: its key file, the format of the blank array, the header
//! backup, and opening it as /dev/mapper/NAME.

use super::{Command, StepKind};
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// What a LUKS header is on: a mirror's array, or an LV. Flattened into the steps, so a
/// mirror's step keeps its `mirror` field and an LV's its `vg` and `lv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CryptOn {
    Mirror { mirror: String },
    Lv { vg: String, lv: String },
}

impl CryptOn {
    pub fn address(&self) -> Address {
        match self {
            CryptOn::Mirror { mirror } => Address::Mirror(mirror.clone()),
            CryptOn::Lv { vg, lv } => Address::LogicalVolume {
                vg: vg.clone(),
                lv: lv.clone(),
            },
        }
    }
}

impl std::fmt::Display for CryptOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CryptOn::Mirror { mirror } => write!(f, "mirror {mirror}"),
            CryptOn::Lv { vg, lv } => write!(f, "lv {vg}/{lv}"),
        }
    }
}

/// The directory a file is in.
fn parent(path: &str) -> String {
    match path.rsplit_once('/') {
        Some(("", _)) | None => "/".to_string(),
        Some((d, _)) => d.to_string(),
    }
}

/// Owned words of an argv.
pub(super) fn strings(argv: &[&str]) -> Vec<String> {
    argv.iter().map(|s| s.to_string()).collect()
}

/// A step's key as a noun: `key file`, or `passphrase` (`-`).
pub(super) fn key_noun(key_file: &str) -> &'static str {
    match key_file == crate::config::encryption::PASSPHRASE {
        true => "passphrase",
        false => "key file",
    }
}

/// A step's key as a person reads it: its path, or `passphrase` (`-`).
pub(super) fn key_name(key_file: &str) -> &str {
    match key_file == crate::config::encryption::PASSPHRASE {
        true => "passphrase",
        false => key_file,
    }
}

/// Size of a key file hyraid makes, in bytes (cryptsetup reads at most 8 MiB of one).
pub const KEY_BYTES: &str = "512";

/// Make the key file a mirror's encryption names: an empty file created mode 0400 and root's,
/// then 512 bytes from /dev/urandom written into it, so the key is never readable by anyone
/// else, even for a moment. Its content is never printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateKeyFile {
    #[serde(flatten)]
    pub on: CryptOn,
    pub path: String,
}

impl StepKind for CreateKeyFile {
    fn commands(&self) -> Vec<Command> {
        let (path, dir) = (self.path.as_str(), parent(&self.path));
        vec![
            // A key file that holds anything is never written over (another step or a person
            // made it): the apply stops here.
            Command::run(&["test", "!", "-s", path]),
            Command::run(&["mkdir", "-p", "-m", "0700", &dir]),
            Command::run(&[
                "install",
                "-m",
                "0400",
                "-o",
                "root",
                "-g",
                "root",
                "/dev/null",
                path,
            ]),
            Command::run(&[
                "dd",
                "if=/dev/urandom",
                &format!("of={path}"),
                &format!("bs={KEY_BYTES}"),
                "count=1",
                "iflag=fullblock",
                "conv=notrunc,fsync",
                "status=none",
            ]),
        ]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::File(self.path.clone())
    }
    fn summary(&self) -> String {
        format!(
            "create the key file of {} ({KEY_BYTES} random bytes, mode 0400, root's; never printed)",
            self.on
        )
    }
}

/// `cryptsetup luksFormat` of a blank array or LV with LUKS2, by the UUID the plan gives it (so
/// the crypttab line is known at plan time), once `blkid -p` finds nothing on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormatLuks {
    #[serde(flatten)]
    pub on: CryptOn,
    pub device: String,
    pub uuid: String,
    pub key_file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    /// The key file is one this plan makes from /dev/urandom: its slot gets [`RANDOM_KEY_PBKDF`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_key: bool,
}

/// The key derivation of a slot whose key is hyraid's own 512 random bytes: PBKDF2 at
/// cryptsetup's least iterations, as systemd-cryptenroll does for its TPM2 and FIDO2 keys. A
/// timed Argon2 (cryptsetup's default, about 2 s and up to 1 GiB of memory on each open) makes a
/// guessable passphrase expensive to guess; a 4096-bit random key cannot be guessed at any cost,
/// so the slot opens at once, at boot too, and on a box with little memory. A passphrase, or a
/// key file the person made, keeps cryptsetup's default.
pub const RANDOM_KEY_PBKDF: [&str; 4] = ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"];

impl StepKind for FormatLuks {
    fn commands(&self) -> Vec<Command> {
        let mut argv: Vec<String> = [
            "cryptsetup",
            "luksFormat",
            "--batch-mode",
            "--type",
            "luks2",
            "--uuid",
            &self.uuid,
            "--key-file",
            &self.key_file,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if self.random_key {
            argv.extend(RANDOM_KEY_PBKDF.map(String::from));
        }
        if let Some(c) = &self.cipher {
            argv.extend(["--cipher".to_string(), c.clone()]);
        }
        argv.push(self.device.clone());
        vec![
            // The plan saw the device blank in lsblk (udev's record); the device itself is probed
            // now, and the format runs only when libblkid finds nothing on it (exit 2): a
            // signature udev never recorded is not written over.
            Command::run_expecting(&["blkid", "-p", &self.device], &[2]),
            Command::crypt(argv, &self.on),
            // udev probes the new header (lsblk's FSTYPE and UUID) before anything reads it.
            Command::run(&[
                "udevadm",
                "trigger",
                "--action=change",
                "--settle",
                &self.device,
            ]),
        ]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!(
            "format LUKS2 on {} (UUID {}{}{})",
            self.device,
            self.uuid,
            self.cipher
                .as_ref()
                .map(|c| format!(", cipher {c}"))
                .unwrap_or_default(),
            if self.random_key {
                ", PBKDF2 for the random key"
            } else {
                ""
            }
        )
    }
}

/// `cryptsetup luksHeaderBackup` to a new file beside the backup's path, made 0400, then renamed
/// over it: the backup is whole or not there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupLuksHeader {
    #[serde(flatten)]
    pub on: CryptOn,
    pub device: String,
    pub path: String,
}

impl BackupLuksHeader {
    fn partial(&self) -> String {
        format!("{}.hyraid-new", self.path)
    }
}

impl StepKind for BackupLuksHeader {
    fn commands(&self) -> Vec<Command> {
        let (new, dev) = (self.partial(), self.device.as_str());
        vec![
            Command::run(&["mkdir", "-p", "-m", "0700", &parent(&self.path)]),
            Command::run(&["rm", "-f", &new]),
            Command::run(&[
                "cryptsetup",
                "luksHeaderBackup",
                dev,
                "--header-backup-file",
                &new,
            ]),
            Command::run(&["chmod", "0400", &new]),
            Command::run(&["mv", "-f", &new, &self.path]),
        ]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::File(self.path.clone())
    }
    fn summary(&self) -> String {
        format!(
            "back up the LUKS header of {} (mode 0400; copy it off the machine)",
            self.on
        )
    }
}

/// `cryptsetup open` of the array's LUKS header with the key file, as /dev/mapper/NAME.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenLuks {
    #[serde(flatten)]
    pub on: CryptOn,
    pub device: String,
    pub name: String,
    pub key_file: String,
    #[serde(default)]
    pub discard: bool,
}

impl StepKind for OpenLuks {
    fn commands(&self) -> Vec<Command> {
        let mut argv: Vec<String> = [
            "cryptsetup",
            "open",
            "--type",
            "luks",
            "--key-file",
            &self.key_file,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if self.discard {
            argv.push("--allow-discards".into());
        }
        argv.extend([self.device.clone(), self.name.clone()]);
        vec![Command::crypt(argv, &self.on)]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!(
            "open as /dev/mapper/{} with its {}",
            self.name,
            key_noun(&self.key_file)
        )
    }
}

/// `cryptsetup resize` of an open mapping to its grown device (the LV after lvextend), with the
/// key file: LUKS2 keeps the volume key in the kernel keyring, where cryptsetup cannot read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResizeLuks {
    #[serde(flatten)]
    pub on: CryptOn,
    pub name: String,
    pub key_file: String,
}

impl StepKind for ResizeLuks {
    fn commands(&self) -> Vec<Command> {
        vec![Command::crypt(
            strings(&[
                "cryptsetup",
                "resize",
                "--key-file",
                &self.key_file,
                &self.name,
            ]),
            &self.on,
        )]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!("grow /dev/mapper/{} to its device", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::step::command_line;

    #[test]
    fn the_key_is_private_before_it_is_written() {
        let s = CreateKeyFile {
            on: CryptOn::Mirror {
                mirror: "data0".into(),
            },
            path: "/etc/hyraid/keys/data0.key".into(),
        };
        let lines: Vec<String> = s.commands().iter().map(command_line).collect();
        assert_eq!(lines[0], "test '!' -s /etc/hyraid/keys/data0.key");
        assert_eq!(lines[1], "mkdir -p -m 0700 /etc/hyraid/keys");
        assert!(lines[2].starts_with("install -m 0400 -o root -g root /dev/null "));
        assert!(
            lines[3].contains("of=/etc/hyraid/keys/data0.key") && lines[3].contains("conv=notrunc")
        );
        let b = BackupLuksHeader {
            on: CryptOn::Mirror {
                mirror: "data0".into(),
            },
            device: "/dev/md/data0".into(),
            path: "/root/data0.luks-header".into(),
        };
        let lines: Vec<String> = b.commands().iter().map(command_line).collect();
        assert_eq!(
            lines.last().unwrap(),
            "mv -f /root/data0.luks-header.hyraid-new /root/data0.luks-header"
        );
    }
}
