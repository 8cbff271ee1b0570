//! Key changes of an encrypted mirror, each a step: the new key file is added to a free key
//! slot with the old one, proven by opening the header with it, and only then is the old key's
//! slot removed.

use super::luks::{key_name, strings};
use super::{Command, StepKind};
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// `cryptsetup luksAddKey`: the new key file into a free slot, unlocked with the old one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddLuksKey {
    #[serde(flatten)]
    pub on: super::luks::CryptOn,
    pub device: String,
    /// A key file that opens the header now.
    pub with: String,
    pub key_file: String,
    /// The new key file is one this plan makes from /dev/urandom: its slot gets
    /// [`RANDOM_KEY_PBKDF`](super::luks::RANDOM_KEY_PBKDF).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_key: bool,
}

impl StepKind for AddLuksKey {
    fn commands(&self) -> Vec<Command> {
        let mut argv = strings(&[
            "cryptsetup",
            "luksAddKey",
            "--batch-mode",
            "--key-file",
            &self.with,
        ]);
        if self.random_key {
            argv.extend(super::luks::RANDOM_KEY_PBKDF.map(String::from));
        }
        argv.extend([self.device.clone(), self.key_file.clone()]);
        vec![Command::crypt(argv, &self.on)]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!(
            "add the key {} (unlocked with {}{})",
            key_name(&self.key_file),
            key_name(&self.with),
            if self.random_key {
                "; PBKDF2 for the random key"
            } else {
                ""
            }
        )
    }
}

/// `cryptsetup open --test-passphrase`: the header opens with the key file (nothing is opened).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestLuksKey {
    #[serde(flatten)]
    pub on: super::luks::CryptOn,
    pub device: String,
    pub key_file: String,
}

impl StepKind for TestLuksKey {
    fn commands(&self) -> Vec<Command> {
        vec![Command::crypt(
            strings(&[
                "cryptsetup",
                "open",
                "--test-passphrase",
                "--key-file",
                &self.key_file,
                &self.device,
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
        format!(
            "prove the key {} opens the header",
            key_name(&self.key_file)
        )
    }
}

/// `cryptsetup luksRemoveKey`: the slot the old key file opens is wiped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveLuksKey {
    #[serde(flatten)]
    pub on: super::luks::CryptOn,
    pub device: String,
    pub key_file: String,
}

impl StepKind for RemoveLuksKey {
    fn commands(&self) -> Vec<Command> {
        vec![Command::crypt(
            strings(&[
                "cryptsetup",
                "luksRemoveKey",
                "--batch-mode",
                &self.device,
                &self.key_file,
            ]),
            &self.on,
        )]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!(
            "remove the old key {} (its file is left in place: delete it once no copy needs it)",
            key_name(&self.key_file)
        )
    }
}

/// `systemd-cryptenroll`: the machine's TPM2 into a free key slot (a `systemd-tpm2` token) bound
/// to PCR 7, unlocked with the passphrase (in `$PASSWORD`), which stays as the recovery key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnrollTpm2 {
    #[serde(flatten)]
    pub on: super::luks::CryptOn,
    pub device: String,
}

impl StepKind for EnrollTpm2 {
    fn commands(&self) -> Vec<Command> {
        use crate::config::encryption::TPM2_PCRS;
        // The passphrase in $PASSWORD: systemd-cryptenroll reads it (and erases it from its
        // environment); it cannot read --unlock-key-file from a pipe.
        vec![Command::with_passphrase_env(
            strings(&[
                "systemd-cryptenroll",
                "--tpm2-device=auto",
                &format!("--tpm2-pcrs={TPM2_PCRS}"),
                &self.device,
            ]),
            &self.on,
            "PASSWORD",
        )]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!(
            "enrol the TPM2 in a key slot of {} (PCR {}): opened at boot without typing; the passphrase stays for recovery",
            self.device,
            crate::config::encryption::TPM2_PCRS
        )
    }
}
