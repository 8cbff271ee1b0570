//! The simulated machine's state: the observed model it changes, the log of what ran, the
//! faults still to fire; and how a /dev path resolves in it.

use super::Fault;
use crate::observe::{BlockDevice, MdArray, Observed};

#[derive(Debug)]
pub(crate) struct SimState {
    pub world: Observed,
    pub serial: u64,
    /// Every argv run, in order (observation and changes alike).
    pub log: Vec<Vec<String>>,
    pub faults: Vec<Fault>,
    pub root: bool,
    /// The machine died during a pvmove: nothing polls it until `pvmove` runs again.
    pub moves_stalled: bool,
    /// Sectors at which a member of an array (by kernel name) differs from the others: what a
    /// check finds (`SimHost::corrupt`).
    pub corrupt: std::collections::BTreeMap<String, Vec<u64>>,
    /// Reads and writes each block device completed (kernel name), as /sys/class/block/*/stat
    /// counts them: what fio's jobs sent to the disks under a mirror.
    pub io: std::collections::BTreeMap<String, (u64, u64)>,
}

/// What a /dev path names in the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    Block(String),
    Md(String),
    Lv(String, String),
    /// An open dm-crypt mapping (/dev/mapper/NAME), by kernel name.
    Mapper(String),
}

impl SimState {
    /// A number no simulated object's uuid uses yet (snapshots may already hold some).
    pub fn next_serial(&mut self) -> u64 {
        loop {
            self.serial += 1;
            let (short, long) = (
                format!("{:04}-sim", self.serial),
                format!("{:08x}-", self.serial),
            );
            let w = &self.world;
            let taken = w
                .lvm
                .lvs
                .iter()
                .map(|l| &l.uuid)
                .chain(w.lvm.pvs.iter().map(|p| &p.uuid))
                .chain(w.lvm.vgs.iter().map(|v| &v.uuid))
                .any(|u| u.ends_with(&short))
                || w.arrays
                    .iter()
                    .filter_map(|a| a.uuid.as_ref())
                    .any(|u| u.starts_with(&long));
            if !taken {
                return self.serial;
            }
        }
    }

    pub fn resolve(&self, path: &str) -> Option<Target> {
        let w = &self.world;
        if let Some(id) = path.strip_prefix("/dev/disk/by-id/") {
            return w.by_id(id).map(|d| Target::Block(d.kname.clone()));
        }
        if let Some(name) = path.strip_prefix("/dev/md/") {
            // udev links /dev/md/NAME only for running arrays.
            return w
                .array_named(name)
                .filter(|a| linked(a))
                .map(|a| Target::Md(a.kname.clone()));
        }
        if let Some(name) = path.strip_prefix("/dev/mapper/") {
            return super::tools::crypt::resolve_mapper(self, name).map(Target::Mapper);
        }
        if let Some(k) = path.strip_prefix("/dev/") {
            if w.array(k).is_some() {
                return Some(Target::Md(k.to_string()));
            }
            if w.device(k).is_some() {
                return Some(Target::Block(k.to_string()));
            }
            if let Some((vg, lv)) = k.split_once('/')
                && w.lv(vg, lv).is_some_and(|l| !l.hidden)
            {
                return Some(Target::Lv(vg.into(), lv.into()));
            }
            // An active LV by its kernel name, as lsblk numbers them (`dm-N`: its place in the
            // LVM report).
            if let Some(l) = (k.strip_prefix("dm-"))
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| w.lvm.lvs.get(n))
                .filter(|l| !l.hidden && l.active)
            {
                return Some(Target::Lv(l.vg.clone(), l.name.clone()));
            }
        }
        None
    }

    pub fn dev_mut(&mut self, kname: &str) -> Option<&mut BlockDevice> {
        self.world
            .block_devices
            .iter_mut()
            .find(|d| d.kname == kname)
    }

    pub fn array_mut(&mut self, kname: &str) -> Option<&mut MdArray> {
        self.world.arrays.iter_mut().find(|a| a.kname == kname)
    }

    pub fn kname(t: &Target) -> String {
        match t {
            Target::Block(k) | Target::Md(k) | Target::Mapper(k) => k.clone(),
            Target::Lv(vg, lv) => format!("{vg}/{lv}"),
        }
    }

    /// "Device or resource busy": something is stacked on it, it is a member, or a PV.
    pub fn busy(&self, t: &Target) -> bool {
        match t {
            Target::Block(k) => {
                let w = &self.world;
                w.device(k)
                    .is_some_and(|d| !d.holders.is_empty() || d.mountpoint.is_some())
                    || w.array_of_member(k).is_some()
                    || w.pv(k).is_some_and(|p| p.vg.is_some())
                    || w.block_devices
                        .iter()
                        .any(|d| d.parent.as_deref() == Some(k.as_str()))
            }
            Target::Md(k) => {
                self.world.pv(k).is_some_and(|p| p.vg.is_some())
                    || self
                        .world
                        .other_devices
                        .iter()
                        .any(|o| o.parents.contains(k))
            }
            Target::Mapper(k) => self.world.pv(k).is_some_and(|p| p.vg.is_some()),
            Target::Lv(..) => true,
        }
    }
}

/// Does udev link /dev/md/NAME? For arrays that run, and for external-metadata containers
/// (which never run themselves).
pub(super) fn linked(a: &MdArray) -> bool {
    a.array_state != "inactive" || a.is_container()
}
