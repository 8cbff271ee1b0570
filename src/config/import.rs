//! `hyraid import`: write the file that describes the machine as it is, so that `hyraid plan`
//! on it right away shows no changes. This is how a hand-built box is adopted.

use super::raw::*;
use crate::observe::{BlockDevice, DevKind, Observed};
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

/// What the import left out, and why.
pub struct Imported {
    pub config: RawConfig,
    pub skipped: Vec<String>,
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
    }
}

/// The setting hyraid's udev rule applies to the disk with this serial, if any.
fn managed_cache(o: &Observed, serial: &str) -> Option<bool> {
    let rule = o.boot.write_cache_rule.as_deref()?;
    let line = crate::plan::persist::rule_line(rule, serial)?;
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

struct Built {
    config: RawConfig,
    skipped: Vec<String>,
    names: BTreeMap<String, String>,
}

fn build(o: &Observed, preassigned: &BTreeMap<String, String>) -> Built {
    let mut skipped = Vec::new();
    let mut disks: BTreeMap<String, RawDisk> = BTreeMap::new();
    let mut disk_name: BTreeMap<String, String> = BTreeMap::new(); // kname -> name
    let mut counters: BTreeMap<&str, usize> = BTreeMap::new();
    let mut name_disk = |d: &BlockDevice,
                         disks: &mut BTreeMap<String, RawDisk>,
                         skipped: &mut Vec<String>|
     -> Option<String> {
        if let Some(n) = disk_name.get(&d.kname) {
            return Some(n.clone());
        }
        let Some(id) = stable_id(d) else {
            skipped.push(format!(
                "/dev/{}: no /dev/disk/by-id name, so it cannot be named stably",
                d.kname
            ));
            return None;
        };
        let name = match preassigned.get(&d.kname) {
            Some(n) => n.clone(),
            None => {
                let k = counters.entry(role(d)).or_insert(0);
                *k += 1;
                format!("{}{}", role(d), *k - 1)
            }
        };
        // Drive caches hyraid's udev rule already manages stay managed.
        let write_cache = d
            .serial
            .as_ref()
            .and_then(|s| managed_cache(o, s))
            .map(OnOff::Bool);
        disks.insert(
            name.clone(),
            RawDisk {
                id: Some(id),
                // A serial udev would not keep as it is cannot be matched by hyraid's rule: the id is enough.
                serial: d
                    .serial
                    .clone()
                    .filter(|s| crate::plan::persist::rule_safe(s)),
                write_cache,
                media: None,
                partitions: None,
            },
        );
        disk_name.insert(d.kname.clone(), name.clone());
        Some(name)
    };

    let mut mirrors = BTreeMap::new();
    for a in &o.arrays {
        let Some(name) = &a.name else {
            skipped.push(format!(
                "/dev/{}: no /dev/md/NAME; give it a name (mdadm.conf) and import again",
                a.kname
            ));
            continue;
        };
        if a.level != "raid1" {
            skipped.push(format!(
                "/dev/md/{name}: {} (hyraid manages RAID1)",
                a.level
            ));
            continue;
        }
        let live: Vec<_> = a.members.iter().filter(|m| !m.faulty()).collect();
        let devs: Vec<Option<&BlockDevice>> = live.iter().map(|m| o.device(&m.kname)).collect();
        // Partition members are named `disk:PARTLABEL`; a partition without a GPT name cannot be.
        let unnamed = devs.iter().any(|d| {
            d.is_none_or(|d| {
                d.kind == DevKind::Part && (d.partlabel.is_none() || d.parent.is_none())
            })
        });
        if unnamed {
            skipped.push(format!("/dev/md/{name}: a member is a partition without a GPT name (give it one with `sgdisk --change-name`)"));
            continue;
        }
        let mut members = Vec::new();
        let mut wm = Vec::new();
        for (m, d) in live.iter().zip(devs) {
            let d = d.unwrap();
            let n = if d.kind == DevKind::Part {
                let Some(parent) = d.parent.as_deref().and_then(|p| o.device(p)) else {
                    continue;
                };
                let Some(disk) = name_disk(parent, &mut disks, &mut skipped) else {
                    continue;
                };
                let label = d.partlabel.clone().unwrap_or_default();
                let parts = disks
                    .get_mut(&disk)
                    .unwrap()
                    .partitions
                    .get_or_insert_with(Vec::new);
                if !parts.iter().any(|p| p.name == label) {
                    parts.push(RawPartition {
                        name: label.clone(),
                        size: RawSize::Bytes(d.size),
                    });
                }
                format!("{disk}:{label}")
            } else {
                let Some(n) = name_disk(d, &mut disks, &mut skipped) else {
                    continue;
                };
                n
            };
            if m.write_mostly() {
                wm.push(n.clone());
            }
            members.push(n);
        }
        if members.len() < 2 {
            skipped.push(format!("/dev/md/{name}: fewer than two usable members"));
            continue;
        }
        mirrors.insert(
            name.clone(),
            RawMirror {
                uuid: None,
                device: None,
                members,
                write_mostly: Some(RawWriteMostly::List(wm.clone())),
                bitmap: Some(match &a.bitmap {
                    None => RawBitmap::None(NoneWord::None),
                    Some(b) => RawBitmap::Internal(RawBitmapInternal {
                        chunk: Some(RawSize::Bytes(b.chunk)),
                    }),
                }),
                write_behind: Some(match a.bitmap.as_ref().map(|b| b.backlog).unwrap_or(0) {
                    wb if wb > 0 && wm.is_empty() => {
                        skipped.push(format!("/dev/md/{name}: write-behind {wb} is set but no member is write-mostly, so it has no effect; imported as 0 (plan will reset it)"));
                        0
                    }
                    wb => wb,
                }),
                state: None,
            },
        );
    }

    let mut vgs = BTreeMap::new();
    'vg: for vg in &o.lvm.vgs {
        let mut pvs = Vec::new();
        let mut pv_name: BTreeMap<String, String> = BTreeMap::new();
        for p in o.pvs_of(&vg.name) {
            let n = if let Some(a) = o.array(&p.kname) {
                match a.name.as_ref().filter(|n| mirrors.contains_key(*n)) {
                    Some(n) => n.clone(),
                    None => {
                        skipped.push(format!(
                            "vg {}: PV {} is not a mirror hyraid manages",
                            vg.name, p.name
                        ));
                        continue 'vg;
                    }
                }
            } else if let Some(d) = o.device(&p.kname).filter(|d| d.kind == DevKind::Disk) {
                match name_disk(d, &mut disks, &mut skipped) {
                    Some(n) => n,
                    None => continue 'vg,
                }
            } else {
                skipped.push(format!(
                    "vg {}: PV {} is neither a mirror nor a whole disk",
                    vg.name, p.name
                ));
                continue 'vg;
            };
            pv_name.insert(p.kname.clone(), n.clone());
            pvs.push(n);
        }
        let mut lvs = BTreeMap::new();
        for l in o.lvm.lvs.iter().filter(|l| l.vg == vg.name && !l.hidden) {
            let data = l
                .writecache
                .as_ref()
                .and_then(|w| o.lv(&vg.name, &w.origin))
                .unwrap_or(l);
            let writecache = l.writecache.as_ref().and_then(|w| {
                let cv = o.lv(&vg.name, &w.cachevol)?;
                Some(RawWritecache {
                    size: RawSize::Bytes(cv.size),
                    pvs: cv
                        .extents
                        .keys()
                        .filter_map(|k| pv_name.get(k).cloned())
                        .collect(),
                    settings: w
                        .settings
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.parse::<u64>()
                                    .map(RawSettingValue::Int)
                                    .unwrap_or(RawSettingValue::Text(v.clone())),
                            )
                        })
                        .collect(),
                })
            });
            if l.writecache.is_some() && writecache.is_none() {
                skipped.push(format!(
                    "lv {}/{}: its writecache volume was not found",
                    vg.name, l.name
                ));
            }
            lvs.insert(
                l.name.clone(),
                RawLogicalVolume {
                    size: RawSize::Bytes(l.size),
                    pvs: None,
                    stripes: (data.stripes > 1).then_some(data.stripes),
                    writecache,
                    state: None,
                },
            );
        }
        vgs.insert(
            vg.name.clone(),
            RawVolumeGroup {
                pvs,
                lvs,
                state: None,
            },
        );
    }

    // Partitions in on-disk order, so that a rebuild from this file numbers them the same way.
    for (kname, name) in &disk_name {
        if let Some(parts) = disks.get_mut(name).and_then(|d| d.partitions.as_mut()) {
            let number = |label: &str| {
                o.block_devices
                    .iter()
                    .find(|b| {
                        b.parent.as_deref() == Some(kname.as_str())
                            && b.partlabel.as_deref() == Some(label)
                    })
                    .map(|b| {
                        b.kname
                            .chars()
                            .rev()
                            .take_while(|c| c.is_ascii_digit())
                            .collect::<String>()
                            .chars()
                            .rev()
                            .collect::<String>()
                            .parse::<u32>()
                            .unwrap_or(0)
                    })
                    .unwrap_or(0)
            };
            parts.sort_by_key(|p| number(&p.name));
        }
    }
    Built {
        config: RawConfig {
            version: 1,
            host: Some(o.hostname.clone()).filter(|h| !h.is_empty()),
            disks,
            mirrors,
            volume_groups: vgs,
        },
        skipped,
        names: disk_name,
    }
}

/// The imported configuration as a commented YAML file.
pub fn to_yaml(imp: &Imported) -> String {
    let mut out = String::new();
    out.push_str("# Written by `hyraid import` from what is on this machine now; `hyraid plan` on it shows no changes.\n");
    out.push_str("# Disks got role names (ssdN, hddN, nvmeN): rename them freely, they are only referred to by name.\n");
    out.push_str(
        "# If mdadm.conf does not list the mirrors yet, the first apply adds their ARRAY lines.\n",
    );
    for s in &imp.skipped {
        out.push_str(&format!("# not imported: {s}\n"));
    }
    out.push_str(&serde_yaml::to_string(&imp.config).expect("config serializes"));
    out
}
