//! Set the label of an LV's filesystem in place: ext4 with e2label (mounted or not); xfs with
//! xfs_admin -L, which xfs_db does only on an unmounted filesystem: a mounted one is unmounted
//! for it and mounted again by its fstab line.

use super::{Command, StepKind};
use crate::config::filesystem::FsType;
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// Give an LV's filesystem the label of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelabelFilesystem {
    pub vg: String,
    pub lv: String,
    pub fstype: FsType,
    pub label: String,
    /// The label it has now; None = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// Where it is mounted when the step runs (an xfs is unmounted for the relabel and mounted
    /// again); None = not mounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mountpoint: Option<String>,
}

impl StepKind for RelabelFilesystem {
    fn commands(&self) -> Vec<Command> {
        let dev = format!("/dev/{}/{}", self.vg, self.lv);
        match (self.fstype, &self.mountpoint) {
            (FsType::Ext4, _) => vec![Command::run(&["e2label", &dev, &self.label])],
            (FsType::Xfs, Some(m)) => vec![
                Command::run(&["umount", m]),
                Command::run(&["xfs_admin", "-L", &self.label, &dev]),
                Command::run(&["mount", m]),
            ],
            (FsType::Xfs, None) => vec![Command::run(&["xfs_admin", "-L", &self.label, &dev])],
        }
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::LogicalVolume {
            vg: self.vg.clone(),
            lv: self.lv.clone(),
        }
    }
    fn summary(&self) -> String {
        format!(
            "label the {} filesystem {} (was {}){}",
            self.fstype.as_str(),
            self.label,
            self.old.as_deref().unwrap_or("unlabelled"),
            match (self.fstype, &self.mountpoint) {
                (FsType::Xfs, Some(m)) => format!(", unmounted from {m} for it"),
                (_, Some(_)) => ", online".into(),
                _ => String::new(),
            }
        )
    }
}
