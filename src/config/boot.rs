//! The file's `boot:`: the disks the machine boots from, and the firmware that loads it. From it
//! hyraid lays out what each boot disk needs in front of the partitions the file declares (a BIOS
//! boot partition for grub where `bios` is asked, an EFI system partition where `uefi` is), and
//! puts the boot loader on every one of them. Raw (as written, the schema's source) and resolved.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `boot:` as written.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawBoot {
    /// The firmware that loads the boot loader: `uefi`, `bios` or `both` (a disk that boots
    /// either way: an ESP and a BIOS boot partition).
    pub firmware: Firmware,
    /// The disks the machine boots from, two or more for a box that boots with either dead. Each
    /// declares its `partitions:` (the data mirror's member); hyraid puts its own boot partitions
    /// in front of them.
    pub disks: Vec<String>,
    /// The mirror that holds /boot (a filesystem on it, or an LV of a VG on it that holds /boot,
    /// or / with /boot inside). Every boot disk has a member in it: grub reads /boot from
    /// whichever disk the firmware started it from.
    pub mirror: String,
    /// Size of each disk's EFI system partition (default 512MiB; at least 100MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub esp_size: Option<super::raw::RawSize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Firmware {
    Uefi,
    Bios,
    Both,
}

impl Firmware {
    pub fn uefi(self) -> bool {
        matches!(self, Firmware::Uefi | Firmware::Both)
    }
    pub fn bios(self) -> bool {
        matches!(self, Firmware::Bios | Firmware::Both)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Firmware::Uefi => "uefi",
            Firmware::Bios => "bios",
            Firmware::Both => "both",
        }
    }
}

/// `boot:` resolved: sizes in bytes, the partitions laid out on the disks' specs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BootSpec {
    pub firmware: Firmware,
    /// Disk names, in the order written (the order of the NVRAM entries made).
    pub disks: Vec<String>,
    pub mirror: String,
    pub esp_size: u64,
}

/// What a partition is for: the file's data, or one hyraid lays out on a boot disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionRole {
    #[default]
    Data,
    /// An EFI system partition (GPT type EF00, FAT32): the UEFI firmware's loader lives there.
    Esp,
    /// A BIOS boot partition (GPT type EF02): grub's core image on a GPT disk started by a BIOS.
    BiosBoot,
}

impl PartitionRole {
    pub fn is_data(&self) -> bool {
        *self == PartitionRole::Data
    }
}

/// GPT name of a boot disk's EFI system partition.
pub const ESP_PARTITION: &str = "esp";
/// GPT name of a boot disk's BIOS boot partition.
pub const BIOS_BOOT_PARTITION: &str = "bios-boot";
/// The BIOS boot partition: grub's core image fits in far less; 1MiB keeps what follows aligned.
pub const BIOS_BOOT_SIZE: u64 = 1 << 20;
pub const DEFAULT_ESP_SIZE: u64 = 512 << 20;
/// Below this, FAT32 and the firmwares that read it disagree (Microsoft's least is 100MB; a
/// disk of 4096-byte sectors needs 260MiB).
pub const MIN_ESP_SIZE: u64 = 100 << 20;
/// The id (folder under EFI/ and the start of the NVRAM label) of a boot disk's own loader.
pub fn loader_id(disk: &str) -> String {
    format!("hyraid-{disk}")
}
/// The label of a boot disk's NVRAM entry: distinct per disk, so the firmware keeps them all.
pub fn entry_label(disk: &str) -> String {
    format!("hyraid {disk}")
}
