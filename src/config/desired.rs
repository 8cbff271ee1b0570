//! The validated desired state: every reference resolved, every size in bytes.

use super::raw::MdMetadata;
use super::size::LvSize;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Desired {
    pub host: Option<String>,
    pub disks: BTreeMap<String, DiskSpec>,
    pub mirrors: BTreeMap<String, MirrorSpec>,
    pub volume_groups: BTreeMap<String, VgSpec>,
    /// Lints of `hyraid status` the file accepts, by object (`lv vg0/nextcloud`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accept: BTreeMap<String, Vec<String>>,
    /// The release's own scheduled check: kept, or switched off by hyraid.
    #[serde(default, skip_serializing_if = "is_keep")]
    pub check_distribution: super::monitoring::Distribution,
    /// Where alerts go; None: the file has no `alerts:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<super::monitoring::AlertsSpec>,
    /// The disks the machine boots from; None: the file has no `boot:` (hyraid leaves the boot
    /// loader alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<super::boot::BootSpec>,
}

fn is_keep(d: &super::monitoring::Distribution) -> bool {
    *d == super::monitoring::Distribution::Keep
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DiskSpec {
    pub name: String,
    /// Name under /dev/disk/by-id.
    pub id: Option<String>,
    pub serial: Option<String>,
    pub write_cache: Option<bool>,
    /// `Some(true)` = declared rotational (hdd), `Some(false)` = declared SSD.
    pub rotational_override: Option<bool>,
    /// GPT partitions, in order; referred to as `disk:partition`.
    #[serde(default)]
    pub partitions: Vec<PartitionSpec>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PartitionSpec {
    /// GPT partition name (PARTLABEL).
    pub name: String,
    /// Bytes; None = the rest of the disk (last partition only).
    pub size: Option<u64>,
    /// The file's data, or a boot partition hyraid lays out from `boot:`.
    #[serde(default, skip_serializing_if = "super::boot::PartitionRole::is_data")]
    pub role: super::boot::PartitionRole,
}

/// `disk:partition` → (disk, Some(partition)); `disk` → (disk, None).
pub fn split_device(name: &str) -> (&str, Option<&str>) {
    match name.split_once(':') {
        Some((d, p)) => (d, Some(p)),
        None => (name, None),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum WriteMostly {
    Auto,
    List(Vec<String>),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MirrorSpec {
    pub name: String,
    /// Disk names, in the order written.
    pub members: Vec<String>,
    pub write_mostly: WriteMostly,
    /// Bitmap chunk in bytes; None = no bitmap.
    pub bitmap_chunk: Option<u64>,
    pub write_behind: u32,
    pub absent: bool,
    /// An array that exists, adopted by its UUID; None = the array /dev/md/NAME.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<Adopted>,
    /// Superblock format an array is created with (and observed to have).
    #[serde(default, skip_serializing_if = "MdMetadata::is_default")]
    pub metadata: MdMetadata,
    /// The filesystem on the array itself (no LVM on it); None = hyraid leaves its content alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<super::filesystem::FilesystemSpec>,
    /// LUKS2 between the array and its PV; None = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<super::encryption::EncryptionSpec>,
    /// hyraid's scheduled check of the array; None = none (no `check:` for it in the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<super::monitoring::CheckSpec>,
}

/// Characters of the name field of an md v1 superblock (`set_name[32]`, NUL-terminated).
pub const MD_NAME_MAX: usize = 31;

/// Why `HOST:NAME` does not fit an md superblock's name field, if it does not.
pub fn superblock_name_too_long(host: &str, name: &str) -> Option<String> {
    let len = host.len() + 1 + name.len();
    (len > MD_NAME_MAX).then(|| {
        format!(
            "the array's name in its superblock would be `{host}:{name}`, {len} characters; mdadm keeps at most {MD_NAME_MAX} (homehost:name), and beyond that writes the name without the host, so the array would not be this host's"
        )
    })
}

/// A mirror adopted by UUID (`uuid:` and `device:` in the file): an array built by hand as
/// /dev/mdN, without a /dev/md/NAME link. It is matched by its UUID, and every command names it
/// by `device`, so nothing is renamed under a mounted filesystem.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Adopted {
    /// mdadm's form: `xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx`, lowercase.
    pub uuid: String,
    /// The kernel device, `/dev/mdN`.
    pub device: String,
}

impl MirrorSpec {
    /// The path mdadm is given for this mirror: /dev/md/NAME, or the adopted array's device.
    pub fn md_path(&self) -> String {
        match &self.adopted {
            Some(a) => a.device.clone(),
            None => format!("/dev/md/{}", self.name),
        }
    }
    /// The device its PV is made on: the opened LUKS device when it is encrypted, else the array.
    pub fn pv_path(&self) -> String {
        match &self.encryption {
            Some(e) => e.mapper_path(),
            None => self.md_path(),
        }
    }
    /// The device of an adopted mirror (steps carry it; None = /dev/md/NAME).
    pub fn md_device(&self) -> Option<String> {
        self.adopted.as_ref().map(|a| a.device.clone())
    }
    /// Write-mostly the wrong way round: in a mirror of fast and slow members, every fast member
    /// is listed write-mostly, so md serves reads from the slow ones. `rotational` gives a
    /// member's media (None: not known). The fast members when that is so; None when it is not,
    /// or when a member's media is not known.
    pub fn inverted_write_mostly(
        &self,
        rotational: impl Fn(&str) -> Option<bool>,
    ) -> Option<Vec<String>> {
        let WriteMostly::List(wm) = &self.write_mostly else {
            return None;
        };
        let media: Vec<(&String, bool)> = self
            .members
            .iter()
            .map(|n| rotational(n).map(|r| (n, r)))
            .collect::<Option<_>>()?;
        let fast: Vec<String> = media
            .iter()
            .filter(|(_, rot)| !rot)
            .map(|(n, _)| (*n).clone())
            .collect();
        let slow = media.iter().any(|(_, rot)| *rot);
        (slow && !fast.is_empty() && fast.iter().all(|n| wm.contains(n))).then_some(fast)
    }
}

/// A reference to a block device hyraid manages: a mirror (`/dev/md/NAME`) or a whole disk.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(tag = "kind", content = "name", rename_all = "lowercase")]
pub enum DeviceRef {
    Mirror(String),
    Disk(String),
}

impl DeviceRef {
    pub fn name(&self) -> &str {
        match self {
            DeviceRef::Mirror(n) | DeviceRef::Disk(n) => n,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VgSpec {
    pub name: String,
    pub pvs: Vec<DeviceRef>,
    pub lvs: BTreeMap<String, LvSpec>,
    pub absent: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LvSpec {
    pub name: String,
    pub size: LvSize,
    /// Placement; None = anywhere in the VG.
    pub pvs: Option<Vec<DeviceRef>>,
    pub stripes: Option<u32>,
    /// Stripe size in bytes (`lvcreate -I`); None = LVM's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_size: Option<u64>,
    pub writecache: Option<WritecacheSpec>,
    /// dm-cache (lvmcache); never together with `writecache`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheSpec>,
    /// The filesystem on the LV; None = hyraid leaves its content alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<super::filesystem::FilesystemSpec>,
    /// LUKS2 between the LV and its filesystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<super::encryption::EncryptionSpec>,
    pub absent: bool,
    /// LVM tags the LV is created with: never from a file (hyraid's own scratch LV of a tune
    /// run carries `hyraid_tune`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A dm-cache on a cache volume of its own (`{lv}_cache`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CacheSpec {
    pub mode: crate::config::raw::CacheMode,
    pub size: u64,
    pub pvs: Vec<DeviceRef>,
}

/// Name of the cache volume hyraid creates for an LV's dm-cache.
pub fn dm_cachevol_name(lv: &str) -> String {
    format!("{lv}_cache")
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WritecacheSpec {
    pub size: u64,
    pub pvs: Vec<DeviceRef>,
    /// Settings in key order, values as LVM takes them.
    pub settings: BTreeMap<String, String>,
}

impl WritecacheSpec {
    /// The `--cachesettings` argument: `k=v k2=v2`.
    pub fn settings_arg(&self) -> String {
        self.settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Name of the cache volume hyraid creates for an LV's writecache.
pub fn cachevol_name(lv: &str) -> String {
    format!("{lv}_wc")
}

/// LVM tag on every cache volume hyraid creates: only LVs carrying it are ever cleaned up.
pub const CACHEVOL_TAG: &str = "hyraid_cachevol";

/// The tag of the scratch LV a `hyraid tune --scratch` run makes (named [`TUNE_LV`]); one left
/// by a run that did not end is removed by the next apply (it holds only fio's test data).
pub const TUNE_TAG: &str = "hyraid_tune";
/// The name of a tune run's scratch LV.
pub const TUNE_LV: &str = "hyraid-tune";

/// The lints a file may accept (`accept:`, by object): layouts the field warns about that a user
/// may have chosen with open eyes. An accepted one is shown as accepted (info) and no longer
/// makes status, or the drift unit, fail. Drift (what `hyraid apply` corrects) and health are
/// never accepted.
pub const ACCEPTABLE_LINTS: &[(&str, &str)] = &[
    (
        "hdd-not-write-mostly",
        "a rotational member is not write-mostly in a mirror with an SSD",
    ),
    (
        "write-behind-without-write-mostly",
        "write-behind is set but no member is write-mostly",
    ),
    ("no-bitmap", "no write-intent bitmap"),
    ("small-bitmap-chunk", "a bitmap chunk smaller than advised"),
    (
        "writecache-not-redundant",
        "a writecache on a device without redundancy",
    ),
    (
        "dm-cache-not-redundant",
        "a dm-cache in writeback on a device without redundancy",
    ),
    (
        "cache-not-faster",
        "a writecache or dm-cache on media no faster than the LV's (refused by the plan unless accepted)",
    ),
    (
        "plaintext-cache",
        "a writecache or dm-cache on an unencrypted device in front of an LV on encrypted mirrors",
    ),
    (
        "never-checked",
        "a mirror never checked to the end: its write-mostly HDD never read",
    ),
    (
        "check-overdue",
        "a mirror's last completed check is older than its `check.overdue_after`",
    ),
    (
        "no-scheduled-check",
        "no schedule checks the mirror (neither hyraid's nor the release's)",
    ),
    (
        "two-check-schedules",
        "both hyraid's and the release's schedule check the mirror",
    ),
    (
        "no-smart",
        "smartctl is not installed: the drives' health is not read",
    ),
    (
        "drive-reallocated",
        "a drive has reallocated sectors or grown defects (not growing)",
    ),
    (
        "drive-worn",
        "a flash drive past 90% of its rated endurance",
    ),
    (
        "boots-from-one-disk",
        "a mirrored system whose disks do not all have an EFI system partition",
    ),
    ("esp-on-md", "an EFI system partition on an md array"),
    (
        "esp-mount-stops-boot",
        "/boot/efi mounted at boot without nofail on a mirrored system",
    ),
];
