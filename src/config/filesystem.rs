//! A filesystem on an LV: its type, label, mount point and mount options, as written in the file
//! (`filesystem:` under an LV) and as resolved.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A filesystem hyraid creates (or adopts) on an LV, listed in /etc/fstab and mounted.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFilesystem {
    /// `ext4` or `xfs`. A different type than the LV carries is a re-creation (needs --allow-destroy).
    #[serde(rename = "type")]
    pub fstype: FsType,
    /// Filesystem label (ext4: 16 bytes at most, xfs: 12), set at creation and changed in place
    /// when the file changes it (a mounted xfs is unmounted for the moment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Absolute mount point: listed in hyraid's block of /etc/fstab (by UUID) and mounted by apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<String>,
    /// Mount options for the fstab line (e.g. `[noatime]`); absent = `defaults`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// The filesystem types hyraid makes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, PartialOrd, Ord,
)]
#[serde(rename_all = "lowercase")]
pub enum FsType {
    Ext4,
    Xfs,
}

impl FsType {
    /// As blkid, lsblk and fstab spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            FsType::Ext4 => "ext4",
            FsType::Xfs => "xfs",
        }
    }
    /// Longest label the type stores (ext4: `s_volume_name[16]`, xfs: `sb_fname[12]`).
    pub fn label_max(self) -> usize {
        match self {
            FsType::Ext4 => 16,
            FsType::Xfs => 12,
        }
    }
    /// fstab's sixth field: ext4 is checked at boot after the root (2); xfs has no boot-time
    /// check (`fsck.xfs` does nothing), so 0.
    pub fn fsck_pass(self) -> u8 {
        match self {
            FsType::Ext4 => 2,
            FsType::Xfs => 0,
        }
    }
}

/// The validated filesystem of an LV.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FilesystemSpec {
    pub fstype: FsType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

impl FilesystemSpec {
    /// fstab's fourth field.
    pub fn options_field(&self) -> String {
        if self.options.is_empty() {
            "defaults".into()
        } else {
            self.options.join(",")
        }
    }
}

/// Why a filesystem of the file is not acceptable, as (key, message, hint); empty when it is.
pub fn check(fs: &RawFilesystem) -> Vec<(String, String, Option<String>)> {
    let mut errs = Vec::new();
    if let Some(l) = &fs.label {
        let max = fs.fstype.label_max();
        if l.len() > max {
            errs.push((
                "label".into(),
                format!(
                    "label `{l}` is {} bytes; {} keeps at most {max}",
                    l.len(),
                    fs.fstype.as_str()
                ),
                Some(format!("use a label of {max} bytes or fewer")),
            ));
        } else if l.is_empty() || !l.chars().all(|c| c.is_ascii_graphic()) {
            errs.push((
                "label".into(),
                format!("label `{l}` must be printable ASCII without spaces"),
                Some("use letters, digits, `-`, `_` or `.`".into()),
            ));
        }
    }
    if let Some(m) = &fs.mount {
        let bad = !m.starts_with('/')
            || m.len() > 1 && m.ends_with('/')
            || m.split('/').any(|p| p == ".." || p == ".")
            || !m.chars().all(|c| c.is_ascii_graphic() && c != '\\');
        if bad {
            errs.push((
                "mount".into(),
                format!("mount point `{m}` must be an absolute path without spaces, `.`, `..` or a trailing `/`"),
                Some("e.g. `/srv/nextcloud`".into()),
            ));
        } else if m == "/"
            || ["/boot", "/proc", "/sys", "/dev", "/run", "/usr", "/etc"]
                .iter()
                .any(|s| m == s)
        {
            errs.push((
                "mount".into(),
                format!(
                    "`{m}` belongs to the operating system; hyraid mounts data filesystems only"
                ),
                Some("mount it below /srv or /mnt".into()),
            ));
        }
    }
    for (i, o) in fs.options.iter().enumerate() {
        if o.is_empty() || o.contains(',') || !o.chars().all(|c| c.is_ascii_graphic()) {
            errs.push((
                format!("options/{i}"),
                format!("mount option `{o}` must be one word without spaces or commas"),
                Some("list each option on its own: `options: [noatime, nodev]`".into()),
            ));
        }
    }
    errs
}

impl From<&RawFilesystem> for FilesystemSpec {
    fn from(r: &RawFilesystem) -> Self {
        FilesystemSpec {
            fstype: r.fstype,
            label: r.label.clone(),
            mount: r.mount.clone(),
            options: r.options.clone(),
        }
    }
}
