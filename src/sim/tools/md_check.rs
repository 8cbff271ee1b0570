//! md's check as kernel 6.1 runs it (md.c `action_store`, `md_do_sync`): `check` written to
//! `sync_action` starts at `sync_min` and resets `mismatch_cnt`; each step of time compares a
//! stretch of the members and counts the sectors that differ (blocks the simulator was told are
//! corrupt on a member); `idle` stops it and leaves `sync_min` where it stopped, so the next
//! check resumes there; a check that ends sets `sync_min` back to 0. `sync_speed_max` takes a
//! number (KiB/s) or `system`.

use crate::host::HostError;
use crate::observe::MdArray;
use crate::sim::world::SimState;

/// Sectors md counts for one corrupt block (a 4 KiB page of RAID1's resync buffer).
pub const SECTORS_PER_BLOCK: u64 = 8;

/// A write to a check attribute of array `md`; None when `attr` is not one of them.
pub fn write(
    st: &mut SimState,
    md: &str,
    attr: &str,
    value: &str,
) -> Option<Result<(), HostError>> {
    let path = format!("/sys/block/{md}/md/{attr}");
    let io = |detail: &str| {
        Err(HostError::Io {
            path: path.clone(),
            detail: detail.to_string(),
        })
    };
    let a = st.array_mut(md)?;
    let total = a.size_kib * 2;
    Some(match (attr, value) {
        ("sync_action", "check" | "repair") => {
            if a.sync_action != "idle" || a.array_state == "readonly" {
                return Some(io("Device or resource busy (os error 16)"));
            }
            a.sync_action = value.into();
            a.mismatch_cnt = 0;
            a.sync_completed = Some((a.sync_min.min(total), total));
            Ok(())
        }
        ("sync_action", "idle") if matches!(a.sync_action.as_str(), "check" | "repair") => {
            a.sync_min = a.sync_completed.map(|(d, _)| d).unwrap_or(0);
            a.sync_action = "idle".into();
            a.sync_completed = None;
            Ok(())
        }
        ("sync_min", v) => match v.trim().parse::<u64>() {
            Ok(n) if n <= total => {
                a.sync_min = n;
                Ok(())
            }
            _ => io("Invalid argument (os error 22)"),
        },
        ("sync_speed_max", "system") => {
            a.sync_speed_max = None;
            Ok(())
        }
        ("sync_speed_max", v) => match v.trim().parse::<u64>() {
            Ok(0) => {
                a.sync_speed_max = None;
                Ok(())
            }
            Ok(n) => {
                a.sync_speed_max = Some(n);
                Ok(())
            }
            Err(_) => io("Invalid argument (os error 22)"),
        },
        _ => return None,
    })
}

/// The check attributes as sysfs prints them; None when `attr` is not one of them.
pub fn read(a: &MdArray, attr: &str) -> Option<String> {
    Some(match attr {
        "mismatch_cnt" => a.mismatch_cnt.to_string(),
        "sync_min" => a.sync_min.to_string(),
        "sync_max" => "max".into(),
        "sync_speed_max" => match a.sync_speed_max {
            Some(n) => format!("{n} (local)"),
            None => "200000 (system)".into(),
        },
        "sync_speed_min" => "1000 (system)".into(),
        _ => return None,
    })
}

/// A check moves on from `done` to `next` (sectors): the corrupt blocks in between are counted.
pub fn advance(a: &mut MdArray, corrupt: &[u64], done: u64, next: u64) {
    if matches!(a.sync_action.as_str(), "check" | "repair") {
        let found = corrupt.iter().filter(|s| **s >= done && **s < next).count() as u64;
        a.mismatch_cnt += found * SECTORS_PER_BLOCK;
    }
}

/// A check that reached the end: `sync_min` is forgotten (md_do_sync: "we completed so
/// min/max setting can be forgotten").
pub fn completed(a: &mut MdArray) {
    if matches!(a.sync_action.as_str(), "check" | "repair") {
        a.sync_min = 0;
    }
}
