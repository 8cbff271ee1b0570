//! The files that make the layout survive a reboot: the ARRAY lines hyraid owns in mdadm.conf,
//! and hyraid's udev rule that re-applies drive write-cache settings. Pure text in, text out.

use crate::observe::names::{UDEV_SAFE, md_kernel_device, md_name_safe, mdadm_uuid, rule_safe};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A value that would change the meaning of a managed file if it were written into it: the file
/// is not rendered at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to write {what} {value:?} into {file}: {why}")]
pub struct UnsafeValue {
    pub file: &'static str,
    pub what: String,
    pub value: String,
    pub why: &'static str,
}

/// Marks hyraid's block in mdadm.conf.
pub const MDADM_CONF_MARK: &str =
    "# hyraid: the arrays of hyraid.yaml; `hyraid apply` keeps these lines";

/// Debian's default when the file does not exist yet.
pub const MDADM_CONF_BASE: &str = "HOMEHOST <system>\nMAILADDR root\n";

/// The mdadm.conf this machine's mdadm reads: the one observed; where there is none yet,
/// /etc/mdadm.conf on EL (dracut), /etc/mdadm/mdadm.conf on Debian (update-initramfs).
pub fn mdadm_conf_path(b: &crate::observe::Boot) -> &str {
    match (&b.mdadm_conf_path, b.initramfs_tool.as_deref()) {
        (Some(p), _) => p,
        (None, Some("dracut")) => "/etc/mdadm.conf",
        (None, _) => "/etc/mdadm/mdadm.conf",
    }
}

/// How this machine rebuilds its initramfs (which carries a copy of mdadm.conf), if it has a
/// tool hyraid knows.
pub fn initramfs_command(b: &crate::observe::Boot) -> Option<&'static str> {
    match b.initramfs_tool.as_deref()? {
        "dracut" => Some("dracut -f --mdadmconf"),
        _ => Some("update-initramfs -u"),
    }
}

/// The device of an ARRAY line for a mirror: `/dev/md/NAME` for a name, or the device itself
/// (`/dev/md0`) for an array adopted by UUID.
fn array_device(entry: &str) -> String {
    if md_kernel_device(entry) {
        entry.to_string()
    } else {
        format!("/dev/md/{entry}")
    }
}

/// Two ARRAY devices name the same array: equal, or `/dev/md/N` and `/dev/mdN` (mdadm gives an
/// array named by a number that minor).
fn same_device(a: &str, b: &str) -> bool {
    let num = |d: &str| {
        d.strip_prefix("/dev/md/")
            .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
            .map(|n| format!("/dev/md{n}"))
            .unwrap_or_else(|| d.to_string())
    };
    a == b || num(a) == num(b)
}

/// The names and UUIDs of the ARRAY lines hyraid writes, checked before anything is rendered.
fn check_arrays(
    ours: &[(String, String)],
    gone: &[(String, Option<String>)],
) -> Result<(), UnsafeValue> {
    let unsafe_value = |what: &str, value: &str, why| UnsafeValue {
        file: "mdadm.conf",
        what: what.into(),
        value: value.into(),
        why,
    };
    let names = ours
        .iter()
        .map(|(n, _)| n)
        .chain(gone.iter().map(|(n, _)| n));
    for n in names {
        if !md_name_safe(n) && !md_kernel_device(n) {
            return Err(unsafe_value(
                "array name",
                n,
                "an md name is letters, digits, `.`, `_` and `-`, at most 32 bytes",
            ));
        }
    }
    let uuids = ours
        .iter()
        .map(|(_, u)| u)
        .chain(gone.iter().filter_map(|(_, u)| u.as_ref()));
    for u in uuids {
        let hex = u.chars().filter(|c| c.is_ascii_hexdigit()).count();
        if hex != 32
            || !u
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '-')
        {
            return Err(unsafe_value(
                "array UUID",
                u,
                "an md UUID is 32 hex digits separated by `:` or `-`",
            ));
        }
    }
    Ok(())
}

/// mdadm.conf with hyraid's ARRAY lines: `ours` (name, uuid) are (re)written in a marked block at
/// the end (a name, or the `/dev/mdN` device of an array adopted by UUID); any other ARRAY line
/// naming one of them or one of `gone` (by device or UUID),
/// with its continuation lines, is dropped; every other line is kept as it was. A name or UUID
/// that is not safe for mdadm.conf (a space, `#`, a newline) is refused, never written.
pub fn managed_mdadm_conf(
    current: Option<&str>,
    ours: &[(String, String)],
    gone: &[(String, Option<String>)],
) -> Result<String, UnsafeValue> {
    managed_mdadm_conf_of(current, ours, gone, &BTreeMap::new())
}

/// [`managed_mdadm_conf`], with the superblock format of the arrays of `ours` that are not 1.2
/// (by the name in `ours`): mdadm only assembles an ARRAY line's array from superblocks of the
/// format it names.
pub fn managed_mdadm_conf_of(
    current: Option<&str>,
    ours: &[(String, String)],
    gone: &[(String, Option<String>)],
    superblocks: &BTreeMap<String, String>,
) -> Result<String, UnsafeValue> {
    // Never write an ARRAY line without a real UUID (an array that is not running shows zeros).
    let ours: Vec<(String, String)> = ours
        .iter()
        .filter(|(_, u)| u.chars().any(|c| c.is_ascii_hexdigit() && c != '0'))
        .cloned()
        .collect();
    check_arrays(&ours, gone)?;
    Ok(render_mdadm_conf(current, &ours, gone, superblocks))
}

fn render_mdadm_conf(
    current: Option<&str>,
    ours: &[(String, String)],
    gone: &[(String, Option<String>)],
    superblocks: &BTreeMap<String, String>,
) -> String {
    // A file that already lists each array by its UUID (and nothing stale) is left as it is.
    if let Some(cur) = current {
        let lines: Vec<(Option<&str>, Vec<String>)> = cur
            .lines()
            .filter(|l| l.trim_start().starts_with("ARRAY"))
            .map(|l| {
                let dev = l
                    .split_whitespace()
                    .nth(1)
                    .filter(|d| d.starts_with("/dev/md"));
                let uuids = l
                    .split_whitespace()
                    .filter_map(|w| w.strip_prefix("UUID=").or_else(|| w.strip_prefix("uuid=")))
                    .map(mdadm_uuid)
                    .collect();
                (dev, uuids)
            })
            .collect();
        // Lines by the UUIDs they list, and by their device.
        let mut by_uuid: HashMap<&str, Vec<Option<&str>>> = HashMap::new();
        for (d, us) in &lines {
            for u in us {
                by_uuid.entry(u.as_str()).or_default().push(*d);
            }
        }
        let on_dev = |n: &str| {
            let want = array_device(n);
            lines
                .iter()
                .filter(move |(d, _)| d.is_some_and(|d| same_device(d, &want)))
                .map(|(_, us)| us)
        };
        // A line lists an array by its UUID when its device is the one hyraid would write, or
        // one that is not a name of the same kind (`/dev/md/OTHER` for a name, another md device
        // for an adopted one): such a line would assemble it under another name.
        let fits = |d: Option<&str>, n: &str| {
            let want = array_device(n);
            let kind = if md_kernel_device(n) {
                "/dev/md"
            } else {
                "/dev/md/"
            };
            d.is_none_or(|d| !d.starts_with(kind) || same_device(d, &want))
        };
        let listed = ours.iter().all(|(n, u)| {
            by_uuid
                .get(mdadm_uuid(u).as_str())
                .is_some_and(|ds| ds.iter().any(|d| fits(*d, n)))
        });
        let stale = ours.iter().any(|(n, u)| {
            let u = mdadm_uuid(u);
            on_dev(n).any(|us| !us.contains(&u))
        }) || gone.iter().any(|(n, u)| {
            on_dev(n).next().is_some()
                || u.as_deref()
                    .is_some_and(|u| by_uuid.contains_key(mdadm_uuid(u).as_str()))
        });
        // A `bitmap=` file on the line of an array hyraid manages: hyraid gives its arrays
        // internal bitmaps (a file bitmap is converted), and mdadm opens that file at assembly
        // and does not start the array when it is gone.
        let mut logical: Vec<String> = Vec::new();
        for l in cur.lines() {
            match logical.last_mut() {
                // mdadm.conf continues a line on the lines that start with a blank.
                Some(last) if l.starts_with(char::is_whitespace) && !l.trim().is_empty() => {
                    last.push(' ');
                    last.push_str(l);
                }
                _ => logical.push(l.to_string()),
            }
        }
        let file_bitmap = logical.iter().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.first() == Some(&"ARRAY")
                && w.iter()
                    .any(|x| x.to_ascii_lowercase().starts_with("bitmap="))
                && w.iter()
                    .filter_map(|x| x.strip_prefix("UUID=").or_else(|| x.strip_prefix("uuid=")))
                    .any(|u| ours.iter().any(|(_, o)| mdadm_uuid(o) == mdadm_uuid(u)))
        });
        if listed && !stale && !file_bitmap {
            return cur.to_string();
        }
    }
    let base = current.unwrap_or(MDADM_CONF_BASE);
    let devices: Vec<String> = ours
        .iter()
        .map(|(n, _)| array_device(n))
        .chain(gone.iter().map(|(n, _)| array_device(n)))
        .collect();
    let uuids: HashSet<String> = ours
        .iter()
        .map(|(_, u)| mdadm_uuid(u))
        .chain(
            gone.iter()
                .filter_map(|(_, u)| u.as_deref().map(mdadm_uuid)),
        )
        .collect();
    let mut out = String::new();
    let mut dropping = false;
    let all: Vec<&str> = base.lines().collect();
    for (i, line) in all.iter().copied().enumerate() {
        if dropping && line.starts_with(char::is_whitespace) && !line.trim().is_empty() {
            continue; // continuation of a dropped ARRAY line
        }
        dropping = false;
        if line.trim() == MDADM_CONF_MARK {
            continue;
        }
        let t = line.trim_start();
        if t.starts_with("ARRAY") {
            let mut words = t.split_whitespace().skip(1);
            let dev = words.next().unwrap_or("");
            let named = devices.iter().any(|d| same_device(dev, d));
            // The UUID may stand on a continuation line.
            let continued = all[i + 1..]
                .iter()
                .take_while(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty());
            let by_uuid = std::iter::once(t)
                .chain(continued.copied())
                .flat_map(str::split_whitespace)
                .filter_map(|w| w.strip_prefix("UUID=").or_else(|| w.strip_prefix("uuid=")))
                .any(|u| uuids.contains(&mdadm_uuid(u)));
            if named || by_uuid {
                dropping = true;
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    if !ours.is_empty() {
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(MDADM_CONF_MARK);
        out.push('\n');
        for (name, uuid) in ours {
            out.push_str(&format!(
                "ARRAY {} metadata={} UUID={}\n",
                array_device(name),
                superblocks.get(name).map(String::as_str).unwrap_or("1.2"),
                mdadm_uuid(uuid)
            ));
        }
    }
    out
}

/// hyraid's udev rule: for each (disk, serial, on) re-apply `hdparm -W` whenever the disk appears.
/// A disk name or serial that is not [`rule_safe`] is refused, never written.
pub fn write_cache_rule(
    entries: &[(String, String, bool, crate::plan::CacheTool)],
) -> Result<String, UnsafeValue> {
    for (disk, serial, _, _) in entries {
        for (what, value) in [("disk name", disk), ("serial", serial)] {
            if !rule_safe(value) {
                return Err(UnsafeValue {
                    file: WRITE_CACHE_RULE_NAME,
                    what: what.into(),
                    value: value.clone(),
                    why: UDEV_SAFE,
                });
            }
        }
    }
    let mut out = String::from(
        "# Written by hyraid: re-applies the drive write cache settings of hyraid.yaml whenever the\n# disk appears (boot, hotplug, reset). `hyraid apply` rewrites this file; do not edit it.\n",
    );
    for (disk, serial, on, tool) in entries {
        let mut argv = tool.argv("$devnode", *on);
        argv[0] = match tool {
            crate::plan::CacheTool::Hdparm => "/usr/sbin/hdparm".into(),
            crate::plan::CacheTool::Sdparm => "/usr/bin/sdparm".into(),
        };
        // SCSI: the kernel re-reads the caching page only on a rescan (seen on the real kernel),
        // and a rescan emits `change`, so this rule runs on `add` only.
        let (action, rescan) = match tool {
            crate::plan::CacheTool::Hdparm => ("add|change", String::new()),
            crate::plan::CacheTool::Sdparm => (
                "add",
                ", RUN+=\"/bin/sh -c 'echo 1 > /sys$devpath/device/rescan'\"".to_string(),
            ),
        };
        out.push_str(&format!(
            "# disk {disk}\nACTION==\"{action}\", SUBSYSTEM==\"block\", ENV{{DEVTYPE}}==\"disk\", ENV{{{}}}==\"{serial}\", RUN+=\"{}\"{rescan}\n",
            serial_key(*tool),
            argv.join(" ")
        ));
    }
    Ok(out)
}

/// The udev property that holds the serial lsblk reports: ATA disks `ID_SERIAL_SHORT`; SCSI/SAS
/// disks `ID_SCSI_SERIAL` (their `ID_SERIAL_SHORT` is WWN-derived when they have a WWN; seen in
/// the VM with virtio-scsi).
pub fn serial_key(tool: crate::plan::CacheTool) -> &'static str {
    match tool {
        crate::plan::CacheTool::Hdparm => "ID_SERIAL_SHORT",
        crate::plan::CacheTool::Sdparm => "ID_SCSI_SERIAL",
    }
}

/// The line of hyraid's rule for the disk with this serial, if any.
pub fn rule_line<'a>(rule: &'a str, serial: &str) -> Option<&'a str> {
    rule.lines().find(|l| {
        ["ID_SERIAL_SHORT", "ID_SCSI_SERIAL"]
            .iter()
            .any(|k| l.contains(&format!("ENV{{{k}}}==\"{serial}\"")))
    })
}

/// The file's name of the disk whose serial the rule's line matches (its `# disk NAME` comment):
/// `hyraid import` gives the disk that name again, so the rule is the same.
pub fn rule_disk_name(rule: &str, serial: &str) -> Option<String> {
    let lines: Vec<&str> = rule.lines().collect();
    let at = lines.iter().position(|l| {
        ["ID_SERIAL_SHORT", "ID_SCSI_SERIAL"]
            .iter()
            .any(|k| l.contains(&format!("ENV{{{k}}}==\"{serial}\"")))
    })?;
    let name = lines
        .get(at.checked_sub(1)?)?
        .trim()
        .strip_prefix("# disk ")?;
    rule_safe(name).then(|| name.to_string())
}

/// The serial and tool of the rule's line for `disk` (after its `# disk NAME` comment): what
/// keeps a disk that is missing for now in the rule, so its setting is back when it returns.
pub fn rule_entry(rule: &str, disk: &str) -> Option<(String, crate::plan::CacheTool)> {
    let mut lines = rule.lines();
    lines.find(|l| l.trim() == format!("# disk {disk}"))?;
    let line = lines.next()?;
    for (key, tool) in [
        ("ID_SERIAL_SHORT", crate::plan::CacheTool::Hdparm),
        ("ID_SCSI_SERIAL", crate::plan::CacheTool::Sdparm),
    ] {
        let open = format!("ENV{{{key}}}==\"");
        if let Some(rest) = line.split_once(&open).map(|(_, r)| r)
            && let Some((serial, _)) = rest.split_once('"')
            && rule_safe(serial)
        {
            return Some((serial.to_string(), tool));
        }
    }
    None
}

const WRITE_CACHE_RULE_NAME: &str = "the udev rule 61-hyraid-write-cache.rules";

/// A unified diff for the plan display.
pub fn unified_diff(path: &str, old: Option<&str>, new: &str) -> String {
    let old_text = old.unwrap_or("");
    let diff = similar::TextDiff::from_lines(old_text, new);
    diff.unified_diff()
        .context_radius(2)
        .header(if old.is_some() { path } else { "/dev/null" }, path)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_other_lines_and_owns_its_arrays() {
        let cur = "# comment kept\nHOMEHOST <system>\nMAILADDR root\nARRAY /dev/md/data0 metadata=1.2 name=old:data0 UUID=11111111:11111111:11111111:11111111\n   devices=/dev/sda1,/dev/sdb1\nARRAY /dev/md/other metadata=1.2 UUID=22222222:22222222:22222222:22222222\n";
        let ours = vec![(
            "data0".to_string(),
            "263e1fc9-5e52-a71e-0141-a8e8fe8e251e".to_string(),
        )];
        let new = managed_mdadm_conf(Some(cur), &ours, &[]).unwrap();
        assert_eq!(
            new,
            "# comment kept\nHOMEHOST <system>\nMAILADDR root\nARRAY /dev/md/other metadata=1.2 UUID=22222222:22222222:22222222:22222222\n\n# hyraid: the arrays of hyraid.yaml; `hyraid apply` keeps these lines\nARRAY /dev/md/data0 metadata=1.2 UUID=263e1fc9:5e52a71e:0141a8e8:fe8e251e\n"
        );
        // Idempotent: applying to its own output changes nothing.
        assert_eq!(managed_mdadm_conf(Some(&new), &ours, &[]).unwrap(), new);
        // A removed array's line goes; the foreign one stays.
        let gone = managed_mdadm_conf(
            Some(&new),
            &[],
            &[(
                "data0".into(),
                Some("263e1fc9-5e52-a71e-0141-a8e8fe8e251e".into()),
            )],
        )
        .unwrap();
        assert!(
            !gone.contains("data0") && gone.contains("/dev/md/other") && !gone.contains("hyraid:")
        );
        // A hand-written file that already lists the array correctly is not rewritten.
        let by_hand = "HOMEHOST <system>\nARRAY /dev/md/data0 metadata=1.2 name=box:data0 UUID=263e1fc9:5e52a71e:0141a8e8:fe8e251e\n";
        assert_eq!(
            managed_mdadm_conf(Some(by_hand), &ours, &[]).unwrap(),
            by_hand
        );
        // A missing file starts from Debian's defaults.
        assert!(
            managed_mdadm_conf(None, &ours, &[])
                .unwrap()
                .starts_with("HOMEHOST <system>\nMAILADDR root\n\n# hyraid")
        );
    }

    #[test]
    fn udev_rule_and_diff() {
        let r = write_cache_rule(&[
            (
                "hdd0".into(),
                "WDE00001".into(),
                true,
                crate::plan::CacheTool::Hdparm,
            ),
            (
                "sas0".into(),
                "K4G1ABCD".into(),
                false,
                crate::plan::CacheTool::Sdparm,
            ),
        ])
        .unwrap();
        assert!(r.contains(r#"ACTION=="add", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_SCSI_SERIAL}=="K4G1ABCD", RUN+="/usr/bin/sdparm --clear=WCE $devnode", RUN+="/bin/sh -c 'echo 1 > /sys$devpath/device/rescan'""#), "{r}");
        assert!(rule_line(&r, "K4G1ABCD").is_some_and(|l| l.contains("--clear=WCE")));
        assert!(rule_line(&r, "WDE00001").is_some_and(|l| l.contains("-W1")));
        assert!(r.contains(
            "ENV{ID_SERIAL_SHORT}==\"WDE00001\", RUN+=\"/usr/sbin/hdparm -W1 $devnode\""
        ));
        assert!(rule_safe("WD-WCC4M0000001") && !rule_safe("a\"b") && !rule_safe("x y"));
        let d = unified_diff("/etc/mdadm/mdadm.conf", Some("a\nb\n"), "a\nb\nc\n");
        assert!(d.contains("--- /etc/mdadm/mdadm.conf") && d.contains("+c"));
    }

    #[test]
    fn values_that_would_rewrite_the_rule_are_refused() {
        let rule = |serial: &str| {
            write_cache_rule(&[(
                "hdd0".into(),
                serial.into(),
                true,
                crate::plan::CacheTool::Hdparm,
            )])
        };
        for bad in [
            "X\", RUN+=\"/bin/sh -c reboot",
            "X\nACTION==\"add\", RUN+=\"/bin/rm\"",
            "X\\",
            "X*",
            "A|B",
            "$env{HOME}",
            "X\u{7}",
            "X Y",
            "",
        ] {
            let e = rule(bad).expect_err(bad);
            assert_eq!(e.value, bad);
            assert!(e.to_string().contains("refusing to write serial"), "{e}");
        }
        // What udev itself keeps in ID_SERIAL_SHORT is written as it is.
        let r = rule("S2H7+J9@B#1=a:b.c_d-e").unwrap();
        assert!(
            r.contains(r#"ENV{ID_SERIAL_SHORT}=="S2H7+J9@B#1=a:b.c_d-e""#),
            "{r}"
        );
        // The disk name lands in a comment line: a newline there would start a rule.
        let e = write_cache_rule(&[(
            "d\nRUN+=\"/bin/sh\"".into(),
            "S1".into(),
            true,
            crate::plan::CacheTool::Hdparm,
        )])
        .unwrap_err();
        assert_eq!(e.what, "disk name");
    }

    #[test]
    fn array_lines_are_refused_for_unsafe_names_and_uuids() {
        let u = "263e1fc9-5e52-a71e-0141-a8e8fe8e251e".to_string();
        let ours = |n: &str, u: &str| vec![(n.to_string(), u.to_string())];
        let injected = format!("{u}\nARRAY /dev/md/evil UUID=1");
        let e = managed_mdadm_conf(None, &ours("data0", &injected), &[]).unwrap_err();
        assert_eq!((e.what.as_str(), e.file), ("array UUID", "mdadm.conf"));
        assert!(managed_mdadm_conf(None, &ours("data0", "1 #x"), &[]).is_err());
        for name in ["data 0", "data#0", "-data", "..", "a\nb", &"x".repeat(33)] {
            let e = managed_mdadm_conf(None, &ours(name, &u), &[]).unwrap_err();
            assert_eq!(e.what, "array name", "{name}");
        }
        let gone = [("gone0".to_string(), Some("zz\nMAILADDR evil".to_string()))];
        assert!(managed_mdadm_conf(None, &[], &gone).is_err());
        // mdadm's and sysfs's UUID forms are both fine.
        assert!(
            managed_mdadm_conf(
                None,
                &ours("data0", "263e1fc9:5e52a71e:0141a8e8:fe8e251e"),
                &[]
            )
            .is_ok()
        );
    }
}
