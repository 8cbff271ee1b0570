//! The observed machine: what `hyraid observe` prints and what `--sim` loads.

pub use super::lvm_model::{Lv, LvCache, LvWritecache, Lvm, Pv, PvMove, Vg};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// Version of the snapshot format.
pub const SNAPSHOT_FORMAT: u32 = 1;

/// The JSON Schema of the snapshot format (`hyraid observe -o`, `hyraid sim new`, what `--sim`
/// loads), generated from the same types serde reads and writes.
pub fn snapshot_schema() -> serde_json::Value {
    let mut schema = super::json_schema::published(
        schemars::schema_for!(Observed),
        "hyraid-snapshot.schema.json",
    );
    schema["title"] = "hyraid snapshot (the observed state of a machine)".into();
    schema
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
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
    /// Block devices that are neither disks, partitions, md arrays nor LVM volumes (dm-crypt,
    /// multipath, other device-mapper targets, loop, rom, …): observed and reported, never touched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_devices: Vec<OtherDevice>,
    /// Entries of /dev/md that are not links to an array that runs: a device node or file a
    /// failed mdadm left, a link to an array that is gone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dev_md_strays: Vec<DevMdStray>,
    /// Filesystems on LVs, as lsblk reports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filesystems: Vec<super::filesystems::Filesystem>,
    /// The on-disk partition tables of the disks the file partitions (`partx --pairs`), by the
    /// disk's kernel name: what the kernel's view is compared with.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub partition_tables: BTreeMap<String, Vec<super::partx::TableEntry>>,
    /// Partition tools (growpart, partx) not installed, when the file partitions a disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_tools: Vec<String>,
    /// What smartctl says of each disk, by kernel name: a simulated machine's drives (the
    /// observer never reads SMART; `status` asks smartctl itself).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub smart: BTreeMap<String, super::smart::DriveHealth>,
    /// LUKS headers (lsblk's `crypto_LUKS`) and the mappings open on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub luks: Vec<super::luks::Luks>,
    /// The key files and header backups of a simulated machine, by path (the observer lists no
    /// files; it asks `stat` of those it needs, into `boot.secret_files`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, super::luks::SecretFile>,
    /// The key slots of a simulated machine's LUKS headers: header UUID → slot → the key file
    /// whose key it holds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub key_slots: BTreeMap<String, BTreeMap<u32, String>>,
}

/// A block device hyraid does not model, as lsblk reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OtherDevice {
    pub kname: String,
    /// lsblk TYPE: `crypt`, `dm`, `mpath`, `loop`, `rom`, …
    pub kind: String,
    pub maj_min: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fstype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mountpoint: Option<String>,
    /// lsblk NAME where it is not the kernel name (a device-mapper device's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The devices it is stacked on, by kernel name (empty for a top-level device such as loop).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<String>,
}

/// An entry of /dev/md that names no running array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DevMdStray {
    pub name: String,
    /// The link's target, when it is a symlink (to an array that is not there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Why it could not be read as a link (`Invalid argument` for a device node or a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl DevMdStray {
    pub fn describe(&self) -> String {
        match (&self.target, &self.error) {
            (Some(t), _) => format!(
                "/dev/md/{} is a link to {t}, which is not a running array",
                self.name
            ),
            (None, e) => format!(
                "/dev/md/{} is not a symlink ({}): a device node or file, as a failed mdadm command can leave",
                self.name,
                e.as_deref().unwrap_or("unreadable")
            ),
        }
    }
}

/// Files and tools that make arrays and drive caches come back after a reboot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
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
    /// Whether `cache_check` (thin-provisioning-tools, which lvm2 runs to activate a dm-cache LV)
    /// is installed; probed only when the file asks for a dm-cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_check: Option<bool>,
    /// /etc/fstab, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fstab: Option<String>,
    /// systemd runs (`/run/systemd/system` exists): it makes mount units from fstab, which
    /// `systemctl daemon-reload` regenerates after fstab changes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub systemd: bool,
    /// The firmware booted the machine through UEFI (/sys/firmware/efi exists): it loads the
    /// boot loader from an EFI system partition.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uefi: bool,
    /// LVM's devices file (/etc/lvm/devices/system.devices), when it exists: where LVM uses
    /// one (EL 9 and later), it sees only the devices listed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lvm_devices: Option<super::lvm_devices::LvmDevices>,
    /// What watches the mirrors: hyraid's check units and settings, the release's scheduled
    /// check, mail, md's monitor.
    #[serde(default, skip_serializing_if = "is_default")]
    pub monitoring: super::monitoring::Monitoring,
    /// /etc/crypttab, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crypttab: Option<String>,
    /// The key files and header backups the file names (and the key files of crypttab), by
    /// path, as `stat` shows them; a path not here does not exist.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secret_files: BTreeMap<String, super::luks::SecretFile>,
    /// The TPM2 devices systemd can use; asked only when the file enrols one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm2: Option<super::tpm2::Tpm2>,
    /// The boot loaders: grub, each EFI system partition, the firmware's boot entries.
    #[serde(default, skip_serializing_if = "is_default")]
    pub loaders: super::loader::Loaders,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

pub const MDADM_CONF_PATHS: [&str; 2] = ["/etc/mdadm.conf", "/etc/mdadm/mdadm.conf"];
/// Where lvm2 finds `cache_check` (lvm.conf `global/cache_check_executable`, merged /usr or not).
pub const CACHE_CHECK_PATHS: [&str; 2] = ["/usr/sbin/cache_check", "/sbin/cache_check"];
pub const WRITE_CACHE_RULE_PATH: &str = "/etc/udev/rules.d/61-hyraid-write-cache.rules";
/// Where the initramfs tools live (merged /usr; the first found wins).
pub const INITRAMFS_TOOLS: [(&str, &str); 4] = [
    ("update-initramfs", "/usr/sbin/update-initramfs"),
    ("update-initramfs", "/sbin/update-initramfs"),
    ("dracut", "/usr/bin/dracut"),
    ("dracut", "/usr/sbin/dracut"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DevKind {
    Disk,
    Part,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Partition type (lsblk PARTTYPE): a GPT type GUID, lowercase (an ESP is
    /// c12a7328-f81f-11d2-ba4b-00a0c93ec93b), or an MBR type (`0xef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parttype: Option<String>,
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
    /// Why probing for signatures gave no answer (wipefs failed or printed what it never
    /// prints): its content is unknown, and treated as data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_error: Option<String>,
}

impl BlockDevice {
    /// Nothing known on it: no holders, no partitions, no signature seen by lsblk or wipefs.
    pub fn signature_summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = &self.probe_error {
            out.push(format!("unknown content (probing failed: {e})"));
        }
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Signature {
    pub offset: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// For an md superblock: the array's UUID (lets a returning member be re-added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteCacheSource {
    /// /sys/block/X/device/scsi_disk/*/cache_type
    ScsiCacheType,
    /// `hdparm -W`
    Hdparm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WriteCacheState {
    /// None: the device does not report or support a switchable write cache.
    pub enabled: Option<bool>,
    pub source: WriteCacheSource,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Metadata kept outside md (`external:imsm` for a container, `external:/md127/0` for a
    /// volume in one, `external:ddf`); None for md's own superblocks (0.90, 1.x).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    /// md's own superblock format when it is not 1.2 (`1.0`, `1.1`, as /proc/mdstat's `super`
    /// names it); None for 1.2, the format hyraid creates by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superblock: Option<String>,
    /// Sectors found to differ by the last check (`mismatch_cnt`; md resets it when a check
    /// starts).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mismatch_cnt: u64,
    /// Where the next check starts (`sync_min`, sectors): 0, or where an interrupted check
    /// stopped. Read by `hyraid check`, not by the observer.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sync_min: u64,
    /// The array's own check and resync speed limit (`sync_speed_max`, KiB/s); None: md's
    /// system-wide one. Read by `hyraid check`, not by the observer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_speed_max: Option<u64>,
    /// An array that is not running, whose members' superblocks were read (`mdadm --examine`,
    /// `mdadm -X`): its `bitmap` and its members' write-mostly flags are theirs, which the
    /// array takes when it starts. False for a running array (sysfs says those).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub superblock_read: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The level of an array whose level nothing could tell.
pub const LEVEL_UNKNOWN: &str = "unknown";

impl MdArray {
    pub fn member(&self, kname: &str) -> Option<&MdMember> {
        self.members.iter().find(|m| m.kname == kname)
    }
    /// The superblock format: `1.2` unless observed otherwise.
    pub fn superblock_version(&self) -> &str {
        self.superblock.as_deref().unwrap_or("1.2")
    }
    /// Sectors a device of `sectors` offers this array's data when it joins, as mdadm 4.2 checks
    /// it (`avail_size1` on the superblock of a member: 1.1/1.2 keep the members' data offset;
    /// 1.0 keeps the 8 KiB superblock and the 4 KiB bad-block log at the end). None when the
    /// members' data offset is not known.
    pub fn join_avail_sectors(&self, sectors: u64) -> Option<u64> {
        if self.superblock_version() == "1.0" {
            return Some(sectors.saturating_sub(16 + 8));
        }
        let offset = self.members.iter().find_map(|m| m.data_offset)?;
        Some(sectors.saturating_sub(offset))
    }
    pub fn is_idle(&self) -> bool {
        self.sync_action == "idle"
    }
    /// `read-auto`: read-only until the first write (after boot or assembly).
    pub fn auto_read_only(&self) -> bool {
        self.array_state == "read-auto"
    }
    /// RAID1: what hyraid manages (a mirror).
    pub fn is_mirror(&self) -> bool {
        self.level == "raid1"
    }
    /// A container of external metadata (imsm, ddf): it holds disks, the volumes in it hold data.
    pub fn is_container(&self) -> bool {
        self.level == "container"
            || self
                .metadata
                .as_deref()
                .is_some_and(|m| m.starts_with("external:") && !m.contains('/'))
    }
    /// Levels where a write-intent bitmap shortens resyncs (never RAID0 or linear).
    pub fn bitmap_applies(&self) -> bool {
        matches!(
            self.level.as_str(),
            "raid1" | "raid4" | "raid5" | "raid6" | "raid10"
        )
    }
    /// How to name it to a person: `mirror NAME` for RAID1, else `array NAME (LEVEL)`.
    pub fn title(&self) -> String {
        let name = self
            .name
            .clone()
            .map(|n| format!("/dev/md/{n}"))
            .unwrap_or(format!("/dev/{}", self.kname));
        match (&self.name, self.is_mirror()) {
            (Some(n), true) => format!("mirror {n}"),
            (None, true) => format!("array {name}"),
            _ => format!("array {name} ({})", self.level),
        }
    }
}

/// Where an md bitmap lives. hyraid manages internal bitmaps only.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum BitmapKind {
    /// Next to the superblock on every member (sysfs `bitmap/location` `+8`, `-N`).
    #[default]
    Internal,
    /// In a file on some filesystem (`location` `file`; mdstat names the file).
    File,
    /// Present, but not in a way hyraid understands (an unexpected `location`).
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MdBitmap {
    /// Chunk size in bytes.
    pub chunk: u64,
    /// Maximum outstanding write-behind writes (sysfs bitmap/backlog).
    pub backlog: u32,
    #[serde(default, skip_serializing_if = "BitmapKind::is_internal")]
    pub kind: BitmapKind,
    /// The bitmap file, as /proc/mdstat names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl BitmapKind {
    pub fn is_internal(&self) -> bool {
        *self == BitmapKind::Internal
    }
}

impl MdBitmap {
    pub fn internal(chunk: u64, backlog: u32) -> MdBitmap {
        MdBitmap {
            chunk,
            backlog,
            kind: BitmapKind::Internal,
            file: None,
        }
    }
    /// `internal`, `file PATH` or `unknown`.
    pub fn describe(&self) -> String {
        match (self.kind, &self.file) {
            (BitmapKind::Internal, _) => "internal".into(),
            (BitmapKind::File, Some(f)) => format!("in the file {f}"),
            (BitmapKind::File, None) => "in a file".into(),
            (BitmapKind::Unknown, _) => "of a kind hyraid does not know".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MdMember {
    pub kname: String,
    /// Role in the array; None for spares and faulty members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// Words of sysfs dev-*/state: in_sync, write_mostly, faulty, spare, replacement, …
    pub state: Vec<String>,
    /// Where its data starts, in sectors (sysfs dev-*/offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_offset: Option<u64>,
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
                d.probe_error = None;
            } else if d.probe_error.is_some() {
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
        o.other_devices.sort_by(|a, b| a.kname.cmp(&b.kname));
        for d in o.other_devices.iter_mut() {
            d.parents.sort();
        }
        o.dev_md_strays.sort_by(|a, b| a.name.cmp(&b.name));
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
    /// Resolve a /dev/disk/by-id name to a device.
    pub fn by_id(&self, id: &str) -> Option<&BlockDevice> {
        self.block_devices
            .iter()
            .find(|d| d.by_id.iter().any(|i| i == id))
    }
}
