//! Steps on the filesystem of an LV or a mirror: make it, mount it, grow it after its LV, shrink it with
//! its LV.

use super::{Command, StepKind};
use crate::config::filesystem::FsType;
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

fn lv_address(vg: &str, lv: &str) -> Address {
    Address::LogicalVolume {
        vg: vg.to_string(),
        lv: lv.to_string(),
    }
}

/// The device a filesystem sits on: an LV, or a mirror used without LVM. Flattened into the
/// steps, so an LV's step keeps its `vg` and `lv` fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FsOn {
    Lv {
        vg: String,
        lv: String,
        /// The LUKS mapping between the LV and the filesystem (`/dev/mapper/NAME`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        crypt: Option<String>,
    },
    Mirror {
        mirror: String,
        /// The device of an adopted array (`/dev/md0`); None = /dev/md/NAME.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
}

impl FsOn {
    /// The block device the filesystem tools are given.
    pub fn path(&self) -> String {
        match self {
            FsOn::Lv { crypt: Some(c), .. } => format!("/dev/mapper/{c}"),
            FsOn::Lv { vg, lv, .. } => format!("/dev/{vg}/{lv}"),
            FsOn::Mirror { mirror, device } => device
                .clone()
                .unwrap_or_else(|| format!("/dev/md/{mirror}")),
        }
    }
    pub fn address(&self) -> Address {
        match self {
            FsOn::Lv { vg, lv, .. } => lv_address(vg, lv),
            FsOn::Mirror { mirror, .. } => Address::Mirror(mirror.clone()),
        }
    }
    /// What the filesystem grows to the size of: `LV` or `array`.
    /// Whether this is the LV `vg`/`lv`.
    pub fn is_lv(&self, vg: &str, lv: &str) -> bool {
        matches!(self, FsOn::Lv { vg: v, lv: l, .. } if v == vg && l == lv)
    }

    pub fn noun(&self) -> &'static str {
        match self {
            FsOn::Lv { .. } => "LV",
            FsOn::Mirror { .. } => "array",
        }
    }
}

/// The block size hyraid gives every filesystem it makes (xfs: also its sector size), and the
/// writecache block size above one: mke2fs would choose 1 KiB on an LV under 512 MiB, mkfs.xfs
/// a 512-byte sector on a 512-byte drive, and a writecache block larger than the filesystem's
/// may corrupt it (lvconvert's warning).
pub const FS_BLOCK_SIZE: u64 = 4096;

/// Make a filesystem on an LV or a mirror, with the UUID the plan chose (so the fstab line is known before).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MakeFilesystem {
    #[serde(flatten)]
    pub on: FsOn,
    pub fstype: FsType,
    pub uuid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// What the LV carries now, overwritten (`-F` / `-f`); None on a blank LV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// Where the filesystem it replaces is mounted: unmounted and its signatures wiped first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmount: Option<String>,
}

impl StepKind for MakeFilesystem {
    fn commands(&self) -> Vec<Command> {
        let dev = self.on.path();
        let mut a: Vec<String> = match self.fstype {
            FsType::Ext4 => vec![
                "mkfs.ext4".into(),
                "-b".into(),
                FS_BLOCK_SIZE.to_string(),
                "-U".into(),
                self.uuid.clone(),
            ],
            FsType::Xfs => vec![
                "mkfs.xfs".into(),
                "-b".into(),
                format!("size={FS_BLOCK_SIZE}"),
                // The sector size is what libblkid reports as an xfs's BLOCK_SIZE, which
                // lvconvert matches the writecache block to: 4 KiB on any drive.
                "-s".into(),
                format!("size={FS_BLOCK_SIZE}"),
                "-m".into(),
                format!("uuid={}", self.uuid),
            ],
        };
        if let Some(l) = &self.label {
            a.push("-L".into());
            a.push(l.clone());
        }
        if self.replaces.is_some() {
            a.push(
                match self.fstype {
                    FsType::Ext4 => "-F",
                    FsType::Xfs => "-f",
                }
                .into(),
            );
        }
        a.push(dev.clone());
        let mut v = Vec::new();
        if let Some(m) = &self.unmount {
            v.push(Command::run(&["umount", m]));
            v.push(Command::run(&["wipefs", "--all", &dev]));
        }
        v.push(Command::run_owned(a));
        // udev learns of the new filesystem from mkfs closing the device, in its own time: an
        // observation right after (apply's verify, the next step's) may read udev's database
        // (lsblk's FSTYPE and UUID) before it has, and see the LV blank. After a wipefs, udev
        // may even merge the two closes into one event or none. A change event for the device,
        // waited for, makes udev probe the new filesystem before anything reads it.
        v.push(Command::run(&[
            "udevadm",
            "trigger",
            "--action=change",
            "--settle",
            &dev,
        ]));
        v
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!(
            "make {} filesystem, UUID {}{}{}{}",
            self.fstype.as_str(),
            self.uuid,
            self.label
                .as_ref()
                .map(|l| format!(", label {l}"))
                .unwrap_or_default(),
            self.replaces
                .as_ref()
                .map(|r| format!(", over the {r} on it"))
                .unwrap_or_default(),
            self.unmount
                .as_ref()
                .map(|m| format!(" (unmounted from {m} and wiped first)"))
                .unwrap_or_default()
        )
    }
}

/// Mount the filesystem of an LV or a mirror at the mount point of its fstab line (made first if missing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountFilesystem {
    #[serde(flatten)]
    pub on: FsOn,
    pub mountpoint: String,
    /// systemd runs: its mount units are regenerated from fstab first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub systemd: bool,
}

impl StepKind for MountFilesystem {
    fn commands(&self) -> Vec<Command> {
        let mut v = vec![Command::run(&["mkdir", "-p", &self.mountpoint])];
        if self.systemd {
            v.push(Command::run(&["systemctl", "daemon-reload"]));
        }
        v.push(Command::run(&["mount", &self.mountpoint]));
        v
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!("mount at {}", self.mountpoint)
    }
}

/// Grow the filesystem of an LV (or a mirror) to the size of its device, after the lvextend: ext4 with resize2fs
/// (online when mounted; unmounted after `e2fsck -f -p`, which resize2fs demands), xfs with
/// xfs_growfs on its mount point (xfs grows only mounted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrowFilesystem {
    #[serde(flatten)]
    pub on: FsOn,
    pub fstype: FsType,
    /// Where it is mounted when the step runs; None = not mounted (ext4 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mountpoint: Option<String>,
}

impl StepKind for GrowFilesystem {
    fn commands(&self) -> Vec<Command> {
        let dev = self.on.path();
        match (self.fstype, &self.mountpoint) {
            (FsType::Xfs, m) => vec![Command::run(&["xfs_growfs", m.as_deref().unwrap_or(&dev)])],
            (FsType::Ext4, Some(_)) => vec![Command::run(&["resize2fs", &dev])],
            (FsType::Ext4, None) => vec![
                Command::run(&["e2fsck", "-f", "-p", &dev]),
                Command::run(&["resize2fs", &dev]),
            ],
        }
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        self.on.address()
    }
    fn summary(&self) -> String {
        format!(
            "grow the {} filesystem to the {}'s size{}",
            self.fstype.as_str(),
            self.on.noun(),
            if self.mountpoint.is_some() {
                ", online"
            } else {
                ", unmounted"
            }
        )
    }
}

/// Make an LV smaller: its ext4 first (unmounted, checked, resized to exactly the new size),
/// then the LV to that size. Without a filesystem, the data past the new end is lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShrinkLv {
    pub vg: String,
    pub lv: String,
    /// Bytes, a whole number of extents.
    pub size: u64,
    /// The LV carries an ext4 that is shrunk first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ext4: bool,
    /// Where the ext4 is mounted now: unmounted first (ext4 shrinks only offline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmount: Option<String>,
}

impl StepKind for ShrinkLv {
    fn commands(&self) -> Vec<Command> {
        let dev = format!("/dev/{}/{}", self.vg, self.lv);
        let mut v = Vec::new();
        if let Some(m) = &self.unmount {
            v.push(Command::run(&["umount", m]));
        }
        if self.ext4 {
            // -p: fix only what is safe to fix unattended; anything else stops apply here.
            v.push(Command::run(&["e2fsck", "-f", "-p", &dev]));
            v.push(Command::run(&[
                "resize2fs",
                &dev,
                &format!("{}K", self.size >> 10),
            ]));
        }
        v.push(Command::run_owned(vec![
            "lvreduce".into(),
            "--yes".into(),
            "-L".into(),
            format!("{}b", self.size),
            format!("{}/{}", self.vg, self.lv),
        ]));
        v
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        use crate::config::size::human;
        format!(
            "shrink {}to {} bytes ({})",
            if self.ext4 {
                "the ext4 and the LV "
            } else {
                "LV "
            },
            self.size,
            human(self.size)
        )
    }
}
