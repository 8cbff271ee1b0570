//! Health of the md arrays (running, members, redundancy, resync) and the lints md's own
//! arrays get: write-mostly and write-behind for mirrors, the write-intent bitmap for every level
//! with redundancy. Also the /dev/md/NAME links udev left behind.

use super::{Findings, Severity, boot};
use crate::config::size::human;
use crate::observe::{BitmapKind, MdArray, Observed};

/// Every array, in the order md lists them.
pub(super) fn arrays(o: &Observed, conf_uuids: &[String], f: &mut Findings) {
    for a in &o.arrays {
        // RAID1 is a mirror; anything else is named by its level, never called a mirror.
        let object = a.title();
        if !running(a, &object, f) {
            continue;
        }
        redundancy(a, &object, f);
        // Lints: write-mostly and write-behind exist for RAID1 only; a bitmap helps every level
        // with redundancy, never RAID0 or linear; arrays of firmware RAID keep their own rules.
        if a.is_mirror() && a.metadata.is_none() {
            mirror_lints(o, a, &object, f);
        }
        bitmap_lints(a, &object, f);
        boot::mdadm_conf_listing(o, a, conf_uuids, &object, f);
    }
}

/// Whether the array runs: a container never does (it is only described), an inactive array is
/// an error. The other checks apply only to a running array.
fn running(a: &MdArray, object: &str, f: &mut Findings) -> bool {
    if a.is_container() {
        f.add(
            Severity::Info,
            object.to_string(),
            format!(
                "container of {} disk(s) with {} metadata: foreign, not touched",
                a.members.len(),
                a.metadata
                    .as_deref()
                    .unwrap_or("external")
                    .trim_start_matches("external:")
            ),
            "the volumes in it are arrays of their own; the container itself never runs",
            "nothing to do",
        );
        return false;
    }
    if a.array_state == "inactive" {
        // Assembled (udev's incremental assembly) and not started: a member was missing when
        // it came up. `--assemble --scan` does nothing to it; `--run` starts it.
        let present = a.members.iter().filter(|m| !m.faulty()).count();
        let short = (a.raid_disks as usize).saturating_sub(present);
        f.add(
            Severity::Error,
            object.to_string(),
            format!(
                "array is assembled but not running ({present} of {} members present): what is on it cannot be read or used",
                a.raid_disks
            ),
            "md starts an array at boot only when all its members came; an inactive array serves no I/O",
            &if short > 0 {
                format!("bring the missing member back, or start it without it: `mdadm --run /dev/{}` (it runs degraded), and name a new disk in the file for `hyraid apply` to add; then check `hyraid status`", a.kname)
            } else {
                format!("start it: `mdadm --run /dev/{}`, then check `hyraid status`", a.kname)
            },
        );
        return false;
    }
    true
}

/// Failed members, missing redundancy and a resync or rebuild in progress.
fn redundancy(a: &MdArray, object: &str, f: &mut Findings) {
    for m in a.members.iter().filter(|m| m.faulty()) {
        f.add(
            Severity::Degraded,
            object.to_string(),
            format!("member /dev/{} has failed", m.kname),
            "md stopped using it (usually after I/O errors); a failed member holds no current copy",
            "replace the disk: name the new disk in the file and run `hyraid apply`; only if the cause was transient (a cable, a power cut) and its SMART is clean, put it back with `hyraid apply FILE --re-add NAME`",
        );
    }
    let working = a
        .members
        .iter()
        .filter(|m| m.has("in_sync") && !m.faulty())
        .count() as u32;
    if a.degraded > 0 || working < a.raid_disks {
        f.add(
                Severity::Degraded,
                object.to_string(),
                format!("degraded: {working} of {} members in sync", a.raid_disks),
                if a.is_mirror() {
                    "one more failure loses data"
                } else {
                    "its redundancy is reduced or gone"
                },
                if a.is_mirror() {
                    "replace or re-add the missing member (`hyraid apply` adds a disk named in the file)"
                } else {
                    "replace or re-add the missing member with mdadm"
                },
            );
    }
    if a.sync_action == "frozen" {
        f.add(
            // Degraded, or a resync pending: copies that may differ are never compared.
            if a.degraded > 0 || a.resync_pending {
                Severity::Degraded
            } else {
                Severity::Lint
            },
            object.to_string(),
            "resync and recovery are frozen (sync_action = frozen)".into(),
            "md runs no resync or recovery on it, and it stays frozen until someone sets it idle: a missing or stale copy is never rebuilt",
            &format!(
                "once whatever froze it is done, `echo idle > /sys/block/{}/md/sync_action`",
                a.kname
            ),
        );
    } else if !a.is_idle() {
        let pct = a
            .sync_completed
            .map(|(d, t)| format!(" {:.1}%", d as f64 * 100.0 / t.max(1) as f64))
            .unwrap_or_default();
        f.add(
            Severity::Info,
            object.to_string(),
            format!("{}{pct} in progress", a.sync_action),
            "redundancy is complete only when it finishes",
            "wait; `cat /proc/mdstat` shows the speed",
        );
    }
}

/// What only a RAID1 of md's own can be advised: write-mostly on its rotational members, and
/// write-behind only with one.
fn mirror_lints(o: &Observed, a: &MdArray, object: &str, f: &mut Findings) {
    let rot: Vec<(bool, bool)> = a
        .members
        .iter()
        .filter(|m| !m.faulty())
        .filter_map(|m| o.device(&m.kname).map(|d| (d.rotational, m.write_mostly())))
        .collect();
    let mixed = rot.iter().any(|(r, _)| !r) && rot.iter().any(|(r, _)| *r);
    if mixed && rot.iter().any(|(r, wm)| *r && !wm) {
        f.lint(
            "hdd-not-write-mostly",
            object.to_string(),
            "a rotational member is not write-mostly in a mirror with an SSD".into(),
            "md may serve reads from the HDD: random reads at HDD speed (16-19x slower at queue depth 1)",
            "mark it write-mostly: `write_mostly: auto` in the file and `hyraid apply`",
        );
    }
    // A write-mostly member that is gone or failed is reported once, as degraded: the file is
    // not blamed for it.
    let incomplete = a.degraded > 0
        || a.members.iter().any(|m| m.faulty())
        || (a.members.len() as u32) < a.raid_disks;
    if a.bitmap.as_ref().is_some_and(|b| b.backlog > 0)
        && !incomplete
        && !a.members.iter().any(|m| m.write_mostly())
    {
        f.lint(
            "write-behind-without-write-mostly",
            object.to_string(),
            "write-behind is set but no member is write-mostly".into(),
            "write-behind only applies to write-mostly members; the setting waits to surprise you",
            "set `write_behind: 0`, or mark the slow member write-mostly",
        );
    }
}

/// The write-intent bitmap: a foreign kind is described, a missing or too fine one is a lint.
fn bitmap_lints(a: &MdArray, object: &str, f: &mut Findings) {
    match &a.bitmap {
            Some(b) if b.kind == BitmapKind::File && a.is_mirror() => f.add(
                Severity::Info,
                object.to_string(),
                format!("write-intent bitmap {}: deprecated", b.describe()),
                "the kernel deprecates file bitmaps (MD_BITMAP_FILE) and mdadm 4.4 no longer creates them; the file's filesystem must be mounted before the array assembles",
                if a.superblock_version() == "0.90" {
                    // import leaves 0.90 arrays out: the conversion is the user's.
                    "hyraid does not manage 0.90 arrays: convert the bitmap by hand once the array is idle (`mdadm --grow --bitmap=none`, then `--bitmap=internal`), and drop `bitmap=` from its ARRAY line in mdadm.conf"
                } else {
                    "name this mirror in the file (`hyraid import` writes it) and `hyraid apply` converts it to an internal bitmap"
                },
            ),
            Some(b) if b.kind != BitmapKind::Internal => f.add(
                Severity::Info,
                object.to_string(),
                format!("write-intent bitmap {}: foreign, not touched", b.describe()),
                "hyraid manages internal bitmaps only; a file bitmap needs its filesystem mounted before the array assembles, and mdadm 4.4 dropped support for it",
                &format!(
                    "leave it, or move to an internal bitmap: `mdadm --grow /dev/{k} --bitmap=none`, then `mdadm --grow /dev/{k} --bitmap=internal`",
                    k = a.kname
                ),
            ),
            None if a.bitmap_applies() && a.metadata.is_none() => f.lint(
                "no-bitmap",
                object.to_string(),
                "no write-intent bitmap".into(),
                "every unclean shutdown means a full resync, and a dropped member a full rebuild",
                &if a.is_mirror() {
                    "add one: `bitmap: { chunk: 64MiB }` and `hyraid apply`".to_string()
                } else {
                    format!(
                        "add one: `mdadm --grow /dev/{} --bitmap=internal --bitmap-chunk=64M`",
                        a.kname
                    )
                },
            ),
            Some(b)
                if a.bitmap_applies() && a.size_kib * 1024 >= 100 << 30 && b.chunk < 64 << 20 =>
            {
                f.lint(
                    "small-bitmap-chunk",
                    object.to_string(),
                    format!(
                        "bitmap chunk {} on a {} array",
                        human(b.chunk),
                        human(a.size_kib * 1024)
                    ),
                    "small chunks cost random-write speed and buy little on large members",
                    "use `bitmap: { chunk: 64MiB }` or larger",
                )
            }
            _ => {}
        }
}

/// /dev/md/NAME entries no running array owns.
pub(super) fn dev_md_strays(o: &Observed, f: &mut Findings) {
    for st in &o.dev_md_strays {
        f.add(
            Severity::Info,
            format!("/dev/md/{}", st.name),
            st.describe(),
            "udev keeps /dev/md/NAME as links to running arrays; a leftover makes creating or assembling an array of that name fail",
            &format!(
                "if no array uses it, remove it (`rm /dev/md/{}`); `udevadm trigger --subsystem-match=block` recreates the links of running arrays",
                st.name
            ),
        );
    }
}
