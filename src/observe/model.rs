//! The observed machine: what `hyraid observe` prints and what `--sim` loads.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Version of the snapshot format.
pub const SNAPSHOT_FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Observed {
    pub format: u32,
    pub hostname: String,
    /// Disks and partitions (lsblk TYPE disk/part), by kernel name order.
    pub block_devices: Vec<BlockDevice>,
    /// md arrays from /proc/mdstat and sysfs.
    pub arrays: Vec<MdArray>,
    pub lvm: Lvm,
    /// What makes the layout survive a reboot.
    #[serde(default)]
    pub boot: Boot,
}

/// Files and tools that make arrays and drive caches come back after a reboot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Boot {
    /// The mdadm.conf mdadm reads: /etc/mdadm.conf if it exists, else /etc/mdadm/mdadm.conf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mdadm_conf_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mdadm_conf: Option<String>,
    /// `update-initramfs` (Debian, Ubuntu) or `dracut` (EL), when installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initramfs_tool: Option<String>,
    /// hyraid's udev rule for drive write caches, when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache_rule: Option<String>,
}

pub const MDADM_CONF_PATHS: [&str; 2] = ["/etc/mdadm.conf", "/etc/mdadm/mdadm.conf"];
pub const WRITE_CACHE_RULE_PATH: &str = "/etc/udev/rules.d/61-hyraid-write-cache.rules";
/// Where the initramfs tools live (merged /usr; the first found wins).
pub const INITRAMFS_TOOLS: [(&str, &str); 4] = [
    ("update-initramfs", "/usr/sbin/update-initramfs"),
    ("update-initramfs", "/sbin/update-initramfs"),
    ("dracut", "/usr/bin/dracut"),
    ("dracut", "/usr/sbin/dracut"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DevKind {
    Disk,
    Part,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Kernel name (`sda`, `sdb1`, `nvme0n1`).
    pub kname: String,
    pub kind: DevKind,
    /// "major:minor".
    pub maj_min: String,
    pub size: u64,
    pub rotational: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Transport: sata, sas, nvme, usb, … (lsblk TRAN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tran: Option<String>,
    /// Names under /dev/disk/by-id pointing at this device.
    #[serde(default)]
    pub by_id: Vec<String>,
    /// Parent disk of a partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partlabel: Option<String>,
    /// Partition table type on a disk (`gpt`, `dos`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pttype: Option<String>,
    /// Content type as udev/blkid reported it to lsblk (`ext4`, `linux_raid_member`, `LVM2_member`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fstype: Option<String>,
    /// Devices stacked on this one (md arrays, dm devices), by kernel name; partitions are not holders.
    #[serde(default)]
    pub holders: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mountpoint: Option<String>,
    /// Signatures found by probing (`wipefs -n`); only probed on devices nothing is stacked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<Signature>>,
    /// The drive's volatile write cache; None = not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<WriteCacheState>,
}

impl BlockDevice {
    /// Nothing known on it: no holders, no partitions, no signature seen by lsblk or wipefs.
    pub fn signature_summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(s) = &self.signatures {
            out.extend(s.iter().map(|s| format!("{} at {}", s.kind, s.offset)));
        }
        if out.is_empty() {
            if let Some(f) = &self.fstype {
                out.push(f.clone());
            }
            if let Some(p) = &self.pttype {
                out.push(format!("{p} partition table"));
            }
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    pub offset: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// For an md superblock: the array's UUID (lets a returning member be re-added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteCacheSource {
    /// /sys/block/X/device/scsi_disk/*/cache_type
    ScsiCacheType,
    /// `hdparm -W`
    Hdparm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteCacheState {
    /// None: the device does not report or support a switchable write cache.
    pub enabled: Option<bool>,
    pub source: WriteCacheSource,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MdArray {
    /// Kernel name (`md127`).
    pub kname: String,
    /// Name from /dev/md/NAME, when udev made the link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    pub level: String,
    pub raid_disks: u32,
    /// Array size in KiB (mdstat "blocks").
    pub size_kib: u64,
    pub array_state: String,
    /// `idle`, `resync`, `recover`, `check`, `repair`, `frozen`, …
    pub sync_action: String,
    /// (done, total) sectors while a sync runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_completed: Option<(u64, u64)>,
    /// A resync is needed but has not started (sysfs `resync_start` is not `none` while
    /// `sync_action` is idle): an auto-read-only array starts it at its first write.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resync_pending: bool,
    pub degraded: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitmap: Option<MdBitmap>,
    pub members: Vec<MdMember>,
    /// Content on the array as lsblk reports it (`LVM2_member`, `ext4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fstype: Option<String>,
}

impl MdArray {
    pub fn member(&self, kname: &str) -> Option<&MdMember> {
        self.members.iter().find(|m| m.kname == kname)
    }
    pub fn is_idle(&self) -> bool {
        self.sync_action == "idle"
    }
    /// `read-auto`: read-only until the first write (after boot or assembly).
    pub fn auto_read_only(&self) -> bool {
        self.array_state == "read-auto"
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MdBitmap {
    /// Chunk size in bytes.
    pub chunk: u64,
    /// Maximum outstanding write-behind writes (sysfs bitmap/backlog).
    pub backlog: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MdMember {
    pub kname: String,
    /// Role in the array; None for spares and faulty members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// Words of sysfs dev-*/state: in_sync, write_mostly, faulty, spare, replacement, …
    pub state: Vec<String>,
}

impl MdMember {
    pub fn has(&self, word: &str) -> bool {
        self.state.iter().any(|s| s == word)
    }
    pub fn write_mostly(&self) -> bool {
        self.has("write_mostly")
    }
    pub fn faulty(&self) -> bool {
        self.has("faulty")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Lvm {
    pub vgs: Vec<Vg>,
    pub pvs: Vec<Pv>,
    pub lvs: Vec<Lv>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub active: bool,
    /// Extents allocated on each PV (by PV kernel name), from the PV segments.
    #[serde(default)]
    pub extents: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writecache: Option<LvWritecache>,
    /// LVM tags (`lv_tags`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The LV this one is a snapshot of (LVM's `origin` of a classic or thin snapshot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_of: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

impl Observed {
    /// The canonical form the observer returns: stable order, and signatures only where they are
    /// probed (devices nothing is stacked on). The simulated host keeps the full truth and
    /// compares through this view.
    pub fn normalized(&self) -> Observed {
        let mut o = self.clone();
        o.block_devices.sort_by(|a, b| a.kname.cmp(&b.kname));
        let parents: HashSet<String> = o
            .block_devices
            .iter()
            .filter_map(|d| d.parent.clone())
            .collect();
        // PVs in a VG that hold extents of an LV.
        let with_extents: HashSet<&String> =
            o.lvm.lvs.iter().flat_map(|l| l.extents.keys()).collect();
        let used_pvs: HashSet<String> = o
            .lvm
            .pvs
            .iter()
            .filter(|p| p.vg.is_some() && with_extents.contains(&p.kname))
            .map(|p| p.kname.clone())
            .collect();
        for d in o.block_devices.iter_mut() {
            d.holders.sort();
            let is_pv = used_pvs.contains(&d.kname);
            let in_use = !d.holders.is_empty()
                || parents.contains(&d.kname)
                || d.mountpoint.is_some()
                || d.size == 0
                || is_pv;
            if in_use {
                d.signatures = None;
            } else if d.signatures.is_none() {
                d.signatures = Some(vec![]);
            }
        }
        o.arrays.sort_by(|a, b| a.kname.cmp(&b.kname));
        for a in o.arrays.iter_mut() {
            a.members.sort_by(|x, y| {
                (x.slot.is_none(), x.slot, &x.kname).cmp(&(y.slot.is_none(), y.slot, &y.kname))
            });
        }
        o.lvm.vgs.sort_by(|a, b| a.name.cmp(&b.name));
        o.lvm
            .pvs
            .sort_by(|a, b| (&a.vg, &a.kname).cmp(&(&b.vg, &b.kname)));
        o.lvm
            .lvs
            .sort_by(|a, b| (&a.vg, a.hidden, &a.name).cmp(&(&b.vg, b.hidden, &b.name)));
        o
    }

    pub fn device(&self, kname: &str) -> Option<&BlockDevice> {
        self.block_devices.iter().find(|d| d.kname == kname)
    }
    pub fn array_named(&self, name: &str) -> Option<&MdArray> {
        self.arrays.iter().find(|a| a.name.as_deref() == Some(name))
    }
    pub fn array(&self, kname: &str) -> Option<&MdArray> {
        self.arrays.iter().find(|a| a.kname == kname)
    }
    /// The array that has `kname` as a member.
    pub fn array_of_member(&self, kname: &str) -> Option<&MdArray> {
        self.arrays.iter().find(|a| a.member(kname).is_some())
    }
    pub fn pv(&self, kname: &str) -> Option<&Pv> {
        self.lvm.pvs.iter().find(|p| p.kname == kname)
    }
    pub fn vg(&self, name: &str) -> Option<&Vg> {
        self.lvm.vgs.iter().find(|v| v.name == name)
    }
    pub fn lv(&self, vg: &str, name: &str) -> Option<&Lv> {
        self.lvm.lvs.iter().find(|l| l.vg == vg && l.name == name)
    }
    pub fn pvs_of(&self, vg: &str) -> impl Iterator<Item = &Pv> {
        self.lvm
            .pvs
            .iter()
            .filter(move |p| p.vg.as_deref() == Some(vg))
    }
    /// The whole disk a file's disk names: by its by-id name, else by its serial. (The planner
    /// resolves with more care: a serial that contradicts the id, or matches two disks, is an
    /// error there.)
    pub fn disk_for(&self, spec: &crate::config::DiskSpec) -> Option<&BlockDevice> {
        spec.id.as_ref().and_then(|i| self.by_id(i)).or_else(|| {
            spec.serial.as_ref().and_then(|s| {
                self.block_devices
                    .iter()
                    .find(|b| b.kind == DevKind::Disk && b.serial.as_ref() == Some(s))
            })
        })
    }
    /// Resolve a /dev/disk/by-id name to a device.
    pub fn by_id(&self, id: &str) -> Option<&BlockDevice> {
        self.block_devices
            .iter()
            .find(|d| d.by_id.iter().any(|i| i == id))
    }
}

/// Lookups over an [`Observed`] by name in constant time, for code that asks once per object
/// (the planner on a machine with thousands of LVs). Same answers as the methods of `Observed`.
pub struct Lookup<'a> {
    devices: HashMap<&'a str, &'a BlockDevice>,
    by_id: HashMap<&'a str, &'a BlockDevice>,
    arrays_by_name: HashMap<&'a str, &'a MdArray>,
    array_of_member: HashMap<&'a str, &'a MdArray>,
    pvs: HashMap<&'a str, &'a Pv>,
    pvs_of: HashMap<&'a str, Vec<&'a Pv>>,
    vgs: HashMap<&'a str, &'a Vg>,
    lvs: HashMap<(&'a str, &'a str), &'a Lv>,
}

impl<'a> Lookup<'a> {
    pub fn new(o: &'a Observed) -> Lookup<'a> {
        // `or_insert` keeps the first match, as the linear searches of `Observed` do.
        let mut l = Lookup {
            devices: HashMap::new(),
            by_id: HashMap::new(),
            arrays_by_name: HashMap::new(),
            array_of_member: HashMap::new(),
            pvs: HashMap::new(),
            pvs_of: HashMap::new(),
            vgs: HashMap::new(),
            lvs: HashMap::new(),
        };
        for d in &o.block_devices {
            l.devices.entry(&d.kname).or_insert(d);
            for i in &d.by_id {
                l.by_id.entry(i).or_insert(d);
            }
        }
        for a in &o.arrays {
            if let Some(n) = &a.name {
                l.arrays_by_name.entry(n).or_insert(a);
            }
            for m in &a.members {
                l.array_of_member.entry(&m.kname).or_insert(a);
            }
        }
        for p in &o.lvm.pvs {
            l.pvs.entry(&p.kname).or_insert(p);
            if let Some(vg) = &p.vg {
                l.pvs_of.entry(vg).or_default().push(p);
            }
        }
        for v in &o.lvm.vgs {
            l.vgs.entry(&v.name).or_insert(v);
        }
        for lv in &o.lvm.lvs {
            l.lvs.entry((&lv.vg, &lv.name)).or_insert(lv);
        }
        l
    }

    pub fn device(&self, kname: &str) -> Option<&'a BlockDevice> {
        self.devices.get(kname).copied()
    }
    pub fn by_id(&self, id: &str) -> Option<&'a BlockDevice> {
        self.by_id.get(id).copied()
    }
    pub fn array_named(&self, name: &str) -> Option<&'a MdArray> {
        self.arrays_by_name.get(name).copied()
    }
    pub fn array_of_member(&self, kname: &str) -> Option<&'a MdArray> {
        self.array_of_member.get(kname).copied()
    }
    pub fn pv(&self, kname: &str) -> Option<&'a Pv> {
        self.pvs.get(kname).copied()
    }
    pub fn pvs_of(&self, vg: &str) -> impl Iterator<Item = &'a Pv> + use<'_, 'a> {
        self.pvs_of
            .get(vg)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
    }
    pub fn vg(&self, name: &str) -> Option<&'a Vg> {
        self.vgs.get(name).copied()
    }
    pub fn lv(&self, vg: &str, name: &str) -> Option<&'a Lv> {
        self.lvs.get(&(vg, name)).copied()
    }
}
