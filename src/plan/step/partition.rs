//! Steps on a partition table the kernel already uses: telling the kernel about partitions it
//! could not re-read (`partx`), growing the last partition into free space (`growpart`), and the
//! PV on a grown partition (`pvresize`).

use super::{Command, StepKind};
use crate::config::size::human;
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// `partx --add --nr A:B DISK`: the argv that makes the kernel see partitions `first..=last`
/// that are in the table (BLKPG, which works while other partitions are open).
pub fn partx_add(device: &str, first: u32, last: u32) -> Command {
    let nr = if first == last {
        first.to_string()
    } else {
        format!("{first}:{last}")
    };
    Command::run_owned(vec![
        "partx".into(),
        "--add".into(),
        "--nr".into(),
        nr,
        device.into(),
    ])
}

/// Make the kernel's partitions match the table on the disk: `partx --add` for partitions the
/// kernel lacks, `partx --update` for ones it knows at another size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterPartitions {
    pub disk: String,
    pub device: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub update: Vec<u32>,
}

impl StepKind for RegisterPartitions {
    fn commands(&self) -> Vec<Command> {
        let mut c: Vec<Command> = self
            .add
            .iter()
            .map(|n| partx_add(&self.device, *n, *n))
            .collect();
        for n in &self.update {
            c.push(Command::run_owned(vec![
                "partx".into(),
                "--update".into(),
                "--nr".into(),
                n.to_string(),
                self.device.clone(),
            ]));
        }
        c.push(Command::run(&["udevadm", "settle"]));
        c
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let mut parts = Vec::new();
        if !self.add.is_empty() {
            parts.push(format!(
                "the kernel learns partition {} from the table",
                list(&self.add)
            ));
        }
        if !self.update.is_empty() {
            parts.push(format!(
                "the kernel learns the new size of partition {}",
                list(&self.update)
            ));
        }
        parts.join("; ")
    }
}

/// Grow the last partition of a disk to the end of the free space after it (`growpart DISK N`,
/// cloud-guest-utils: it rewrites the table and runs `partx --update` itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrowPartition {
    pub disk: String,
    pub partition: String,
    pub device: String,
    pub number: u32,
    /// Bytes now, and after.
    pub from: u64,
    pub to: u64,
}

impl StepKind for GrowPartition {
    fn commands(&self) -> Vec<Command> {
        vec![
            Command::run_owned(vec![
                "growpart".into(),
                self.device.clone(),
                self.number.to_string(),
            ]),
            Command::run(&["udevadm", "settle"]),
        ]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Disk(self.disk.clone())
    }
    fn summary(&self) -> String {
        format!(
            "grow partition {} {} from {} to {} (to the end of the disk)",
            self.number,
            self.partition,
            human(self.from),
            human(self.to)
        )
    }
}

/// A PV takes the size of the device under it (`pvresize DEV`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResizePv {
    pub device: String,
    pub from: u64,
    pub to: u64,
}

impl StepKind for ResizePv {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run(&["pvresize", &self.device])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::PhysicalVolume(self.device.clone())
    }
    fn summary(&self) -> String {
        format!(
            "grow the PV from {} to {}",
            human(self.from),
            human(self.to)
        )
    }
}
