//! sgdisk (GPT fdisk 1.0.9) as hyraid runs it: `--clear DEV`, and `--new=N:0:+SIZEK|0
//! --change-name=N:NAME --typecode=N:CODE … DEV`.
//!
//! Geometry as gdisk computes it for 512-byte sectors: partitions start on 2048-sector
//! boundaries; `+SIZEK` ends SIZE KiB after the start; `0` ends at the last usable sector, which
//! is 34 sectors before the end of the disk (the backup table and header). One `--new` that does
//! not fit fails the whole call and nothing is written ("Error encountered; not saving changes").

use super::partx::{open_partitions, table_of};
use crate::host::{CmdOutput, HostError};
use crate::observe::partx::TableEntry;
use crate::observe::{BlockDevice, DevKind, Signature};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};
use std::collections::BTreeMap;

const ALIGN: u64 = 2048;
/// Sectors at the end of the disk that hold the backup GPT (32 of entries, 1 header) and
/// the last one gdisk never hands out.
pub(super) const TAIL: u64 = 34;

/// The table the kernel's partitions imply, replaying the layout sgdisk makes: partitions in
/// number order, each on the next 2048-sector boundary.
pub(super) fn replay(parts: &[&BlockDevice]) -> Vec<TableEntry> {
    let mut v: Vec<&&BlockDevice> = parts.iter().collect();
    v.sort_by_key(|b| part_number(&b.kname));
    let mut cursor = ALIGN;
    v.iter()
        .map(|b| {
            let start = cursor.div_ceil(ALIGN) * ALIGN;
            cursor = start + b.size / 512;
            TableEntry {
                number: part_number(&b.kname),
                start,
                sectors: b.size / 512,
                name: b.partlabel.clone(),
                parttype: b.parttype.clone(),
            }
        })
        .collect()
}

/// The end of the last partition of the replayed layout.
#[cfg(test)]
fn used_end(parts: &[&BlockDevice]) -> u64 {
    replay(parts)
        .last()
        .map(|e| e.start + e.sectors)
        .unwrap_or(ALIGN)
}

pub(super) fn part_number(kname: &str) -> u32 {
    let digits = kname.len() - kname.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    kname[kname.len() - digits..].parse().unwrap_or(0)
}

pub fn sgdisk(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    let Some((dev, opts)) = args.split_last() else {
        return fail(1, "Usage: sgdisk [OPTION...] <device>\n");
    };
    let Some(Target::Block(k)) = st.resolve(dev) else {
        return fail(
            2,
            format!("Problem opening {dev} for reading! Error is 2.\n"),
        );
    };
    let disk = st.world.device(&k).unwrap().clone();
    if disk.kind != DevKind::Disk {
        return fail(2, format!("{dev} is not a whole disk\n"));
    }
    let in_use = |st: &SimState| {
        st.world.block_devices.iter().any(|b| {
            b.parent.as_deref() == Some(k.as_str()) && st.busy(&Target::Block(b.kname.clone()))
        })
    };
    if opts == ["--clear"] {
        if in_use(st) || st.busy(&Target::Block(k.clone())) {
            return fail(
                2,
                "Warning: The kernel is still using the old partition table.\n",
            );
        }
        st.world
            .block_devices
            .retain(|b| b.parent.as_deref() != Some(k.as_str()));
        let d = st.dev_mut(&k).unwrap();
        d.pttype = Some("gpt".into());
        d.fstype = None;
        d.signatures = Some(vec![
            Signature {
                offset: "0x200".into(),
                kind: "gpt".into(),
                uuid: None,
            },
            Signature {
                offset: "0x1fe".into(),
                kind: "PMBR".into(),
                uuid: None,
            },
        ]);
        return out(
            "Creating new GPT entries in memory.\nThe operation has completed successfully.\n",
        );
    }
    if disk.pttype.as_deref() != Some("gpt") {
        return fail(2, format!("{dev}: no GPT (run sgdisk --clear first)\n"));
    }
    let last = (disk.size / 512).saturating_sub(TAIL);
    let mut names: BTreeMap<u32, String> = BTreeMap::new();
    let mut types: BTreeMap<u32, String> = BTreeMap::new();
    for o in opts {
        if let Some(v) = o.strip_prefix("--change-name=") {
            let (n, name) = v.split_once(':').unwrap_or(("0", ""));
            names.insert(n.parse().unwrap_or(0), name.to_string());
        }
        if let Some(v) = o.strip_prefix("--typecode=") {
            let (n, code) = v.split_once(':').unwrap_or(("0", ""));
            let Some(guid) = type_guid(code) else {
                return fail(
                    2,
                    format!("sgdisk: the simulated host does not model type code {code}\n"),
                );
            };
            types.insert(n.parse().unwrap_or(0), guid.to_string());
        }
    }
    let table = table_of(st, &k);
    let mut cursor = table.iter().map(|e| e.end() + 1).max().unwrap_or(ALIGN);
    let mut new = Vec::new();
    for o in opts {
        let Some(v) = o.strip_prefix("--new=") else {
            if o.starts_with("--change-name=") || o.starts_with("--typecode=") {
                continue;
            }
            return fail(
                2,
                format!("sgdisk: the simulated host does not model {o}\n"),
            );
        };
        let parts: Vec<&str> = v.split(':').collect();
        let (Some(n), Some(end)) = (
            parts.first().and_then(|n| n.parse::<u32>().ok()),
            parts.get(2),
        ) else {
            return fail(2, format!("bad --new={v}\n"));
        };
        if table.iter().any(|e| e.number == n) {
            return fail(4, format!("Could not create partition {n}: it exists\n"));
        }
        let start = cursor.div_ceil(ALIGN) * ALIGN;
        let stop = match *end {
            "0" => last,
            e => match e
                .strip_prefix('+')
                .and_then(|x| x.strip_suffix('K'))
                .and_then(|x| x.parse::<u64>().ok())
            {
                Some(kib) => start + kib * 2 - 1,
                None => return fail(2, format!("bad end {e}\n")),
            },
        };
        if start > last || stop > last || stop < start {
            return fail(
                4,
                format!(
                    "Could not create partition {n} from {start} to {stop}\nError encountered; not saving changes.\n"
                ),
            );
        }
        cursor = stop + 1;
        new.push(TableEntry {
            number: n,
            start,
            sectors: stop + 1 - start,
            name: names.get(&n).cloned(),
            // gdisk's default type for a new partition: Linux filesystem.
            parttype: Some(types.get(&n).cloned().unwrap_or_else(|| LINUX_FS.into())),
        });
    }
    let mut table = table;
    table.extend(new);
    table.sort_by_key(|e| e.number);
    if open_partitions(st, &k) {
        // The kernel's re-read (BLKRRPART) fails with EBUSY: the table is written, the kernel
        // keeps the partitions it had.
        st.world.partition_tables.insert(k.clone(), table);
        return out(
            "Warning: The kernel is still using the old partition table.\nThe new table will be used at the next reboot or after you\nrun partprobe(8) or kpartx(8)\nThe operation has completed successfully.\n",
        );
    }
    for e in &table {
        if !st
            .world
            .block_devices
            .iter()
            .any(|b| b.parent.as_deref() == Some(k.as_str()) && part_number(&b.kname) == e.number)
        {
            st.world.block_devices.push(partition_device(&disk, e));
        }
    }
    st.world.partition_tables.remove(&k);
    st.world.block_devices.sort_by(|a, b| a.kname.cmp(&b.kname));
    out("The operation has completed successfully.\n")
}

const LINUX_FS: &str = "0fc63daf-8483-4772-8e79-3d69d8477de4";

/// The GPT type GUID of one of gdisk's short type codes (lowercase, as lsblk prints it).
fn type_guid(code: &str) -> Option<&'static str> {
    Some(match code.to_ascii_lowercase().as_str() {
        "8300" => LINUX_FS,
        "fd00" => "a19d880f-05fc-4d3b-a006-743f0f84911e",
        "8e00" => "e6d6d379-f507-44c2-a23c-238f2a3df928",
        "ef00" => crate::observe::lsblk::ESP_GPT_TYPE,
        "ef02" => "21686148-6449-6e6f-744e-656564454649",
        _ => return None,
    })
}

/// The kernel's block device for a table entry of `disk`.
pub(super) fn partition_device(disk: &BlockDevice, e: &TableEntry) -> BlockDevice {
    let k = &disk.kname;
    let n = e.number;
    let (maj, min) = disk
        .maj_min
        .split_once(':')
        .map(|(a, b)| (a.to_string(), b.parse::<u64>().unwrap_or(0)))
        .unwrap_or_default();
    let kname = if k.ends_with(|c: char| c.is_ascii_digit()) {
        format!("{k}p{n}")
    } else {
        format!("{k}{n}")
    };
    let mut p = disk.clone();
    p.kname = kname;
    p.kind = DevKind::Part;
    p.maj_min = format!("{maj}:{}", min + n as u64);
    p.size = e.sectors * 512;
    p.by_id = disk.by_id.iter().map(|i| format!("{i}-part{n}")).collect();
    p.parent = Some(k.clone());
    p.partlabel = e.name.clone();
    p.parttype = e.parttype.clone();
    p.pttype = None;
    p.fstype = None;
    p.holders = vec![];
    p.mountpoint = None;
    p.signatures = Some(vec![]);
    p.write_cache = None;
    p.serial = None;
    p.model = None;
    p.tran = None;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(kname: &str, sectors: u64) -> BlockDevice {
        BlockDevice {
            kname: kname.into(),
            kind: DevKind::Part,
            maj_min: "8:1".into(),
            size: sectors * 512,
            rotational: false,
            serial: None,
            wwn: None,
            model: None,
            tran: None,
            by_id: vec![],
            parent: Some("sda".into()),
            partlabel: None,
            parttype: None,
            pttype: None,
            fstype: None,
            holders: vec![],
            mountpoint: None,
            signatures: None,
            write_cache: None,
            probe_error: None,
        }
    }

    #[test]
    fn layout_replays_the_capture() {
        // sfdisk --dump of the three-array capture: raid at 2048 (3145728 sectors), cache at
        // 3147776 (524288), last-lba 4194270 on a 4194304-sector disk.
        let (a, b) = (part("sda1", 3145728), part("sda2", 524288));
        assert_eq!(used_end(&[&a]), 3147776);
        assert_eq!(used_end(&[&b, &a]), 3147776 + 524288);
        assert_eq!(4194304 - TAIL, 4194270);
        // A size that is not a whole MiB leaves a gap before the next partition.
        let c = part("sda1", 2048 * 63 + 8);
        let d = part("sda2", 2048);
        assert_eq!(used_end(&[&c, &d]), 2048 + 2048 * 64 + 2048);
    }
}
