//! One md array from its /proc/mdstat stanza and md sysfs. Never fails: an attribute that is
//! missing (RAID0 and linear have no redundancy attributes; new kernels drop `bitmap/` when there
//! is no bitmap), empty, odd (`raid_disks` `4 (3)` during a reshape) or unreadable falls back to
//! what /proc/mdstat says, or is recorded as unknown.

use super::mdadm;
use super::mdstat::MdstatArray;
use super::model::{BitmapKind, LEVEL_UNKNOWN, MdArray, MdBitmap, MdMember};
use crate::host::{Host, HostError};
use std::collections::{BTreeMap, HashMap};

/// An md sysfs attribute.
enum Attr {
    /// The file does not exist or holds only blanks.
    Missing,
    Value(String),
    /// It exists but reading it failed.
    Unreadable,
}

impl Attr {
    fn get(self) -> Option<String> {
        match self {
            Attr::Value(v) => Some(v),
            _ => None,
        }
    }
}

fn attr(host: &dyn Host, path: &str) -> Attr {
    match host.read_file(path) {
        Ok(s) if s.trim().is_empty() => Attr::Missing,
        Ok(s) => Attr::Value(s.trim().to_string()),
        Err(HostError::NotFound { .. }) => Attr::Missing,
        Err(_) => Attr::Unreadable,
    }
}

/// Where the bitmap is: sysfs `bitmap/location` (`+8`, `-16`, `none`, `file`), else the mdstat
/// line (which names the file of a file bitmap).
fn bitmap(host: &dyn Host, base: &str, a: &MdstatArray) -> Option<MdBitmap> {
    let line = a.bitmap.as_ref();
    let file = line.and_then(|b| b.file.clone());
    let kind = match attr(host, &format!("{base}/bitmap/location")) {
        Attr::Value(l) if l == "none" => return None,
        Attr::Value(l) if l == "file" => BitmapKind::File,
        Attr::Value(l)
            if l.len() > 1
                && l.starts_with(['+', '-'])
                && l[1..].chars().all(|c| c.is_ascii_digit()) =>
        {
            BitmapKind::Internal
        }
        Attr::Value(_) => BitmapKind::Unknown,
        Attr::Missing | Attr::Unreadable => match line {
            None => return None,
            Some(_) if file.is_some() => BitmapKind::File,
            Some(_) => BitmapKind::Internal,
        },
    };
    let num = |name: &str| {
        attr(host, &format!("{base}/bitmap/{name}"))
            .get()
            .and_then(|v| mdadm::leading_number(&v))
    };
    Some(MdBitmap {
        chunk: num("chunksize")
            .filter(|c| *c > 0)
            .or(line.and_then(|b| b.chunk))
            .unwrap_or(0),
        backlog: num("backlog").unwrap_or(0).min(u32::MAX as u64) as u32,
        kind,
        file: if kind == BitmapKind::File { file } else { None },
    })
}

/// What a member's superblock says (`mdadm --examine --export`), for an array that is not
/// running; None when mdadm cannot tell.
fn examine(host: &dyn Host, a: &MdstatArray) -> Option<BTreeMap<String, String>> {
    let m = a.members.first().filter(|_| !a.active)?;
    let argv: Vec<String> = ["mdadm", "--examine", "--export"]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("/dev/{}", m.kname)])
        .collect();
    let o = host.run(&argv).ok().filter(|o| o.status == 0)?;
    mdadm::parse_export(&o.stdout).ok()
}

/// What the superblocks of an array that is not running say: its bitmap (`mdadm -X`) and which
/// members are write-mostly (`mdadm --examine`). None when a member's cannot be read: what the
/// array will be is then unknown, not "no bitmap".
struct Superblocks {
    bitmap: Option<MdBitmap>,
    write_mostly: Vec<String>,
}

fn superblocks(host: &dyn Host, a: &MdstatArray) -> Option<Superblocks> {
    let run = |argv: &[&str], dev: &str| -> Option<String> {
        let mut v: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        v.push(format!("/dev/{dev}"));
        host.run(&v).ok().map(|o| o.stdout)
    };
    let mut write_mostly = Vec::new();
    let mut has_bitmap = false;
    for m in &a.members {
        let e = mdadm::parse_examine(&run(&["mdadm", "--examine"], &m.kname)?).ok()?;
        has_bitmap |= e.has_bitmap;
        if e.write_mostly {
            write_mostly.push(m.kname.clone());
        }
    }
    let bitmap = match has_bitmap {
        false => None,
        true => {
            let x = mdadm::parse_examine_bitmap(&run(&["mdadm", "-X"], &a.members.first()?.kname)?)
                .ok()?;
            Some(MdBitmap {
                chunk: x.chunk,
                backlog: x.write_behind,
                kind: BitmapKind::Internal,
                file: None,
            })
        }
    };
    Some(Superblocks {
        bitmap,
        write_mostly,
    })
}

pub(super) fn md_array(
    host: &dyn Host,
    a: &MdstatArray,
    md_name_of: &HashMap<&str, &str>,
    fstype_of: &HashMap<&str, &str>,
) -> MdArray {
    let base = format!("/sys/block/{}/md", a.kname);
    let get = |name: &str| attr(host, &format!("{base}/{name}"));
    let mut bitmap = bitmap(host, &base, a);
    // An inactive array (assembled by udev but not started, e.g. a member is missing after a
    // reboot) has no /dev/md/NAME link and little in sysfs or `--detail` (no level): the
    // superblock of a member says what it is.
    let export = examine(host, a);
    let ex = |k: &str| {
        export
            .as_ref()
            .and_then(|m| m.get(k).cloned())
            .filter(|v| !v.is_empty())
    };
    let metadata = a.metadata.clone().filter(|m| m.starts_with("external:"));
    let container = metadata.as_deref().is_some_and(|m| !m.contains('/'));
    // Not running: the members' superblocks say what the array takes when it starts.
    let superblocks = (!a.active && metadata.is_none())
        .then(|| superblocks(host, a))
        .flatten();
    if let Some(sb) = &superblocks {
        bitmap = sb.bitmap.clone();
    }
    let members = a
        .members
        .iter()
        .map(|m| {
            let dev = format!("{base}/dev-{}", m.kname);
            let mut state = attr(host, &format!("{dev}/state"))
                .get()
                .map(|s| mdadm::parse_member_state(&s))
                .unwrap_or_default();
            let flagged = superblocks
                .as_ref()
                .is_some_and(|sb| sb.write_mostly.contains(&m.kname));
            if flagged && !state.iter().any(|w| w == "write_mostly") {
                state.push("write_mostly".into());
            }
            MdMember {
                kname: m.kname.clone(),
                slot: attr(host, &format!("{dev}/slot"))
                    .get()
                    .and_then(|s| mdadm::parse_slot(&s)),
                state,
                data_offset: attr(host, &format!("{dev}/offset"))
                    .get()
                    .and_then(|s| s.trim().parse().ok()),
            }
        })
        .collect();
    let number = |v: Option<String>| v.and_then(|s| mdadm::leading_number(&s));
    MdArray {
        kname: a.kname.clone(),
        name: md_name_of
            .get(a.kname.as_str())
            .map(|n| n.to_string())
            .or_else(|| ex("MD_DEVNAME"))
            .or_else(|| ex("MD_NAME").map(|n| n.rsplit(':').next().unwrap_or(&n).to_string())),
        // An array that is not running shows an all-zero UUID in sysfs: that is "unknown".
        uuid: get("uuid")
            .get()
            .filter(|u| u.chars().any(|c| c.is_ascii_hexdigit() && c != '0'))
            .or_else(|| ex("MD_UUID")),
        level: get("level")
            .get()
            .or_else(|| ex("MD_LEVEL"))
            .or_else(|| a.level.clone())
            .or_else(|| container.then(|| "container".to_string()))
            .unwrap_or_else(|| LEVEL_UNKNOWN.into()),
        raid_disks: number(get("raid_disks").get())
            .or_else(|| number(ex("MD_DEVICES")))
            .or(a.disks.map(|d| d.0 as u64))
            .unwrap_or(0)
            .min(u32::MAX as u64) as u32,
        size_kib: a.blocks,
        array_state: get("array_state").get().unwrap_or_else(|| {
            if a.active {
                "active".into()
            } else {
                "inactive".into()
            }
        }),
        // RAID0, linear and arrays that do not run have no sync_action: nothing ever syncs.
        sync_action: match get("sync_action") {
            Attr::Value(v) => v,
            Attr::Missing => "idle".into(),
            Attr::Unreadable => LEVEL_UNKNOWN.into(),
        },
        sync_completed: get("sync_completed")
            .get()
            .and_then(|s| mdadm::parse_sync_completed(&s).ok().flatten()),
        // A needed resync that has not started (an auto-read-only array starts it at its
        // first write): `resync_start` is a sector while `sync_action` is idle.
        // (An array that is not running shows a meaningless `resync_start`.)
        resync_pending: a.active
            && get("resync_start").get().is_some_and(|r| r != "none")
            && get("sync_action").get().is_none_or(|a| a == "idle"),
        degraded: number(get("degraded").get())
            .unwrap_or(0)
            .min(u32::MAX as u64) as u32,
        bitmap,
        members,
        fstype: fstype_of.get(a.kname.as_str()).map(|f| f.to_string()),
        metadata,
        superblock: a
            .metadata
            .clone()
            .filter(|m| !m.starts_with("external:") && m != "1.2"),
        mismatch_cnt: number(get("mismatch_cnt").get()).unwrap_or(0),
        sync_min: 0,
        sync_speed_max: None,
        superblock_read: superblocks.is_some(),
    }
}
