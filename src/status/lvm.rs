//! The writecaches of the LVs: dirty blocks not yet written back, and a cache volume on a device
//! without redundancy; pvmoves in progress or interrupted.

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
