//! Set the label of a filesystem (on an LV or a mirror) in place: ext4 with e2label (mounted or
//! not); xfs with xfs_admin -L, which xfs_db does only on an unmounted filesystem: a mounted one
//! is unmounted for it and mounted again by its fstab line.

use super::{Command, FsOn, StepKind};
use crate::config::filesystem::FsType;
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// Give a filesystem the label of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelabelFilesystem {
    /// An LV's step keeps its `vg` and `lv` fields; a mirror's has `mirror` (and `device`).
    #[serde(flatten)]
    pub on: FsOn,
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
        let dev = self.on.path();
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
        self.on.address()
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
