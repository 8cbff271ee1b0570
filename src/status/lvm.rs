//! The LVs: writecaches and dm-caches (dirty blocks not yet written back, a cache volume on a
//! device without redundancy), filesystems (size, mounted or not where the file mounts them), and
//! pvmoves in progress or interrupted.

use super::{Findings, Severity, stable_name};
use crate::config::Desired;
use crate::observe::Observed;

/// Every visible LV with a writecache.
pub(super) fn writecaches(o: &Observed, desired: Option<&Desired>, f: &mut Findings) {
    for l in o.lvm.lvs.iter().filter(|l| !l.hidden) {
        let Some(wc) = &l.writecache else { continue };
        let object = format!("lv {}/{}", l.vg, l.name);
        // Blocks in use (total - free) are what a detach must write back; lvm2 counts them so.
        let used = wc
            .total_blocks
            .zip(wc.free_blocks)
            .and_then(|(t, fr)| t.checked_sub(fr));
        if let Some(n) = used.or(wc.writeback_blocks).filter(|n| *n > 0) {
            f.add(
                Severity::Info,
                object.clone(),
                format!("writecache holds {n} blocks not yet written back"),
                "they live only on the cache device until written back",
                "nothing to do; `lvconvert --splitcache` flushes them when needed",
            );
        }
        if let Some(cv) = o.lv(&l.vg, &wc.cachevol) {
            let lone: Vec<&String> = cv.extents.keys().filter(|k| o.array(k).is_none()).collect();
            if !lone.is_empty() {
                f.lint(
                    "writecache-not-redundant",
                    object.clone(),
                    format!(
                        "writecache on a non-redundant device ({})",
                        lone.iter()
                            .map(|k| stable_name(o, desired, k))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    "dirty data lives only there until written back; losing that device loses it and makes the LV unactivatable",
                    "put the cache volume on an SSD mirror (a `mirrors:` entry of two SSDs)",
                );
            }
        }
    }
}

/// Every visible LV with a dm-cache: its mode and dirty blocks, and writeback on a device without
/// redundancy.
pub(super) fn dm_caches(o: &Observed, desired: Option<&Desired>, f: &mut Findings) {
    for l in o.lvm.lvs.iter().filter(|l| !l.hidden) {
        let Some(c) = &l.cache else { continue };
        let object = format!("lv {}/{}", l.vg, l.name);
        let blocks = match (c.dirty_blocks, c.used_blocks, c.total_blocks) {
            (Some(d), Some(u), Some(t)) => format!("{d} dirty, {u} used of {t} blocks"),
            _ => "inactive, no cache status".into(),
        };
        f.add(
            Severity::Info,
            object.clone(),
            format!("dm-cache {}: {blocks}", c.mode),
            if c.mode == "writeback" {
                "dirty blocks live only on the cache device until written back"
            } else {
                "every write reaches the LV's PVs; the cache holds copies"
            },
            "nothing to do; `lvconvert --splitcache` flushes them when needed",
        );
        let Some(cv) = o.lv(&l.vg, &c.cachevol) else {
            continue;
        };
        let lone: Vec<&String> = cv.extents.keys().filter(|k| o.array(k).is_none()).collect();
        if c.mode == "writeback" && !lone.is_empty() {
            f.lint(
                "dm-cache-not-redundant",
                object.clone(),
                format!(
                    "dm-cache writeback on a non-redundant device ({})",
                    lone.iter()
                        .map(|k| stable_name(o, desired, k))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "dirty blocks live only there until written back; losing that device loses them",
                "use `mode: writethrough`, or put the cache volume on an SSD mirror",
            );
        }
    }
}

/// Every pvmove LVM keeps (`[pvmove0]`): running with its progress, or interrupted (its mirror
/// not active: nothing copies until it is resumed).
pub(super) fn moves(o: &Observed, desired: Option<&Desired>, f: &mut Findings) {
    for l in &o.lvm.lvs {
        let Some(m) = &l.pvmove else { continue };
        let from = match o.array(&m.source_kname).and_then(|a| a.name.as_ref()) {
            Some(n) => format!("/dev/md/{n}"),
            None => stable_name(o, desired, &m.source_kname),
        };
        match m.copy_percent {
            Some(p) => f.add(
                Severity::Info,
                format!("vg {}", l.vg),
                format!("pvmove off {from} in progress ({p:.2}%)"),
                "LVM copies the extents through a temporary mirror; the LVs it moves are locked until it finishes",
                "nothing to do; `hyraid apply` waits for it and goes on",
            ),
            None => f.add(
                Severity::Degraded,
                format!("vg {}", l.vg),
                format!("pvmove off {from} interrupted ({} is not active)", l.name),
                "nothing copies and the LVs it moves stay locked until the move is resumed",
                "run `hyraid apply` (it resumes it with `pvmove`), or `pvmove` by hand",
            ),
        }
    }
}

/// The filesystems on LVs and on arrays used without LVM: type, size (when apply or plan read it), mounted or not; with a file
/// that mounts one, a filesystem that is not mounted there.
pub(super) fn filesystems(o: &Observed, desired: Option<&Desired>, f: &mut Findings) {
    for fs in o
        .filesystems
        .iter()
        .filter(|x| matches!(x.fstype.as_str(), "ext4" | "xfs"))
        // Inside a LUKS mapping that is on no LV (a mirror's, or a device hyraid does not name).
        .filter(|x| x.md || !x.vg.is_empty())
    {
        // An array's filesystem is listed for a mirror the file names (one used without LVM),
        // by the mirror's name.
        let md_name = fs.md.then(|| {
            let a = o.arrays.iter().find(|a| a.kname == fs.kname);
            a.and_then(|a| a.name.clone())
                .unwrap_or_else(|| fs.kname.clone())
        });
        if md_name
            .as_ref()
            .is_some_and(|n| !desired.is_some_and(|d| d.mirrors.contains_key(n)))
        {
            continue;
        }
        let object = match &md_name {
            Some(n) => format!("mirror {n}"),
            None => format!("lv {}/{}", fs.vg, fs.lv),
        };
        let size = fs
            .size
            .map(|s| format!(", {}", crate::config::size::human(s)))
            .unwrap_or_default();
        let at = match &fs.mountpoint {
            Some(m) => format!("mounted at {m}"),
            None => "not mounted".into(),
        };
        f.add(
            Severity::Info,
            object.clone(),
            format!("{} filesystem{size}, {at}", fs.fstype),
            if fs.md {
                "the filesystem on the array"
            } else {
                "the filesystem on the LV"
            },
            "nothing to do",
        );
        let wanted = match &md_name {
            Some(n) => desired
                .and_then(|d| d.mirrors.get(n))
                .and_then(|m| m.filesystem.as_ref()),
            None => desired
                .and_then(|d| d.volume_groups.get(&fs.vg))
                .and_then(|v| v.lvs.get(&fs.lv))
                .and_then(|l| l.filesystem.as_ref()),
        }
        .and_then(|x| x.mount.clone());
        if let Some(m) = wanted.filter(|m| fs.mountpoint.as_ref() != Some(m)) {
            f.add(
                Severity::Lint,
                object,
                format!("the file mounts its filesystem at {m}, and it is {at}"),
                "what is written there does not land on the LV",
                "run `hyraid apply` (it mounts it by its fstab line)",
            );
        }
    }
}

/// An LV the file declares that is gone from a VG that is there: its data went with it (removed
/// by hand?). Said here, not only as drift: apply would make it again, empty.
pub(super) fn declared_lvs(o: &Observed, d: &crate::config::Desired, f: &mut Findings) {
    for vg in d.volume_groups.values().filter(|v| !v.absent) {
        if o.lvm.vgs.iter().all(|v| v.name != vg.name) {
            continue;
        }
        for lv in vg.lvs.values().filter(|l| !l.absent) {
            if o.lv(&vg.name, &lv.name).is_none() {
                f.add(
                    Severity::Degraded,
                    format!("lv {}/{}", vg.name, lv.name),
                    "the file declares this LV and its VG has none (was it removed by hand?)".into(),
                    "whatever it held went with it; `hyraid apply` makes a new, empty one",
                    "restore it from a backup, or, if it is meant to be gone, set `state: absent` for it in the file (or remove it); then `hyraid plan`",
                );
            }
        }
    }
}
