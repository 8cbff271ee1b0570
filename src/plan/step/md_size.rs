//! A mirror's size: the component size raised to what its members now offer (`mdadm --grow
//! --size=max`), after its member partitions grew.

use super::md::md_path;
use super::{Command, StepKind};
use crate::config::size::human;
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// Raise a RAID1 array's component size to the smallest member's space (`mdadm --grow MD
/// --size=max`: each member's size is set to the most its device holds, then the array's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrowArraySize {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    /// The array's size in bytes now, and after.
    pub from: u64,
    pub to: u64,
}

impl StepKind for GrowArraySize {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "mdadm".into(),
            "--grow".into(),
            md_path(&self.array, &self.md_device),
            "--size=max".into(),
        ])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        format!(
            "grow the array from {} to {} (the members' new space)",
            human(self.from),
            human(self.to)
        )
    }
}
