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

/// The schema of a writecache's `settings`: the keys [`check_writecache_setting`] knows, each
/// with the values it takes (as an integer or its text), and no other key.
pub(in crate::config) fn writecache_settings_schema() -> serde_json::Value {
    use serde_json::json;
    let whole = json!({ "anyOf": [
        { "type": "integer", "minimum": 0 },
        { "type": "string", "pattern": "^[0-9]+$" }
    ] });
    let props: serde_json::Map<String, serde_json::Value> = WC_KEYS
        .iter()
        .map(|&k| {
            let v = match k {
                "block_size" => json!({ "enum": [512, 4096, "512", "4096"] }),
                "high_watermark" | "low_watermark" => json!({ "anyOf": [
                    { "type": "integer", "minimum": 0, "maximum": 100 },
                    { "type": "string", "pattern": "^0*([0-9]{1,2}|100)$" }
                ] }),
                "fua" | "nofua" | "cleaner" => json!({ "enum": [0, 1, "0", "1"] }),
                _ => whole.clone(),
            };
            (k.to_string(), v)
        })
        .collect();
    json!({
        "type": "object",
        "properties": props,
        "additionalProperties": false
    })
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

/// What a PV name may be: a mirror of the file, a disk or a `disk:partition`.
struct PvNames<'a> {
    refs: &'a Refs<'a>,
    mirrors: &'a BTreeMap<String, MirrorSpec>,
}

impl PvNames<'_> {
    /// The device a PV name refers to; an error at `pointer` when it names none.
    fn resolve(&self, c: &mut Ctx, pointer: &str, name: &str) -> Option<DeviceRef> {
        let (disks, devices, mirrors) = (self.refs.disks, &self.refs.devices, self.mirrors);
        if mirrors.contains_key(name) {
            Some(DeviceRef::Mirror(name.to_string()))
        } else if devices.contains(name) {
            Some(DeviceRef::Disk(name.to_string()))
        } else if disks.contains_key(split_device(name).0) {
            let (msg, hint) = self.refs.device_error(name);
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
    }
}

pub(super) fn volume_groups(
    c: &mut Ctx,
    raw: &RawConfig,
    refs: &Refs,
    mirrors: &BTreeMap<String, MirrorSpec>,
    used_by: &mut HashMap<String, String>,
) -> BTreeMap<String, VgSpec> {
    let names = PvNames { refs, mirrors };
    let mut vgs = BTreeMap::new();
    for (vg_name, vg) in &raw.volume_groups {
        let p = format!("/volume_groups/{}", seg(vg_name));
        check_vg_name(c, &p, vg_name);
        let pvs = vg_pvs(c, &names, &p, vg_name, vg, used_by);
        let lvs = lvs(c, &names, &p, vg_name, vg, &pvs);
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

/// A VG name LVM takes: a valid name, and not an entry /dev already has.
fn check_vg_name(c: &mut Ctx, p: &str, vg_name: &str) {
    if let Err(msg) = check_name(vg_name, 64) {
        c.err(p, true, msg, None);
    } else if DEV_ENTRIES.contains(&vg_name) {
        c.err(
            p,
            true,
            format!("VG name `{vg_name}` is taken by /dev/{vg_name}"),
            Some("LVM puts a VG's LVs in /dev/NAME and refuses a name that exists there; pick another".into()),
        );
    }
}

/// The VG's PVs: at least one, each a device of the file, listed once, used by nothing else, and
/// not a mirror that is going away while the VG stays.
fn vg_pvs(
    c: &mut Ctx,
    names: &PvNames,
    p: &str,
    vg_name: &str,
    vg: &RawVolumeGroup,
    used_by: &mut HashMap<String, String>,
) -> Vec<DeviceRef> {
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
        let Some(r) = names.resolve(c, &pp, pv) else {
            continue;
        };
        if let DeviceRef::Mirror(mn) = &r
            && names.mirrors[mn].absent
            && vg.state != Some(ObjectState::Absent)
        {
            c.err(
                &format!("/mirrors/{}/state", seg(mn)),
                false,
                format!("mirror `{mn}` is `state: absent`, but volume group `{vg_name}` still has it as a PV"),
                Some(format!("first move the data off it (`pvmove`) and remove `{mn}` from `volume_groups.{vg_name}.pvs`, or set the volume group `state: absent` too")),
            );
        }
        if let DeviceRef::Mirror(mn) = &r
            && names.mirrors[mn].filesystem.is_some()
        {
            c.err(
                &format!("/mirrors/{}/filesystem", seg(mn)),
                true,
                format!("mirror `{mn}` carries a filesystem and is also a PV of volume group `{vg_name}`"),
                Some(format!("a device is a filesystem or a PV, not both: remove `filesystem` from mirror `{mn}`, or `{mn}` from `volume_groups.{vg_name}.pvs` (give the LV on it the filesystem)")),
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
    pvs
}

/// The VG's LVs, each checked for its name, size, placement, stripes and writecache; only one
/// may take a share of the free space.
fn lvs(
    c: &mut Ctx,
    names: &PvNames,
    p: &str,
    vg_name: &str,
    vg: &RawVolumeGroup,
    pvs: &[DeviceRef],
) -> BTreeMap<String, LvSpec> {
    let mut lvs = BTreeMap::new();
    let mut free_pct_lv: Option<String> = None;
    for (lv_name, lv) in &vg.lvs {
        let lp = format!("{p}/lvs/{}", seg(lv_name));
        check_lv_name(c, &lp, lv_name);
        let size = lv_size(c, &lp, lv);
        if matches!(size, LvSize::PercentFree(_)) {
            if let Some(prev) = &free_pct_lv {
                c.err(&format!("{lp}/size"), false, format!("LV `{prev}` already takes a share of free space in `{vg_name}`"), Some(
                    "only one LV per VG may use N%FREE (the order of creation would decide the sizes); use N%VG or a fixed size".into(),
                ));
            }
            free_pct_lv = Some(lv_name.clone());
        }
        let placement = placement(c, names, &lp, vg_name, lv, pvs);
        check_stripes(c, &lp, lv, placement.as_deref(), pvs);
        let stripe_size = stripe_size(c, &lp, lv);
        let writecache = lv.writecache.as_ref().map(|wc| {
            let spec = writecache(c, names, &lp, vg_name, wc, pvs, placement.as_deref());
            let cv = cachevol_name(lv_name);
            if vg.lvs.contains_key(&cv) {
                c.err(&format!("{lp}/writecache"), true, format!("the cache volume of `{lv_name}` is named `{cv}`, which is also an LV in this file"), Some("rename that LV".into()));
            }
            spec
        });
        let cache = dm_cache(c, names, &lp, vg_name, lv, pvs, placement.as_deref());
        if cache.is_some() && vg.lvs.contains_key(&dm_cachevol_name(lv_name)) {
            let cv = dm_cachevol_name(lv_name);
            c.err(&format!("{lp}/cache"), true, format!("the cache volume of `{lv_name}` is named `{cv}`, which is also an LV in this file"), Some("rename that LV".into()));
        }
        lvs.insert(
            lv_name.clone(),
            LvSpec {
                name: lv_name.clone(),
                size,
                pvs: placement,
                stripes: lv.stripes,
                stripe_size,
                writecache,
                cache,
                filesystem: lv.filesystem.as_ref().map(|f| filesystem(c, &lp, f)),
                encryption: super::encryption::lv_encryption(c, &lp, vg_name, lv_name, lv),
                absent: lv.state == Some(ObjectState::Absent),
                tags: vec![],
            },
        );
    }
    lvs
}

/// An LV name LVM takes: valid, without the parts LVM reserves for its hidden volumes.
fn check_lv_name(c: &mut Ctx, lp: &str, lv_name: &str) {
    if let Err(msg) = check_name(lv_name, 60) {
        c.err(lp, true, msg, None);
    } else if let Some(r) = LVM_RESERVED.iter().find(|r| lv_name.contains(*r)) {
        c.err(
            lp,
            true,
            format!("LV name `{lv_name}` contains `{r}`, which LVM reserves for hidden volumes"),
            None,
        );
    } else if lv_name == "snapshot"
        || lv_name == "pvmove"
        || lv_name.starts_with("pvmove")
        || lv_name.starts_with("snapshot")
    {
        c.err(
            lp,
            true,
            format!("LV name `{lv_name}` is reserved by LVM"),
            None,
        );
    }
}

/// The LV's size: bytes above zero, or a size text (with units, N%VG, N%FREE).
fn lv_size(c: &mut Ctx, lp: &str, lv: &RawLogicalVolume) -> LvSize {
    match &lv.size {
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
    }
}

/// The PVs the LV is placed on, when the file says: each one a PV of its VG.
fn placement(
    c: &mut Ctx,
    names: &PvNames,
    lp: &str,
    vg_name: &str,
    lv: &RawLogicalVolume,
    pvs: &[DeviceRef],
) -> Option<Vec<DeviceRef>> {
    lv.pvs.as_ref().map(|l| {
        l.iter()
            .enumerate()
            .filter_map(|(i, n)| {
                let pp = format!("{lp}/pvs/{i}");
                let r = names.resolve(c, &pp, n)?;
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
    })
}

/// Stripes: at least one, and no more than the PVs the LV may use.
fn check_stripes(
    c: &mut Ctx,
    lp: &str,
    lv: &RawLogicalVolume,
    placement: Option<&[DeviceRef]>,
    pvs: &[DeviceRef],
) {
    if let Some(s) = lv.stripes {
        let avail = placement.map(|p| p.len()).unwrap_or(pvs.len());
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
                format!("{s} stripes need {s} PVs, but only {avail} are available to this LV"),
                None,
            );
        }
    }
}

/// The stripe size: with 2 stripes or more, a power of two of at least 4KiB (the page size;
/// lvm2's `_validate_stripe_params`). The VG's extent size bounds it too: the plan checks that.
fn stripe_size(c: &mut Ctx, lp: &str, lv: &RawLogicalVolume) -> Option<u64> {
    let raw = lv.stripe_size.as_ref()?;
    let sp = format!("{lp}/stripe_size");
    let b = match super::size_bytes(raw) {
        Ok(b) => b,
        Err(e) => {
            c.err(&sp, false, e, None);
            return None;
        }
    };
    if lv.stripes.unwrap_or(1) < 2 {
        c.err(
            &sp,
            true,
            "`stripe_size` needs `stripes` of 2 or more (LVM ignores it on one stripe)",
            Some("set `stripes`, or remove `stripe_size`".into()),
        );
        return None;
    }
    if !b.is_power_of_two() || b < 4096 {
        c.err(
            &sp,
            false,
            format!("stripe size {b} bytes must be a power of two of at least 4KiB"),
            Some("e.g. `64KiB` (LVM's default) or `256KiB`".into()),
        );
        return None;
    }
    Some(b)
}

/// The LV's writecache: its size, its fast PVs (in the VG, apart from the LV's data) and its
/// settings. (The name of its cache volume is checked with the VG's LVs.)
fn writecache(
    c: &mut Ctx,
    names: &PvNames,
    lp: &str,
    vg_name: &str,
    wc: &RawWritecache,
    pvs: &[DeviceRef],
    placement: Option<&[DeviceRef]>,
) -> WritecacheSpec {
    let wp = format!("{lp}/writecache");
    let size = cache_size(c, &wp, &wc.size);
    let cache_pvs = cache_pvs(
        c,
        names,
        &wp,
        vg_name,
        &wc.pvs,
        pvs,
        placement,
        "writecache",
    );
    let settings = writecache_settings(c, &wp, wc);
    WritecacheSpec {
        size,
        pvs: cache_pvs,
        settings,
    }
}

/// The size of a cache volume, in bytes (1 when it is not a size, after the error).
fn cache_size(c: &mut Ctx, wp: &str, size: &RawSize) -> u64 {
    match size_bytes(size) {
        Ok(b) => b,
        Err(e) => {
            c.err(&format!("{wp}/size"), false, e, None);
            1
        }
    }
}

/// The fast PVs of a writecache or dm-cache: at least one, each in the VG and apart from the
/// LV's data.
#[allow(clippy::too_many_arguments)]
fn cache_pvs(
    c: &mut Ctx,
    names: &PvNames,
    wp: &str,
    vg_name: &str,
    listed: &[String],
    pvs: &[DeviceRef],
    placement: Option<&[DeviceRef]>,
    kind: &str,
) -> Vec<DeviceRef> {
    if listed.is_empty() {
        c.err(
            &format!("{wp}/pvs"),
            false,
            format!("{kind} needs at least one fast PV"),
            None,
        );
    }
    listed
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let pp = format!("{wp}/pvs/{i}");
            let r = names.resolve(c, &pp, n)?;
            if !pvs.contains(&r) {
                c.err(
                    &pp,
                    false,
                    format!("`{n}` is not a PV of volume group `{vg_name}`"),
                    Some("the cache volume must be in the same VG as the LV".into()),
                );
                return None;
            }
            if placement.is_some_and(|pl| pl.contains(&r)) {
                c.err(
                    &pp,
                    false,
                    format!("`{n}` also holds the LV's data"),
                    Some(format!("put the {kind} on a different, fast PV")),
                );
                return None;
            }
            Some(r)
        })
        .collect()
}

/// The LV's dm-cache: its mode, size and fast PVs; never beside a writecache.
fn dm_cache(
    c: &mut Ctx,
    names: &PvNames,
    lp: &str,
    vg_name: &str,
    lv: &RawLogicalVolume,
    pvs: &[DeviceRef],
    placement: Option<&[DeviceRef]>,
) -> Option<CacheSpec> {
    let raw = lv.cache.as_ref()?;
    let wp = format!("{lp}/cache");
    if lv.writecache.is_some() {
        c.err(
            &wp,
            true,
            "an LV has a writecache or a cache, not both",
            Some("keep one of `writecache` and `cache`".into()),
        );
    }
    let size = cache_size(c, &wp, &raw.size);
    let cache_pvs = cache_pvs(c, names, &wp, vg_name, &raw.pvs, pvs, placement, "cache");
    Some(CacheSpec {
        mode: raw.mode.unwrap_or_default(),
        size,
        pvs: cache_pvs,
    })
}

/// The writecache settings: each one lvm2 2.03.16 knows with a value it takes, `fua` and `nofua`
/// not both, the low watermark not above the high one.
fn writecache_settings(c: &mut Ctx, wp: &str, wc: &RawWritecache) -> BTreeMap<String, String> {
    let mut settings = BTreeMap::new();
    for (k, v) in &wc.settings {
        let v = v.render();
        if let Err(msg) = check_writecache_setting(k, &v) {
            let hint = if WC_KEYS.contains(&k.as_str()) {
                None
            } else {
                nearest(k, WC_KEYS.iter())
                    .map(|n| format!("did you mean `{n}`?"))
                    .or_else(|| Some(format!("lvm2 2.03.16 knows: {}", WC_KEYS.join(", "))))
            };
            c.err(&format!("{wp}/settings/{}", seg(k)), true, msg, hint);
        }
        settings.insert(k.clone(), v);
    }
    if settings.get("fua").is_some_and(|v| v == "1")
        && settings.get("nofua").is_some_and(|v| v == "1")
    {
        c.err(
            &format!("{wp}/settings/nofua"),
            true,
            "`fua` and `nofua` exclude each other",
            Some("set one of them".into()),
        );
    }
    if let (Some(h), Some(l)) = (
        settings.get("high_watermark"),
        settings.get("low_watermark"),
    ) && let (Ok(h), Ok(l)) = (h.parse::<u64>(), l.parse::<u64>())
        && l > h
    {
        c.err(
            &format!("{wp}/settings/low_watermark"),
            true,
            format!("low_watermark {l} is above high_watermark {h}"),
            None,
        );
    }
    settings
}

/// The filesystem of an LV or a mirror (at `lp`): label, mount point and options checked at
/// their keys.
pub(super) fn filesystem(
    c: &mut Ctx,
    lp: &str,
    fs: &crate::config::filesystem::RawFilesystem,
) -> crate::config::filesystem::FilesystemSpec {
    for (key, message, hint) in crate::config::filesystem::check(fs) {
        c.err(&format!("{lp}/filesystem/{key}"), false, message, hint);
    }
    fs.into()
}
