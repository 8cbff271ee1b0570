//! The kernel's view of a partition table and the tools that update it: `partx --pairs` (the
//! table on the disk), `partx --add --nr A:B` and `partx --update --nr N` (BLKPG, which works
//! while other partitions are open), and growpart (cloud-guest-utils 0.33: the sfdisk resizer,
//! then `partx --update`, then `pvresize` when the partition is a PV).
//!
//! The model keeps a disk's on-disk table only while it differs from the kernel's partitions
//! (`partition_tables`); otherwise the table is the kernel's partitions in sgdisk's layout.

use super::sgdisk::{TAIL, part_number, partition_device, replay};
use crate::host::{CmdOutput, HostError};
use crate::observe::partx::TableEntry;
use crate::observe::{BlockDevice, DevKind};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

/// The partition table on disk `k`.
pub(super) fn table_of(st: &SimState, k: &str) -> Vec<TableEntry> {
    if let Some(t) = st.world.partition_tables.get(k) {
        return t.clone();
    }
    let kids: Vec<&BlockDevice> = children(st, k);
    replay(&kids)
}

fn children<'a>(st: &'a SimState, k: &str) -> Vec<&'a BlockDevice> {
    st.world
        .block_devices
        .iter()
        .filter(|b| b.parent.as_deref() == Some(k))
        .collect()
}

/// Is a partition of disk `k` open (mounted, swap, an md member, dm on it, an active LV on
/// it)? Then the kernel refuses to re-read the table (EBUSY).
pub(super) fn open_partitions(st: &SimState, k: &str) -> bool {
    let w = &st.world;
    children(st, k).iter().any(|p| {
        !p.holders.is_empty()
            || p.mountpoint.is_some()
            || w.array_of_member(&p.kname).is_some()
            || w.lvm
                .lvs
                .iter()
                .any(|l| l.active && l.extents.contains_key(&p.kname))
    })
}

/// Drop the stored table once the kernel agrees with it.
fn settle(st: &mut SimState, k: &str) {
    let Some(t) = st.world.partition_tables.get(k) else {
        return;
    };
    let kids = children(st, k);
    let agree = t.len() == kids.len()
        && t.iter().all(|e| {
            kids.iter()
                .any(|b| part_number(&b.kname) == e.number && b.size == e.sectors * 512)
        });
    if agree && replay(&kids) == *t {
        st.world.partition_tables.remove(k);
    }
}

fn whole_disk(st: &SimState, dev: &str) -> Result<BlockDevice, String> {
    match st.resolve(dev) {
        Some(Target::Block(k)) => {
            let d = st.world.device(&k).unwrap();
            if d.kind == DevKind::Disk {
                Ok(d.clone())
            } else {
                Err(format!("partx: {dev}: not a whole disk\n"))
            }
        }
        _ => Err(format!(
            "partx: stat of {dev} failed: No such file or directory\n"
        )),
    }
}

/// `partx --pairs --output NR,START,SECTORS,NAME DISK`, `partx --add --nr A[:B] DISK`,
/// `partx --update --nr N DISK`.
pub fn partx(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    let Some((dev, opts)) = args.split_last() else {
        return fail(1, "partx: no disk specified\n");
    };
    let disk = match whole_disk(st, dev) {
        Ok(d) => d,
        Err(e) => return fail(1, e),
    };
    let k = disk.kname.clone();
    if disk.pttype.is_none() {
        return fail(1, format!("partx: {dev}: failed to read partition table\n"));
    }
    let table = table_of(st, &k);
    match opts {
        ["--pairs", "--output", "NR,START,SECTORS,NAME"] => out(&table
            .iter()
            .map(|e| {
                format!(
                    "NR=\"{}\" START=\"{}\" SECTORS=\"{}\" NAME=\"{}\"\n",
                    e.number,
                    e.start,
                    e.sectors,
                    e.name.as_deref().unwrap_or("")
                )
            })
            .collect::<String>()),
        ["--add", "--nr", range] => {
            let (lo, hi) = match range.split_once(':') {
                Some((a, b)) => (a.parse().unwrap_or(0), b.parse().unwrap_or(0)),
                None => {
                    let n = range.parse().unwrap_or(0);
                    (n, n)
                }
            };
            let mut errors = Vec::new();
            for e in table.iter().filter(|e| e.number >= lo && e.number <= hi) {
                let known = children(st, &k)
                    .iter()
                    .any(|b| part_number(&b.kname) == e.number);
                if known {
                    errors.push(e.number);
                } else {
                    st.world.block_devices.push(partition_device(&disk, e));
                }
            }
            st.world.block_devices.sort_by(|a, b| a.kname.cmp(&b.kname));
            settle(st, &k);
            match errors.as_slice() {
                [] => out(""),
                [n] => fail(1, format!("partx: {dev}: error adding partition {n}\n")),
                [a, .., b] => fail(
                    1,
                    format!("partx: {dev}: error adding partitions {a}-{b}\n"),
                ),
            }
        }
        ["--update", "--nr", n] => {
            let n: u32 = n.parse().unwrap_or(0);
            update(st, &k, &table, n)
                .map_err(|e| e.replace("DEV", dev))
                .map_or_else(|e| fail(1, e), |_| out(""))
        }
        _ => fail(
            1,
            format!(
                "partx: the simulated host does not model {}\n",
                opts.join(" ")
            ),
        ),
    }
}

/// BLKPG_RESIZE_PARTITION: the kernel's partition `n` takes the table's size.
fn update(st: &mut SimState, k: &str, table: &[TableEntry], n: u32) -> Result<(), String> {
    let Some(e) = table.iter().find(|e| e.number == n) else {
        return Err(format!(
            "partx: DEV: partition {n} not found in the table\n"
        ));
    };
    let Some(p) = st
        .world
        .block_devices
        .iter_mut()
        .find(|b| b.parent.as_deref() == Some(k) && part_number(&b.kname) == n)
    else {
        return Err(format!("partx: DEV: error updating partition {n}\n"));
    };
    p.size = e.sectors * 512;
    settle(st, k);
    Ok(())
}

/// `growpart DISK N` (exit 0 CHANGED, 1 NOCHANGE, 2 failure): the partition grows to the next
/// partition's start or the last usable sector, if by at least the 1 MiB fudge.
pub fn growpart(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    let [dev, n] = args else {
        return fail(2, "FAILED: must supply disk and partition-number\n");
    };
    let disk = match whole_disk(st, dev) {
        Ok(d) => d,
        Err(_) => return code(2, format!("FAILED: {dev}: does not exist\n")),
    };
    let k = disk.kname.clone();
    let n: u32 = n.parse().unwrap_or(0);
    let mut table = table_of(st, &k);
    let Some(i) = table.iter().position(|e| e.number == n) else {
        return code(
            2,
            format!("FAILED: failed to get start and end for {dev}{n} in {dev}\n"),
        );
    };
    let e = table[i].clone();
    let sector_num = disk.size / 512;
    let next = table
        .iter()
        .map(|x| x.start)
        .filter(|s| *s >= e.end())
        .min()
        .unwrap_or(sector_num);
    let max_end = (next - 1).min(sector_num - TAIL);
    if e.end() == max_end {
        return code(
            1,
            format!(
                "NOCHANGE: partition {n} size is {} bytes ({} sectors of 512). it cannot be grown\n",
                e.sectors * 512,
                e.sectors
            ),
        );
    }
    if e.end() + 2048 > max_end {
        return code(
            1,
            format!(
                "NOCHANGE: partition {n} could only be grown by {} [fudge=2048]\n",
                max_end - e.end()
            ),
        );
    }
    let new_size = max_end - e.start + 1;
    table[i].sectors = new_size;
    st.world.partition_tables.insert(k.clone(), table.clone());
    update(st, &k, &table, n).ok();
    let part = partition_device(&disk, &table[i]).kname;
    if let Some(pv) = st.world.lvm.pvs.iter_mut().find(|p| p.kname == part) {
        pv.dev_size = new_size * 512;
    }
    super::lvm::recompute_sizes(st);
    code(
        0,
        format!(
            "CHANGED: partition={n} start={} old: size={} end={} new: size={new_size} end={max_end}\n",
            e.start,
            e.sectors,
            e.end()
        ),
    )
}

fn code(status: i32, stdout: String) -> Result<CmdOutput, HostError> {
    Ok(CmdOutput {
        status,
        stdout,
        stderr: String::new(),
    })
}
