//! Partitions against their disk, mirrors against their members.

use super::{
    GPT_ALIGN, GPT_TAIL, Model, md_array_bytes, md_avail_1_0, md_data_offset, md_min_bitmap_chunk,
};
use crate::config::raw::MdMetadata;
use crate::config::size::human;
use crate::plan::ArrayDevice;
use crate::plan::step::NewPartition;

/// Partition number from a kernel name: `sda2` → 2, `nvme0n1p3` → 3.
fn number(kname: &str) -> u32 {
    let digits = kname.len() - kname.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    kname[kname.len() - digits..].parse().unwrap_or(0)
}

impl Model<'_> {
    pub(super) fn partitions(
        &mut self,
        disk: &str,
        device: &str,
        new_table: bool,
        parts: &[NewPartition],
    ) {
        let Some(dev) = device
            .strip_prefix("/dev/disk/by-id/")
            .and_then(|i| self.o.by_id(i))
        else {
            return;
        };
        let last = (dev.size / 512).saturating_sub(GPT_TAIL);
        // Where sgdisk starts the next partition: after the existing ones, laid out in number
        // order on 2048-sector boundaries (as sgdisk made them).
        let mut cursor = GPT_ALIGN;
        if !new_table {
            let mut old: Vec<(u32, u64)> = self
                .o
                .block_devices
                .iter()
                .filter(|b| b.parent.as_deref() == Some(dev.kname.as_str()))
                .map(|b| (number(&b.kname), b.size / 512))
                .collect();
            old.sort();
            for (_, sectors) in old {
                cursor = cursor.div_ceil(GPT_ALIGN) * GPT_ALIGN + sectors;
            }
        }
        let first = cursor.div_ceil(GPT_ALIGN) * GPT_ALIGN;
        let free = (last + 1).saturating_sub(first) * 512;
        let asked: u64 = parts.iter().filter_map(|p| p.size).sum();
        let mut made = Vec::new();
        for p in parts {
            let start = cursor.div_ceil(GPT_ALIGN) * GPT_ALIGN;
            let stop = match p.size {
                Some(b) => start + b.div_ceil(1024) * 2 - 1,
                None => last,
            };
            if start > last || stop > last || stop < start {
                let what = match p.size {
                    Some(b) => format!(" of {b} bytes ({})", human(b)),
                    None => " (the rest)".into(),
                };
                self.refuse(
                    format!("disk {disk}"),
                    format!(
                        "{disk} ({}) has {} for new partitions (from sector {first} to the last usable sector {last}; GPT starts partitions on 1 MiB boundaries and keeps the last {GPT_TAIL} sectors for its backup); the new partitions ask {}, and partition {}{what} would start at sector {start} and end at {stop}",
                        human(dev.size),
                        human(free),
                        human(asked),
                        p.name,
                    ),
                    "make the partitions smaller, or let the last one take the rest".into(),
                );
                for q in parts {
                    self.unknown.insert(format!("{device}-part{}", q.number));
                }
                return;
            }
            made.push((
                format!("{device}-part{}", p.number),
                (stop + 1 - start) * 512,
            ));
            cursor = stop + 1;
        }
        self.parts.extend(made);
    }

    /// A new array: its size, from the members as the plan leaves them.
    pub(super) fn mirror(
        &mut self,
        array: &str,
        order: &[&ArrayDevice],
        chunk: Option<u64>,
        metadata: MdMetadata,
    ) {
        let mut sizes = Vec::new();
        for d in order {
            match self.size(&d.path) {
                Some(b) => sizes.push(b),
                None => {
                    self.unknown.insert(array.into());
                    return;
                }
            }
        }
        let Some(&first) = sizes.first() else {
            return;
        };
        let offset = match metadata {
            MdMetadata::V1_2 => md_data_offset(first / 512) * 512,
            // Nothing at the start; the smallest member's own end reserve.
            MdMetadata::V1_0 => {
                let min = sizes.iter().min().copied().unwrap_or(0);
                md_avail_1_0(min / 512).map_or(min, |a| min - a * 512)
            }
        };
        let (min, small) = order
            .iter()
            .zip(&sizes)
            .min_by_key(|(_, s)| **s)
            .map(|(d, s)| (*s, d.disk.clone()))
            .unwrap();
        if min <= offset {
            self.refuse(
                format!("mirror {array}"),
                format!(
                    "member {small} is {} ({min} bytes), no more than the {} mdadm 4.2 reserves {}",
                    human(min),
                    human(offset),
                    match metadata {
                        MdMetadata::V1_2 => format!(
                            "at its start (metadata 1.2 data offset, chosen from {}'s size)",
                            order[0].disk
                        ),
                        MdMetadata::V1_0 =>
                            "at its end (metadata 1.0 superblock, bad-block log and bitmap space)"
                                .into(),
                    }
                ),
                "use larger members".into(),
            );
            self.unknown.insert(array.into());
            return;
        }
        let Some(bytes) = md_array_bytes(&sizes, metadata) else {
            return;
        };
        if let Some(c) = chunk {
            let need = md_min_bitmap_chunk(bytes / 512);
            if c < need {
                self.refuse(
                    format!("mirror {array}"),
                    format!(
                        "the bitmap chunk {} is too small for a {} array: mdadm 4.2 fits the bitmap in {} there, which needs a chunk of at least {}",
                        human(c),
                        human(bytes),
                        human(super::md_bm_space(bytes / 512) * 512),
                        human(need)
                    ),
                    format!("set `bitmap: {{ chunk: {} }}` or larger", human(need).replace(".00 ", "").replace(' ', "")),
                );
            }
        }
        self.arrays.insert(array.into(), bytes);
    }
}
