//! Steps that take a PV out of a VG: its extents moved to the PVs that stay (`pvmove`, run in the
//! background and waited for), an interrupted move resumed, the emptied PV taken out of the VG
//! (`vgreduce`) and its label wiped (`pvremove`).

use super::{Command, StepKind};
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

/// Start moving every extent off `pv`, onto `to` only (`pvmove --background PV DEST...`). LVM
/// copies through a temporary mirror (`[pvmove0]`) and switches each segment once its copy is
/// complete, so the data is on the source until its new place holds it; the polling runs in
/// lvmpolld (or a daemon lvm forks), not in hyraid, and survives hyraid being killed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovePv {
    pub vg: String,
    pub pv: String,
    pub to: Vec<String>,
    /// Extents that move.
    pub extents: u64,
}

impl StepKind for MovePv {
    fn commands(&self) -> Vec<Command> {
        let mut a: Vec<String> = vec!["pvmove".into(), "--background".into(), self.pv.clone()];
        a.extend(self.to.iter().cloned());
        vec![Command::run_owned(a)]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::PhysicalVolume(self.pv.clone())
    }
    fn summary(&self) -> String {
        format!(
            "move {} extents to {} (pvmove, in the background)",
            self.extents,
            self.to.join(", ")
        )
    }
}

/// Restart the polling of an interrupted pvmove (`pvmove --background` without arguments
/// restarts every move LVM finds in progress; one already being polled goes on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeMove {
    pub vg: String,
    /// The PV the move takes extents off.
    pub pv: String,
    /// The move LV is not active (the machine died and its boot did not activate the VG): bare
    /// pvmove skips an inactive one ("Skipping inactive LV. Try lvchange or vgchange."), so the
    /// VG is activated first, without starting a poller of its own (`--poll n`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub activate: bool,
}

impl StepKind for ResumeMove {
    fn commands(&self) -> Vec<Command> {
        let mut c = Vec::new();
        if self.activate {
            c.push(Command::run(&[
                "vgchange",
                "--activate",
                "y",
                "--poll",
                "n",
                &self.vg,
            ]));
        }
        c.push(Command::run(&["pvmove", "--background"]));
        c
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::VolumeGroup(self.vg.clone())
    }
    fn summary(&self) -> String {
        if self.activate {
            format!("activate the VG and resume the pvmove off {}", self.pv)
        } else {
            format!("resume the pvmove off {}", self.pv)
        }
    }
}

/// Wait until no pvmove is left in the VG (hyraid polls `lvs -a` for the move LV and shows its
/// `copy_percent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitMove {
    pub vg: String,
}

impl StepKind for WaitMove {
    fn commands(&self) -> Vec<Command> {
        vec![Command::WaitMove {
            vg: self.vg.clone(),
        }]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::VolumeGroup(self.vg.clone())
    }
    fn summary(&self) -> String {
        "wait for the pvmove to finish".into()
    }
}

/// Take an emptied PV out of its VG and wipe its label (`vgreduce`, `pvremove`). vgreduce refuses
/// a PV that still holds an extent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReducePv {
    pub vg: String,
    pub pv: String,
}

impl StepKind for ReducePv {
    fn commands(&self) -> Vec<Command> {
        vec![
            Command::run(&["vgreduce", &self.vg, &self.pv]),
            Command::run(&["pvremove", "--yes", &self.pv]),
        ]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::PhysicalVolume(self.pv.clone())
    }
    fn summary(&self) -> String {
        format!("take the empty PV out of {} and wipe its label", self.vg)
    }
}

/// Wipe the label of a PV in no VG (`pvremove`): what an interrupted [`ReducePv`] leaves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovePvLabel {
    pub pv: String,
}

impl StepKind for RemovePvLabel {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run(&["pvremove", "--yes", &self.pv])]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::PhysicalVolume(self.pv.clone())
    }
    fn summary(&self) -> String {
        "wipe the label of an empty PV that is in no VG".into()
    }
}
