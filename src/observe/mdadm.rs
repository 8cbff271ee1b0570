//! md sysfs attribute values and mdadm's machine-readable outputs (`--detail --export`,
//! `--examine`, `-X`). The observer reads sysfs; the mdadm parsers serve verification.

use super::parse_util::{ParseError, colon_fields};
use std::collections::BTreeMap;

/// `dev-*/state`: comma-separated words (`in_sync,write_mostly`); empty allowed.
pub fn parse_member_state(text: &str) -> Vec<String> {
    text.trim()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `sync_completed`: `none`, `delayed` or `N / M` sectors.
pub fn parse_sync_completed(text: &str) -> Result<Option<(u64, u64)>, ParseError> {
    let t = text.trim();
    if t == "none" || t == "delayed" || t.is_empty() {
        return Ok(None);
    }
    let bad = || ParseError::Value {
        tool: "md sysfs sync_completed",
        detail: format!("`{t}`"),
    };
    let (a, b) = t.split_once('/').ok_or_else(bad)?;
    Ok(Some((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    )))
}

/// `slot`: a number or `none`.
pub fn parse_slot(text: &str) -> Option<u32> {
    text.trim().parse().ok()
}

/// The number an attribute starts with: `raid_disks` reads `4 (3)` while a reshape from 3 to 4
/// devices runs. None when it does not start with one.
pub fn leading_number(text: &str) -> Option<u64> {
    let t = text.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    t[..end].parse().ok()
}

/// A number attribute (`degraded`, `raid_disks`, `bitmap/chunksize`, `bitmap/backlog`).
pub fn parse_number(attr: &'static str, text: &str) -> Result<u64, ParseError> {
    text.trim().parse().map_err(|_| ParseError::Value {
        tool: "md sysfs",
        detail: format!("{attr} = `{}`", text.trim()),
    })
}

/// `mdadm --detail --export` / `--examine --export`: KEY=VALUE lines.
pub fn parse_export(text: &str) -> Result<BTreeMap<String, String>, ParseError> {
    let mut m = BTreeMap::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let (k, v) = l.split_once('=').ok_or(ParseError::Line {
            tool: "mdadm --export",
            line: i + 1,
            detail: format!("`{l}` is not KEY=VALUE"),
        })?;
        m.insert(k.to_string(), v.to_string());
    }
    Ok(m)
}

/// Member roles from `--detail --export`: (device path, role) where role is a slot or `spare`.
pub fn export_members(m: &BTreeMap<String, String>) -> Vec<(String, String)> {
    m.iter()
        .filter_map(|(k, role)| {
            let dev_key = k.strip_suffix("_ROLE")?.to_string() + "_DEV";
            Some((m.get(&dev_key)?.clone(), role.clone()))
        })
        .collect()
}

/// What `mdadm --examine MEMBER` says of one member's superblock.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Examine {
    pub array_uuid: Option<String>,
    pub name: Option<String>,
    pub level: Option<String>,
    pub write_mostly: bool,
    pub has_bitmap: bool,
    pub role: Option<String>,
}

pub fn parse_examine(text: &str) -> Result<Examine, ParseError> {
    let f = colon_fields(text);
    let get = |k: &str| f.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
    if get("Magic").as_deref() != Some("a92b4efc") {
        return Err(ParseError::Value {
            tool: "mdadm --examine",
            detail: "no md superblock (Magic a92b4efc missing)".into(),
        });
    }
    Ok(Examine {
        array_uuid: get("Array UUID"),
        name: get("Name").map(|n| n.split_whitespace().next().unwrap_or("").to_string()),
        level: get("Raid Level"),
        write_mostly: get("Flags")
            .is_some_and(|fl| fl.split_whitespace().any(|w| w == "write-mostly")),
        has_bitmap: get("Internal Bitmap").is_some(),
        role: get("Device Role"),
    })
}

/// What `mdadm -X MEMBER` says of the bitmap: chunk in bytes and write-behind limit (0 = Normal).
#[derive(Debug, Clone, PartialEq)]
pub struct ExamineBitmap {
    pub chunk: u64,
    pub write_behind: u32,
}

pub fn parse_examine_bitmap(text: &str) -> Result<ExamineBitmap, ParseError> {
    let f = colon_fields(text);
    let get = |k: &str| f.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
    let bad = |d: String| ParseError::Value {
        tool: "mdadm -X",
        detail: d,
    };
    if get("Magic") != Some("6d746962") {
        return Err(bad("no bitmap (Magic 6d746962 missing)".into()));
    }
    let cs = get("Chunksize").ok_or_else(|| bad("no Chunksize".into()))?;
    let (n, unit) = cs
        .split_once(' ')
        .ok_or_else(|| bad(format!("Chunksize `{cs}`")))?;
    let shift = match unit {
        "B" => 0,
        "KB" => 10,
        "MB" => 20,
        "GB" => 30,
        "TB" => 40,
        _ => return Err(bad(format!("Chunksize unit `{unit}`"))),
    };
    let chunk = n
        .parse::<u64>()
        .map_err(|_| bad(format!("Chunksize `{cs}`")))?
        << shift;
    let mode = get("Write Mode").ok_or_else(|| bad("no Write Mode".into()))?;
    let write_behind = match mode.rsplit_once("max ") {
        Some((_, n)) => n
            .trim()
            .parse()
            .map_err(|_| bad(format!("Write Mode `{mode}`")))?,
        None => 0,
    };
    Ok(ExamineBitmap {
        chunk,
        write_behind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fx(name: &str) -> String {
        crate::observe::parse_util::fixture(name)
    }

    fn sysfs_lines(name: &str) -> Vec<(String, String)> {
        fx(name)
            .lines()
            .filter_map(|l| {
                l.split_once(": ")
                    .map(|(a, b)| (a.to_string(), b.to_string()))
            })
            .collect()
    }

    #[test]
    fn member_states_from_sysfs() {
        let s = sysfs_lines("layout-three-arrays/sysfs-md-states-three.txt");
        let hdd = s
            .iter()
            .find(|(p, _)| p.ends_with("md127/md/dev-sdb1/state"))
            .unwrap();
        assert_eq!(parse_member_state(&hdd.1), vec!["in_sync", "write_mostly"]);
        let after = sysfs_lines("sysfs-md0-dev-states-after-replace.txt");
        assert_eq!(
            parse_member_state(&after[1].1),
            vec!["faulty", "write_mostly"]
        );
        assert_eq!(
            parse_member_state(&fx("sysfs-state-hdd-no-writemostly.txt")),
            vec!["in_sync"]
        );
        assert_eq!(
            parse_member_state(&fx("sysfs-state-hdd-after-re-add.txt")),
            vec!["write_mostly", "spare"]
        );
        assert!(parse_member_state("\n").is_empty());
    }

    #[test]
    fn array_values() {
        let v = sysfs_lines("sysfs-md0-values.txt");
        let get = |k: &str| v.iter().find(|(a, _)| a == k).unwrap().1.clone();
        assert_eq!(parse_sync_completed(&get("sync_completed")).unwrap(), None);
        assert_eq!(
            parse_number("bitmap/chunksize", &get("bitmap/chunksize")).unwrap(),
            64 << 20
        );
        assert_eq!(parse_slot(&get("dev-sdc/slot")), Some(1));
        assert_eq!(
            parse_sync_completed(&fx("sysfs-md0-sync_completed-recovery.txt"))
                .unwrap()
                .map(|(_, t)| t),
            Some(4188160)
        );
        assert_eq!(fx("sysfs-md0-sync_action-recovery.txt").trim(), "recover");
        assert!(parse_sync_completed("12 of 13").is_err());
        assert_eq!(leading_number("4 (3)\n"), Some(4));
        assert_eq!(leading_number("2\n"), Some(2));
        assert_eq!(leading_number("none\n"), None);
        assert_eq!(leading_number(""), None);
        let wb = sysfs_lines("sysfs-md0-bitmap-128M-wb.txt");
        assert_eq!(
            parse_number(
                "backlog",
                &wb.iter().find(|(a, _)| a == "backlog").unwrap().1
            )
            .unwrap(),
            2048
        );
    }

    #[test]
    fn detail_export() {
        let m = parse_export(&fx("layout-three-arrays/mdadm-detail-export-data1.txt")).unwrap();
        assert_eq!(m["MD_UUID"], "d8026ae7:9d0c081c:0fea6a3d:543399ac");
        assert_eq!(m["MD_DEVNAME"], "data1");
        let mut mem = export_members(&m);
        mem.sort();
        assert_eq!(
            mem,
            vec![
                ("/dev/sdc1".to_string(), "0".to_string()),
                ("/dev/sdd1".to_string(), "1".to_string())
            ]
        );
        let d = parse_export(&fx("mdadm-detail-export-md0-recovery.txt")).unwrap();
        // A member still rebuilding is exported with the role it is rebuilding into.
        let mut rec = export_members(&d);
        rec.sort();
        assert_eq!(
            rec,
            vec![
                ("/dev/sdb".to_string(), "0".to_string()),
                ("/dev/sdc".to_string(), "1".to_string())
            ]
        );
        assert!(!d.contains_key("MD_DEVNAME"));
        assert!(parse_export("garbage line").is_err());
    }

    #[test]
    fn examine_flags() {
        let hdd = parse_examine(&fx("mdadm-examine-hdd.txt")).unwrap();
        assert!(hdd.write_mostly);
        assert!(hdd.has_bitmap);
        let ssd = parse_examine(&fx("mdadm-examine-ssd.txt")).unwrap();
        assert!(!ssd.write_mostly);
        assert_eq!(ssd.level.as_deref(), Some("raid1"));
        assert!(parse_examine("mdadm: No md superblock detected on /dev/loop3.").is_err());
    }

    #[test]
    fn examine_bitmap() {
        let b = parse_examine_bitmap(&fx("mdadm-examine-bitmap-hdd-128M-wb.txt")).unwrap();
        assert_eq!(
            b,
            ExamineBitmap {
                chunk: 128 << 20,
                write_behind: 2048
            }
        );
        let b = parse_examine_bitmap(&fx("mdadm-examine-bitmap-hdd.txt")).unwrap();
        assert_eq!(
            b,
            ExamineBitmap {
                chunk: 64 << 20,
                write_behind: 0
            }
        );
        assert_eq!(
            parse_examine_bitmap(&fx("mdadm-examine-bitmap-hdd-backlog-512.txt"))
                .unwrap()
                .write_behind,
            512
        );
        assert!(parse_examine_bitmap(&fx("mdadm-examine-bitmap-hdd-no-bitmap.txt")).is_err());
    }
}
