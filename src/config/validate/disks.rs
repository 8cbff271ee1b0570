//! Disks: identity (by-id name, serial) and GPT partitions; what members and PVs may name.

use super::names::{check_name, check_serial, is_kernel_name};
use super::{Ctx, nearest, seg, size_bytes};
use crate::config::desired::*;
use crate::config::raw::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(super) fn disks(c: &mut Ctx, raw: &RawConfig) -> BTreeMap<String, DiskSpec> {
    let mut disks = BTreeMap::new();
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut serials: HashMap<String, String> = HashMap::new();
    for (name, d) in &raw.disks {
        let p = format!("/disks/{}", seg(name));
        if let Err(m) = check_name(name, 64) {
            c.err(&p, true, m, None);
        }
        let id =
            d.id.as_ref()
                .map(|i| i.strip_prefix("/dev/disk/by-id/").unwrap_or(i).to_string());
        if id.is_none() && d.serial.is_none() {
            c.err(&p, true, format!("disk `{name}` has neither `id` nor `serial`"), Some(
                "add `id:` with its name under /dev/disk/by-id (e.g. `ata-MODEL_SERIAL` or `wwn-0x…`), or `serial:`; never a /dev/sdX name".into(),
            ));
        }
        if let Some(i) = &id {
            check_id(c, &p, name, i, &mut ids);
        }
        if let Some(s) = &d.serial {
            check_disk_serial(c, &p, name, s, &mut serials);
        }
        let partitions = partitions(c, &p, name, d);
        disks.insert(
            name.clone(),
            DiskSpec {
                name: name.clone(),
                id,
                serial: d.serial.clone(),
                write_cache: d.write_cache.map(OnOff::as_bool),
                rotational_override: d.media.map(|m| m == Media::Hdd),
                partitions,
            },
        );
    }
    disks
}

/// A disk's `id`: a by-id link name of a whole physical disk (not a kernel name, an md or
/// device-mapper device or a partition), used by no other disk.
fn check_id(c: &mut Ctx, p: &str, name: &str, i: &str, ids: &mut HashMap<String, String>) {
    let pi = format!("{p}/id");
    // udev's by-id names: letters, digits and a few separators; nothing a shell interprets.
    let by_id_chars = i
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || "._:+@=,#-".contains(ch));
    if i.is_empty() || i.starts_with('.') || !by_id_chars {
        c.err(
            &pi,
            false,
            format!("`{i}` is not a name under /dev/disk/by-id"),
            Some("write only the link name, e.g. `ata-SAMSUNG_HD204UI_S2H7J9BZ000001`".into()),
        );
    } else if is_kernel_name(i) {
        c.err(
                    &pi,
                    false,
                    format!("`{i}` is a kernel name, which can name another disk after the next boot or hotplug"),
                    Some(format!("use the disk's stable name: `ls -l /dev/disk/by-id/ | grep -w {i}` shows its `ata-…`/`nvme-…` and `wwn-…` names")),
                );
    } else if ["md-", "dm-", "lvm-pv-uuid-"]
        .iter()
        .any(|pre| i.starts_with(pre))
    {
        c.err(&pi, false, format!("`{i}` names an md or device-mapper device, not a disk"), Some("disks are physical drives; mirrors and LVs are declared under `mirrors:` and `volume_groups:`".into()));
    } else if i.contains("-part")
        && i.rsplit("-part")
            .next()
            .is_some_and(|n| n.chars().all(|ch| ch.is_ascii_digit()))
    {
        c.err(
            &pi,
            false,
            format!("`{i}` names a partition, not a whole disk"),
            Some("name the whole disk; partitions are declared under the disk".into()),
        );
    } else if let Some(other) = ids.insert(i.to_string(), name.to_string()) {
        c.err(
            &pi,
            false,
            format!("id `{i}` is already used by disk `{other}`"),
            Some("each physical disk is declared once".into()),
        );
    }
}

/// A disk's `serial`: not empty, one udev keeps as it is, used by no other disk.
fn check_disk_serial(
    c: &mut Ctx,
    p: &str,
    name: &str,
    s: &str,
    serials: &mut HashMap<String, String>,
) {
    if s.trim().is_empty() {
        c.err(&format!("{p}/serial"), false, "empty serial", None);
    } else if let Err(m) = check_serial(s) {
        c.err(
            &format!("{p}/serial"),
            false,
            m,
            Some(
                "copy the disk's SERIAL from `lsblk -o NAME,SERIAL`, or name it by `id:` alone"
                    .into(),
            ),
        );
    } else if let Some(other) = serials.insert(s.to_string(), name.to_string()) {
        c.err(
            &format!("{p}/serial"),
            false,
            format!("serial `{s}` is already used by disk `{other}`"),
            None,
        );
    }
}

/// A disk's GPT partitions: valid names, each once, sizes of at least 1MiB, `rest` only last;
/// `partitions:` not empty when given.
fn partitions(c: &mut Ctx, p: &str, name: &str, d: &RawDisk) -> Vec<PartitionSpec> {
    let mut partitions = Vec::new();
    for (i, part) in d.partitions.iter().flatten().enumerate() {
        let pp = format!("{p}/partitions/{i}");
        if let Err(msg) = check_name(&part.name, 36) {
            c.err(
                &format!("{pp}/name"),
                false,
                msg,
                Some("GPT names are at most 36 characters".into()),
            );
        }
        if partitions
            .iter()
            .any(|x: &PartitionSpec| x.name == part.name)
        {
            c.err(
                &format!("{pp}/name"),
                false,
                format!(
                    "partition `{}` is declared twice on disk `{name}`",
                    part.name
                ),
                None,
            );
        }
        let last = i + 1 == d.partitions.as_ref().map(|v| v.len()).unwrap_or(0);
        let size = match &part.size {
            RawSize::Text(t) if t.trim() == "rest" => {
                if !last {
                    c.err(
                        &format!("{pp}/size"),
                        false,
                        "only the last partition can take `rest`",
                        Some("give this one a size".into()),
                    );
                }
                None
            }
            s => match size_bytes(s) {
                Ok(b) if b < 1 << 20 => {
                    c.err(
                        &format!("{pp}/size"),
                        false,
                        format!("partition of {b} bytes is smaller than 1MiB"),
                        None,
                    );
                    Some(b)
                }
                Ok(b) => Some(b),
                Err(e) => {
                    c.err(
                        &format!("{pp}/size"),
                        false,
                        e,
                        Some("or `rest` for the last partition".into()),
                    );
                    None
                }
            },
        };
        partitions.push(PartitionSpec {
            name: part.name.clone(),
            size,
            role: Default::default(),
        });
    }
    if d.partitions.as_ref().is_some_and(|v| v.is_empty()) {
        c.err(
            &format!("{p}/partitions"),
            true,
            "an empty partition list",
            Some("remove `partitions:` to use the whole disk".into()),
        );
    }
    partitions
}

/// What members and PVs may name, with the error for a name that is not one of them.
pub(super) struct Refs<'a> {
    pub disks: &'a BTreeMap<String, DiskSpec>,
    /// Whole disks without partitions, and `disk:partition`.
    pub devices: BTreeSet<String>,
}

impl<'a> Refs<'a> {
    pub fn new(disks: &'a BTreeMap<String, DiskSpec>) -> Self {
        let devices: BTreeSet<String> = disks
            .values()
            .flat_map(|d| {
                if d.partitions.is_empty() {
                    vec![d.name.clone()]
                } else {
                    d.partitions
                        .iter()
                        .map(|p| format!("{}:{}", d.name, p.name))
                        .collect()
                }
            })
            .collect();
        Refs { disks, devices }
    }

    /// Why `name` is not a device of the file, and the fix.
    pub fn device_error(&self, name: &str) -> (String, String) {
        let (disks, devices) = (self.disks, &self.devices);
        let (disk, part) = split_device(name);
        match (disks.get(disk), part) {
            (Some(d), None) if !d.partitions.is_empty() => (
                format!("disk `{disk}` is partitioned; name one of its partitions"),
                format!(
                    "e.g. {}",
                    d.partitions
                        .iter()
                        .map(|p| format!("`{disk}:{}`", p.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            (Some(d), Some(p)) => (
                format!("disk `{disk}` has no partition `{p}`"),
                if d.partitions.is_empty() {
                    format!("declare it under `disks.{disk}.partitions`")
                } else {
                    format!(
                        "its partitions: {}",
                        d.partitions
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
            ),
            _ => (
                format!("`{name}` is not defined under `disks:`"),
                nearest(name, devices.iter())
                    .map(|n| format!("did you mean `{n}`?"))
                    .unwrap_or_else(|| "declare it under `disks:`".into()),
            ),
        }
    }
}
