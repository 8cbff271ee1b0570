//! Capacity, proven at plan time. The plan's steps are walked in the order apply runs them, on a
//! model of the space they build — partitions, mirrors, PVs and VGs created by the same plan
//! included — with the arithmetic of the tools that will run:
//!
//! - GPT (sgdisk 1.0.9, 512-byte sectors): partitions start on 2048-sector boundaries, `+SIZEK`
//!   ends SIZE KiB later, the last usable sector is 34 before the end (backup table and header).
//! - md RAID1, metadata 1.2 (mdadm 4.2): the first member mdadm is given decides the data offset
//!   (superblock, bad-block log, bitmap space and reshape headroom, rounded up to 1 MiB); the array
//!   is the smallest member's space after it, rounded down to 64 KiB. A bitmap chunk must be large
//!   enough for the bitmap to fit the space mdadm leaves for it. Metadata 1.0 keeps the
//!   superblock, bad-block log and bitmap space at each member's end and the data from sector 0:
//!   the array is the smallest member's space before them.
//! - LVM (lvm2 2.03.16): a PV's data starts 1 MiB in (label and metadata area) and is cut into
//!   extents (4 MiB in a new VG); fixed sizes round up to whole extents and to the stripe count,
//!   `N%VG` is of the whole VG and `N%FREE` of what is free when the LV is created, both rounded
//!   down; extents are placed as lvm places them (the first allowed PV that holds the rest, else
//!   the largest; stripes on different PVs), so a writecache's cache volume, created after the
//!   LVs, is checked against what they left on its PVs.
//!
//! Anything that does not fit is refused with the numbers, and then the plan keeps no step at
//! all: apply would otherwise build arrays and VGs and fail at the LV that does not fit, so the
//! safe rule is that the whole file waits until it fits (`hyraid plan` exits 1).

use super::step::Step;
use super::{PlannedStep, Refusal};
use crate::config::raw::MdMetadata;
use crate::config::size::human;
use crate::config::{Desired, DeviceRef, split_device};
use crate::observe::Observed;
use crate::plan::step::{
    CreateArray, CreateCachevol, CreateLv, CreatePartitions, CreatePv, CreateVg, DetachCache,
    DetachWritecache, ExtendLv, ExtendVg, RemoveLv,
};
use std::collections::{HashMap, HashSet};

mod layout;
mod lvm;

/// GPT partitions start on 1 MiB (2048-sector) boundaries.
pub const GPT_ALIGN: u64 = 2048;
/// Sectors at the end of a GPT disk no partition may use: 32 of backup entries, the backup
/// header, and the disk's last sector.
pub const GPT_TAIL: u64 = 34;
/// Where LVM puts a PV's first extent (4 KiB label + 1020 KiB metadata area).
pub const PE_START: u64 = 1 << 20;
/// The extent size vgcreate uses unless told otherwise.
pub const DEFAULT_EXTENT: u64 = 4 << 20;

/// Sectors mdadm 4.2 reserves for an internal bitmap on a device of `sectors` (`choose_bm_space`).
fn md_bm_space(sectors: u64) -> u64 {
    if sectors < 128 {
        0
    } else if sectors - 128 >= 200 << 21 {
        256
    } else if sectors - 8 > 8 << 21 {
        128
    } else {
        8
    }
}

/// Data offset (sectors) mdadm 4.2 gives 1.2 metadata when the first member has `sectors`
/// (`validate_geometry1`: 12 KiB, the bitmap space, headroom of ~0.1% up to 128 MiB; 1 MiB units).
pub fn md_data_offset(sectors: u64) -> u64 {
    let mut headroom: u64 = 128 << 11;
    while (headroom << 10) > sectors && headroom > 0 {
        headroom >>= 1;
    }
    (24 + md_bm_space(sectors) + headroom).div_ceil(2048) * 2048
}

/// Smallest bitmap chunk (bytes) mdadm 4.2 accepts for an array of `sectors` (`add_internal_bitmap1`).
pub fn md_min_bitmap_chunk(sectors: u64) -> u64 {
    let max_bits = (md_bm_space(sectors) * 512).saturating_sub(256) * 8;
    let (mut chunk, mut bits) = (4096u64, sectors * 512 / 4096 + 1);
    while bits > max_bits && max_bits > 0 {
        chunk *= 2;
        bits = bits.div_ceil(2);
    }
    chunk
}

/// Sectors of a member of `sectors` that metadata 1.0 leaves for data, from sector 0 on
/// (`validate_geometry1`, case 0: the member rounded down to 4 KiB, less 8 KiB for the
/// superblock, 4 KiB of bad-block log and the bitmap space, all at the end); None when the
/// member cannot hold them.
pub fn md_avail_1_0(sectors: u64) -> Option<u64> {
    (sectors & !7).checked_sub(16 + 8 + md_bm_space(sectors))
}

/// Size in bytes of a RAID1 array over members of these sizes (bytes), in the order mdadm gets
/// them; None when a member cannot even hold the metadata. 1.2: past the data offset the first
/// member decides; 1.0: before each member's own superblock at its end.
pub fn md_array_bytes(members: &[u64], metadata: MdMetadata) -> Option<u64> {
    let avail = match metadata {
        MdMetadata::V1_2 => {
            let offset = md_data_offset(members.first()? / 512);
            let min = members.iter().min()? / 512;
            min.checked_sub(offset).filter(|a| *a > 0)?
        }
        MdMetadata::V1_0 => members
            .iter()
            .map(|b| md_avail_1_0(b / 512))
            .collect::<Option<Vec<u64>>>()?
            .into_iter()
            .min()
            .filter(|a| *a > 0)?,
    };
    Some(((avail / 2) & !63) * 1024)
}

/// Extents of a PV on a device of `bytes`.
pub fn pv_extents(bytes: u64, extent: u64) -> u64 {
    bytes.saturating_sub(PE_START) / extent
}

/// Place up to `per` extents on each of `k` different PVs with these free extents (lvm's order:
/// the first PV that holds the rest, else the largest; more segments while space remains).
/// Returns what each PV gives and the extents placed per stripe.
fn place(free: &[u64], per: u64, k: usize) -> (Vec<u64>, u64) {
    let (mut left, mut taken, mut rest) = (free.to_vec(), vec![0; free.len()], per);
    while rest > 0 {
        let mut offers: Vec<(usize, u64)> = (0..left.len())
            .filter(|i| left[*i] > 0)
            .map(|i| (i, left[i].min(rest)))
            .collect();
        offers.sort_by_key(|o| std::cmp::Reverse(o.1));
        if offers.len() < k {
            break;
        }
        let step = offers[..k].iter().map(|o| o.1).min().unwrap_or(0);
        for (i, _) in &offers[..k] {
            left[*i] -= step;
            taken[*i] += step;
        }
        rest -= step;
    }
    (taken, per - rest)
}

struct Vg {
    extent: u64,
    /// PV keys, in the VG's order.
    pvs: Vec<String>,
    /// Extents of all PVs.
    total: u64,
}

/// How an LV's size is asked for, for the messages.
enum Ask {
    Bytes(u64),
    PercentVg(u64),
    PercentFree(u64),
}

struct Model<'a> {
    o: &'a Observed,
    /// Sizes (bytes) of partitions and arrays this plan creates, by path and by array name.
    parts: HashMap<String, u64>,
    arrays: HashMap<String, u64>,
    /// Paths and arrays whose size is unknown because their creation was refused.
    unknown: HashSet<String>,
    /// Free extents of each PV in a VG, by key (kernel name, or path when created by the plan).
    free: HashMap<String, u64>,
    vgs: HashMap<String, Vg>,
    /// VGs that could not be modelled (a PV of unknown size): their LVs are not checked.
    skip_vgs: HashSet<String>,
    /// The file's name for each PV key.
    labels: HashMap<String, String>,
    /// LUKS mappings this plan opens: /dev/mapper/NAME → the array's path.
    mappers: HashMap<String, String>,
    refused: Vec<Refusal>,
}

/// The refusals for everything in `steps` that does not fit.
pub fn check(d: &Desired, o: &Observed, steps: &[PlannedStep]) -> Vec<Refusal> {
    let mut m = Model {
        o,
        parts: HashMap::new(),
        arrays: HashMap::new(),
        unknown: HashSet::new(),
        free: HashMap::new(),
        vgs: HashMap::new(),
        skip_vgs: HashSet::new(),
        labels: HashMap::new(),
        mappers: HashMap::new(),
        refused: Vec::new(),
    };
    m.label_pvs(d);
    for s in steps {
        m.step(&s.step);
    }
    m.refused
}

/// Run the check on a finished plan: when anything does not fit, the refusals are added, a note
/// says why nothing is planned, and every step is withheld. Returns whether it withheld them.
pub fn prove(
    d: &Desired,
    o: &Observed,
    steps: &mut Vec<PlannedStep>,
    refused: &mut Vec<Refusal>,
    notes: &mut Vec<String>,
) -> bool {
    let r = check(d, o, steps);
    if r.is_empty() {
        return false;
    }
    notes.push(format!(
        "the file does not fit the disks (see Refused): none of its {} step(s) is planned, so apply changes nothing until the sizes fit",
        steps.len()
    ));
    steps.clear();
    refused.extend(r);
    true
}

fn ext_text(n: u64, extent: u64) -> String {
    format!("{} ({n} extents)", human(n * extent))
}

impl Model<'_> {
    fn label_pvs(&mut self, d: &Desired) {
        for vg in d.volume_groups.values() {
            for r in &vg.pvs {
                let key = match r {
                    DeviceRef::Mirror(n) => Some(
                        self.key(
                            &d.mirrors
                                .get(n)
                                .map_or_else(|| format!("/dev/md/{n}"), |m| m.pv_path()),
                        ),
                    ),
                    DeviceRef::Disk(n) => {
                        let (disk, part) = split_device(n);
                        let dev = d.disks.get(disk).and_then(|s| super::disk_for(self.o, s));
                        match (dev, part) {
                            (Some(dv), None) => Some(dv.kname.clone()),
                            (Some(dv), Some(p)) => self
                                .o
                                .block_devices
                                .iter()
                                .find(|b| {
                                    b.parent.as_deref() == Some(dv.kname.as_str())
                                        && b.partlabel.as_deref() == Some(p)
                                })
                                .map(|b| b.kname.clone()),
                            _ => None,
                        }
                    }
                };
                if let Some(k) = key {
                    self.labels.insert(k, r.name().to_string());
                }
            }
        }
    }

    /// The observed kernel name a path names, else the path itself (made by this plan).
    fn key(&self, path: &str) -> String {
        let k = if let Some(n) = path.strip_prefix("/dev/md/") {
            self.o.array_named(n).map(|a| a.kname.clone())
        } else if let Some(n) = path.strip_prefix("/dev/mapper/") {
            self.o
                .other_devices
                .iter()
                .find(|d| d.kind == "crypt" && d.name.as_deref() == Some(n))
                .map(|d| d.kname.clone())
        } else if let Some(i) = path.strip_prefix("/dev/disk/by-id/") {
            self.o.by_id(i).map(|b| b.kname.clone())
        } else {
            None
        };
        k.unwrap_or_else(|| path.to_string())
    }

    fn label(&self, key: &str) -> String {
        self.labels
            .get(key)
            .cloned()
            .unwrap_or_else(|| key.to_string())
    }

    /// Size in bytes of a device as it will be when the step runs.
    fn size(&self, path: &str) -> Option<u64> {
        if self.unknown.contains(path) {
            return None;
        }
        if let Some(n) = path.strip_prefix("/dev/mapper/") {
            return match self.mappers.get(path) {
                Some(array) => self
                    .size(array)?
                    .checked_sub(crate::observe::luks::LUKS2_DATA_OFFSET),
                None => self
                    .o
                    .other_devices
                    .iter()
                    .find(|d| d.kind == "crypt" && d.name.as_deref() == Some(n))
                    .map(|d| d.size),
            };
        }
        if let Some(n) = path.strip_prefix("/dev/md/") {
            if self.unknown.contains(n) {
                return None;
            }
            return self
                .arrays
                .get(n)
                .copied()
                .or_else(|| self.o.array_named(n).map(|a| a.size_kib * 1024));
        }
        self.parts.get(path).copied().or_else(|| {
            let id = path.strip_prefix("/dev/disk/by-id/")?;
            self.o.by_id(id).map(|b| b.size)
        })
    }

    fn refuse(&mut self, object: String, reason: String, fix: String) {
        self.refused.push(Refusal {
            object,
            reason,
            fix,
        });
    }

    /// The VG as the plan has built it so far; existing VGs are read from the observation.
    fn vg(&mut self, name: &str) -> Option<&mut Vg> {
        if self.skip_vgs.contains(name) {
            return None;
        }
        if !self.vgs.contains_key(name) {
            let v = self.o.vg(name).filter(|v| !v.partial)?;
            let ext = v.extent_size.max(1);
            let mut pvs = Vec::new();
            let mut total = 0;
            for p in self.o.pvs_of(name) {
                self.free.insert(p.kname.clone(), p.free / ext);
                pvs.push(p.kname.clone());
                total += p.size / ext;
            }
            self.vgs.insert(
                name.into(),
                Vg {
                    extent: ext,
                    pvs,
                    total,
                },
            );
        }
        self.vgs.get_mut(name)
    }

    fn add_pvs(&mut self, vg: &str, paths: &[String], extent: u64) -> bool {
        let mut added = Vec::new();
        for path in paths {
            let Some(bytes) = self.size(path) else {
                self.skip_vgs.insert(vg.into());
                return false;
            };
            let key = self.key(path);
            let n = pv_extents(bytes, extent);
            self.free.insert(key.clone(), n);
            added.push((key, n));
        }
        if let Some(v) = self.vgs.get_mut(vg) {
            for (k, n) in added {
                v.pvs.push(k);
                v.total += n;
            }
        }
        true
    }

    fn step(&mut self, s: &Step) {
        match s {
            Step::CreatePartitions(CreatePartitions {
                disk,
                device,
                new_table,
                parts,
                ..
            }) => self.partitions(disk, device, *new_table, parts),
            Step::CreateArray(CreateArray {
                array,
                devices,
                bitmap_chunk,
                metadata,
                ..
            }) => {
                // mdadm's argv: the members that are not write-mostly first.
                let order: Vec<&crate::plan::ArrayDevice> = devices
                    .iter()
                    .filter(|x| !x.write_mostly)
                    .chain(devices.iter().filter(|x| x.write_mostly))
                    .collect();
                self.mirror(array, &order, *bitmap_chunk, *metadata);
            }
            Step::OpenLuks(o) => {
                self.mappers
                    .insert(format!("/dev/mapper/{}", o.name), o.device.clone());
            }
            Step::CreatePv(CreatePv { device, object }) => {
                let k = self.key(device);
                self.labels.entry(k).or_insert_with(|| object.clone());
            }
            Step::CreateVg(CreateVg { vg, pvs }) => {
                self.vgs.insert(
                    vg.clone(),
                    Vg {
                        extent: DEFAULT_EXTENT,
                        pvs: vec![],
                        total: 0,
                    },
                );
                self.add_pvs(vg, pvs, DEFAULT_EXTENT);
            }
            Step::ExtendVg(ExtendVg { vg, pvs }) => {
                if let Some(ext) = self.vg(vg).map(|v| v.extent) {
                    self.add_pvs(vg, pvs, ext);
                }
            }
            Step::CreateLv(CreateLv {
                vg,
                lv,
                size,
                stripes,
                pvs,
                ..
            }) => self.create_lv(vg, lv, size, stripes.unwrap_or(1).max(1), pvs),
            Step::ExtendLv(ExtendLv { vg, lv, size }) => self.extend_lv(vg, lv, size),
            Step::CreateCachevol(CreateCachevol {
                vg, lv, size, pvs, ..
            }) => self.cachevol(vg, lv, *size, pvs),
            Step::DetachWritecache(DetachWritecache {
                vg,
                lv,
                remove_cachevol: Some(_),
            }) => self.release_cachevol(vg, lv),
            Step::DetachCache(DetachCache {
                vg,
                lv,
                remove_cachevol: Some(_),
            }) => self.release_cachevol(vg, lv),
            Step::RemoveLv(RemoveLv { vg, lv }) => self.release(vg, lv),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_sizes_are_the_captured_ones() {
        use MdMetadata::V1_2;
        // mdadm 4.2 on Debian 12 (tests/fixtures, /work/shared/fixtures): a 2 GiB member gets
        // "Data Offset : 6144 sectors" and a 2094080 KiB array; 1.5 GiB partitions 1570816 KiB;
        // the 256 MiB cache partitions 261120 KiB.
        assert_eq!(md_data_offset(4194304), 6144);
        assert_eq!(
            md_array_bytes(&[2 << 30, 2 << 30], V1_2),
            Some(2094080 * 1024)
        );
        assert_eq!(
            md_array_bytes(&[3 << 29, 3 << 29], V1_2),
            Some(1570816 * 1024)
        );
        assert_eq!(
            md_array_bytes(&[256 << 20, 256 << 20], V1_2),
            Some(261120 * 1024)
        );
        // Large members: the familiar 264192-sector offset.
        assert_eq!(md_data_offset(2_000_000_000_000 / 512), 264192);
        // The first member decides the offset; the smallest the size.
        assert_eq!(
            md_array_bytes(&[2 << 30, 3 << 29], V1_2),
            Some((3145728 - 6144) / 2 * 1024)
        );
        assert_eq!(md_array_bytes(&[1 << 20, 1 << 20], V1_2), None);
        // A 2 GiB array leaves 4 KiB for the bitmap: chunks of 128 KiB and up.
        assert_eq!(md_min_bitmap_chunk(4188160), 128 << 10);
    }

    #[test]
    fn md_1_0_keeps_its_superblock_at_the_end() {
        // A 2 GiB member: 8 KiB superblock area, 4 KiB bad-block log and 4 KiB bitmap space at
        // the end, data from sector 0: (4194304 - 32) sectors, in KiB rounded down to 64 KiB.
        assert_eq!(md_avail_1_0(4194304), Some(4194272));
        let v10 = MdMetadata::V1_0;
        assert_eq!(
            md_array_bytes(&[2 << 30, 2 << 30], v10),
            Some(2097088 * 1024)
        );
        // Each member its own reserve; the smallest decides.
        assert_eq!(
            md_array_bytes(&[2 << 30, 3 << 29], v10),
            Some((3145728 - 32) / 2 / 64 * 64 * 1024)
        );
        assert_eq!(md_array_bytes(&[8 << 10, 8 << 10], v10), None);
    }

    #[test]
    fn pv_extents_are_the_captured_ones() {
        // lvm fullreport of the captures: dev_size → pv_pe_count with 4 MiB extents.
        assert_eq!(pv_extents(2144337920, DEFAULT_EXTENT), 511);
        assert_eq!(pv_extents(1608515584, DEFAULT_EXTENT), 383);
        assert_eq!(pv_extents(267386880, DEFAULT_EXTENT), 63);
        assert_eq!(pv_extents(1 << 30, DEFAULT_EXTENT), 255);
    }

    #[test]
    fn placement_is_lvms() {
        assert_eq!(place(&[10, 50, 50], 40, 1), (vec![0, 40, 0], 40));
        assert_eq!(place(&[10, 50, 30], 70, 1), (vec![0, 50, 20], 70));
        assert_eq!(place(&[137, 63], 100, 2), (vec![63, 63], 63));
        assert_eq!(place(&[100, 60, 60], 100, 2), (vec![100, 60, 40], 100));
    }
}
