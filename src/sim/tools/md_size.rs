//! `mdadm --grow MD --size=max` on RAID1 (mdadm 4.2 Grow.c "set size", kernel 6.1): each
//! member's size set to the most its device holds (sysfs `dev-*/size` 0, the kernel's
//! `super_1_rdev_size_change`), then the component size (SET_ARRAY_INFO size 0: the smallest
//! member); the new region is resynced from the old end.

use super::md_create::{bm_space, superblock_offset};
use crate::host::{CmdOutput, HostError};
use crate::observe::MdArray;
use crate::sim::fail;
use crate::sim::world::SimState;

/// Sectors a member of `sectors` holds for data once md sets its size to the most. 1.1/1.2:
/// everything after the data offset. 1.0: the superblock moves to the new end (8 KiB from it, on
/// a 4 KiB boundary), with the bitmap space and the 4 KiB bad-block log before it; with an
/// internal bitmap md cannot move it and the member keeps its size (`old`).
fn member_max(a: &MdArray, data_offset: Option<u64>, sectors: u64, old: u64) -> u64 {
    if a.superblock_version() != "1.0" {
        return sectors.saturating_sub(data_offset.unwrap_or(0));
    }
    if a.bitmap.is_some() {
        return old;
    }
    let sb_start = sectors.saturating_sub(16) & !7;
    sb_start.saturating_sub(bm_space(sectors) + 8)
}

pub(super) fn grow_size(st: &mut SimState, md: &str, k: &str) -> Result<CmdOutput, HostError> {
    let a = st.world.array(k).cloned().unwrap();
    if a.level != "raid1" {
        return fail(
            2,
            format!("mdadm: sim does not model --size on {}\n", a.level),
        );
    }
    // freeze(): md refuses to freeze a resync or check; a recovery freezes, then the resize
    // finds the sync thread and fails with EBUSY.
    match a.sync_action.as_str() {
        "idle" => {}
        "recover" => {
            let mut e =
                format!("mdadm: Cannot set device size for {md}: Device or resource busy\n");
            if a.bitmap.is_some() {
                e.push_str("       Bitmap must be removed before size can be changed\n");
            }
            return fail(1, e);
        }
        _ => {
            return fail(
                1,
                format!("mdadm: {md} is performing resync/recovery and cannot be reshaped\n"),
            );
        }
    }
    let old = a.size_kib * 2;
    let new = a
        .members
        .iter()
        .filter_map(|m| {
            let sectors = st.world.device(&m.kname)?.size / 512;
            Some(member_max(&a, m.data_offset, sectors, old).max(old))
        })
        .min()
        .unwrap_or(old);
    let unchanged = new / 2 <= a.size_kib;
    if !unchanged && a.superblock_version() == "1.0" {
        // The kernel wrote each superblock at its member's new end.
        for m in &a.members {
            let Some(d) = st.dev_mut(&m.kname) else {
                continue;
            };
            let offset = format!("{:#x}", superblock_offset(Some("1.0"), d.size));
            for s in d.signatures.iter_mut().flatten() {
                if s.kind == "linux_raid_member" {
                    s.offset = offset.clone();
                }
            }
        }
    }
    let a = st.array_mut(k).unwrap();
    let msg = if unchanged {
        format!(
            "mdadm: component size of {md} unchanged at {}K\n",
            a.size_kib
        )
    } else {
        a.size_kib = new / 2;
        // raid1_resize: recovery_cp set to the old end, and a resync needed.
        a.sync_action = "resync".into();
        a.sync_completed = Some((old, new));
        if a.array_state == "read-auto" {
            a.array_state = "active".into();
        }
        format!(
            "mdadm: component size of {md} has been set to {}K\n",
            a.size_kib
        )
    };
    Ok(CmdOutput {
        status: 0,
        stdout: String::new(),
        stderr: msg,
    })
}
