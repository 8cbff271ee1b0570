//! `hyraid import`: write the file that describes the machine as it is, so that `hyraid plan`
//! on it right away shows no changes (or, when mdadm.conf does not list the arrays yet, exactly
//! that). This is how a hand-built box is adopted. What hyraid does not manage is left out and
//! said so, never described as something else.

mod lvm;

use super::raw::*;
use crate::observe::{BitmapKind, BlockDevice, DevKind, MdArray, Observed};
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

/// The imported file, what was left out and why, and what `plan` on it will show.
pub struct Imported {
    pub config: RawConfig,
    /// `not imported: …`: objects on the machine the file does not describe, and why.
    pub skipped: Vec<String>,
    /// What `hyraid plan` on the file shows besides "no changes" (mdadm.conf lacking lines).
    pub notes: Vec<String>,
}

pub fn import(o: &Observed) -> Imported {
    // First pass: which disks are used; then name them in kernel-name order (ssd0 before ssd1).
    let first = build(o, &BTreeMap::new());
    let mut used: Vec<&BlockDevice> = o
        .block_devices
        .iter()
        .filter(|d| first.names.contains_key(&d.kname))
        .collect();
    used.sort_by(|a, b| (a.kname.len(), &a.kname).cmp(&(b.kname.len(), &b.kname)));
    let mut counters: BTreeMap<&str, usize> = BTreeMap::new();
    let mut names = BTreeMap::new();
    for d in used {
        let role = role(d);
        let k = counters.entry(role).or_insert(0);
        names.insert(d.kname.clone(), format!("{role}{k}"));
        *k += 1;
    }
    let second = build(o, &names);
    Imported {
        config: second.config,
        skipped: second.skipped,
        notes: second.notes,
    }
}

/// The setting hyraid's udev rule applies to the disk with this serial, if any.
fn managed_cache(o: &Observed, serial: &str) -> Option<bool> {
    let rule = o.boot.write_cache_rule.as_deref()?;
    let line = persist::rule_line(rule, serial)?;
    Some(line.contains("hdparm -W1") || line.contains("sdparm --set=WCE"))
}

fn role(d: &BlockDevice) -> &'static str {
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
fn size(bytes: u64) -> RawSize {
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

struct Built {
    config: RawConfig,
    skipped: Vec<String>,
    notes: Vec<String>,
    names: BTreeMap<String, String>,
}

/// The file being written: disks get names as mirrors and VGs use them.
pub(super) struct Builder<'a> {
    o: &'a Observed,
    preassigned: &'a BTreeMap<String, String>,
    disks: BTreeMap<String, RawDisk>,
    /// kname → disk name.
    disk_name: BTreeMap<String, String>,
    counters: BTreeMap<&'static str, usize>,
    skipped: Vec<String>,
}

/// What a mirror or VG that is left out had named: undone, so the file holds only used disks.
type Checkpoint = (
    BTreeMap<String, RawDisk>,
    BTreeMap<String, String>,
    BTreeMap<&'static str, usize>,
);

impl<'a> Builder<'a> {
    fn checkpoint(&self) -> Checkpoint {
        (
            self.disks.clone(),
            self.disk_name.clone(),
            self.counters.clone(),
        )
    }

    fn rollback(&mut self, c: Checkpoint) {
        (self.disks, self.disk_name, self.counters) = c;
    }

    /// The file's name for a whole disk, naming it on first use.
    fn disk(&mut self, d: &BlockDevice) -> Result<String, String> {
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
    fn device(&mut self, d: &BlockDevice) -> Result<String, String> {
        if d.kind == DevKind::Disk {
            return self.disk(d);
        }
        let parent = d.parent.as_deref().and_then(|p| self.o.device(p));
        let (Some(parent), Some(label)) = (parent, partition_name(d)) else {
            return Err(format!(
                "/dev/{} is a partition without a GPT name the file can hold (give it one with `sgdisk --change-name`)",
                d.kname
            ));
        };
        Ok(format!("{}:{label}", self.disk(parent)?))
    }

    /// Every GPT partition of the disks in the file, in on-disk order, used or not, so that the
    /// file describes each disk whole and a rebuild from it numbers them the same way.
    fn partitions(&mut self) {
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

/// How the file names an array: `/dev/md/NAME` by its name; an array without one (made as
/// /dev/mdN, which mdadm names by its number) is adopted by UUID under its kernel name.
fn array_label(a: &MdArray) -> String {
    a.name
        .as_ref()
        .map(|n| format!("/dev/md/{n}"))
        .unwrap_or(format!("/dev/{}", a.kname))
}

fn by_name(a: &MdArray) -> Option<&String> {
    a.name.as_ref().filter(|n| {
        crate::observe::names::md_name_safe(n)
            && n.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && !n.chars().all(|c| c.is_ascii_digit())
    })
}

/// An md UUID mdadm.conf can hold (an array that is not running shows zeros).
fn real_uuid(a: &MdArray) -> Option<String> {
    let u = crate::observe::names::mdadm_uuid(a.uuid.as_deref()?);
    let hex: Vec<char> = u.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (hex.len() == 32 && hex.iter().any(|c| *c != '0') && u.len() == 35).then_some(u)
}

/// An imported mirror as mdadm.conf lists it: (entry — its name or adopted device —, UUID, name).
type ConfEntry = (String, String, String);

/// The mirrors, the mirror each array's kernel name became, and how mdadm.conf lists each.
type Mirrors = (
    BTreeMap<String, RawMirror>,
    BTreeMap<String, String>,
    Vec<ConfEntry>,
);

fn mirrors(b: &mut Builder) -> Mirrors {
    let o = b.o;
    let mut mirrors = BTreeMap::new();
    let mut mirror_of = BTreeMap::new();
    let mut conf = Vec::new();
    for a in &o.arrays {
        let label = array_label(a);
        if a.level != "raid1" {
            b.skipped
                .push(format!("{label}: {} (hyraid manages RAID1)", a.level));
            continue;
        }
        let uuid = real_uuid(a);
        let (name, adopted) = match (by_name(a), &uuid) {
            (Some(n), _) => (n.clone(), false),
            (None, Some(_)) => (a.kname.clone(), true),
            (None, None) => {
                b.skipped.push(format!(
                    "{label}: no /dev/md/NAME and no UUID to adopt it by"
                ));
                continue;
            }
        };
        if mirrors.contains_key(&name) {
            b.skipped.push(format!(
                "{label}: another array is already imported as mirror `{name}`"
            ));
            continue;
        }
        if let Some(meta) = &a.metadata {
            b.skipped.push(format!(
                "{label}: RAID1 with {meta} metadata (hyraid manages md's own superblocks)"
            ));
            continue;
        }
        if let Some(bm) = a
            .bitmap
            .as_ref()
            .filter(|bm| bm.kind != BitmapKind::Internal)
        {
            b.skipped.push(format!(
                "{label}: its bitmap is {} (hyraid manages internal bitmaps)",
                bm.describe()
            ));
            continue;
        }
        let saved = b.checkpoint();
        let live: Vec<_> = a.members.iter().filter(|m| !m.faulty()).collect();
        let mut members = Vec::new();
        let mut wm = Vec::new();
        let mut rotational = Vec::new();
        let mut why = None;
        for m in &live {
            let Some(d) = o.device(&m.kname) else {
                why = Some(format!(
                    "member /dev/{} is not a disk or partition",
                    m.kname
                ));
                break;
            };
            match b.device(d) {
                Ok(n) => {
                    if m.write_mostly() {
                        wm.push(n.clone());
                    }
                    let whole = d.parent.as_deref().and_then(|p| o.device(p)).unwrap_or(d);
                    rotational.push((n.clone(), whole.rotational));
                    members.push(n);
                }
                Err(e) => {
                    why = Some(e);
                    break;
                }
            }
        }
        if why.is_none() && members.len() < 2 {
            why = Some("fewer than two usable members".into());
        }
        if let Some(why) = why {
            b.rollback(saved);
            b.skipped.push(format!("{label}: {why}"));
            continue;
        }
        // `auto` where it is what is there: the rotational members, when a fast one exists.
        let auto: Vec<&String> = if rotational.iter().any(|(_, r)| !r) {
            rotational
                .iter()
                .filter(|(_, r)| *r)
                .map(|(n, _)| n)
                .collect()
        } else {
            vec![]
        };
        let write_mostly = if auto.len() == wm.len() && auto.iter().all(|n| wm.contains(n)) {
            RawWriteMostly::Auto(AutoWord::Auto)
        } else {
            RawWriteMostly::List(wm.clone())
        };
        let write_behind = match a.bitmap.as_ref().map(|b| b.backlog).unwrap_or(0) {
            wb if wb > 0 && wm.is_empty() => {
                b.skipped.push(format!("{label}: write-behind {wb} is set but no member is write-mostly, so it has no effect; imported as 0 (plan will reset it)"));
                0
            }
            wb => wb,
        };
        let device = adopted.then(|| format!("/dev/{}", a.kname));
        if let Some(u) = &uuid {
            conf.push((
                device.clone().unwrap_or(name.clone()),
                u.clone(),
                name.clone(),
            ));
        }
        mirror_of.insert(a.kname.clone(), name.clone());
        mirrors.insert(
            name,
            RawMirror {
                uuid: if adopted { uuid } else { None },
                device,
                members,
                write_mostly: Some(write_mostly),
                bitmap: Some(match &a.bitmap {
                    None => RawBitmap::None(NoneWord::None),
                    Some(bm) => RawBitmap::Internal(RawBitmapInternal {
                        chunk: Some(size(bm.chunk)),
                    }),
                }),
                write_behind: Some(write_behind),
                state: None,
            },
        );
    }
    (mirrors, mirror_of, conf)
}

/// What `plan` on the file will show when mdadm.conf does not list the mirrors as hyraid writes
/// them: exactly that file (and the initramfs that carries it).
fn mdadm_conf_note(o: &Observed, conf: &[ConfEntry]) -> Option<String> {
    let ours: Vec<(String, String)> = conf
        .iter()
        .map(|(e, u, _)| (e.clone(), u.clone()))
        .collect();
    let cur = o.boot.mdadm_conf.as_deref();
    let new = persist::managed_mdadm_conf(cur, &ours, &[]).ok()?;
    if ours.is_empty() || cur == Some(new.as_str()) {
        return None;
    }
    let listed = cur
        .map(crate::observe::names::mdadm_conf_uuids)
        .unwrap_or_default();
    let missing: Vec<&str> = conf
        .iter()
        .filter(|(_, u, _)| !listed.contains(&crate::observe::names::norm_uuid(u)))
        .map(|(_, _, n)| n.as_str())
        .collect();
    let path = persist::mdadm_conf_path(&o.boot);
    let initramfs = persist::initramfs_command(&o.boot)
        .map(|c| format!(", then `{c}`"))
        .unwrap_or_default();
    Some(if missing.is_empty() {
        format!(
            "mdadm.conf ({path}) lists the arrays under other device names: `hyraid plan` on this file shows only that (hyraid's ARRAY lines replace those{initramfs}); nothing else changes"
        )
    } else {
        format!(
            "mdadm.conf ({path}) has no ARRAY line for {}: `hyraid plan` on this file shows only that (hyraid's ARRAY lines for them{initramfs}); nothing else changes",
            missing.join(", ")
        )
    })
}

fn build(o: &Observed, preassigned: &BTreeMap<String, String>) -> Built {
    let mut b = Builder {
        o,
        preassigned,
        disks: BTreeMap::new(),
        disk_name: BTreeMap::new(),
        counters: BTreeMap::new(),
        skipped: Vec::new(),
    };
    let (mirrors, mirror_of, conf) = mirrors(&mut b);
    let vgs = lvm::volume_groups(&mut b, &mirror_of);
    b.partitions();
    let notes = mdadm_conf_note(o, &conf).into_iter().collect();
    Built {
        config: RawConfig {
            version: 1,
            host: Some(o.hostname.clone()).filter(|h| !h.is_empty()),
            disks: b.disks,
            mirrors,
            volume_groups: vgs,
        },
        skipped: b.skipped,
        notes,
        names: b.disk_name,
    }
}

/// The imported configuration as a commented YAML file.
pub fn to_yaml(imp: &Imported) -> String {
    let mut out = String::new();
    out.push_str("# Written by `hyraid import` from what is on this machine now.\n");
    out.push_str("# Disks got role names (ssdN, hddN, nvmeN), arrays without a /dev/md/NAME their kernel name\n# (they are adopted by UUID and keep their device): rename them freely, they are only referred to by name.\n");
    if imp.notes.is_empty() {
        out.push_str("# `hyraid plan` on this file shows no changes.\n");
    }
    for n in &imp.notes {
        out.push_str(&format!("# {n}\n"));
    }
    for s in &imp.skipped {
        out.push_str(&format!("# not imported: {s}\n"));
    }
    let yaml = serde_yaml::to_string(&imp.config).expect("config serializes");
    // `on`/`off` as a person writes them (serde_yaml quotes them for YAML 1.1 readers).
    for line in yaml.lines() {
        let line = match line.trim_start().strip_prefix("write_cache: ") {
            Some("'on'") => line.replace("'on'", "on"),
            Some("'off'") => line.replace("'off'", "off"),
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}
