//! What the system boots from: the filesystem of /boot (or / when /boot is no mount of its own),
//! and what carries it down to the disks: LVs (and their hidden sub-LVs), LUKS mappings, md
//! arrays, partitions. Read by status (is the system on more disks than boot?) and the plan (is
//! /boot on the mirror the file boots from, and can grub read it?).

use super::{DevKind, Observed};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemChain {
    /// `/boot` or `/`.
    pub mount: String,
    /// The device mounted there (`dm-3`, `md127`).
    pub kname: String,
    /// The disks (kernel names) it lives on.
    pub disks: BTreeSet<String>,
    /// The md arrays (kernel names) on the way.
    pub arrays: BTreeSet<String>,
    /// What on the way grub cannot read, as a person says it (`LUKS on md127`, `a writecache`).
    pub unreadable: Vec<String>,
}

fn walk(o: &Observed, kname: &str, c: &mut SystemChain, depth: u8) {
    if depth > 8 {
        return;
    }
    if let Some(d) = o.device(kname) {
        match (&d.kind, &d.parent) {
            (DevKind::Part, Some(p)) => c.disks.insert(p.clone()),
            _ => c.disks.insert(d.kname.clone()),
        };
        return;
    }
    if let Some(a) = o.arrays.iter().find(|a| a.kname == kname) {
        c.arrays.insert(a.kname.clone());
        for m in &a.members {
            walk(o, &m.kname, c, depth + 1);
        }
        return;
    }
    if let Some(l) = o
        .luks
        .iter()
        .find(|l| l.mapping.as_ref().is_some_and(|m| m.kname == kname))
    {
        c.unreadable.push(format!("LUKS on /dev/{}", l.device));
        walk(o, &l.device, c, depth + 1);
    }
}

/// What carries the filesystem mounted at `mountpoint`, if it is on an LV or an md array.
pub fn chain_of_mount(o: &Observed, mountpoint: &str) -> Option<SystemChain> {
    let fs = o
        .filesystems
        .iter()
        .find(|f| f.mountpoint.as_deref() == Some(mountpoint))?;
    let mut c = SystemChain {
        mount: mountpoint.into(),
        kname: fs.kname.clone(),
        ..Default::default()
    };
    if fs.lv.is_empty() {
        walk(o, &fs.kname, &mut c, 0);
    } else {
        // The LV and its hidden sub-LVs (`root_wcorig`, `root_cvol`): their extents' PVs.
        let sub = format!("{}_", fs.lv);
        for lv in
            o.lvm.lvs.iter().filter(|l| {
                l.vg == fs.vg && (l.name == fs.lv || l.hidden && l.name.starts_with(&sub))
            })
        {
            if lv.name == fs.lv {
                if lv.writecache.is_some() || lv.segtype == "writecache" {
                    c.unreadable
                        .push(format!("a writecache on lv {}/{}", lv.vg, lv.name));
                }
                if lv.cache.is_some() || lv.segtype == "cache" {
                    c.unreadable
                        .push(format!("a dm-cache on lv {}/{}", lv.vg, lv.name));
                }
            }
            for pv in lv.extents.keys() {
                walk(o, pv, &mut c, 0);
            }
        }
    }
    Some(c)
}

/// /boot's chain when it is a mount of its own, else /'s.
pub fn boot_chain(o: &Observed) -> Option<SystemChain> {
    chain_of_mount(o, "/boot").or_else(|| chain_of_mount(o, "/"))
}

/// The disks the system boots from (kernel names).
pub fn system_disks(o: &Observed) -> BTreeSet<String> {
    boot_chain(o).map(|c| c.disks).unwrap_or_default()
}
