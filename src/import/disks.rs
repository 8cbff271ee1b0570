//! The disks of the imported file: each named on first use by its role (ssdN, hddN, nvmeN) and
//! its stable /dev/disk/by-id name, its drive cache as hyraid's udev rule keeps it, and its GPT
//! partitions in on-disk order.

use crate::config::raw::*;
use crate::observe::{BlockDevice, DevKind, Observed};
use crate::plan::persist;
use std::collections::BTreeMap;

/// Prefer the names a person recognises: ata-/nvme-/scsi- (model and serial), then wwn-.
fn stable_id(d: &BlockDevice) -> Option<String> {
    for prefix in ["ata-", "nvme-", "scsi-", "usb-", "wwn-"] {
        let mut c: Vec<&String> = d
            .by_id
            .iter()
            .filter(|i| {
                i.starts_with(prefix) && !i.contains("-part") && !i.starts_with("nvme-eui.")
            })
            .collect();
        c.sort_by_key(|i| i.len());
        if let Some(i) = c.first() {
            return Some((*i).clone());
        }
    }
    None
}

/// The setting hyraid's udev rule applies to the disk with this serial, if any.
fn managed_cache(o: &Observed, serial: &str) -> Option<bool> {
    let rule = o.boot.write_cache_rule.as_deref()?;
    let line = persist::rule_line(rule, serial)?;
    Some(line.contains("hdparm -W1") || line.contains("sdparm --set=WCE"))
}

pub(super) fn role(d: &BlockDevice) -> &'static str {
    if d.tran.as_deref() == Some("nvme") {
        "nvme"
    } else if d.rotational {
        "hdd"
    } else {
        "ssd"
    }
}

/// A size as a person writes it: the largest binary unit it is a whole number of (`64MiB`,
/// `900GiB`), else bytes.
pub(super) fn size(bytes: u64) -> RawSize {
    const UNITS: [(&str, u32); 5] = [
        ("PiB", 50),
        ("TiB", 40),
        ("GiB", 30),
        ("MiB", 20),
        ("KiB", 10),
    ];
    UNITS
        .iter()
        .find(|(_, shift)| bytes >= 1 << shift && bytes.is_multiple_of(1 << shift))
        .map(|(unit, shift)| RawSize::Text(format!("{}{unit}", bytes >> shift)))
        .unwrap_or(RawSize::Bytes(bytes))
}

/// A GPT name the file can hold (what validation takes for a partition name).
fn partition_name(d: &BlockDevice) -> Option<&str> {
    d.partlabel.as_deref().filter(|l| {
        l.len() <= 36
            && l.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && l.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    })
}

/// Partition number from a kernel name: `sda2` → 2, `nvme0n1p3` → 3.
fn part_number(kname: &str) -> u32 {
    let digits: String = kname
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits
        .chars()
        .rev()
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

/// The file being written: disks get names as mirrors and VGs use them.
pub(super) struct Builder<'a> {
    pub(super) o: &'a Observed,
    preassigned: &'a BTreeMap<String, String>,
    pub(super) disks: BTreeMap<String, RawDisk>,
    /// kname → disk name.
    pub(super) disk_name: BTreeMap<String, String>,
    counters: BTreeMap<&'static str, usize>,
    pub(super) skipped: Vec<String>,
    /// Imported arrays whose bitmap `plan` converts (a file bitmap becomes internal).
    pub(super) converted: Vec<String>,
    /// Comments written above a mirror in the file, by mirror name: what its plan will refuse.
    pub(super) at_mirror: BTreeMap<String, Vec<String>>,
}

/// What a mirror or VG that is left out had named: undone, so the file holds only used disks.
type Checkpoint = (
    BTreeMap<String, RawDisk>,
    BTreeMap<String, String>,
    BTreeMap<&'static str, usize>,
);

impl<'a> Builder<'a> {
    pub(super) fn new(o: &'a Observed, preassigned: &'a BTreeMap<String, String>) -> Self {
        Builder {
            o,
            preassigned,
            disks: BTreeMap::new(),
            disk_name: BTreeMap::new(),
            counters: BTreeMap::new(),
            skipped: Vec::new(),
            converted: Vec::new(),
            at_mirror: BTreeMap::new(),
        }
    }

    pub(super) fn checkpoint(&self) -> Checkpoint {
        (
            self.disks.clone(),
            self.disk_name.clone(),
            self.counters.clone(),
        )
    }

    pub(super) fn rollback(&mut self, c: Checkpoint) {
        (self.disks, self.disk_name, self.counters) = c;
    }

    /// The file's name for a whole disk, naming it on first use.
    pub(super) fn disk(&mut self, d: &BlockDevice) -> Result<String, String> {
        if let Some(n) = self.disk_name.get(&d.kname) {
            return Ok(n.clone());
        }
        let Some(id) = stable_id(d) else {
            return Err(format!(
                "/dev/{} has no /dev/disk/by-id name, so it cannot be named stably",
                d.kname
            ));
        };
        let name = match self.preassigned.get(&d.kname) {
            Some(n) => n.clone(),
            None => {
                let k = self.counters.entry(role(d)).or_insert(0);
                *k += 1;
                format!("{}{}", role(d), *k - 1)
            }
        };
        // Drive caches hyraid's udev rule already manages stay managed.
        let write_cache = d
            .serial
            .as_ref()
            .and_then(|s| managed_cache(self.o, s))
            .map(|on| OnOff::Word(if on { OnOffWord::On } else { OnOffWord::Off }));
        self.disks.insert(
            name.clone(),
            RawDisk {
                id: Some(id),
                // A serial udev would not keep as it is cannot be matched by hyraid's rule: the id is enough.
                serial: d
                    .serial
                    .clone()
                    .filter(|s| crate::observe::names::rule_safe(s)),
                write_cache,
                media: None,
                partitions: None,
            },
        );
        self.disk_name.insert(d.kname.clone(), name.clone());
        Ok(name)
    }

    /// The file's name for a disk or a GPT partition (`disk:PARTLABEL`).
    pub(super) fn device(&mut self, d: &BlockDevice) -> Result<String, String> {
        if d.kind == DevKind::Disk {
            return self.disk(d);
        }
        let parent = d.parent.as_deref().and_then(|p| self.o.device(p));
        let (Some(parent), Some(label)) = (parent, partition_name(d)) else {
            // An MBR (dos) table has no partition names at all: sgdisk would convert it to GPT
            // when it writes, which a BIOS boot and the room GPT needs at the disk's end make a
            // risk of its own; that is the user's decision, never a casual fix.
            let dos = parent.and_then(|p| p.pttype.as_deref()) == Some("dos");
            return Err(if dos {
                format!(
                    "/dev/{} is a partition of an MBR (dos) table, which has no partition names: hyraid names partitions by their GPT name, so it cannot adopt it. Converting the table to GPT (`sgdisk -g`) changes the boot path and needs free space at the end of the disk: only with a backup and a plan for booting",
                    d.kname
                )
            } else {
                format!(
                    "/dev/{} is a GPT partition without a name the file can hold (give it one with `sgdisk --change-name=N:NAME` on its disk)",
                    d.kname
                )
            });
        };
        Ok(format!("{}:{label}", self.disk(parent)?))
    }

    /// Every GPT partition of the disks in the file, in on-disk order, used or not, so that the
    /// file describes each disk whole and a rebuild from it numbers them the same way.
    pub(super) fn partitions(&mut self) {
        for (kname, name) in self.disk_name.clone() {
            let Some(disk) = self.o.device(&kname) else {
                continue;
            };
            let mut children: Vec<&BlockDevice> = self
                .o
                .block_devices
                .iter()
                .filter(|b| b.parent.as_deref() == Some(kname.as_str()))
                .collect();
            if children.is_empty() {
                continue;
            }
            children.sort_by_key(|b| part_number(&b.kname));
            // Less than GPT's own space left: the last partition runs to the end of the disk.
            let free = disk
                .size
                .saturating_sub(children.iter().map(|b| b.size).sum());
            let to_the_end = free <= 2 << 20;
            let mut parts: Vec<RawPartition> = Vec::new();
            for (i, b) in children.iter().enumerate() {
                let Some(label) = partition_name(b) else {
                    self.skipped.push(format!("disk {name}: partition /dev/{} has no GPT name the file can hold, so it is not listed (it stays as it is)", b.kname));
                    continue;
                };
                if parts.iter().any(|p| p.name == label) {
                    self.skipped.push(format!("disk {name}: partition /dev/{} has the same GPT name as an earlier one (`{label}`), so it is not listed", b.kname));
                    continue;
                }
                let last = i + 1 == children.len();
                parts.push(RawPartition {
                    name: label.to_string(),
                    size: if last && to_the_end {
                        RawSize::Text("rest".into())
                    } else {
                        size(b.size)
                    },
                });
            }
            if let Some(d) = self.disks.get_mut(&name) {
                d.partitions = Some(parts).filter(|p| !p.is_empty());
            }
        }
    }
}
