//! Every real capture whose command hyraid parses goes through its parser, driven by the
//! capture indexes (file, exit code, exact command).

use hyraid::observe::{lsblk, lvm, mdadm, mdstat, wipefs, write_cache};

fn index(dir: &str) -> Vec<(String, i32, String)> {
    std::fs::read_to_string(format!("{dir}/INDEX.tsv"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            Some((
                format!("{dir}/{}", f.next()?),
                f.next()?.parse().ok()?,
                f.next()?.to_string(),
            ))
        })
        .collect()
}

/// What the VM probe (../shared/vm/guest-probe.sh) captures on each release. wipefs and the
/// LVM fullreport of Debian 13 come with the scenarios' `hyraid observe --capture` recordings
/// (tests/fixtures/vm-trixie, replayed by tests/it/vm_captures.rs).
const PROBED: &[&str] = &[
    "mdstat",
    "mdadm --export",
    "mdadm --examine",
    "mdadm -X",
    "hdparm -W",
    "cache_type",
    "member state",
    "lsblk",
    "lvs",
];

/// Every capture of the indexes of `dirs` through its parser; then every kind must have been
/// parsed at least once, and at least `min` captures in all.
fn sweep(dirs: &[&str], min: usize, kinds: &[&str]) {
    let mut parsed = std::collections::BTreeMap::<&str, usize>::new();
    for (file, rc, cmd) in dirs.iter().flat_map(|d| index(d)) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let what: &str = if cmd == "cat /proc/mdstat" {
            let a = mdstat::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(
                a.iter().all(|x| x.kname.starts_with("md") && x.blocks > 0),
                "{file}"
            );
            "mdstat"
        } else if cmd.starts_with("mdadm --detail --export")
            || cmd.starts_with("mdadm --examine --export")
        {
            let m = mdadm::parse_export(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(
                m.contains_key("MD_UUID") || m.contains_key("MD_LEVEL"),
                "{file}"
            );
            "mdadm --export"
        } else if cmd.starts_with("mdadm --examine /dev/") {
            let e = mdadm::parse_examine(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(e.level.as_deref(), Some("raid1"), "{file}");
            "mdadm --examine"
        } else if cmd.starts_with("mdadm -X") {
            assert_eq!(
                mdadm::parse_examine_bitmap(&text).is_ok(),
                rc == 0,
                "{file}"
            );
            "mdadm -X"
        } else if cmd.starts_with("hdparm -W") {
            let v = write_cache::parse_hdparm_w(&text);
            if cmd.contains("/dev/vd") {
                assert_eq!(v, None, "{file}: virtio has no ATA cache");
            } else {
                assert!(v.is_some(), "{file}");
            }
            "hdparm -W"
        } else if cmd.contains("cache_type") {
            for l in text.lines() {
                assert!(
                    write_cache::parse_cache_type(l.rsplit(": ").next().unwrap()).is_some(),
                    "{file}: {l}"
                );
            }
            "cache_type"
        } else if cmd.starts_with("md_member_state") || cmd.contains("dev-*/state") {
            for l in text.lines() {
                assert!(
                    !mdadm::parse_member_state(l.rsplit(": ").next().unwrap()).is_empty(),
                    "{file}: {l}"
                );
            }
            "member state"
        } else if cmd.starts_with("lsblk") && (cmd.contains("--json") || cmd.contains(" -J")) {
            let n = lsblk::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(n.iter().any(|x| x.kind == "disk" && x.size > 0), "{file}");
            "lsblk"
        } else if cmd.starts_with("wipefs -n --json") {
            wipefs::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            "wipefs"
        } else if cmd.starts_with("lvm fullreport") {
            let l = lvm::parse_fullreport(&text, &|_, n| n.rsplit('/').next().unwrap().to_string())
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(!l.vgs.is_empty() && !l.lvs.is_empty(), "{file}");
            "lvm fullreport"
        } else if cmd.starts_with("lvs") && cmd.contains("--reportformat json") && rc == 0 {
            let rows = lvm::parse_lvs(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(!rows.is_empty(), "{file}");
            "lvs"
        } else {
            continue;
        };
        *parsed.entry(what).or_default() += 1;
    }
    eprintln!("parsed captures of {dirs:?}: {parsed:?}");
    let total: usize = parsed.values().sum();
    assert!(total >= min, "{parsed:?}");
    for kind in kinds {
        assert!(
            parsed.get(kind).copied().unwrap_or(0) > 0,
            "no capture parsed as {kind}: {parsed:?}"
        );
    }
}

/// Debian 12: kernel 6.1, mdadm 4.2, lvm2 2.03.16, util-linux 2.38.
#[test]
fn every_relevant_capture_parses() {
    sweep(
        &["tests/fixtures", "tests/fixtures/layout-three-arrays"],
        45,
        &[PROBED, &["wipefs", "lvm fullreport"]].concat(),
    );
}

/// Debian 13: kernel 6.12, mdadm 4.4, lvm2 2.03.31, util-linux 2.41 (the same probe,
/// tests/fixtures/trixie/versions.txt).
#[test]
fn every_relevant_trixie_capture_parses() {
    sweep(&["tests/fixtures/trixie"], 45, PROBED);
}
