//! The LV commands: lvcreate, lvextend, lvchange (activation, cache settings), lvconvert
//! (writecache attach and split) and lvremove — lvm2 2.03.16 behaviour, including its refusals.

use super::lvm::{EXTENT, pv_target};
use super::lvm_alloc::{Amount, allocate, create_extents, parse_amount};
use crate::observe::{Lv, LvWritecache};
use crate::sim::world::SimState;
use std::collections::BTreeMap;

/// Free extents of the PVs, in the order given, for the allocator.
fn free_of(st: &SimState, pvs: &[String]) -> Vec<(String, u64)> {
    pvs.iter()
        .map(|k| {
            (
                k.clone(),
                st.world.pv(k).map(|p| p.free / EXTENT).unwrap_or(0),
            )
        })
        .collect()
}

pub(super) fn split_lv(path: &str) -> Result<(String, String), String> {
    path.split_once('/')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(|| format!("  Invalid logical volume name {path}\n"))
}

pub(super) fn lvcreate(st: &mut SimState, args: &[&str]) -> Result<String, String> {
    let (mut name, mut amount, mut stripes, mut pos) = (None, None, 1u32, Vec::new());
    let mut tags = Vec::new();
    let mut stripe_size: Option<u64> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "--yes" => {}
            "-n" => {
                name = args.get(i + 1).map(|s| s.to_string());
                i += 1;
            }
            f @ ("-L" | "-l") => {
                amount = Some(parse_amount(f, args.get(i + 1).copied().unwrap_or(""))?);
                i += 1;
            }
            "--addtag" => {
                tags.push(
                    args.get(i + 1)
                        .ok_or("  --addtag needs a tag\n")?
                        .to_string(),
                );
                i += 1;
            }
            "-i" => {
                stripes = args
                    .get(i + 1)
                    .and_then(|s| s.parse().ok())
                    .ok_or("  Invalid stripes\n")?;
                i += 1;
            }
            "-I" | "--stripesize" => {
                let v = args.get(i + 1).copied().unwrap_or("");
                stripe_size = Some(
                    parse_stripe_size(v)
                        .ok_or_else(|| format!("  Invalid argument for --stripesize: {v}\n"))?,
                );
                i += 1;
            }
            a if a.starts_with('-') => {
                return Err(format!(
                    "  the simulated host does not model lvcreate option {a}\n"
                ));
            }
            a => pos.push(a.to_string()),
        }
        i += 1;
    }
    let (stripe_size, mut said) = stripe_size_of(stripes, stripe_size)?;
    let name = name.ok_or("  Please specify a name\n")?;
    let vg = pos
        .first()
        .cloned()
        .ok_or("  Please specify a volume group\n")?;
    let Some(vgo) = st.world.vg(&vg).cloned() else {
        return Err(format!("  Volume group \"{vg}\" not found\n"));
    };
    if st.world.lv(&vg, &name).is_some() {
        return Err(format!(
            "  Logical Volume \"{name}\" already exists in volume group \"{vg}\"\n"
        ));
    }
    let pvs: Vec<String> = if pos.len() > 1 {
        pos[1..]
            .iter()
            .map(|d| pv_target(st, d))
            .collect::<Result<_, _>>()?
    } else {
        st.world.pvs_of(&vg).map(|p| p.kname.clone()).collect()
    };
    let vg_free = vgo.free_count();
    let amount = amount.ok_or("  Please specify either size or extents\n")?;
    let (extents, approx) = create_extents(amount, vg_free, vgo.extent_count(), stripes)?;
    if !approx && vg_free < extents {
        return Err(format!(
            "  Volume group \"{vg}\" has insufficient free space ({vg_free} extents): {extents} required.\n"
        ));
    }
    let alloc =
        allocate(&free_of(st, &pvs), extents, stripes, approx).map_err(|e| e.message(&name))?;
    if alloc.is_empty() {
        return Err(format!(
            "  Insufficient suitable allocatable extents found for logical volume {name}.\n"
        ));
    }
    let extents: u64 = alloc.values().sum();
    let stripe_size = stripe_size.map(|s| {
        if s > vgo.extent_size {
            said.push_str(&format!(
                "  Reducing requested stripe size {} to maximum, physical extent size {}.\n",
                display_size(s),
                display_size(vgo.extent_size)
            ));
        }
        s.min(vgo.extent_size)
    });
    let n = st.next_serial();
    st.world.lvm.lvs.push(Lv {
        vg: vg.clone(),
        name: name.clone(),
        uuid: format!("lv{n:04}-sim"),
        hidden: false,
        size: extents * EXTENT,
        segtype: if stripes > 1 {
            "striped".into()
        } else {
            "linear".into()
        },
        stripes,
        stripe_size,
        active: true,
        extents: alloc,
        writecache: None,
        cache: None,
        tags,
        snapshot_of: None,
        pvmove: None,
        locked: false,
    });
    Ok(format!("{said}  Logical volume \"{name}\" created.\n"))
}

/// `-I SIZE` as lvm2 reads it (`sizekb_VAL`): KiB unless a unit follows; None when unreadable.
fn parse_stripe_size(v: &str) -> Option<u64> {
    let (n, shift) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 10),
        'm' | 'M' => (&v[..v.len() - 1], 20),
        'g' | 'G' => (&v[..v.len() - 1], 30),
        c if c.is_ascii_digit() => (v, 10),
        _ => return None,
    };
    n.parse::<u64>().ok().map(|n| n << shift)
}

/// lvm2's size display (`display_size`): two decimals in the largest binary unit.
fn display_size(b: u64) -> String {
    let (v, u) = if b >= 1 << 30 {
        (b as f64 / (1u64 << 30) as f64, "GiB")
    } else if b >= 1 << 20 {
        (b as f64 / (1u64 << 20) as f64, "MiB")
    } else {
        (b as f64 / 1024.0, "KiB")
    };
    format!("{v:.2} {u}")
}

/// The stripe size an LV of `stripes` gets (`_validate_stripe_params` in tools/toollib.c): none
/// on one stripe (an `-I` is ignored, and said so), 64 KiB by default, else a power of two of
/// at least the 4 KiB page; with what lvcreate prints about it.
fn stripe_size_of(stripes: u32, asked: Option<u64>) -> Result<(Option<u64>, String), String> {
    match (stripes, asked) {
        (1, Some(_)) => Ok((
            None,
            "  Ignoring stripesize argument with single stripe.\n".into(),
        )),
        (1, None) => Ok((None, String::new())),
        // lvcreate also says "Using default stripesize 64.00 KiB."; the sim keeps its output
        // as it was before stripe sizes were modelled.
        (_, None) => Ok((Some(64 << 10), String::new())),
        (_, Some(s)) if s < 4096 || !s.is_power_of_two() => {
            Err(format!("  Invalid stripe size {}.\n", display_size(s)))
        }
        (_, Some(s)) => Ok((Some(s), String::new())),
    }
}

pub(super) fn lvextend(st: &mut SimState, args: &[&str]) -> Result<String, String> {
    let (flag, v, lvpath) = match args {
        [f @ ("-L" | "-l"), v, lv] => (*f, *v, *lv),
        _ => {
            return Err(format!(
                "  the simulated host models `lvextend -L|-l SIZE VG/LV`, not {}\n",
                args.join(" ")
            ));
        }
    };
    let (vg, name) = split_lv(lvpath)?;
    let Some(lv) = st.world.lv(&vg, &name).cloned() else {
        return Err(format!("  Failed to find logical volume \"{lvpath}\"\n"));
    };
    let vgo = st.world.vg(&vg).cloned().unwrap();
    let data_name = lv
        .writecache
        .as_ref()
        .map(|w| w.origin.clone())
        .unwrap_or(name.clone());
    let data = st.world.lv(&vg, &data_name).cloned().unwrap();
    let cur: u64 = data.extents.values().sum();
    // lv_manip.c `_lvresize_extents_from_percent`: percentages round up when growing, and a %VG
    // beyond what is free is cut to it.
    let (mut target, approx) = match parse_amount(flag, v)? {
        Amount::Bytes(b) => (b.div_ceil(EXTENT), false),
        Amount::PctVg(p) => (
            (vgo.extent_count() * p)
                .div_ceil(100)
                .min(cur + vgo.free_count()),
            true,
        ),
        Amount::PctFree(p) => (cur + (vgo.free_count() * p).div_ceil(100), true),
    };
    if data.stripes > 1 {
        let s = data.stripes as u64;
        target = target.div_ceil(s) * s;
    }
    if target <= cur {
        return Err(format!(
            "  New size given ({target} extents) not larger than existing size ({cur} extents)\n"
        ));
    }
    let add = target - cur;
    let pvs: Vec<String> = if data.stripes > 1 {
        data.extents.keys().cloned().collect()
    } else {
        st.world.pvs_of(&vg).map(|p| p.kname.clone()).collect()
    };
    let more = allocate(&free_of(st, &pvs), add, data.stripes, approx)
        .map_err(|e| e.message(&data_name))?;
    let l = st
        .world
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.vg == vg && l.name == data_name)
        .unwrap();
    for (k, n) in more {
        *l.extents.entry(k).or_insert(0) += n;
    }
    Ok(format!("  Logical volume {lvpath} successfully resized.\n"))
}

/// `lvreduce --yes -L SIZEb VG/LV` (lvm2 2.03.16): the size rounds up to whole extents (and
/// stripes); the extents past it are freed, the last PV's first. A writecache LV is refused.
pub(super) fn lvreduce(st: &mut SimState, size: &str, lvpath: &str) -> Result<String, String> {
    let (vg, name) = split_lv(lvpath)?;
    let Some(lv) = st.world.lv(&vg, &name).filter(|l| !l.hidden).cloned() else {
        return Err(format!("  Failed to find logical volume \"{lvpath}\"\n"));
    };
    if lv.writecache.is_some() {
        return Err(format!(
            "  Operation not permitted on LV {vg}/{name} type writecache.\n"
        ));
    }
    let bytes: u64 = size
        .strip_suffix('b')
        .and_then(|b| b.parse().ok())
        .ok_or_else(|| {
            format!("  the simulated host models `lvreduce --yes -L Nb`, not {size}\n")
        })?;
    let s = lv.stripes.max(1) as u64;
    let target = bytes.div_ceil(EXTENT).div_ceil(s) * s;
    let cur: u64 = lv.extents.values().sum();
    if target >= cur {
        return Err(format!(
            "  New size ({target} extents) matches existing size ({cur} extents).\n"
        ));
    }
    let l = st
        .world
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.vg == vg && l.name == name)
        .unwrap();
    if s > 1 {
        // Each stripe gives up the same number of extents.
        for n in l.extents.values_mut() {
            *n -= (cur - target) / s;
        }
    } else {
        let mut drop = cur - target;
        for n in l.extents.values_mut().rev() {
            let take = (*n).min(drop);
            *n -= take;
            drop -= take;
        }
    }
    l.extents.retain(|_, n| *n > 0);
    let h = crate::config::size::human;
    Ok(format!(
        "  Size of logical volume {vg}/{name} changed from {} ({cur} extents) to {} ({target} extents).\n  Logical volume {vg}/{name} successfully resized.\n",
        h(cur * EXTENT),
        h(target * EXTENT)
    ))
}

pub(super) fn lv_mut<'a>(st: &'a mut SimState, path: &str) -> Result<&'a mut Lv, String> {
    let (vg, name) = split_lv(path)?;
    st.world
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.vg == vg && l.name == name && !l.hidden)
        .ok_or_else(|| format!("  Failed to find logical volume \"{path}\"\n"))
}

pub(super) fn activate(st: &mut SimState, path: &str, on: bool) -> Result<String, String> {
    lv_mut(st, path)?.active = on;
    Ok(String::new())
}

fn parse_settings(s: &str) -> BTreeMap<String, String> {
    s.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(super) fn change_settings(st: &mut SimState, s: &str, path: &str) -> Result<String, String> {
    let lv = lv_mut(st, path)?;
    let Some(wc) = lv.writecache.as_mut() else {
        return Err(format!(
            "  Operation not permitted on LV {path}: not a writecache LV\n"
        ));
    };
    wc.settings = parse_settings(s);
    Ok(format!("  Logical volume {path} changed.\n"))
}

/// lvconvert.c `_set_writecache_block_size` (lvm2 2.03.16): the file system's block size as
/// libblkid reports it (BLOCK_SIZE: the ext4 block size, the xfs sector size; every filesystem
/// the simulator makes reports 4096, a machine's own what its `block_size` says) chooses the
/// writecache block size (4096 from 4096 up, 512 under it), and a setting larger than it is
/// refused; without a filesystem the setting, or 4096, is used. toollib.c takes `block_size`
/// 512 or 4096 only.
fn writecache_block_size(
    st: &SimState,
    vg: &str,
    lv: &str,
    setting: Option<&str>,
) -> Result<u64, String> {
    let setting = match setting {
        None => None,
        Some("512") => Some(512),
        Some("4096") => Some(4096),
        Some(_) => {
            return Err("  Invalid setting: block_size\n  Invalid writecache settings.\n".into());
        }
    };
    let fs_block = st
        .world
        .filesystems
        .iter()
        .find(|f| f.vg == vg && f.lv == lv)
        .map(|f| f.block_size.unwrap_or(4096));
    match (fs_block, setting) {
        (Some(fs), Some(b)) if b > fs => Err(format!(
            "  Writecache block size {b} cannot be larger than file system block size {fs}.\n"
        )),
        (_, Some(b)) => Ok(b),
        (Some(fs), None) => Ok(if fs >= 4096 { 4096 } else { 512 }),
        (None, None) => Ok(4096),
    }
}

/// lvm2 warns (and with --yes goes on) when no file system block size is found and the
/// writecache block size is not 512.
pub(super) fn attach_warns(st: &SimState, args: &[&str]) -> bool {
    let Some(path) = args.last() else {
        return false;
    };
    let Ok((vg, name)) = split_lv(path) else {
        return false;
    };
    let has_fs = st
        .world
        .filesystems
        .iter()
        .any(|f| f.vg == vg && f.lv == name);
    !has_fs && !args.iter().any(|a| a.contains("block_size=512"))
}

pub(super) fn attach(st: &mut SimState, cv: &str, rest: &[&str]) -> Result<String, String> {
    let (mut settings, path) = match rest {
        ["--cachesettings", s, lv] => (parse_settings(s), *lv),
        [lv] => (BTreeMap::new(), *lv),
        _ => return Err("  the simulated host models `lvconvert --yes --type writecache --cachevol CV [--cachesettings S] VG/LV`\n".into()),
    };
    // toollib.c: "block_size is not a setting but is set with the --cachesettings option".
    let setting = settings.remove("block_size");
    let (vg, name) = split_lv(path)?;
    let block_size = writecache_block_size(st, &vg, &name, setting.as_deref())?;
    let Some(main) = st.world.lv(&vg, &name).filter(|l| !l.hidden).cloned() else {
        return Err(format!("  Failed to find logical volume \"{path}\"\n"));
    };
    let Some(cache) = st.world.lv(&vg, cv).filter(|l| !l.hidden).cloned() else {
        return Err(format!("  Failed to find logical volume \"{vg}/{cv}\"\n"));
    };
    if main.writecache.is_some() {
        return Err(format!("  LV {path} is already a writecache LV.\n"));
    }
    if cache.segtype != "linear" || cache.writecache.is_some() {
        return Err(format!(
            "  LV {vg}/{cv} must be linear to use as a writecache.\n"
        ));
    }
    if cache.active {
        return Err(format!("  LV {vg}/{cv} must be inactive to attach.\n"));
    }
    let origin = format!("{name}_wcorig");
    let cvol = format!("{cv}_cvol");
    for l in st.world.lvm.lvs.iter_mut().filter(|l| l.vg == vg) {
        if l.name == name {
            l.name = origin.clone();
            l.hidden = true;
            l.tags.clear();
        } else if l.name == cv {
            l.name = cvol.clone();
            l.hidden = true;
            l.active = main.active;
        }
    }
    let n = st.next_serial();
    st.world.lvm.lvs.push(Lv {
        vg: vg.clone(),
        name: name.clone(),
        uuid: main.uuid.clone(),
        hidden: false,
        size: main.size,
        segtype: "writecache".into(),
        stripes: 1,
        stripe_size: None,
        active: main.active,
        extents: BTreeMap::new(),
        writecache: Some(LvWritecache {
            cachevol: cvol,
            origin,
            settings,
            block_size: Some(block_size),
            writeback_blocks: Some(0),
            total_blocks: main.active.then_some(cache.size / 4096),
            free_blocks: main.active.then_some(cache.size / 4096),
        }),
        cache: None,
        tags: main.tags.clone(),
        snapshot_of: None,
        pvmove: None,
        locked: false,
    });
    if let Some(o) = st
        .world
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.vg == vg && l.name == format!("{name}_wcorig"))
    {
        o.uuid = format!("lv{n:04}-sim");
    }
    Ok(format!("  Logical volume {path} now has writecache.\n"))
}

/// What `lvconvert --splitcache` leaves of a cached LV (writecache or dm-cache): the stacked LV
/// gone, its hidden origin back under its name (uuid, activation and tags kept), the cache
/// volume visible again without its `_cvol` suffix, inactive. Returns the cache volume's name.
pub(super) fn unstack(st: &mut SimState, lv: &Lv, origin: &str, cachevol: &str) -> String {
    let (vg, name) = (&lv.vg, &lv.name);
    st.world
        .lvm
        .lvs
        .retain(|l| !(&l.vg == vg && &l.name == name));
    let cv = cachevol
        .strip_suffix("_cvol")
        .unwrap_or(cachevol)
        .to_string();
    for l in st.world.lvm.lvs.iter_mut().filter(|l| &l.vg == vg) {
        if l.name == origin {
            l.name = name.clone();
            l.hidden = false;
            l.uuid = lv.uuid.clone();
            l.active = lv.active;
            l.tags = lv.tags.clone();
        } else if l.name == cachevol {
            l.name = cv.clone();
            l.hidden = false;
            l.active = false;
        }
    }
    cv
}

pub(super) fn split(st: &mut SimState, path: &str) -> Result<String, String> {
    let (vg, name) = split_lv(path)?;
    let Some(lv) = st.world.lv(&vg, &name).filter(|l| !l.hidden).cloned() else {
        return Err(format!("  Failed to find logical volume \"{path}\"\n"));
    };
    let Some(wc) = lv.writecache.clone() else {
        return Err(format!(
            "  Operation not permitted on LV {path}: not a writecache LV\n"
        ));
    };
    unstack(st, &lv, &wc.origin, &wc.cachevol);
    // lvm2 2.03.16 lvconvert.c: a dirty cache is cleaned first (the cleaner policy, polled
    // outside the VG lock), and that path words its last line "write cache".
    let dirty = wc
        .total_blocks
        .zip(wc.free_blocks)
        .map_or(0, |(t, f)| t.saturating_sub(f));
    Ok(if dirty > 0 {
        format!(
            "  Detaching writecache setting cleaner.\n  Detaching writecache cleaning {dirty} blocks\n  This command can be cancelled and rerun to complete writecache detach.\n  Detaching writecache completed cleaning.\n  Logical volume {path} write cache has been detached.\n"
        )
    } else {
        format!(
            "  Detaching writecache already clean.\n  Logical volume {path} writecache has been detached.\n"
        )
    })
}

pub(super) fn lvremove(st: &mut SimState, path: &str) -> Result<String, String> {
    let (vg, name) = split_lv(path)?;
    let lv = st
        .world
        .lv(&vg, &name)
        .filter(|l| !l.hidden)
        .cloned()
        .ok_or_else(|| format!("  Failed to find logical volume \"{path}\"\n"))?;
    if st
        .world
        .filesystems
        .iter()
        .any(|f| f.vg == vg && f.lv == name && f.mountpoint.is_some())
    {
        return Err(format!(
            "  Logical volume {vg}/{name} contains a filesystem in use.\n"
        ));
    }
    st.world
        .filesystems
        .retain(|f| !(f.vg == vg && f.lv == name));
    let mut gone = vec![name.clone()];
    if let Some(wc) = &lv.writecache {
        gone.push(wc.origin.clone());
        gone.push(wc.cachevol.clone());
    }
    if let Some(c) = &lv.cache {
        gone.push(c.origin.clone());
        gone.push(c.cachevol.clone());
    }
    st.world
        .lvm
        .lvs
        .retain(|l| !(l.vg == vg && gone.contains(&l.name)));
    Ok(format!(
        "  Logical volume \"{name}\" successfully removed.\n"
    ))
}
