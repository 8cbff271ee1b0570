//! The same probe steps captured on Debian 12 (tests/fixtures) and Debian 13
//! (tests/fixtures/trixie): where the tools' formats differ (/proc/mdstat without `[linear]
//! [multipath]`, LVM JSON reports with a `log` section), the parsers give the same state from
//! both; where the releases really differ, the test says what.

use hyraid::observe::{lvm, mdadm, mdstat};

fn both(name: &str) -> (String, String) {
    let r = |d: &str| std::fs::read_to_string(format!("{d}/{name}")).unwrap();
    (r("tests/fixtures"), r("tests/fixtures/trixie"))
}

#[test]
fn the_formats_differ_where_the_releases_changed_them() {
    let (old, new) = both("mdstat.txt");
    assert!(old.starts_with("Personalities : [linear] [multipath] "));
    assert!(new.starts_with("Personalities : [raid0] "), "{new}");
    let (old, new) = both("lvs-report.json");
    let keys = |t: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(t).unwrap();
        v.as_object().unwrap().keys().cloned().collect()
    };
    assert_eq!(keys(&old), vec!["report"]);
    assert_eq!(keys(&new), vec!["log", "report"]);
}

#[test]
fn every_mdstat_of_the_probe_parses_to_the_same_arrays_on_both_releases() {
    let mut compared = 0;
    for e in std::fs::read_dir("tests/fixtures/trixie").unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if !name.starts_with("mdstat") || !name.ends_with(".txt") {
            continue;
        }
        let (old, new) = both(&name);
        let (a, b) = (mdstat::parse(&old).unwrap(), mdstat::parse(&new).unwrap());
        // Array, level, members, slots and what runs: the state, not the progress (a resync's
        // position depends on the moment of the capture).
        #[allow(clippy::type_complexity)]
        let shape = |v: &[mdstat::MdstatArray]| -> Vec<(
            String,
            Option<String>,
            usize,
            Option<(u32, u32)>,
            Option<String>,
        )> {
            v.iter()
                .map(|x| {
                    (
                        x.kname.clone(),
                        x.level.clone(),
                        x.members.len(),
                        x.disks,
                        x.progress.as_ref().map(|p| p.0.clone()),
                    )
                })
                .collect()
        };
        assert_eq!(shape(&a), shape(&b), "{name}");
        compared += 1;
    }
    assert!(compared >= 10, "{compared}");
}

#[test]
fn lvs_reports_with_a_log_section_parse_like_those_without() {
    let (old, new) = both("lvs-report.json");
    let rows = |t: &str| -> Vec<(String, String, bool, Option<u64>, String)> {
        let mut v: Vec<_> = lvm::parse_lvs(t)
            .unwrap()
            .into_iter()
            .map(|r| (r.vg, r.name, r.hidden, r.size, r.segtype))
            .collect();
        v.sort();
        v
    };
    let (a, b) = (rows(&old), rows(&new));
    assert!(!b.is_empty());
    assert_eq!(a, b);
}

#[test]
fn mdadm_export_is_the_same_keys_on_both_releases() {
    let (old, new) = both("mdadm-detail-export-md0.txt");
    let (a, b) = (
        mdadm::parse_export(&old).unwrap(),
        mdadm::parse_export(&new).unwrap(),
    );
    for k in ["MD_LEVEL", "MD_DEVICES", "MD_METADATA"] {
        assert_eq!(a.get(k), b.get(k), "{k}");
    }
}
