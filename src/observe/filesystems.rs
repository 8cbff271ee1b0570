//! Filesystems on LVs: what lsblk reports of each LV's device (type, UUID, mount point).

use super::lsblk::Node;
use super::model::Lvm;
use serde::{Deserialize, Serialize};

/// Where the static mount table lives.
pub const FSTAB_PATH: &str = "/etc/fstab";
/// Exists when systemd is the running init (sd_booted(3)).
pub const SYSTEMD_PATH: &str = "/run/systemd/system";

/// A filesystem (or any signature udev's blkid found) on an LV.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filesystem {
    pub vg: String,
    pub lv: String,
    /// Kernel name of the LV's device (`dm-3`).
    pub kname: String,
    /// lsblk FSTYPE: `ext4`, `xfs`, or another signature (`LVM2_member`, `swap`, …).
    pub fstype: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mountpoint: Option<String>,
}

/// The device-mapper name of an LV: `vg-lv`, each dash inside a name doubled.
pub fn dm_name(vg: &str, lv: &str) -> String {
    format!("{}-{}", vg.replace('-', "--"), lv.replace('-', "--"))
}

/// The LVs (visible ones) whose device carries a signature.
pub fn on_lvs(nodes: &[Node], lvm: &Lvm) -> Vec<Filesystem> {
    let mut out: Vec<Filesystem> = lvm
        .lvs
        .iter()
        .filter(|l| !l.hidden)
        .filter_map(|l| {
            let name = dm_name(&l.vg, &l.name);
            let n = nodes.iter().find(|n| n.kind == "lvm" && n.name == name)?;
            Some(Filesystem {
                vg: l.vg.clone(),
                lv: l.name.clone(),
                kname: n.kname.clone(),
                fstype: n.fstype.clone()?,
                uuid: n.uuid.clone(),
                mountpoint: n.mountpoint.clone(),
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.vg, &a.lv).cmp(&(&b.vg, &b.lv)));
    out
}
