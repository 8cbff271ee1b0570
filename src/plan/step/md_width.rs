//! Steps that change a mirror's width: a member failed and removed, and the number of slots
//! (`mdadm --grow --raid-devices`): growing adds slots that spares fill by recovery, shrinking
//! needs the departing members failed and removed first.

use super::md::md_path;
use super::{Command, StepKind};
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// Set the number of slots of a RAID1 array (`mdadm --grow MD --raid-devices=N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrowArray {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    pub raid_devices: u32,
}

impl StepKind for GrowArray {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "mdadm".into(),
            "--grow".into(),
            md_path(&self.array, &self.md_device),
            format!("--raid-devices={}", self.raid_devices),
        ])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        format!("set the width to {} members", self.raid_devices)
    }
}

/// Take a working member out of the array: failed, then removed (its slot stays until the
/// array is shrunk).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveMember {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    /// Stable path of the member (/dev/disk/by-id/…).
    pub device: String,
    /// Erase its md superblock once removed, so that no later assembly (a reboot, udev's
    /// incremental one) takes it back into the array or starts it as a stale copy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zero_superblock: bool,
}

impl StepKind for RemoveMember {
    fn commands(&self) -> Vec<Command> {
        let md = md_path(&self.array, &self.md_device);
        let mut c: Vec<Command> = ["--fail", "--remove"]
            .into_iter()
            .map(|op| {
                Command::run_owned(vec![
                    "mdadm".into(),
                    md.clone(),
                    op.into(),
                    self.device.clone(),
                ])
            })
            .collect();
        if self.zero_superblock {
            c.push(zero_superblock(&self.device));
        }
        c
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        if self.zero_superblock {
            format!(
                "fail and remove member {}, and erase its md superblock",
                self.device
            )
        } else {
            format!("fail and remove member {}", self.device)
        }
    }
}

fn zero_superblock(device: &str) -> Command {
    Command::run(&["mdadm", "--zero-superblock", device])
}

/// Erase the md superblock a former member of a mirror still carries (`mdadm
/// --zero-superblock DEV`): left there, a reboot may assemble it into the array again or start it
/// as a stale copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZeroSuperblock {
    pub array: String,
    pub device: String,
}

impl StepKind for ZeroSuperblock {
    fn commands(&self) -> Vec<Command> {
        vec![zero_superblock(&self.device)]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        format!("erase the md superblock of former member {}", self.device)
    }
}
