//! Writes to md sysfs as kernel 6.1 takes them: a member's `state` (writemostly,
//! -writemostly), the bitmap's `backlog` (write-behind), `sync_action` (frozen, idle),
//! `array_state` (active); and a SCSI
//! disk's `device/rescan`.

use crate::host::HostError;
use crate::sim::world::SimState;

pub fn sysfs_write(st: &mut SimState, path: &str, value: &str) -> Result<(), HostError> {
    let inval = |detail: &str| {
        Err(HostError::Io {
            path: path.to_string(),
            detail: detail.to_string(),
        })
    };
    let nf = || {
        Err(HostError::NotFound {
            path: path.to_string(),
        })
    };
    // A SCSI rescan (`device/rescan`): the model has no stale view to refresh.
    if let Some(k) = path
        .strip_prefix("/sys/block/")
        .and_then(|r| r.strip_suffix("/device/rescan"))
    {
        return if st.world.device(k).is_some() && value == "1" {
            Ok(())
        } else {
            nf()
        };
    }
    let Some(rest) = path.strip_prefix("/sys/block/") else {
        return nf();
    };
    let Some((md, attr)) = rest.split_once("/md/") else {
        return nf();
    };
    if let Some(r) = super::md_check::write(st, md, attr, value) {
        return r;
    }
    let Some(a) = st.array_mut(md) else {
        return nf();
    };
    if let Some(m) = attr
        .strip_prefix("dev-")
        .and_then(|m| m.strip_suffix("/state"))
    {
        let Some(mem) = a.members.iter_mut().find(|x| x.kname == m) else {
            return nf();
        };
        match value {
            "writemostly" => {
                if !mem.write_mostly() {
                    let pos = mem
                        .state
                        .iter()
                        .position(|s| s != "faulty" && s != "in_sync")
                        .unwrap_or(mem.state.len());
                    mem.state.insert(pos, "write_mostly".into());
                }
            }
            "-writemostly" => mem.state.retain(|s| s != "write_mostly"),
            _ => {
                return inval(
                    "Invalid argument (the simulated host models writemostly/-writemostly)",
                );
            }
        }
        return Ok(());
    }
    if attr == "bitmap/backlog" {
        let Ok(n) = value.parse::<u32>() else {
            return inval("Invalid argument");
        };
        if n > 16383 {
            return inval("Invalid argument");
        }
        if !a.members.iter().any(|m| m.write_mostly()) {
            return inval("Invalid argument (can't set backlog, no write mostly device available)");
        }
        match a.bitmap.as_mut() {
            Some(b) => b.backlog = n,
            None => return nf(),
        }
        return Ok(());
    }
    // `active`: an auto-read-only or read-only array becomes read-write and starts what md held
    // back (a resync, a rebuild onto a member added meanwhile); one that is read-write stays so
    // (array_state_store ignores restart_array's EBUSY for `active`).
    if attr == "array_state" {
        if value != "active" {
            return inval("Invalid argument (the simulated host models active)");
        }
        if a.array_state == "inactive" {
            return inval("Device or resource busy");
        }
        a.array_state = "active".into();
        start_held_sync(a);
        return Ok(());
    }
    if attr == "sync_action" {
        match value {
            // Freezing stops a running resync or recovery where it is.
            "frozen" => a.sync_action = "frozen".into(),
            // Thawed, md resumes what was interrupted.
            "idle" if a.sync_action == "frozen" => {
                a.sync_action = match a.sync_completed {
                    Some(_) if a.degraded > 0 => "recover".into(),
                    Some(_) => "resync".into(),
                    None => "idle".into(),
                }
            }
            "idle" => {}
            _ => return inval("Invalid argument (the simulated host models frozen/idle)"),
        }
        return Ok(());
    }
    inval("Permission denied (not modelled by the simulated host)")
}

/// What md held back while the array was read-only starts once it is writable: a pending resync,
/// or the rebuild onto a member added meanwhile (a spare in a slot of a degraded array).
pub(super) fn start_held_sync(a: &mut crate::observe::MdArray) {
    if a.sync_action == "frozen" {
        return;
    }
    if std::mem::take(&mut a.resync_pending) {
        a.sync_action = "resync".into();
        a.sync_completed = Some((0, a.size_kib * 2));
    } else if a.degraded > 0
        && a.members
            .iter()
            .any(|m| m.slot.is_some() && m.state.iter().any(|s| s == "spare"))
        && a.sync_action == "idle"
    {
        a.sync_action = "recover".into();
        a.sync_completed = Some((0, a.size_kib * 2));
    }
}
