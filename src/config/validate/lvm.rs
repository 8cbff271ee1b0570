//! Volume groups, logical volumes and their writecaches.

use super::disks::Refs;
use super::names::{DEV_ENTRIES, LVM_RESERVED, check_name};
use super::{Ctx, nearest, seg, size_bytes};
use crate::config::desired::*;
use crate::config::raw::*;
use crate::config::size::{self, LvSize};
use std::collections::{BTreeMap, HashMap};

/// dm-writecache settings lvm2 2.03.16 understands, with their value check.
fn check_writecache_setting(key: &str, value: &str) -> Result<(), String> {
    let num = || {
        value
            .parse::<u64>()
            .map_err(|_| format!("`{key}` takes a whole number, not `{value}`"))
    };
    match key {
        "block_size" => match value {
            "512" | "4096" => Ok(()),
            _ => Err(format!("`block_size` must be 512 or 4096, not `{value}`")),
        },
        "high_watermark" | "low_watermark" => {
            if num()? <= 100 {
                Ok(())
            } else {
                Err(format!("`{key}` is a percentage, 0 to 100"))
            }
        }
        "writeback_jobs" | "autocommit_blocks" | "autocommit_time" | "max_age" => num().map(|_| ()),
        "fua" | "nofua" | "cleaner" => match value {
            "0" | "1" => Ok(()),
            _ => Err(format!("`{key}` is 0 or 1")),
        },
        "metadata_only" | "pause_writeback" => Err(format!(
            "`{key}` needs lvm2 2.03.18 or later; lvm2 2.03.16 (Debian 12) asks an unanswerable question and aborts"
        )),
        _ => Err(format!("unknown writecache setting `{key}`")),
    }
}

const WC_KEYS: &[&str] = &[
    "block_size",
    "high_watermark",
    "low_watermark",
    "writeback_jobs",
    "autocommit_blocks",
    "autocommit_time",
    "max_age",
    "fua",
    "nofua",
    "cleaner",
];

pub(super) fn volume_groups(
    c: &mut Ctx,
    raw: &RawConfig,
    refs: &Refs,
    mirrors: &BTreeMap<String, MirrorSpec>,
    used_by: &mut HashMap<String, String>,
) -> BTreeMap<String, VgSpec> {
    let (disks, devices) = (refs.disks, &refs.devices);
    let device_error = |name: &str| refs.device_error(name);
    let mut vgs = BTreeMap::new();
    let resolve = |c: &mut Ctx, pointer: &str, name: &str| -> Option<DeviceRef> {
        if mirrors.contains_key(name) {
            Some(DeviceRef::Mirror(name.to_string()))
        } else if devices.contains(name) {
            Some(DeviceRef::Disk(name.to_string()))
        } else if disks.contains_key(split_device(name).0) {
            let (msg, hint) = device_error(name);
            c.err(pointer, false, msg, Some(hint));
            None
        } else {
            let hint = nearest(name, mirrors.keys().chain(devices.iter()))
                .map(|n| format!("did you mean `{n}`?"))
                .unwrap_or_else(|| "PVs are mirror, disk or `disk:partition` names".into());
            c.err(
                pointer,
                false,
                format!("`{name}` is neither a mirror nor a disk"),
                Some(hint),
            );
            None
        }
    };
    for (vg_name, vg) in &raw.volume_groups {
        let p = format!("/volume_groups/{}", seg(vg_name));
        if let Err(msg) = check_name(vg_name, 64) {
            c.err(&p, true, msg, None);
        } else if DEV_ENTRIES.contains(&vg_name.as_str()) {
            c.err(
                &p,
                true,
                format!("VG name `{vg_name}` is taken by /dev/{vg_name}"),
                Some("LVM puts a VG's LVs in /dev/NAME and refuses a name that exists there; pick another".into()),
            );
        }
        if vg.pvs.is_empty() {
            c.err(
                &format!("{p}/pvs"),
                false,
                format!("volume group `{vg_name}` has no PVs"),
                None,
            );
        }
        let mut pvs = Vec::new();
        for (i, pv) in vg.pvs.iter().enumerate() {
            let pp = format!("{p}/pvs/{i}");
            let Some(r) = resolve(c, &pp, pv) else {
                continue;
            };
            if let DeviceRef::Mirror(mn) = &r
                && mirrors[mn].absent
                && vg.state != Some(ObjectState::Absent)
            {
                c.err(
                    &format!("/mirrors/{}/state", seg(mn)),
                    false,
                    format!("mirror `{mn}` is `state: absent`, but volume group `{vg_name}` still has it as a PV"),
                    Some(format!("first move the data off it (`pvmove`) and remove `{mn}` from `volume_groups.{vg_name}.pvs`, or set the volume group `state: absent` too")),
                );
            }
            if pvs.contains(&r) {
                c.err(
                    &pp,
                    false,
                    format!("`{pv}` is listed twice in volume group `{vg_name}`"),
                    None,
                );
                continue;
            }
            if let Some(other) = used_by.get(pv) {
                c.err(
                    &pp,
                    false,
                    format!("`{pv}` is already used by {other}"),
                    Some("a device belongs to one mirror or volume group".into()),
                );
                continue;
            }
            used_by.insert(pv.clone(), format!("volume group `{vg_name}`"));
            pvs.push(r);
        }
        let mut lvs = BTreeMap::new();
        let mut free_pct_lv: Option<String> = None;
        for (lv_name, lv) in &vg.lvs {
            let lp = format!("{p}/lvs/{}", seg(lv_name));
            if let Err(msg) = check_name(lv_name, 60) {
                c.err(&lp, true, msg, None);
            } else if let Some(r) = LVM_RESERVED.iter().find(|r| lv_name.contains(*r)) {
                c.err(
                    &lp,
                    true,
                    format!(
                        "LV name `{lv_name}` contains `{r}`, which LVM reserves for hidden volumes"
                    ),
                    None,
                );
            } else if lv_name == "snapshot"
                || lv_name == "pvmove"
                || lv_name.starts_with("pvmove")
                || lv_name.starts_with("snapshot")
            {
                c.err(
                    &lp,
                    true,
                    format!("LV name `{lv_name}` is reserved by LVM"),
                    None,
                );
            }
            let size = match &lv.size {
                RawSize::Bytes(b) if *b > 0 => LvSize::Bytes(*b),
                RawSize::Bytes(_) => {
                    c.err(&format!("{lp}/size"), false, "size is zero", None);
                    LvSize::Bytes(1)
                }
                RawSize::Text(t) => match size::parse_lv_size(t) {
                    Ok(s) => s,
                    Err(e) => {
                        c.err(&format!("{lp}/size"), false, e.0, None);
                        LvSize::Bytes(1)
                    }
                },
            };
            if matches!(size, LvSize::PercentFree(_)) {
                if let Some(prev) = &free_pct_lv {
                    c.err(&format!("{lp}/size"), false, format!("LV `{prev}` already takes a share of free space in `{vg_name}`"), Some(
                        "only one LV per VG may use N%FREE (the order of creation would decide the sizes); use N%VG or a fixed size".into(),
                    ));
                }
                free_pct_lv = Some(lv_name.clone());
            }
            let placement = lv.pvs.as_ref().map(|l| {
                l.iter()
                    .enumerate()
                    .filter_map(|(i, n)| {
                        let pp = format!("{lp}/pvs/{i}");
                        let r = resolve(c, &pp, n)?;
                        if !pvs.contains(&r) {
                            c.err(
                                &pp,
                                false,
                                format!("`{n}` is not a PV of volume group `{vg_name}`"),
                                Some(format!(
                                    "add it to `volume_groups.{vg_name}.pvs` or pick one of those"
                                )),
                            );
                            return None;
                        }
                        Some(r)
                    })
                    .collect::<Vec<_>>()
            });
            if let Some(s) = lv.stripes {
                let avail = placement.as_ref().map(|p| p.len()).unwrap_or(pvs.len());
                if s == 0 {
                    c.err(
                        &format!("{lp}/stripes"),
                        false,
                        "stripes must be at least 1",
                        None,
                    );
                } else if s as usize > avail {
                    c.err(
                        &format!("{lp}/stripes"),
                        false,
                        format!(
                            "{s} stripes need {s} PVs, but only {avail} are available to this LV"
                        ),
                        None,
                    );
                }
            }
            let writecache = lv.writecache.as_ref().map(|wc| {
                let wp = format!("{lp}/writecache");
                let size = match size_bytes(&wc.size) {
                    Ok(b) => b,
                    Err(e) => {
                        c.err(&format!("{wp}/size"), false, e, None);
                        1
                    }
                };
                if wc.pvs.is_empty() {
                    c.err(&format!("{wp}/pvs"), false, "writecache needs at least one fast PV", None);
                }
                let cache_pvs: Vec<DeviceRef> = wc
                    .pvs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, n)| {
                        let pp = format!("{wp}/pvs/{i}");
                        let r = resolve(c, &pp, n)?;
                        if !pvs.contains(&r) {
                            c.err(&pp, false, format!("`{n}` is not a PV of volume group `{vg_name}`"), Some("the cache volume must be in the same VG as the LV".into()));
                            return None;
                        }
                        if placement.as_ref().is_some_and(|pl| pl.contains(&r)) {
                            c.err(&pp, false, format!("`{n}` also holds the LV's data"), Some("put the writecache on a different, fast PV".into()));
                            return None;
                        }
                        Some(r)
                    })
                    .collect();
                let mut settings = BTreeMap::new();
                for (k, v) in &wc.settings {
                    let v = v.render();
                    if let Err(msg) = check_writecache_setting(k, &v) {
                        let hint = if WC_KEYS.contains(&k.as_str()) {
                            None
                        } else {
                            nearest(k, WC_KEYS.iter()).map(|n| format!("did you mean `{n}`?")).or_else(|| Some(format!("lvm2 2.03.16 knows: {}", WC_KEYS.join(", "))))
                        };
                        c.err(&format!("{wp}/settings/{}", seg(k)), true, msg, hint);
                    }
                    settings.insert(k.clone(), v);
                }
                if settings.get("fua").is_some_and(|v| v == "1") && settings.get("nofua").is_some_and(|v| v == "1") {
                    c.err(&format!("{wp}/settings/nofua"), true, "`fua` and `nofua` exclude each other", Some("set one of them".into()));
                }
                if let (Some(h), Some(l)) = (settings.get("high_watermark"), settings.get("low_watermark"))
                    && let (Ok(h), Ok(l)) = (h.parse::<u64>(), l.parse::<u64>())
                        && l > h {
                            c.err(&format!("{wp}/settings/low_watermark"), true, format!("low_watermark {l} is above high_watermark {h}"), None);
                        }
                let cv = cachevol_name(lv_name);
                if vg.lvs.contains_key(&cv) {
                    c.err(&wp, true, format!("the cache volume of `{lv_name}` is named `{cv}`, which is also an LV in this file"), Some("rename that LV".into()));
                }
                WritecacheSpec { size, pvs: cache_pvs, settings }
            });
            lvs.insert(
                lv_name.clone(),
                LvSpec {
                    name: lv_name.clone(),
                    size,
                    pvs: placement,
                    stripes: lv.stripes,
                    writecache,
                    absent: lv.state == Some(ObjectState::Absent),
                },
            );
        }
        vgs.insert(
            vg_name.clone(),
            VgSpec {
                name: vg_name.clone(),
                pvs,
                lvs,
                absent: vg.state == Some(ObjectState::Absent),
            },
        );
    }
    vgs
}
