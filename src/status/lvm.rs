//! The LVs: writecaches (dirty blocks not yet written back, a cache volume on a device without
//! redundancy) and filesystems (size, mounted or not where the file mounts them).

use super::{Findings, Severity, stable_name};
use crate::config::Desired;
use crate::observe::Observed;

/// Every visible LV with a writecache.
pub(super) fn writecaches(o: &Observed, desired: Option<&Desired>, f: &mut Findings) {
    for l in o.lvm.lvs.iter().filter(|l| !l.hidden) {
        let Some(wc) = &l.writecache else { continue };
        let object = format!("lv {}/{}", l.vg, l.name);
        if let Some(n) = wc.writeback_blocks.filter(|n| *n > 0) {
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
                f.add(
                    Severity::Lint,
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

/// The filesystems on LVs: type, size (when apply or plan read it), mounted or not; with a file
/// that mounts one, a filesystem that is not mounted there.
pub(super) fn filesystems(o: &Observed, desired: Option<&Desired>, f: &mut Findings) {
    for fs in o
        .filesystems
        .iter()
        .filter(|x| matches!(x.fstype.as_str(), "ext4" | "xfs"))
    {
        let object = format!("lv {}/{}", fs.vg, fs.lv);
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
            "the filesystem on the LV",
            "nothing to do",
        );
        let wanted = desired
            .and_then(|d| d.volume_groups.get(&fs.vg))
            .and_then(|v| v.lvs.get(&fs.lv))
            .and_then(|l| l.filesystem.as_ref())
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
