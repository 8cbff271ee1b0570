//! The observed LVM objects (VGs, PVs, LVs, their writecaches, dm-caches and pvmoves), as the
//! observer builds them from lvm2's JSON reports.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct Lvm {
    pub vgs: Vec<Vg>,
    pub pvs: Vec<Pv>,
    pub lvs: Vec<Lv>,
    /// Visible LVs (`VG/LV`) lsblk showed a device node of: their content was read. An LV
    /// missing here (inactive, or its node not seen) has content nobody looked at.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub nodes: std::collections::BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Vg {
    pub name: String,
    pub uuid: String,
    pub size: u64,
    pub free: u64,
    pub extent_size: u64,
    /// A PV of the VG is missing (`vg_partial`): e.g. the mirror under it is not running.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl Vg {
    pub fn extent_count(&self) -> u64 {
        self.size / self.extent_size.max(1)
    }
    pub fn free_count(&self) -> u64 {
        self.free / self.extent_size.max(1)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pv {
    /// Device as LVM names it (`/dev/md127`).
    pub name: String,
    /// Kernel name resolved from major:minor (`md127`).
    pub kname: String,
    pub uuid: String,
    /// Empty when the PV is in no VG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vg: Option<String>,
    pub size: u64,
    pub free: u64,
    pub dev_size: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lv {
    pub vg: String,
    /// Name without brackets; hidden LVs have `hidden: true`.
    pub name: String,
    pub uuid: String,
    #[serde(default)]
    pub hidden: bool,
    pub size: u64,
    pub segtype: String,
    pub stripes: u32,
    /// Bytes written to one stripe before the next (`stripe_size` of the first segment), for a
    /// striped LV; None for one stripe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_size: Option<u64>,
    pub active: bool,
    /// Extents allocated on each PV (by PV kernel name), from the PV segments.
    #[serde(default)]
    pub extents: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writecache: Option<LvWritecache>,
    /// The dm-cache of a `cache` LV on a cache volume (`[lv_cache_cvol]`); a cache pool is not
    /// described here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<LvCache>,
    /// LVM tags (`lv_tags`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The LV this one is a snapshot of (LVM's `origin` of a classic or thin snapshot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_of: Option<String>,
    /// The hidden LV of a pvmove in progress or interrupted (`[pvmove0]`, attr `p`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pvmove: Option<PvMove>,
    /// Locked by a pvmove that moves its extents (attr's allocation letter in capitals).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub locked: bool,
}

/// A pvmove as LVM keeps it: a temporary mirror LV whose legs are the source PV and the place
/// the extents go; it stays in the metadata until the move is finished or aborted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PvMove {
    /// The PV the extents leave (`move_pv`), as LVM names it.
    pub source: String,
    /// Its kernel name (from `move_pv_uuid`).
    pub source_kname: String,
    /// `copy_percent`; None when the mirror is not active (nothing polls an interrupted move).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_percent: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LvWritecache {
    /// The hidden cache volume (`nextcloud_wc_cvol`).
    pub cachevol: String,
    /// The hidden origin (`nextcloud_wcorig`).
    pub origin: String,
    /// Settings stored in LVM metadata (`cache_settings`).
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    /// Blocks not yet written back (dirty), when the LV is active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback_blocks: Option<u64>,
    /// Blocks of the cache (`writecache_total_blocks`), when the LV is active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_blocks: Option<u64>,
    /// Blocks of the cache holding nothing (`writecache_free_blocks`), when the LV is active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_blocks: Option<u64>,
}

/// A dm-cache as lvm2 reports it (segment `cache_mode`; LV status `cache_*_blocks`, active only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LvCache {
    /// The hidden cache volume (`data_cache_cvol`).
    pub cachevol: String,
    /// The hidden origin (`data_corig`).
    pub origin: String,
    /// `writethrough`, `writeback` or `passthrough`.
    pub mode: String,
    /// Cache blocks (chunks) not yet written to the origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_blocks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_blocks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_blocks: Option<u64>,
}

impl LvWritecache {
    /// Bytes still to be written back: the blocks in use (total − free, what lvm2's detach counts
    /// as "cleaning N blocks") times the block size; None when the LV is inactive.
    pub fn dirty_bytes(&self) -> Option<u64> {
        let used = self.total_blocks?.checked_sub(self.free_blocks?)?;
        Some(used * self.block_size?)
    }
}
