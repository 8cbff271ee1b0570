//! The object a step changes, typed: what the plan shows as `disk hdd0`, `mirror data0`,
//! `pv /dev/md/data0`, `vg vg0`, `lv vg0/nextcloud`, `file /etc/mdadm/mdadm.conf`, `udev` or
//! `initramfs`, and what the preview describes before and after.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Address {
    /// A disk of the file, by its name there.
    Disk(String),
    /// A mirror of the file, by its name there.
    Mirror(String),
    /// A PV, by the path it is created on (`/dev/md/NAME`, `/dev/disk/by-id/…`).
    PhysicalVolume(String),
    VolumeGroup(String),
    LogicalVolume {
        vg: String,
        lv: String,
    },
    /// A file hyraid manages, by its path.
    File(String),
    /// The initramfs (an action without state).
    Initramfs,
    /// udevd's rules (an action without state).
    Udev,
    /// systemd units, by name.
    Units(Vec<String>),
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Disk(disk) => write!(f, "disk {disk}"),
            Address::Mirror(array) => write!(f, "mirror {array}"),
            Address::PhysicalVolume(device) => write!(f, "pv {device}"),
            Address::VolumeGroup(vg) => write!(f, "vg {vg}"),
            Address::LogicalVolume { vg, lv } => write!(f, "lv {vg}/{lv}"),
            Address::File(path) => write!(f, "file {path}"),
            Address::Initramfs => f.write_str("initramfs"),
            Address::Udev => f.write_str("udev"),
            Address::Units(units) if units.len() == 1 => write!(f, "unit {}", units[0]),
            Address::Units(units) => write!(f, "units {}", units.join(", ")),
        }
    }
}
