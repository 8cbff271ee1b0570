//! `hyraid status`: health of the arrays, LVs and drive caches, and lints from the field's
//! practice, each with the reason and the fix. Pure: observation (+ the file, + mdadm.conf) in,
//! findings out.

use crate::config::Desired;
use crate::config::size::human;
use crate::observe::names::{mdadm_conf_uuids, norm_uuid};
use crate::observe::{BitmapKind, DevKind, MdArray, Observed};
use crate::plan::persist;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Lint,
    /// The file asks for a change hyraid refuses to make (from the plan).
    Refused,
    Degraded,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub object: String,
    pub message: String,
    pub reason: String,
    pub fix: String,
}

/// Exit code of `hyraid status`: 0 healthy, 1 error, 2 degraded or lint findings.
pub fn exit_code(findings: &[Finding]) -> u8 {
    match findings.iter().map(|f| f.severity).max() {
        Some(Severity::Error) => 1,
        Some(Severity::Degraded) | Some(Severity::Refused) | Some(Severity::Lint) => 2,
        _ => 0,
    }
}

pub fn status(o: &Observed, desired: Option<&Desired>, mdadm_conf: Option<&str>) -> Vec<Finding> {
    let mut f = Vec::new();
    let mut add = |severity, object: String, message: String, reason: &str, fix: &str| {
        f.push(Finding {
            severity,
            object,
            message,
            reason: reason.into(),
            fix: fix.into(),
        });
    };
    let conf_uuids = mdadm_conf.map(mdadm_conf_uuids).unwrap_or_default();
    for a in &o.arrays {
        // RAID1 is a mirror; anything else is named by its level, never called a mirror.
        let object = a.title();
        if a.is_container() {
            add(
                Severity::Info,
                object.clone(),
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
            continue;
        }
        if a.array_state == "inactive" {
            add(
                Severity::Error,
                object.clone(),
                "array is inactive (not running)".into(),
                "an inactive array serves no I/O",
                "assemble it: `mdadm --assemble --scan`, then check `hyraid status`",
            );
            continue;
        }
        for m in a.members.iter().filter(|m| m.faulty()) {
            add(
                Severity::Degraded,
                object.clone(),
                format!("member /dev/{} has failed", m.kname),
                "a failed member holds no current copy",
                "replace the disk: name the new disk in the file and run `hyraid apply`",
            );
        }
        let working = a
            .members
            .iter()
            .filter(|m| m.has("in_sync") && !m.faulty())
            .count() as u32;
        if a.degraded > 0 || working < a.raid_disks {
            add(
                Severity::Degraded,
                object.clone(),
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
        if !a.is_idle() {
            let pct = a
                .sync_completed
                .map(|(d, t)| format!(" {:.1}%", d as f64 * 100.0 / t.max(1) as f64))
                .unwrap_or_default();
            add(
                Severity::Info,
                object.clone(),
                format!("{}{pct} in progress", a.sync_action),
                "redundancy is complete only when it finishes",
                "wait; `cat /proc/mdstat` shows the speed",
            );
        }
        // Lints: write-mostly and write-behind exist for RAID1 only; a bitmap helps every level
        // with redundancy, never RAID0 or linear; arrays of firmware RAID keep their own rules.
        if a.is_mirror() && a.metadata.is_none() {
            mirror_lints(o, a, &object, &mut add);
        }
        match &a.bitmap {
            Some(b) if b.kind != BitmapKind::Internal => add(
                Severity::Info,
                object.clone(),
                format!("write-intent bitmap {}: foreign, not touched", b.describe()),
                "hyraid manages internal bitmaps only; a file bitmap needs its filesystem mounted before the array assembles, and mdadm 4.5 dropped support for it",
                &format!(
                    "leave it, or move to an internal bitmap: `mdadm --grow /dev/{k} --bitmap=none`, then `mdadm --grow /dev/{k} --bitmap=internal`",
                    k = a.kname
                ),
            ),
            None if a.bitmap_applies() && a.metadata.is_none() => add(
                Severity::Lint,
                object.clone(),
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
                add(
                    Severity::Lint,
                    object.clone(),
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
        if let Some(u) = &a.uuid
            && !conf_uuids.contains(&norm_uuid(u))
        {
            let rebuild = match persist::initramfs_command(&o.boot) {
                Some(cmd) => format!("run `{cmd}`"),
                None => "rebuild the initramfs (no update-initramfs or dracut was found)".into(),
            };
            let fix = format!(
                "add its line from `mdadm --detail --scan` to {} and {rebuild}",
                persist::mdadm_conf_path(&o.boot)
            );
            add(
                Severity::Lint,
                object.clone(),
                "not listed in mdadm.conf".into(),
                "after a reboot it may come up under another name (md127, or NAME_0 from another host)",
                &fix,
            );
        }
    }
    for st in &o.dev_md_strays {
        add(
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
    for d in o.block_devices.iter().filter(|d| d.probe_error.is_some()) {
        add(
            Severity::Lint,
            format!("device /dev/{}", d.kname),
            format!(
                "content unknown: probing failed ({})",
                d.probe_error.as_deref().unwrap_or("")
            ),
            "hyraid treats it as holding data: it creates nothing on it without --allow-destroy",
            "check the device (`dmesg`, `smartctl -a`); probe it by hand with `wipefs -n`",
        );
    }
    for l in o.lvm.lvs.iter().filter(|l| !l.hidden) {
        let Some(wc) = &l.writecache else { continue };
        let object = format!("lv {}/{}", l.vg, l.name);
        if let Some(n) = wc.writeback_blocks.filter(|n| *n > 0) {
            add(
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
                add(
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
    if let Some(d) = desired {
        for s in d.disks.values() {
            let dev = s.id.as_ref().and_then(|i| o.by_id(i)).or_else(|| {
                s.serial.as_ref().and_then(|sr| {
                    o.block_devices
                        .iter()
                        .find(|b| b.kind == DevKind::Disk && b.serial.as_ref() == Some(sr))
                })
            });
            let object = format!("disk {}", s.name);
            let Some(dev) = dev else {
                add(
                    Severity::Error,
                    object,
                    format!(
                        "not present ({})",
                        s.id.clone().or(s.serial.clone()).unwrap_or_default()
                    ),
                    "a disk the file names is missing",
                    "check cabling, or replace it in the file",
                );
                continue;
            };
            if let Some(want) = s.write_cache {
                let cur = dev.write_cache.and_then(|w| w.enabled);
                if cur != Some(want) {
                    add(
                        Severity::Lint,
                        object.clone(),
                        format!(
                            "drive write cache is {}, the file says {}",
                            cur.map(|c| if c { "on" } else { "off" })
                                .unwrap_or("unknown"),
                            if want { "on" } else { "off" }
                        ),
                        "the setting is volatile: a power cycle resets it",
                        "run `hyraid apply`",
                    );
                }
                let persistent = dev.serial.as_ref().is_some_and(|s| {
                    o.boot
                        .write_cache_rule
                        .as_deref()
                        .and_then(|r| crate::plan::persist::rule_line(r, s))
                        .is_some_and(|l| {
                            if want {
                                l.contains("-W1") || l.contains("--set=WCE")
                            } else {
                                l.contains("-W0") || l.contains("--clear=WCE")
                            }
                        })
                });
                if !persistent {
                    add(
                        Severity::Lint,
                        object,
                        format!(
                            "drive write cache {} is not made persistent",
                            if want { "on" } else { "off" }
                        ),
                        "hdparm -W is lost at every power cycle; hyraid's udev rule is missing or differs",
                        "run `hyraid apply` (it writes /etc/udev/rules.d/61-hyraid-write-cache.rules)",
                    );
                }
            }
        }
    }
    f.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.object.cmp(&b.object)));
    f
}

/// What only a RAID1 of md's own can be advised: write-mostly on its rotational members, and
/// write-behind only with one.
fn mirror_lints(
    o: &Observed,
    a: &MdArray,
    object: &str,
    add: &mut impl FnMut(Severity, String, String, &str, &str),
) {
    let rot: Vec<(bool, bool)> = a
        .members
        .iter()
        .filter(|m| !m.faulty())
        .filter_map(|m| o.device(&m.kname).map(|d| (d.rotational, m.write_mostly())))
        .collect();
    let mixed = rot.iter().any(|(r, _)| !r) && rot.iter().any(|(r, _)| *r);
    if mixed && rot.iter().any(|(r, wm)| *r && !wm) {
        add(
            Severity::Lint,
            object.to_string(),
            "a rotational member is not write-mostly in a mirror with an SSD".into(),
            "md may serve reads from the HDD: random reads at HDD speed (16-19x slower at queue depth 1)",
            "mark it write-mostly: `write_mostly: auto` in the file and `hyraid apply`",
        );
    }
    if a.bitmap.as_ref().is_some_and(|b| b.backlog > 0)
        && !a.members.iter().any(|m| m.write_mostly())
    {
        add(
            Severity::Lint,
            object.to_string(),
            "write-behind is set but no member is write-mostly".into(),
            "write-behind only applies to write-mostly members; the setting waits to surprise you",
            "set `write_behind: 0`, or mark the slow member write-mostly",
        );
    }
}

pub fn render_text(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "Healthy: no findings.\n".into();
    }
    let mut o = String::new();
    for x in findings {
        let tag = match x.severity {
            Severity::Error => "ERROR",
            Severity::Degraded => "DEGRADED",
            Severity::Refused => "REFUSED",
            Severity::Lint => "lint",
            Severity::Info => "info",
        };
        o.push_str(&format!(
            "{tag:>8}  {}: {}\n          why: {}\n          fix: {}\n",
            x.object, x.message, x.reason, x.fix
        ));
    }
    let count = |s| findings.iter().filter(|f| f.severity == s).count();
    o.push_str(&format!(
        "\n{} error(s), {} degraded, {} refused, {} lint(s), {} info.\n",
        count(Severity::Error),
        count(Severity::Degraded),
        count(Severity::Refused),
        count(Severity::Lint),
        count(Severity::Info)
    ));
    o
}

/// A device as a person knows it: the file's disk name when the file names it, else its stable
/// /dev/disk/by-id name (a WWN first), else the kernel name.
pub fn stable_name(o: &Observed, desired: Option<&Desired>, kname: &str) -> String {
    let Some(b) = o.device(kname) else {
        return format!("/dev/{kname}");
    };
    let disk = b.parent.as_deref().unwrap_or(kname);
    let part = b.parent.is_some().then(|| kname.trim_start_matches(disk));
    let named = desired.and_then(|d| {
        let dev = o.device(disk)?;
        d.disks.values().find(|s| {
            s.id.as_ref().is_some_and(|i| dev.by_id.contains(i))
                || s.serial.is_some() && s.serial == dev.serial
        })
    });
    let by_id = b
        .by_id
        .iter()
        .find(|i| i.starts_with("wwn-"))
        .or(b.by_id.first())
        .map(|i| format!("/dev/disk/by-id/{i}"));
    match (named, by_id) {
        (Some(s), Some(p)) if part.is_none() => format!("disk {} ({p})", s.name),
        (Some(s), _) if part.is_none() => format!("disk {}", s.name),
        (_, Some(p)) => p,
        _ => format!("/dev/{kname}"),
    }
}

/// The plan's refusals as findings: a machine the file cannot be applied to is not healthy.
pub fn refusals(p: &crate::plan::Plan) -> Vec<Finding> {
    p.refused
        .iter()
        .map(|r| Finding {
            severity: Severity::Refused,
            object: r.object.clone(),
            message: r.reason.clone(),
            reason: "the file asks for this, and `hyraid apply` refuses to do it (it runs nothing while a change is refused)".into(),
            fix: r.fix.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mdadm_conf_uuid_forms_match() {
        let conf = "HOMEHOST <system>\nARRAY /dev/md/data0 metadata=1.2 name=hyraid-vm:data0 UUID=263e1fc9:5e52a71e:0141a8e8:fe8e251e\n# ARRAY commented\n";
        assert_eq!(
            mdadm_conf_uuids(conf),
            vec!["263e1fc95e52a71e0141a8e8fe8e251e"]
        );
        assert_eq!(
            norm_uuid("263e1fc9-5e52-a71e-0141-a8e8fe8e251e"),
            "263e1fc95e52a71e0141a8e8fe8e251e"
        );
        let scan = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/layout-three-arrays/mdadm-detail-scan-three.txt"
        ))
        .unwrap();
        assert_eq!(mdadm_conf_uuids(&scan).len(), 3);
    }
}
