//! Steps on what boot reads: the files hyraid manages (mdadm.conf, the drive-cache udev rule),
//! udevd's rules, the initramfs.

use super::{Command, StepKind};
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// Write a file hyraid manages (mdadm.conf ARRAY lines, the drive-cache udev rule).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteFile {
    pub path: String,
    /// Current content; None when the file does not exist.
    pub old: Option<String>,
    pub content: String,
    pub purpose: String,
}

impl StepKind for WriteFile {
    fn commands(&self) -> Vec<Command> {
        vec![Command::ReplaceFile {
            path: self.path.clone(),
            content: self.content.clone(),
        }]
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

/// Regenerate the initramfs so early boot assembles the arrays by the new mdadm.conf.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegenerateInitramfs {
    pub tool: String,
}

impl StepKind for RegenerateInitramfs {
    fn commands(&self) -> Vec<Command> {
        vec![if self.tool == "dracut" {
            Command::run(&["dracut", "-f", "--mdadmconf"])
        } else {
            Command::run(&["update-initramfs", "-u"])
        }]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Initramfs
    }
    fn summary(&self) -> String {
        format!("regenerate with {}", self.tool)
    }
}

/// Make udevd read the changed rules. (Braced, not a unit struct: a saved plan gives it the
/// step's other keys too, and an empty struct ignores them.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReloadUdev {}

impl StepKind for ReloadUdev {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run(&["udevadm", "control", "--reload"])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Udev
    }
    fn summary(&self) -> String {
        "reload udev rules".into()
    }
}
