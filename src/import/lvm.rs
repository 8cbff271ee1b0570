//! Volume groups and logical volumes of the imported file: the PVs as the file names them
//! (mirrors, disks, GPT partitions), and only the LVs hyraid manages (linear, striped, with a
//! dm-writecache or a dm-cache on a cache volume); LVM RAID, mirrors, thin pools and volumes,
//! snapshots, cache pools and VDO are left out and said so, never written as something they are
//! not.

use super::disks::{Builder, size};
use crate::config::raw::*;
use crate::observe::{DevKind, Lv, Observed};
use std::collections::BTreeMap;

/// Why an LV is not one hyraid manages; None when it is.
fn unmanaged(o: &Observed, l: &Lv) -> Option<String> {
    if let Some(origin) = &l.snapshot_of {
        return Some(format!(
            "a snapshot of {origin}; hyraid does not manage snapshots"
        ));
    }
    if l.tags.iter().any(|t| t == crate::config::CACHEVOL_TAG) {
        return Some("a cache volume hyraid left behind (an interrupted writecache detach); the plan removes it when its LV has no writecache".into());
    }
    let kind = |segtype: &str| -> Option<String> {
        Some(match segtype {
            "linear" | "striped" => return None,
            s if s.starts_with("raid") => format!("an LVM {s} LV; hyraid does not manage LVM RAID (a rebuild from a file that named it would lose its redundancy)"),
            "mirror" => "an LVM mirror LV; hyraid does not manage LVM mirrors (a rebuild from a file that named it would lose its redundancy)".into(),
            "thin-pool" => "a thin pool; hyraid does not manage thin provisioning".into(),
            "thin" => "a thin LV; hyraid does not manage thin provisioning".into(),
            "cache" => "a dm-cache LV on a cache pool; hyraid manages dm-cache on a cache volume (`--cachevol`) only".into(),
            "cache-pool" => "a cache pool; hyraid manages dm-writecache and dm-cache on a cache volume (cachevol), not a cache pool".into(),
            "vdo" | "vdo-pool" => "a VDO LV; hyraid does not manage VDO".into(),
            "integrity" => "an LV with dm-integrity; hyraid does not manage it".into(),
            other => format!("an LV of segment type {other}, which hyraid does not manage"),
        })
    };
    match (&l.writecache, &l.cache) {
        (Some(w), _) => {
            let data = o.lv(&l.vg, &w.origin)?;
            kind(&data.segtype).map(|k| format!("a writecache over {k}"))
        }
        (None, Some(c)) => {
            let data = o.lv(&l.vg, &c.origin)?;
            kind(&data.segtype).map(|k| format!("a dm-cache over {k}"))
        }
        (None, None) => kind(&l.segtype),
    }
}

/// The volume groups whose PVs the file can name; `mirror_of`: array kernel name → mirror.
pub(super) fn volume_groups(
    b: &mut Builder,
    mirror_of: &BTreeMap<String, String>,
) -> BTreeMap<String, RawVolumeGroup> {
    let o = b.o;
    let mut vgs = BTreeMap::new();
    'vg: for vg in &o.lvm.vgs {
        if vg.partial {
            b.skipped.push(format!(
                "vg {}: a PV is missing (partial VG); import it when all its PVs are present",
                vg.name
            ));
            continue;
        }
        let saved = b.checkpoint();
        let mut pvs = Vec::new();
        let mut pv_name: BTreeMap<String, String> = BTreeMap::new();
        for p in o.pvs_of(&vg.name) {
            let n = if o.array(&p.kname).is_some()
                || o.luks
                    .iter()
                    .any(|l| l.mapping.as_ref().is_some_and(|m| m.kname == p.kname))
            {
                match mirror_of.get(&p.kname) {
                    Some(n) => Ok(n.clone()),
                    None => Err(format!("PV {} is not a mirror hyraid manages", p.name)),
                }
            } else {
                match o.device(&p.kname) {
                    Some(d) if matches!(d.kind, DevKind::Disk | DevKind::Part) => {
                        b.device(d).map_err(|e| format!("PV {}: {e}", p.name))
                    }
                    _ => Err(format!(
                        "PV {} is neither a mirror, a disk nor a partition",
                        p.name
                    )),
                }
            };
            match n {
                Ok(n) => {
                    pv_name.insert(p.kname.clone(), n.clone());
                    pvs.push(n);
                }
                Err(why) => {
                    b.rollback(saved);
                    b.skipped.push(format!("vg {}: {why}", vg.name));
                    continue 'vg;
                }
            }
        }
        let mut lvs = BTreeMap::new();
        for l in o.lvm.lvs.iter().filter(|l| l.vg == vg.name && !l.hidden) {
            let object = format!("lv {}/{}", vg.name, l.name);
            if let Some(why) = unmanaged(o, l) {
                b.skipped.push(format!("{object}: {why}; it is left out, and plan reports it as foreign and never touches it"));
                continue;
            }
            let writecache = match &l.writecache {
                None => None,
                Some(w) => match o.lv(&vg.name, &w.cachevol) {
                    None => {
                        b.skipped
                            .push(format!("{object}: its writecache volume was not found"));
                        continue;
                    }
                    Some(cv) => Some(RawWritecache {
                        size: size(cv.size),
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
                    }),
                },
            };
            let cache = match super::cache::dm_cache(o, l, &pv_name) {
                Ok(c) => c,
                Err(why) => {
                    b.skipped.push(format!("{object}: {why}"));
                    continue;
                }
            };
            let own = o
                .filesystems
                .iter()
                .find(|f| !f.md && f.mapper.is_none() && f.vg == vg.name && f.lv == l.name);
            let luks = own.filter(|f| f.fstype == crate::observe::luks::LUKS_FSTYPE);
            let default = crate::config::encryption::default_lv_name(&vg.name, &l.name);
            let encryption =
                match luks.map(|f| super::encryption::encryption(o, &f.kname, &default)) {
                    Some(Err(why)) => {
                        b.skipped.push(format!("{object}: {why}"));
                        continue;
                    }
                    Some(Ok(e)) => e.map(|(e, _)| e),
                    None => None,
                };
            let data = l
                .writecache
                .as_ref()
                .map(|w| &w.origin)
                .or(l.cache.as_ref().map(|c| &c.origin))
                .and_then(|origin| o.lv(&vg.name, origin))
                .unwrap_or(l);
            lvs.insert(
                l.name.clone(),
                RawLogicalVolume {
                    size: size(l.size),
                    pvs: None,
                    stripes: (data.segtype == "striped" && data.stripes > 1)
                        .then_some(data.stripes),
                    // LVM's default (64KiB) is left out, as the file would leave it.
                    stripe_size: data.stripe_size.filter(|s| *s != 64 << 10).map(size),
                    writecache,
                    cache,
                    filesystem: lv_filesystem(o, &vg.name, &l.name, encryption.is_some()),
                    encryption,
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
    vgs
}

/// The `filesystem:` of an LV (or, `encrypted`, of its open LUKS mapping) that carries ext4 or
/// xfs and has a line in /etc/fstab (by UUID or by its /dev/VG/LV or /dev/mapper name).
fn lv_filesystem(
    o: &Observed,
    vg: &str,
    lv: &str,
    encrypted: bool,
) -> Option<crate::config::filesystem::RawFilesystem> {
    let f = o
        .filesystems
        .iter()
        .find(|f| !f.md && f.mapper.is_some() == encrypted && f.vg == vg && f.lv == lv)?;
    let paths = match &f.mapper {
        Some(m) => vec![format!("/dev/mapper/{m}")],
        None => {
            let dm = crate::observe::filesystems::dm_name(vg, lv);
            vec![format!("/dev/{vg}/{lv}"), format!("/dev/mapper/{dm}")]
        }
    };
    filesystem(o, f, &paths)
}

/// The `filesystem:` of a device that carries ext4 or xfs and has a line in /etc/fstab, by any
/// name mount(8) reads ([`crate::plan::fstab::sources`]: UUID, label, one of the device's `paths`): its mount point and options as that line has them, which
/// the plan then leaves where it is.
pub(super) fn filesystem(
    o: &Observed,
    f: &crate::observe::Filesystem,
    paths: &[String],
) -> Option<crate::config::filesystem::RawFilesystem> {
    use crate::config::filesystem::{FsType, RawFilesystem};
    let fstype = match f.fstype.as_str() {
        "ext4" => FsType::Ext4,
        "xfs" => FsType::Xfs,
        _ => return None,
    };
    let names = crate::plan::fstab::sources(f.uuid.as_deref(), f.label.as_deref(), paths);
    let fstab = o.boot.fstab.as_deref()?;
    let line = crate::plan::fstab::lines(fstab)
        .into_iter()
        .find(|l| names.contains(&l.0))?;
    let options: Vec<String> = line
        .3
        .split(',')
        .filter(|x| !x.is_empty() && *x != "defaults")
        .map(str::to_string)
        .collect();
    Some(RawFilesystem {
        fstype,
        label: None,
        mount: Some(line.1),
        options,
    })
}
