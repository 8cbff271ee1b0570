//! Filesystems on LVs and on md arrays: what lsblk reports of each device (type, UUID, mount
//! point).

use super::lsblk::Node;
use super::model::Lvm;
use serde::{Deserialize, Serialize};

/// Where the static mount table lives.
pub const FSTAB_PATH: &str = "/etc/fstab";
/// Exists when systemd is the running init (sd_booted(3)).
pub const SYSTEMD_PATH: &str = "/run/systemd/system";
/// Exists when the firmware booted the machine through UEFI.
pub const EFI_FIRMWARE_PATH: &str = "/sys/firmware/efi";

/// A filesystem (or any signature udev's blkid found) on an LV, or on an md array (`md`; its
/// `vg` and `lv` are then empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Filesystem {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vg: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub lv: String,
    /// On the md array `kname`, not on an LV.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub md: bool,
    /// Kernel name of the device (`dm-3`, `md127`).
    pub kname: String,
    /// lsblk FSTYPE: `ext4`, `xfs`, or another signature (`LVM2_member`, `swap`, …).
    pub fstype: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mountpoint: Option<String>,
    /// Bytes the filesystem spans (ext4: dumpe2fs's block count x block size; xfs: xfs_info's
    /// data blocks x bsize); probed only for the LVs and mirrors the file gives a filesystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The smallest size an ext4 shrinks to (`resize2fs -P`: its estimate in blocks x the block
    /// size); probed only for an LV the file makes smaller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size: Option<u64>,
    /// The filesystem's label (ext4: dumpe2fs's `Filesystem volume name`; xfs: `label = "…"` of
    /// xfs_admin -l); probed only for the LVs and mirrors the file gives a label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The block size libblkid reports for it (BLOCK_SIZE: an ext4's block size, dumpe2fs's
    /// `Block size`; an xfs's sector size, xfs_info's first `sectsz`), which a writecache's block
    /// may not exceed (lvconvert refuses); probed with the size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    /// Inside the open LUKS mapping /dev/mapper/NAME (an encrypted LV's filesystem: `vg` and
    /// `lv` name the LV under it); `kname` is the mapping's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapper: Option<String>,
}

/// The device-mapper name of an LV: `vg-lv`, each dash inside a name doubled.
pub fn dm_name(vg: &str, lv: &str) -> String {
    format!("{}-{}", vg.replace('-', "--"), lv.replace('-', "--"))
}

/// The visible LVs (`VG/LV`) of the kinds hyraid makes filesystems on (linear, striped, with a
/// writecache or dm-cache) that lsblk shows a node of, wherever it stands in the tree.
pub fn lv_nodes(nodes: &[Node], lvm: &Lvm) -> std::collections::BTreeSet<String> {
    lvm.lvs
        .iter()
        .filter(|l| !l.hidden)
        .filter(|l| {
            matches!(
                l.segtype.as_str(),
                "linear" | "striped" | "writecache" | "cache" | ""
            )
        })
        .filter(|l| {
            let name = dm_name(&l.vg, &l.name);
            nodes.iter().any(|n| n.kind == "lvm" && n.name == name)
        })
        .map(|l| format!("{}/{}", l.vg, l.name))
        .collect()
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
                md: false,
                kname: n.kname.clone(),
                fstype: signature(n)?,
                uuid: n.uuid.clone(),
                mountpoint: n.mountpoint.clone(),
                size: None,
                min_size: None,
                label: None,
                block_size: None,
                mapper: None,
            })
        })
        .collect();
    out.extend(in_mappings(nodes, lvm));
    out.sort_by(|a, b| (&a.vg, &a.lv, &a.mapper).cmp(&(&b.vg, &b.lv, &b.mapper)));
    out
}

/// What lsblk says a device carries: its FSTYPE, else its partition table (`gpt partition
/// table`): a device with either is not blank.
pub fn signature(n: &Node) -> Option<String> {
    n.fstype
        .clone()
        .or_else(|| n.pttype.as_ref().map(|p| format!("{p} partition table")))
}

/// What is inside open LUKS mappings (lsblk TYPE `crypt`): a filesystem or any other signature,
/// each with the LV under it when it is on one; not an encrypted mirror's PV label (LVM's).
pub fn in_mappings(nodes: &[Node], lvm: &Lvm) -> Vec<Filesystem> {
    nodes
        .iter()
        .filter(|n| n.kind == "crypt")
        .filter_map(|n| {
            let under = nodes
                .iter()
                .find(|p| p.kind == "lvm" && n.parents.contains(&p.kname))
                .and_then(|p| {
                    lvm.lvs
                        .iter()
                        .find(|l| !l.hidden && dm_name(&l.vg, &l.name) == p.name)
                });
            let fstype = signature(n)?;
            if fstype == "LVM2_member" && under.is_none() {
                return None;
            }
            Some(Filesystem {
                vg: under.map(|l| l.vg.clone()).unwrap_or_default(),
                lv: under.map(|l| l.name.clone()).unwrap_or_default(),
                md: false,
                kname: n.kname.clone(),
                fstype,
                uuid: n.uuid.clone(),
                mountpoint: n.mountpoint.clone(),
                size: None,
                min_size: None,
                label: None,
                block_size: None,
                mapper: Some(n.name.clone()),
            })
        })
        .collect()
}

impl Filesystem {
    /// What the md array `kname` carries by its type alone (no UUID, mount or size known): a
    /// filesystem, or another signature such as a PV's label.
    pub fn on_array(kname: &str, fstype: String) -> Filesystem {
        Filesystem {
            vg: String::new(),
            lv: String::new(),
            md: true,
            kname: kname.into(),
            fstype,
            uuid: None,
            mountpoint: None,
            size: None,
            min_size: None,
            label: None,
            block_size: None,
            mapper: None,
        }
    }
}

/// The md arrays (lsblk TYPE `raid1`) whose device carries a filesystem or another signature,
/// by kernel name; not a PV's label (`LVM2_member`: the array's `fstype` and the LVM report
/// have it).
pub fn on_arrays(nodes: &[Node]) -> Vec<Filesystem> {
    let mut out: Vec<Filesystem> = nodes
        .iter()
        .filter(|n| {
            n.kind == "raid1"
                && !matches!(
                    n.fstype.as_deref(),
                    Some("LVM2_member" | super::luks::LUKS_FSTYPE)
                )
        })
        .filter_map(|n| {
            Some(Filesystem {
                uuid: n.uuid.clone(),
                mountpoint: n.mountpoint.clone(),
                ..Filesystem::on_array(&n.kname, n.fstype.clone()?)
            })
        })
        .collect();
    out.sort_by(|a, b| a.kname.cmp(&b.kname));
    out.dedup_by(|a, b| a.kname == b.kname);
    out
}

impl Filesystem {
    /// The device the tools are given: /dev/VG/LV, or the array's /dev/mdN.
    /// How the probes name it: an LV as (`vg`, `lv`), an array as (`""`, its kernel name).
    /// An encrypted LV's filesystem (in a mapping) as (`""`, the mapping's kernel name).
    pub fn key(&self) -> (String, String) {
        match self.md || self.mapper.is_some() {
            true => (String::new(), self.kname.clone()),
            false => (self.vg.clone(), self.lv.clone()),
        }
    }

    /// How a person names its device: `LV vg/lv`, `/dev/mapper/NAME`, or the array's path.
    pub fn describe(&self) -> String {
        match (&self.mapper, self.md) {
            (Some(m), _) => format!("/dev/mapper/{m}"),
            (None, true) => self.device_path(),
            (None, false) => format!("LV {}/{}", self.vg, self.lv),
        }
    }

    pub fn device_path(&self) -> String {
        if let Some(m) = &self.mapper {
            format!("/dev/mapper/{m}")
        } else if self.md {
            format!("/dev/{}", self.kname)
        } else {
            format!("/dev/{}/{}", self.vg, self.lv)
        }
    }
}

/// The value after `key` on a `key:   value` line of `dumpe2fs -h` (lib/e2p/ls.c).
fn dumpe2fs_field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// Bytes of an ext4 from `dumpe2fs -h`: `Block count:` x `Block size:`.
pub fn ext4_size(dumpe2fs: &str) -> Option<u64> {
    Some(dumpe2fs_field(dumpe2fs, "Block count")? * dumpe2fs_field(dumpe2fs, "Block size")?)
}

/// Bytes of an xfs data section from `xfs_info` (libfrog's xfs_report_geom): the line
/// `data     =      bsize=4096   blocks=262144, imaxpct=25`.
pub fn xfs_size(xfs_info: &str) -> Option<u64> {
    let line = xfs_info.lines().find(|l| l.starts_with("data "))?;
    let num = |key: &str| -> Option<u64> {
        let rest = &line[line.find(key)? + key.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    Some(num("bsize=")? * num("blocks=")?)
}

/// The block size libblkid gives an ext4 (BLOCK_SIZE): `Block size:` of `dumpe2fs -h`.
pub fn ext4_block_size(dumpe2fs: &str) -> Option<u64> {
    dumpe2fs_field(dumpe2fs, "Block size")
}

/// The block size libblkid gives an xfs (BLOCK_SIZE, its sector size): the first `sectsz=` of
/// `xfs_info` (the meta-data section's; the log's comes later).
pub fn xfs_block_size(xfs_info: &str) -> Option<u64> {
    let rest = &xfs_info[xfs_info.find("sectsz=")? + "sectsz=".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The argv that reads the size of a filesystem of `fstype` on its device (xfs_info takes the
/// mount point of a mounted xfs, and the device of an unmounted one).
pub fn size_argv(f: &Filesystem) -> Option<Vec<String>> {
    let dev = f.device_path();
    match f.fstype.as_str() {
        "ext4" => Some(vec!["dumpe2fs".into(), "-h".into(), dev]),
        "xfs" => Some(vec!["xfs_info".into(), f.mountpoint.clone().unwrap_or(dev)]),
        _ => None,
    }
}

/// The sizes of the filesystems on the LVs (`vg`, `lv`) and the arrays (`""`, kernel name)
/// `wanted` names, each `None` where the tool gives no answer (observation never fails on it).
pub fn probe_sizes(
    host: &dyn crate::host::Host,
    fs: &mut [Filesystem],
    wanted: &[(String, String)],
) {
    for f in fs.iter_mut().filter(|f| wanted.contains(&f.key())) {
        let Some(argv) = size_argv(f) else { continue };
        let Ok(out) = host.run(&argv) else { continue };
        if out.status != 0 {
            continue;
        }
        (f.size, f.block_size) = match f.fstype.as_str() {
            "ext4" => {
                f.label = super::fs_label::ext4_label(&out.stdout);
                (ext4_size(&out.stdout), ext4_block_size(&out.stdout))
            }
            _ => (xfs_size(&out.stdout), xfs_block_size(&out.stdout)),
        };
    }
}

/// `resize2fs -P`'s estimate, in filesystem blocks (e2fsprogs resize/main.c: `Estimated minimum
/// size of the filesystem: N`).
pub fn ext4_min_blocks(resize2fs_p: &str) -> Option<u64> {
    resize2fs_p
        .lines()
        .find_map(|l| l.strip_prefix("Estimated minimum size of the filesystem:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The smallest sizes of the ext4s on the LVs `shrinking` names (`resize2fs -P`, read-only, also
/// on a mounted one; its blocks are `dumpe2fs -h`'s block size), `None` where a tool gives none.
pub fn probe_min_sizes(
    host: &dyn crate::host::Host,
    fs: &mut [Filesystem],
    shrinking: &[(String, String)],
) {
    for f in fs.iter_mut().filter(|f| {
        f.fstype == "ext4" && shrinking.iter().any(|(vg, lv)| *vg == f.vg && *lv == f.lv)
    }) {
        let dev = format!("/dev/{}/{}", f.vg, f.lv);
        let run = |argv: &[&str]| {
            let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
            host.run(&argv)
                .ok()
                .filter(|o| o.status == 0)
                .map(|o| o.stdout)
        };
        let block = run(&["dumpe2fs", "-h", &dev]).and_then(|d| dumpe2fs_field(&d, "Block size"));
        let min = run(&["resize2fs", "-P", &dev]).and_then(|p| ext4_min_blocks(&p));
        f.min_size = block.zip(min).map(|(b, m)| b * m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_from_the_tools() {
        let d = "Filesystem volume name:   nextcloud\nBlock count:              262144\nReserved block count:     13107\nBlock size:               4096\n";
        assert_eq!(ext4_size(d), Some(1 << 30));
        let x = "meta-data=/dev/vg0/data          isize=512    agcount=4, agsize=65536 blks\n         =                       sectsz=512   attr=2, projid32bit=1\ndata     =                       bsize=4096   blocks=262144, imaxpct=25\n         =                       sunit=0      swidth=0 blks\n";
        assert_eq!(xfs_size(x), Some(1 << 30));
        assert_eq!(xfs_size("naming   =version 2  bsize=4096"), None);
        let p = "Estimated minimum size of the filesystem: 1532418\n";
        assert_eq!(ext4_min_blocks(p), Some(1532418));
        assert_eq!(ext4_min_blocks("resize2fs 1.47.0 (5-Feb-2023)\n"), None);
    }

    /// dumpe2fs -h of mkfs.ext4's defaults: under 512 MB 1 KiB blocks, which a writecache's
    /// block may not exceed; above, 4 KiB.
    #[test]
    fn block_size_and_size_of_real_ext4s() {
        let small = include_str!("../../tests/fixtures/dumpe2fs-h-ext4-256m.txt");
        assert_eq!(ext4_block_size(small), Some(1024));
        assert_eq!(ext4_size(small), Some(256 << 20));
        let large = include_str!("../../tests/fixtures/dumpe2fs-h-ext4-1g.txt");
        assert_eq!(ext4_block_size(large), Some(4096));
        assert_eq!(ext4_size(large), Some(1 << 30));
    }
}
