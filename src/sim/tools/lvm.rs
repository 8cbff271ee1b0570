//! LVM as hyraid runs it: the dispatch of pvcreate, vgcreate, vgextend, lvcreate, lvextend,
//! lvchange, lvconvert (writecache), lvremove, vgremove, pvremove, pvmove and vgreduce; the sizes kept consistent
//! after each; and the PV and VG commands themselves (the LV ones are in `lvm_lv`) — lvm2 2.03.16
//! behaviour, including its refusals.

use super::lvm_cache;
use super::lvm_lv::{
    activate, attach, change_settings, lvcreate, lvextend, lvreduce, lvremove, split,
};
use crate::host::{CmdOutput, HostError};
use crate::observe::{Lv, Pv, Signature, Vg};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};
use std::collections::BTreeMap;

pub(super) const EXTENT: u64 = 4 << 20;
const PE_START: u64 = 1 << 20;

pub fn run(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    let warns = super::lvm_lv::attach_warns(st, args);
    let r = match args {
        ["pvcreate", dev] => pvcreate(st, dev),
        ["vgcreate", vg, devs @ ..] if !devs.is_empty() => vgcreate(st, vg, devs),
        ["vgextend", vg, devs @ ..] if !devs.is_empty() => vgextend(st, vg, devs),
        ["lvcreate", rest @ ..] => lvcreate(st, rest),
        ["lvextend", rest @ ..] => lvextend(st, rest),
        ["lvreduce", "--yes", "-L", size, lv] => lvreduce(st, size, lv),
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
        [
            "lvconvert",
            "--yes",
            "--type",
            "cache",
            "--cachevol",
            cv,
            "--cachemode",
            mode,
            lv,
        ] => lvm_cache::attach(st, cv, mode, lv),
        ["lvchange", "--yes", "--cachemode", mode, lv] => lvm_cache::set_mode(st, mode, lv),
        ["lvconvert", "--yes", "--splitcache", lv] if lvm_cache::is_cached(st, lv) => {
            lvm_cache::split(st, lv)
        }
        ["lvconvert", "--yes", "--splitcache", lv] => split(st, lv),
        ["lvremove", "--yes", lv] => lvremove(st, lv),
        ["vgremove", "--yes", vg] => vgremove(st, vg),
        ["pvremove", "--yes", dev] => pvremove(st, dev),
        ["pvmove", "--background", rest @ ..] => super::pvmove::pvmove(st, rest),
        ["vgreduce", vg, dev] => super::pvmove::vgreduce(st, vg, dev),
        ["vgchange", "--activate", "y", "--poll", "n", vg] => super::pvmove::activate_vg(st, vg),
        ["pvresize", dev] => pvresize(st, dev),
        ["lvmdevices", "--adddev", dev] => adddev(st, dev),
        _ => Err(format!(
            "  the simulated host does not model `{}`\n",
            args.join(" ")
        )),
    };
    recompute(st);
    // lvm2 2.03.16 warns on stderr when it attaches a writecache and finds no filesystem block
    // size to match (seen on the real kernel, on a new LV), and succeeds.
    let attach_warning =
        matches!(args, ["lvconvert", "--yes", "--type", "writecache", ..]) && warns;
    match r {
        Ok(s) if attach_warning => Ok(CmdOutput {
            status: 0,
            stdout: s,
            stderr: "  WARNING: using a writecache block size larger than the file system block size may corrupt the file system.\n".into(),
        }),
        Ok(s) => out(&s),
        // A bad argument exits 3; a setting lvm2 parses while converting ("Invalid setting:
        // block_size") fails the command, 5 (lvm2 2.03.16, seen on Debian 12).
        Err(e) if e.starts_with("  Invalid") && !e.starts_with("  Invalid setting") => fail(3, e),
        Err(e) => fail(5, e),
    }
}

/// [`recompute`], for the tools outside LVM that change a PV's device (growpart).
pub(super) fn recompute_sizes(st: &mut SimState) {
    recompute(st);
}

/// `pvresize DEV`: the PV takes its device's size.
fn pvresize(st: &mut SimState, dev: &str) -> Result<String, String> {
    let k = pv_target(st, dev)?;
    let size = match st.resolve(dev) {
        Some(Target::Md(m)) => st.world.array(&m).map(|a| a.size_kib * 1024),
        Some(Target::Block(b)) => st.world.device(&b).map(|d| d.size),
        Some(Target::Mapper(k)) => st
            .world
            .other_devices
            .iter()
            .find(|o| o.kname == k)
            .map(|o| o.size),
        _ => None,
    };
    let (Some(size), Some(pv)) = (size, st.world.lvm.pvs.iter_mut().find(|p| p.kname == k)) else {
        return Err(format!("  Failed to find physical volume \"{dev}\".\n"));
    };
    pv.dev_size = size;
    Ok(format!(
        "  Physical volume \"{dev}\" changed\n  1 physical volume(s) resized or updated / 0 physical volume(s) not resized\n"
    ))
}

/// Keep derived sizes consistent: PV sizes/free, VG size/free, LV sizes.
pub(super) fn recompute(st: &mut SimState) {
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
        let origin = l
            .writecache
            .as_ref()
            .map(|wc| &wc.origin)
            .or(l.cache.as_ref().map(|c| &c.origin));
        l.size = match origin {
            Some(o) => sizes.get(&(l.vg.clone(), o.clone())).copied().unwrap_or(0),
            // A move LV is as large as what it moves (its other leg is the new place).
            None => match &l.pvmove {
                Some(m) => l.extents.get(&m.source_kname).copied().unwrap_or(0) * EXTENT,
                None => sizes[&(l.vg.clone(), l.name.clone())],
            },
        };
    }
}

pub(super) fn pv_target(st: &SimState, dev: &str) -> Result<String, String> {
    match st.resolve(dev) {
        Some(t @ (Target::Block(_) | Target::Md(_) | Target::Mapper(_))) => Ok(SimState::kname(&t)),
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
        Target::Mapper(k) => {
            let o = st
                .world
                .other_devices
                .iter()
                .find(|o| o.kname == k)
                .unwrap();
            (o.size, o.fstype.clone().into_iter().collect())
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
    // LVM names a PV on a device-mapper device by its /dev/mapper name.
    let name = match st.resolve(dev) {
        Some(Target::Mapper(_)) => dev.to_string(),
        _ => format!("/dev/{k}"),
    };
    st.world.lvm.pvs.push(Pv {
        name,
        kname: k.clone(),
        uuid: format!("pv{n:04}-sim"),
        vg: None,
        size,
        free: size,
        dev_size: size,
    });
    mark_pv(st, &k);
    super::lvm_devices::add(st, &k);
    Ok(format!(
        "  Physical volume \"{dev}\" successfully created.\n"
    ))
}

/// `lvm lvmdevices --adddev DEV` (a PV or not; lvm2 reads its PVID from the label).
fn adddev(st: &mut SimState, dev: &str) -> Result<String, String> {
    if st.world.boot.lvm_devices.is_none() {
        return Err("  Devices file not enabled.\n".into());
    }
    let k = pv_target(st, dev)?;
    super::lvm_devices::add(st, &k);
    Ok(String::new())
}

fn mark_pv(st: &mut SimState, k: &str) {
    if let Some(o) = st.world.other_devices.iter_mut().find(|o| o.kname == k) {
        o.fstype = Some("LVM2_member".into());
    }
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
        super::lvm_devices::add(st, &k);
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

fn vgremove(st: &mut SimState, vg: &str) -> Result<String, String> {
    if st.world.vg(vg).is_none() {
        return Err(format!("  Volume group \"{vg}\" not found\n"));
    }
    // As lvremove, for each of its LVs: one in use stops it.
    if let Some(f) = st
        .world
        .filesystems
        .iter()
        .find(|f| !f.md && f.vg == vg && f.mountpoint.is_some())
    {
        return Err(format!(
            "  Logical volume {vg}/{} contains a filesystem in use.\n",
            f.lv
        ));
    }
    st.world.lvm.lvs.retain(|l| l.vg != vg);
    st.world.filesystems.retain(|f| f.md || f.vg != vg);
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
