//! Steps on a disk: its drive write cache, its signatures, its partitions.

use super::{Command, StepKind};
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// How a drive's write cache is switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CacheTool {
    /// ATA SET FEATURES, for SATA/ATA disks.
    #[default]
    Hdparm,
    /// The caching mode page's WCE bit, for SCSI/SAS disks.
    Sdparm,
}

impl CacheTool {
    /// The argv that switches `device`'s cache (also what hyraid's udev rule runs).
    pub fn argv(self, device: &str, on: bool) -> Vec<String> {
        match self {
            CacheTool::Hdparm => vec![
                "hdparm".into(),
                if on { "-W1" } else { "-W0" }.into(),
                device.into(),
            ],
            CacheTool::Sdparm => vec![
                "sdparm".into(),
                if on { "--set=WCE" } else { "--clear=WCE" }.into(),
                device.into(),
            ],
        }
    }
}

/// One GPT partition to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPartition {
    pub number: u32,
    pub name: String,
    /// Bytes; None = up to the end of the disk.
    pub size: Option<u64>,
    /// sgdisk type code: fd00 (Linux RAID), 8e00 (Linux LVM), 8300 (Linux), ef00 (EFI system),
    /// ef02 (BIOS boot).
    pub typecode: String,
}

/// Turn a drive's volatile write cache on or off: `hdparm -W1/-W0` (ATA) or
/// `sdparm --set/--clear=WCE` (SCSI/SAS).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetWriteCache {
    pub disk: String,
    pub device: String,
    pub on: bool,
    #[serde(default)]
    pub tool: CacheTool,
    /// Kernel name: after sdparm the disk is rescanned so the kernel's cache_type (which
    /// decides whether it sends flushes) matches the drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kname: Option<String>,
}

impl StepKind for SetWriteCache {
    fn commands(&self) -> Vec<Command> {
        let SetWriteCache {
            device,
            on,
            tool,
            kname,
            ..
        } = self;
        let mut c = vec![Command::run_owned(tool.argv(device, *on))];
        if let (CacheTool::Sdparm, Some(k)) = (tool, kname) {
            c.push(Command::Write {
                path: format!("/sys/block/{k}/device/rescan"),
                value: "1".into(),
            });
        }
        c
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        format!("drive write cache {}", if self.on { "on" } else { "off" })
    }
}

/// Erase every signature on a device (`wipefs --all`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WipeSignatures {
    pub disk: String,
    pub device: String,
    pub found: Vec<String>,
}

impl StepKind for WipeSignatures {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run(&["wipefs", "--all", &self.device])]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        format!("wipe {} on {}", self.found.join(", "), self.device)
    }
}

/// Create GPT partitions (sgdisk, one call; `new_table` first writes a fresh GPT).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatePartitions {
    pub disk: String,
    pub device: String,
    pub new_table: bool,
    pub parts: Vec<NewPartition>,
    /// Other partitions of the disk are open, so the kernel cannot re-read the table: the new
    /// ones are added to it with `partx --add`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_use: bool,
}

impl StepKind for CreatePartitions {
    fn commands(&self) -> Vec<Command> {
        let CreatePartitions {
            device,
            new_table,
            parts,
            in_use,
            ..
        } = self;
        let mut c = Vec::new();
        if *new_table {
            c.push(Command::run(&["sgdisk", "--clear", device]));
        }
        let mut a = vec!["sgdisk".to_string()];
        for p in parts {
            let end = p
                .size
                .map(|b| format!("+{}K", b.div_ceil(1024)))
                .unwrap_or_else(|| "0".into());
            a.push(format!("--new={}:0:{end}", p.number));
            a.push(format!("--change-name={}:{}", p.number, p.name));
            a.push(format!("--typecode={}:{}", p.number, p.typecode));
        }
        a.push(device.clone());
        c.push(Command::run_owned(a));
        if let (true, Some(first), Some(last)) = (*in_use, parts.first(), parts.last()) {
            c.push(super::partx_add(device, first.number, last.number));
        }
        c.push(Command::run(&["udevadm", "settle"]));
        c
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        use crate::config::size::human;
        format!(
            "{}partitions {}{}",
            if self.new_table { "new GPT; " } else { "" },
            self.parts
                .iter()
                .map(|p| format!(
                    "{} {} ({})",
                    p.number,
                    p.name,
                    p.size.map(human).unwrap_or_else(|| "rest".into())
                ))
                .collect::<Vec<_>>()
                .join(", "),
            if self.in_use {
                " (the disk is in use: partx adds them to the kernel)"
            } else {
                ""
            }
        )
    }
}
