//! Growing the last partition of a disk into the free space after it (`growpart`), and the PV
//! on it following (`pvresize`); what cannot be done so (a partition before another, a size
//! growpart does not make) is refused with what to do instead. A mirror member's growth is
//! left to the mirror's (`mirror/size.rs`).

use super::*;
use crate::config::PartitionSpec;
use crate::observe::partx::TableEntry;
use crate::plan::step::{GrowPartition, ResizePv};

/// growpart's fudge: it does not grow a partition by less than 1 MiB (2048 sectors).
const FUDGE_SECTORS: u64 = 2048;
/// The sectors at the end of a GPT disk that hold the backup table and header, and the last one.
const GPT_TAIL: u64 = 34;

impl<'a> Planner<'a> {
    /// Is this partition open, so that the kernel cannot re-read its disk's table: mounted or
    /// swap, an md member, something stacked on it, an active LV on it.
    pub(in crate::plan) fn is_open(&self, b: &BlockDevice) -> bool {
        !b.holders.is_empty()
            || b.mountpoint.is_some()
            || self.ix.array_of_member(&b.kname).is_some()
            || self
                .o
                .lvm
                .lvs
                .iter()
                .any(|l| l.active && l.extents.contains_key(&b.kname))
    }

    /// An existing partition of the file: grown into the free space after it when the file says
    /// `rest` and there is room (growpart's own rule), its PV resized to follow; a size in the
    /// file it does not have is refused.
    pub(in crate::plan) fn grow_partition(
        &mut self,
        spec: &DiskSpec,
        ps_: &PartitionSpec,
        disk: &BlockDevice,
        b: &BlockDevice,
        table: Option<&Vec<TableEntry>>,
    ) -> Vec<PlannedStep> {
        let object = format!("disk {}", spec.name);
        // Only the file's last partition may say `rest`.
        let last = spec.partitions.last().is_some_and(|p| p.name == ps_.name);
        let entry = table.and_then(|t| t.iter().find(|e| Some(e.number) == part_number(&b.kname)));
        // growpart's limit: the next partition's start, else the last usable sector.
        let room = entry.map(|e| {
            let sector_num = disk.size / 512;
            let next = table
                .into_iter()
                .flatten()
                .map(|x| x.start)
                .filter(|s| *s > e.end())
                .min();
            let max_end = next
                .map(|s| s - 1)
                .unwrap_or(sector_num)
                .min(sector_num.saturating_sub(GPT_TAIL));
            (e, max_end, next.is_none())
        });
        let growable = room.filter(|(e, max_end, _)| e.end() + FUDGE_SECTORS <= *max_end);
        let path = format!(
            "{}-part{}",
            self.disks[&spec.name].path,
            part_number(&b.kname).unwrap_or(0)
        );
        // Larger than the file says (beyond sgdisk's 1 MiB alignment): a shrink, never made.
        if let Some(want) = ps_.size
            && b.size > want + (1 << 20)
        {
            self.refuse(
                object,
                format!(
                    "partition {} is {}, larger than the file's {}; hyraid never shrinks a partition (what lies past the new end would be lost, and what sits on it would not fit)",
                    ps_.name,
                    human(b.size),
                    human(want)
                ),
                format!(
                    "set partition {}'s size to {} in the file{}",
                    ps_.name,
                    crate::config::size::writable(b.size),
                    if last { " (or `rest`)" } else { "" }
                ),
            );
            return vec![];
        }
        if let Some(want) = ps_.size
            && b.size < want
        {
            let (reason, fix) = match growable {
                Some((e, max_end, true)) if last => (
                    format!(
                        "partition {} is {}, smaller than the file's {}; hyraid never resizes partitions to a size, it only grows the last one to the end of the disk",
                        ps_.name,
                        human(b.size),
                        human(want)
                    ),
                    format!(
                        "write `size: rest` for partition {} to grow it to {}, or set its size to {}",
                        ps_.name,
                        human((max_end - e.start + 1) * 512),
                        crate::config::size::writable(b.size)
                    ),
                ),
                Some(_) | None if room.is_some_and(|r| !r.2) => (
                    format!(
                        "partition {} is {}, smaller than the file's {}, and another partition follows it; hyraid never resizes partitions it would have to move",
                        ps_.name,
                        human(b.size),
                        human(want)
                    ),
                    format!(
                        "set partition {}'s size to {} in the file, or move the partitions by hand",
                        ps_.name,
                        crate::config::size::writable(b.size)
                    ),
                ),
                _ => (
                    format!(
                        "partition {} is {}, smaller than the file's {}, and there is no free space after it; hyraid never resizes partitions",
                        ps_.name,
                        human(b.size),
                        human(want)
                    ),
                    format!(
                        "set partition {}'s size to {} in the file, or give the disk room first",
                        ps_.name,
                        crate::config::size::writable(b.size)
                    ),
                ),
            };
            self.refuse(object, reason, fix);
            return vec![];
        }
        let pv = self.ix.pv(&b.kname).cloned();
        let mut steps = Vec::new();
        match growable {
            Some((e, max_end, true)) if ps_.size.is_none() => {
                let to = (max_end - e.start + 1) * 512;
                if self.tool_missing(
                    &object,
                    "growpart",
                    &format!("partition {} can grow by {}", ps_.name, human(to - b.size)),
                ) {
                    return vec![];
                }
                let grow = GrowPartition {
                    disk: spec.name.clone(),
                    partition: ps_.name.clone(),
                    device: self.disks[&spec.name].path.clone(),
                    number: e.number,
                    from: b.size,
                    to,
                };
                // A mirror member grows with the others, or not at all (mirror/size.rs).
                if self.ix.array_of_member(&b.kname).is_some() {
                    self.member_growth.insert(b.kname.clone(), grow);
                    return vec![];
                }
                steps.push(ps(
                    Step::GrowPartition(grow),
                    Risk::Safe,
                    "the file gives the last partition the rest of the disk and there is free space after it; its start and its data do not move",
                ));
                if let Some(pv) = pv {
                    steps.push(resize_pv(path, pv.dev_size, to));
                }
            }
            _ => {
                if let Some(pv) = pv.filter(|p| p.dev_size < b.size) {
                    steps.push(resize_pv(path, pv.dev_size, b.size));
                }
            }
        }
        steps
    }
}

impl Planner<'_> {
    /// Refuse a step that needs a partition tool the host lacks (growpart, partx), naming the
    /// package that has it. True when refused.
    pub(in crate::plan) fn tool_missing(&mut self, object: &str, tool: &str, what: &str) -> bool {
        if !self.o.missing_tools.iter().any(|t| t == tool) {
            return false;
        }
        let package = match tool {
            "growpart" => {
                "cloud-guest-utils (Debian, Ubuntu; cloud-utils-growpart on Fedora, RHEL)"
            }
            _ => "util-linux",
        };
        self.refuse(
            object.to_string(),
            format!("{what}, but {tool} is not installed on this host"),
            format!("install {package}, then plan again"),
        );
        true
    }
}

fn resize_pv(device: String, from: u64, to: u64) -> PlannedStep {
    ps(
        Step::ResizePv(ResizePv { device, from, to }),
        Risk::Safe,
        "the partition under the PV has grown; the PV takes the new space",
    )
}
