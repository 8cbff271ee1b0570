//! The file format as written by the user: serde + schemars types, nothing resolved yet.
//! These types are the single source of the JSON Schema (`hyraid schema`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One machine's hybrid storage, as desired.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "hyraid configuration")]
pub struct RawConfig {
    /// Format version of this file. Always 1.
    #[schemars(range(min = 1, max = 1))]
    #[serde(deserialize_with = "in_range::<_, 1, 1>")]
    pub version: u32,
    /// Optional guard: plan and apply refuse to run where the hostname differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Physical disks, by a name of your choice.
    #[serde(default)]
    pub disks: BTreeMap<String, RawDisk>,
    /// md RAID1 arrays, created as /dev/md/<name> (or adopted by `uuid`).
    #[serde(default)]
    pub mirrors: BTreeMap<String, RawMirror>,
    /// LVM volume groups and their logical volumes.
    #[serde(default)]
    pub volume_groups: BTreeMap<String, RawVolumeGroup>,
    /// Lints of `hyraid status` you have weighed and accept, by the object status names:
    /// `lv vg0/nextcloud: [writecache-not-redundant]`. An accepted lint is shown as accepted and
    /// no longer makes status (or the drift unit) fail. Only layout choices can be accepted:
    /// hdd-not-write-mostly, write-behind-without-write-mostly, no-bitmap, small-bitmap-chunk,
    /// writecache-not-redundant, dm-cache-not-redundant, cache-not-faster (a cache on media no
    /// faster than the LV's: refused by the plan unless accepted).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accept: BTreeMap<String, Vec<String>>,
    /// The scheduled check of every mirror (a mirror's own `check:` overrides it): md reads
    /// every member and compares the copies, the only time a write-mostly HDD is read at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<super::monitoring::RawCheckSettings>,
    /// Where hyraid sends what it finds: md's events, drift, a check's mismatches, drive health.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<super::monitoring::RawAlerts>,
    /// The disks the machine boots from: each gets its own EFI system partition (and a BIOS boot
    /// partition where `bios` is asked) in front of its `partitions:`, and the boot loader, so
    /// the box boots with any one of them dead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<super::boot::RawBoot>,
}

/// `present` (default) or `absent` (remove; needs --allow-destroy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum ObjectState {
    #[default]
    Present,
    Absent,
}

/// A disk, identified by a stable name: its /dev/disk/by-id entry and/or its serial number.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDisk {
    /// Name under /dev/disk/by-id (e.g. `ata-Samsung_SSD_870_QVO_2TB_S5VWNG0N123456A` or `wwn-0x5000c500a1b2c3d4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Serial number as lsblk reports it (SERIAL column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// The drive's own volatile write cache: `on` or `off`. Absent = leave as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<OnOff>,
    /// Override the kernel's rotational flag (virtio and some USB bridges report every disk rotational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<Media>,
    /// GPT partitions, created on a blank disk or added into free space; referred to as `disk:partition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Vec<RawPartition>>,
}

/// `on` / `off` (YAML booleans are accepted too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OnOff {
    Word(OnOffWord),
    Bool(bool),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnOffWord {
    On,
    Off,
}

impl OnOff {
    pub fn as_bool(self) -> bool {
        match self {
            OnOff::Word(OnOffWord::On) | OnOff::Bool(true) => true,
            OnOff::Word(OnOffWord::Off) | OnOff::Bool(false) => false,
        }
    }
}

/// Media kind, overriding /sys/block/*/queue/rotational.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Media {
    Ssd,
    Hdd,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPartition {
    pub name: String,
    pub size: RawSize,
}

/// A size: an integer number of bytes, or a string with a unit (`1TiB`, `500GB`, `64MiB`).
/// Logical volumes also take `N%FREE` and `N%VG`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawSize {
    Bytes(u64),
    Text(String),
}

/// An md RAID1 mirror.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMirror {
    /// Adopt an array that exists by its UUID (`mdadm --detail` shows it), e.g. one made by hand as /dev/md0 without a name; needs `device`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The kernel device of an array adopted by `uuid` (`/dev/md0`): every command addresses it by this name, and it is never renamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Member disks (by disk name), two or more.
    pub members: Vec<String>,
    /// `auto` (default: every rotational member when a non-rotational one exists), or an explicit list of members; `[]` for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_mostly: Option<RawWriteMostly>,
    /// Write-intent bitmap: `{ chunk: 64MiB }` (default) or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitmap: Option<RawBitmap>,
    /// Maximum outstanding write-behind writes to write-mostly members, 0..16383 (needs a bitmap and a write-mostly member).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_in_range::<_, 0, 16383>"
    )]
    #[schemars(range(max = 16383))]
    pub write_behind: Option<u32>,
    /// Optional filesystem (ext4 or xfs) made on the array itself, without LVM: listed in /etc/fstab and mounted. A mirror with one is not a PV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<super::filesystem::RawFilesystem>,
    /// Optional LUKS2 encryption between the array and its PV: `{ key_file: /etc/hyraid/keys/NAME.key }`. The array is formatted only while blank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<super::encryption::RawEncryption>,
    /// md superblock format of a new array: `"1.2"` (default: 4 KiB from the start) or `"1.0"` (at the end: each member reads as the filesystem itself, as a boot loader needs for /boot). Quoted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MdMetadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ObjectState>,
    /// This mirror's scheduled check: `off`, or settings over the file's `check:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<super::monitoring::RawCheck>,
}

/// An md v1 superblock format hyraid creates.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, Default, PartialOrd, Ord,
)]
pub enum MdMetadata {
    /// Superblock at the end of each member, data from sector 0.
    #[serde(rename = "1.0")]
    V1_0,
    /// Superblock 4 KiB from the start, data after an offset mdadm chooses.
    #[default]
    #[serde(rename = "1.2")]
    V1_2,
}

impl MdMetadata {
    /// As mdadm writes it (`--metadata=`, mdadm.conf, /proc/mdstat's `super`).
    pub fn as_str(self) -> &'static str {
        match self {
            MdMetadata::V1_0 => "1.0",
            MdMetadata::V1_2 => "1.2",
        }
    }
    pub fn is_default(&self) -> bool {
        *self == MdMetadata::V1_2
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawWriteMostly {
    Auto(AutoWord),
    List(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AutoWord {
    Auto,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawBitmap {
    None(NoneWord),
    Internal(RawBitmapInternal),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NoneWord {
    None,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawBitmapInternal {
    /// Bitmap chunk size, a power of two (default 64MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<RawSize>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawVolumeGroup {
    /// Physical volumes: mirror names or disk names.
    pub pvs: Vec<String>,
    #[serde(default)]
    pub lvs: BTreeMap<String, RawLogicalVolume>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ObjectState>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLogicalVolume {
    /// Bytes with a unit (`1TiB`), `N%FREE` or `N%VG`. Grown with its filesystem; shrunk only with --allow-destroy (an ext4 first; never an xfs).
    pub size: RawSize,
    /// Optional placement: a subset of the VG's PVs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pvs: Option<Vec<String>>,
    /// Number of stripes (e.g. 2 over two mirrors = RAID 1+0).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_in_range::<_, 1, 128>"
    )]
    #[schemars(range(min = 1, max = 128))]
    pub stripes: Option<u32>,
    /// Stripe size (`lvcreate -I`), with `stripes` of 2 or more: a power of two from 4KiB up to the VG's extent size (LVM's default 64KiB when absent). Fixed at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_size: Option<RawSize>,
    /// Optional dm-writecache on a fast PV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writecache: Option<RawWritecache>,
    /// Optional dm-cache (lvmcache) on a fast PV; an LV has a writecache or a cache, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<RawCache>,
    /// Optional filesystem (ext4 or xfs), listed in /etc/fstab and mounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<super::filesystem::RawFilesystem>,
    /// Optional LUKS2 encryption between the LV and its filesystem: `{ key_file: /etc/hyraid/keys/NAME.key }` (mapping name default `VG-LV_crypt`). The LV is formatted only while blank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<super::encryption::RawEncryption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ObjectState>,
}

/// A dm-cache on a cache volume (`lvconvert --type cache --cachevol`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCache {
    /// `writethrough` (default: every write reaches the LV's PVs before it completes) or `writeback` (writes complete on the cache; on a non-redundant PV the plan marks it data-at-risk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<CacheMode>,
    /// Size of the cache volume.
    pub size: RawSize,
    /// PVs of the same VG that hold the cache volume (fast ones; redundant ones for writeback).
    pub pvs: Vec<String>,
}

/// How dm-cache caches writes (lvm2 `--cachemode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    #[default]
    Writethrough,
    Writeback,
}

impl CacheMode {
    /// The word lvm2 takes and reports (`cache_mode`).
    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::Writethrough => "writethrough",
            CacheMode::Writeback => "writeback",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWritecache {
    /// Size of the cache volume.
    pub size: RawSize,
    /// PVs of the same VG that hold the cache volume (fast ones; redundant ones for safety).
    pub pvs: Vec<String>,
    /// dm-writecache settings passed to `--cachesettings` (lvm2 2.03.16 keys).
    #[serde(default)]
    pub settings: BTreeMap<String, RawSettingValue>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawSettingValue {
    Int(u64),
    Text(String),
}

impl RawSettingValue {
    pub fn render(&self) -> String {
        match self {
            RawSettingValue::Int(n) => n.to_string(),
            RawSettingValue::Text(s) => s.clone(),
        }
    }
}

/// serde's half of a `#[schemars(range(..))]`: a number outside the range does not read, so that
/// a file serde reads is one the schema accepts (`load_str` runs the schema only to explain a
/// file that does not read; `config::tests` pins the two halves together).
fn in_range<'de, D: serde::Deserializer<'de>, const MIN: u32, const MAX: u32>(
    d: D,
) -> Result<u32, D::Error> {
    let v = u32::deserialize(d)?;
    if (MIN..=MAX).contains(&v) {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "{v} is not in {MIN}..={MAX}"
        )))
    }
}

fn opt_in_range<'de, D: serde::Deserializer<'de>, const MIN: u32, const MAX: u32>(
    d: D,
) -> Result<Option<u32>, D::Error> {
    match Option::<u32>::deserialize(d)? {
        None => Ok(None),
        Some(v) if (MIN..=MAX).contains(&v) => Ok(Some(v)),
        Some(v) => Err(serde::de::Error::custom(format!(
            "{v} is not in {MIN}..={MAX}"
        ))),
    }
}
