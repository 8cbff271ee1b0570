//! Steps on what the firmware starts: a boot disk's EFI system partition, the grub on it (and on
//! a BIOS disk), the firmware's boot entries, and the hooks that keep them current.

use super::{Command, StepKind};
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// Where an ESP is mounted while its loader is installed: hyraid's own, never /boot/efi (which
/// would make it the one ESP the release's tools write to).
pub fn esp_mount(disk: &str) -> String {
    format!("/run/hyraid/esp/{disk}")
}

/// Make the FAT32 filesystem of a boot disk's EFI system partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MakeEsp {
    pub disk: String,
    /// The partition, by its /dev/disk/by-id path.
    pub device: String,
}

impl StepKind for MakeEsp {
    fn commands(&self) -> Vec<Command> {
        vec![
            Command::run(&["mkfs.vfat", "-F", "32", "-n", "ESP", &self.device]),
            Command::run(&["udevadm", "settle"]),
        ]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        format!("EFI system partition: FAT32 on {}", self.device)
    }
}

/// Install grub (x86_64-efi) on one boot disk's ESP: in its own folder (`EFI/hyraid-DISK`, which
/// the disk's boot entry names) and at the removable fallback path (`EFI/BOOT/BOOTX64.EFI`, which
/// a firmware that lost its entries starts), then hyraid's stamp with the grub version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallEfiLoader {
    pub disk: String,
    /// The ESP, by its /dev/disk/by-id path.
    pub device: String,
    /// `grub-install --version`'s line, written as the stamp.
    pub grub: String,
    /// The ESP is already mounted at hyraid's mount point (an apply stopped before it unmounted).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mounted: bool,
    /// What the ESP held: None (a new one), or the stamp it had (`stale` loader).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub had: Option<String>,
}

impl StepKind for InstallEfiLoader {
    fn commands(&self) -> Vec<Command> {
        let mp = esp_mount(&self.disk);
        let dir = format!("--efi-directory={mp}");
        let id = format!(
            "--bootloader-id={}",
            crate::config::boot::loader_id(&self.disk)
        );
        let mut c = vec![Command::run(&["mkdir", "-p", &mp])];
        if !self.mounted {
            c.push(Command::run(&[
                "mount",
                "-t",
                "vfat",
                "-o",
                "nodev,nosuid,noexec",
                &self.device,
                &mp,
            ]));
        }
        c.push(Command::run(&[
            "grub-install",
            "--target=x86_64-efi",
            &dir,
            &id,
            "--no-nvram",
        ]));
        c.push(Command::run(&[
            "grub-install",
            "--target=x86_64-efi",
            &dir,
            "--removable",
            "--no-nvram",
        ]));
        c.push(Command::ReplaceFile {
            path: format!("{mp}/{}", crate::observe::loader::ESP_STAMP),
            content: format!("{}\n", self.grub),
        });
        c.push(Command::run(&["umount", &mp]));
        c
    }
    fn symbol(&self) -> char {
        if self.had.is_some() { '~' } else { '+' }
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        match &self.had {
            Some(h) => format!("boot loader on its ESP: {h} -> {}", self.grub),
            None => format!("boot loader on its ESP: {}", self.grub),
        }
    }
}

/// Install grub (i386-pc) in a BIOS boot disk's boot sector and BIOS boot partition, and record it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallBiosLoader {
    pub disk: String,
    /// The whole disk, by its /dev/disk/by-id path.
    pub device: String,
    pub grub: String,
    /// hyraid's record of its BIOS loaders, with this one.
    pub record: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub had: Option<String>,
}

impl StepKind for InstallBiosLoader {
    fn commands(&self) -> Vec<Command> {
        vec![
            Command::run(&["grub-install", "--target=i386-pc", &self.device]),
            Command::ReplaceFile {
                path: crate::observe::loader::BIOS_RECORD_PATH.into(),
                content: self.record.clone(),
            },
        ]
    }
    fn symbol(&self) -> char {
        if self.had.is_some() { '~' } else { '+' }
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        match &self.had {
            Some(h) => format!("BIOS boot loader: {h} -> {}", self.grub),
            None => format!("BIOS boot loader: {}", self.grub),
        }
    }
}

/// A firmware boot entry for one boot disk's loader, with a label of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateBootEntry {
    pub disk: String,
    /// The whole disk, by its /dev/disk/by-id path.
    pub device: String,
    /// The ESP's partition number.
    pub part: u32,
}

impl StepKind for CreateBootEntry {
    fn commands(&self) -> Vec<Command> {
        let loader = format!(
            "\\EFI\\{}\\grubx64.efi",
            crate::config::boot::loader_id(&self.disk)
        );
        vec![Command::run(&[
            "efibootmgr",
            "--quiet",
            "--create",
            "--disk",
            &self.device,
            "--part",
            &self.part.to_string(),
            "--label",
            &crate::config::boot::entry_label(&self.disk),
            "--loader",
            &loader,
        ])]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        format!(
            "firmware boot entry `{}`",
            crate::config::boot::entry_label(&self.disk)
        )
    }
}

/// Remove a firmware boot entry of hyraid's that loads from no ESP of the boot disks (a dead or
/// replaced disk's, a disk no longer booted from, a duplicate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteBootEntry {
    pub disk: String,
    pub number: String,
    pub label: String,
    pub why: String,
}

impl StepKind for DeleteBootEntry {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run(&[
            "efibootmgr",
            "--quiet",
            "--delete-bootnum",
            "--bootnum",
            &self.number,
        ])]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        format!(
            "firmware boot entry Boot{} `{}` ({})",
            self.number, self.label, self.why
        )
    }
}

/// Write one of the hooks that refresh the loaders after an update (an executable file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteHook {
    pub path: String,
    pub old: Option<String>,
    pub content: String,
    pub purpose: String,
    /// Run by run-parts (kernel and initramfs hooks): executable. apt's configuration is not.
    pub executable: bool,
}

impl StepKind for WriteHook {
    fn commands(&self) -> Vec<Command> {
        let mut c = vec![Command::ReplaceFile {
            path: self.path.clone(),
            content: self.content.clone(),
        }];
        if self.executable {
            c.push(Command::run(&["chmod", "0755", &self.path]));
        }
        c
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::File(self.path.clone())
    }
    fn summary(&self) -> String {
        format!(
            "{} ({})",
            if self.old.is_some() {
                "update"
            } else {
                "create"
            },
            self.purpose
        )
    }
}

/// Debian's grub-pc: the disks its upgrades install grub on (`grub-pc/install_devices`), all
/// the boot disks by id, so that its own upgrades keep every boot sector current.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetGrubPcDevices {
    pub devices: Vec<String>,
    pub had: Vec<String>,
}

impl StepKind for SetGrubPcDevices {
    fn commands(&self) -> Vec<Command> {
        let path = crate::observe::loader::GRUB_PC_SELECTIONS;
        vec![
            Command::ReplaceFile {
                path: path.into(),
                content: format!(
                    "grub-pc grub-pc/install_devices multiselect {}\n",
                    self.devices.join(", ")
                ),
            },
            Command::run(&["debconf-set-selections", path]),
        ]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::File("debconf grub-pc/install_devices".into())
    }
    fn summary(&self) -> String {
        format!(
            "grub-pc installs on {} (was: {})",
            self.devices.join(", "),
            if self.had.is_empty() {
                "none".to_string()
            } else {
                self.had.join(", ")
            }
        )
    }
}

/// Write grub's configuration (`update-grub`: the kernels in /boot, root by UUID), which every
/// boot disk's loader reads from /boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteGrubConfig {}

impl StepKind for WriteGrubConfig {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run(&["update-grub"])]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::File(crate::observe::loader::GRUB_CFG.into())
    }
    fn summary(&self) -> String {
        "grub's configuration, with update-grub".into()
    }
}
