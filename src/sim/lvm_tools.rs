//! pvcreate, vgcreate, vgextend, lvcreate, lvextend, lvchange, lvconvert (writecache),
//! lvremove, vgremove, pvremove — lvm2 2.03.16 behaviour, including its refusals.

use super::lvm_alloc::{Amount, allocate, create_extents, parse_amount};
use super::{SimState, Target, fail, out};
use crate::host::{CmdOutput, HostError};
use crate::observe::{Lv, LvWritecache, Pv, Signature, Vg};
use std::collections::BTreeMap;

pub(super) const EXTENT: u64 = 4 << 20;
const PE_START: u64 = 1 << 20;

pub fn run(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    let r = match args {
        ["pvcreate", dev] => pvcreate(st, dev),
        ["vgcreate", vg, devs @ ..] if !devs.is_empty() => vgcreate(st, vg, devs),
        ["vgextend", vg, devs @ ..] if !devs.is_empty() => vgextend(st, vg, devs),
        ["lvcreate", rest @ ..] => lvcreate(st, rest),
        ["lvextend", rest @ ..] => lvextend(st, rest),
        ["lvchange", "--activate", yn, lv] => activate(st, lv, *yn == "y"),
        ["lvchange", "--yes", "--cachesettings", s, lv] => change_settings(st, s, lv),
        [
            "lvconvert",
            "--yes",
            "--type",
            "writecache",
            "--cachevol",
            cv,
            rest @ ..,
        ] => attach(st, cv, rest),
        ["lvconvert", "--yes", "--splitcache", lv] => split(st, lv),
        ["lvremove", "--yes", lv] => lvremove(st, lv),
        ["vgremove", "--yes", vg] => vgremove(st, vg),
        ["pvremove", "--yes", dev] => pvremove(st, dev),
        _ => Err(format!(
            "  the simulated host does not model `{}`\n",
            args.join(" ")
        )),
    };
    recompute(st);
    // lvm2 2.03.16 warns on stderr when it attaches a writecache and finds no filesystem block
    // size to match (seen on the real kernel, on a new LV), and succeeds.
    let attach_warning = matches!(args, ["lvconvert", "--yes", "--type", "writecache", ..])
        && !args.iter().any(|a| a.contains("block_size"));
    match r {
        Ok(s) if attach_warning => Ok(CmdOutput {
            status: 0,
            stdout: s,
            stderr: "  WARNING: using a writecache block size larger than the file system block size may corrupt the file system.\n".into(),
        }),
        Ok(s) => out(&s),
        Err(e) => fail(if e.starts_with("  Invalid") { 3 } else { 5 }, e),
    }
}

/// Keep derived sizes consistent: PV sizes/free, VG size/free, LV sizes.
fn recompute(st: &mut SimState) {
    let w = &mut st.world;
    let used = |lvs: &[Lv], pv: &str| -> u64 { lvs.iter().filter_map(|l| l.extents.get(pv)).sum() };
    for p in w.lvm.pvs.iter_mut() {
        if p.vg.is_some() {
            let pe = p.dev_size.saturating_sub(PE_START) / EXTENT;
            p.size = pe * EXTENT;
            p.free = p.size.saturating_sub(used(&w.lvm.lvs, &p.kname) * EXTENT);
        } else {
            p.size = p.dev_size;
            p.free = p.dev_size;
        }
    }
    for v in w.lvm.vgs.iter_mut() {
        v.size = w
            .lvm
            .pvs
            .iter()
            .filter(|p| p.vg.as_deref() == Some(&v.name))
            .map(|p| p.size)
            .sum();
        v.free = w
            .lvm
            .pvs
            .iter()
            .filter(|p| p.vg.as_deref() == Some(&v.name))
            .map(|p| p.free)
            .sum();
    }
    let sizes: BTreeMap<(String, String), u64> = w
        .lvm
        .lvs
        .iter()
        .map(|l| {
            (
                (l.vg.clone(), l.name.clone()),
                l.extents.values().sum::<u64>() * EXTENT,
            )
        })
        .collect();
    for l in w.lvm.lvs.iter_mut() {
        l.size = match &l.writecache {
            Some(wc) => sizes
                .get(&(l.vg.clone(), wc.origin.clone()))
                .copied()
                .unwrap_or(0),
            None => sizes[&(l.vg.clone(), l.name.clone())],
        };
    }
}

fn pv_target(st: &SimState, dev: &str) -> Result<String, String> {
    match st.resolve(dev) {
        Some(t @ (Target::Block(_) | Target::Md(_))) => Ok(SimState::kname(&t)),
        _ => Err(format!("  Cannot use {dev}: device not found\n")),
    }
}

fn pvcreate(st: &mut SimState, dev: &str) -> Result<String, String> {
    let k = pv_target(st, dev)?;
    if let Some(p) = st.world.pv(&k) {
        return Err(match &p.vg {
            Some(vg) => format!(
                "  Can't initialize physical volume \"{dev}\" of volume group \"{vg}\" without -ff\n"
            ),
            None => format!("  Physical volume \"{dev}\" is already a PV\n"),
        });
    }
    let (size, sigs) = match st.resolve(dev).unwrap() {
        Target::Md(m) => {
            let a = st.world.array(&m).unwrap();
            (
                a.size_kib * 1024,
                a.fstype.clone().into_iter().collect::<Vec<_>>(),
            )
        }
        Target::Block(b) => {
            let d = st.world.device(&b).unwrap();
            if st.world.array_of_member(&b).is_some() {
                return Err(format!("  Cannot use {dev}: device is an md component\n"));
            }
            if st
                .world
                .block_devices
                .iter()
                .any(|x| x.parent.as_deref() == Some(b.as_str()))
                || d.pttype.is_some()
            {
                return Err(format!("  Cannot use {dev}: device is partitioned\n"));
            }
            (
                d.size,
                d.signatures
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|s| s.kind)
                    .chain(d.fstype.clone())
                    .collect(),
            )
        }
        Target::Lv(..) => unreachable!(),
    };
    if let Some(sig) = sigs.first() {
        // stdin is /dev/null: the prompt is answered "no".
        return Err(format!(
            "WARNING: {sig} signature detected on {dev} at offset 1080. Wipe it? [y/n]: [n]\n  Aborted wiping of {sig}.\n  1 existing signature left on the device.\n"
        ));
    }
    let n = st.next_serial();
    st.world.lvm.pvs.push(Pv {
        name: format!("/dev/{k}"),
        kname: k.clone(),
        uuid: format!("pv{n:04}-sim"),
        vg: None,
        size,
        free: size,
        dev_size: size,
    });
    mark_pv(st, &k);
    Ok(format!(
        "  Physical volume \"{dev}\" successfully created.\n"
    ))
}

fn mark_pv(st: &mut SimState, k: &str) {
    if let Some(a) = st.array_mut(k) {
        a.fstype = Some("LVM2_member".into());
    } else if let Some(d) = st.dev_mut(k) {
        d.fstype = Some("LVM2_member".into());
        d.signatures = Some(vec![Signature {
            offset: "0x218".into(),
            kind: "LVM2_member".into(),
            uuid: None,
        }]);
    }
}

fn add_pvs(st: &mut SimState, vg: &str, devs: &[&str]) -> Result<(), String> {
    for dev in devs {
        let k = pv_target(st, dev)?;
        if st.world.pv(&k).is_none() {
            pvcreate(st, dev)?;
        }
        let p = st.world.lvm.pvs.iter_mut().find(|p| p.kname == k).unwrap();
        if let Some(other) = &p.vg {
            return Err(format!(
                "  Physical volume \"{dev}\" is already in volume group \"{other}\"\n"
            ));
        }
        p.vg = Some(vg.to_string());
    }
    Ok(())
}

fn vgcreate(st: &mut SimState, vg: &str, devs: &[&str]) -> Result<String, String> {
    if st.world.vg(vg).is_some() {
        return Err(format!("  A volume group called {vg} already exists.\n"));
    }
    add_pvs(st, vg, devs)?;
    let n = st.next_serial();
    st.world.lvm.vgs.push(Vg {
        name: vg.into(),
        uuid: format!("vg{n:04}-sim"),
        size: 0,
        free: 0,
        extent_size: EXTENT,
        partial: false,
    });
    Ok(format!("  Volume group \"{vg}\" successfully created\n"))
}

fn vgextend(st: &mut SimState, vg: &str, devs: &[&str]) -> Result<String, String> {
    if st.world.vg(vg).is_none() {
        return Err(format!("  Volume group \"{vg}\" not found\n"));
    }
    add_pvs(st, vg, devs)?;
    Ok(format!("  Volume group \"{vg}\" successfully extended\n"))
}

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

fn split_lv(path: &str) -> Result<(String, String), String> {
    path.split_once('/')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(|| format!("  Invalid logical volume name {path}\n"))
}

fn lvcreate(st: &mut SimState, args: &[&str]) -> Result<String, String> {
    let (mut name, mut amount, mut stripes, mut pos) = (None, None, 1u32, Vec::new());
    let mut tags = Vec::new();
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
            a if a.starts_with('-') => {
                return Err(format!(
                    "  the simulated host does not model lvcreate option {a}\n"
                ));
            }
            a => pos.push(a.to_string()),
        }
        i += 1;
    }
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
        active: true,
        extents: alloc,
        writecache: None,
        tags,
        snapshot_of: None,
    });
    Ok(format!("  Logical volume \"{name}\" created.\n"))
}

fn lvextend(st: &mut SimState, args: &[&str]) -> Result<String, String> {
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

fn lv_mut<'a>(st: &'a mut SimState, path: &str) -> Result<&'a mut Lv, String> {
    let (vg, name) = split_lv(path)?;
    st.world
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.vg == vg && l.name == name && !l.hidden)
        .ok_or_else(|| format!("  Failed to find logical volume \"{path}\"\n"))
}

fn activate(st: &mut SimState, path: &str, on: bool) -> Result<String, String> {
    lv_mut(st, path)?.active = on;
    Ok(String::new())
}

fn parse_settings(s: &str) -> BTreeMap<String, String> {
    s.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn change_settings(st: &mut SimState, s: &str, path: &str) -> Result<String, String> {
    let lv = lv_mut(st, path)?;
    let Some(wc) = lv.writecache.as_mut() else {
        return Err(format!(
            "  Operation not permitted on LV {path}: not a writecache LV\n"
        ));
    };
    wc.settings = parse_settings(s);
    Ok(format!("  Logical volume {path} changed.\n"))
}

fn attach(st: &mut SimState, cv: &str, rest: &[&str]) -> Result<String, String> {
    let (settings, path) = match rest {
        ["--cachesettings", s, lv] => (parse_settings(s), *lv),
        [lv] => (BTreeMap::new(), *lv),
        _ => return Err("  the simulated host models `lvconvert --yes --type writecache --cachevol CV [--cachesettings S] VG/LV`\n".into()),
    };
    let (vg, name) = split_lv(path)?;
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
        active: main.active,
        extents: BTreeMap::new(),
        writecache: Some(LvWritecache {
            cachevol: cvol,
            origin,
            settings,
            block_size: Some(4096),
            writeback_blocks: Some(0),
        }),
        tags: main.tags.clone(),
        snapshot_of: None,
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

fn split(st: &mut SimState, path: &str) -> Result<String, String> {
    let (vg, name) = split_lv(path)?;
    let Some(lv) = st.world.lv(&vg, &name).filter(|l| !l.hidden).cloned() else {
        return Err(format!("  Failed to find logical volume \"{path}\"\n"));
    };
    let Some(wc) = lv.writecache.clone() else {
        return Err(format!(
            "  Operation not permitted on LV {path}: not a writecache LV\n"
        ));
    };
    st.world.lvm.lvs.retain(|l| !(l.vg == vg && l.name == name));
    let cv = wc
        .cachevol
        .strip_suffix("_cvol")
        .unwrap_or(&wc.cachevol)
        .to_string();
    for l in st.world.lvm.lvs.iter_mut().filter(|l| l.vg == vg) {
        if l.name == wc.origin {
            l.name = name.clone();
            l.hidden = false;
            l.uuid = lv.uuid.clone();
            l.active = lv.active;
            l.tags = lv.tags.clone();
        } else if l.name == wc.cachevol {
            l.name = cv.clone();
            l.hidden = false;
            l.active = false;
        }
    }
    Ok(format!(
        "  Detaching writecache already clean.\n  Logical volume {path} writecache has been detached.\n"
    ))
}

fn lvremove(st: &mut SimState, path: &str) -> Result<String, String> {
    let (vg, name) = split_lv(path)?;
    let lv = st
        .world
        .lv(&vg, &name)
        .filter(|l| !l.hidden)
        .cloned()
        .ok_or_else(|| format!("  Failed to find logical volume \"{path}\"\n"))?;
    let mut gone = vec![name.clone()];
    if let Some(wc) = &lv.writecache {
        gone.push(wc.origin.clone());
        gone.push(wc.cachevol.clone());
    }
    st.world
        .lvm
        .lvs
        .retain(|l| !(l.vg == vg && gone.contains(&l.name)));
    Ok(format!(
        "  Logical volume \"{name}\" successfully removed.\n"
    ))
}

fn vgremove(st: &mut SimState, vg: &str) -> Result<String, String> {
    if st.world.vg(vg).is_none() {
        return Err(format!("  Volume group \"{vg}\" not found\n"));
    }
    st.world.lvm.lvs.retain(|l| l.vg != vg);
    st.world.lvm.vgs.retain(|v| v.name != vg);
    for p in st
        .world
        .lvm
        .pvs
        .iter_mut()
        .filter(|p| p.vg.as_deref() == Some(vg))
    {
        p.vg = None;
    }
    Ok(format!("  Volume group \"{vg}\" successfully removed\n"))
}

fn pvremove(st: &mut SimState, dev: &str) -> Result<String, String> {
    let k = pv_target(st, dev)?;
    match st.world.pv(&k) {
        None => return Err(format!("  No PV found on device {dev}.\n")),
        Some(p) if p.vg.is_some() => return Err(format!("  PV {dev} is used by a VG\n")),
        _ => {}
    }
    st.world.lvm.pvs.retain(|p| p.kname != k);
    if let Some(a) = st.array_mut(&k) {
        a.fstype = None;
    } else if let Some(d) = st.dev_mut(&k) {
        d.fstype = None;
        d.signatures = Some(vec![]);
    }
    Ok(format!(
        "  Labels on physical volume \"{dev}\" successfully wiped.\n"
    ))
}
