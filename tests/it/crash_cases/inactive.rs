//! Crash cases of an array udev assembled and did not start, with what stands on it (a LUKS
//! header with a PV inside, a filesystem on the array itself, an array of partitions; the PV
//! and VG of single-pair are in `vocabulary`): the disk that was gone is replaced by a new one
//! named in the file. Interrupted at every command of the start, the new partitions and the add,
//! the next apply completes it; nothing on the array is made again (LVM's, cryptsetup's and
//! mkfs's own guards would fail the apply) and every LV that held data is still there.

use super::Case;
use crate::inactive_contents::{NEW_ID, built, pulled};
use hyraid::plan::Policy;

pub fn cases() -> Vec<Case> {
    built()
        .into_iter()
        .skip(1)
        .map(|(what, mut d, h, id)| {
            let h = pulled(&h, id);
            let name = (d.disks.values())
                .find(|s| s.id.as_deref() == Some(id))
                .map(|s| s.name.clone())
                .unwrap();
            d.disks.get_mut(&name).unwrap().id = Some(NEW_ID.into());
            Case {
                name: format!("start an array left inactive (on it: {what}), a new disk in place"),
                desired: d,
                before: h.world(),
                allowed_removals: vec![],
                finally: Some(|w| {
                    w.arrays
                        .iter()
                        .all(|a| a.degraded == 0 && a.array_state != "inactive")
                }),
                policy: Policy::default(),
            }
        })
        .collect()
}
