//! Every value a kernel table or a tool's manual lists for what hyraid reads, not only those the
//! test guests printed (tests/fixtures/outside, with their sources).

use crate::common;
use common::foreign::base;
use hyraid::config::load_file;
use hyraid::observe::{WriteCacheSource, observe};
use hyraid::plan::{Policy, Step, plan};
use hyraid::sim::SimHost;
use std::path::Path;

/// The rows of the kernel's cache_type table: (string, write cache on).
fn cache_type_table() -> Vec<(String, bool)> {
    let text = std::fs::read_to_string("tests/fixtures/outside/scsi-cache_type.tsv").unwrap();
    let rows: Vec<(String, bool)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[3] == "on")
        })
        .collect();
    assert_eq!(rows.len(), 4, "the kernel prints four strings");
    rows
}

/// The captured machine with every SCSI disk's cache_type set to `value`.
fn machine_with_cache_type(value: &str) -> common::foreign::Machine {
    let mut m = base();
    let paths: Vec<String> = m
        .files
        .keys()
        .filter(|p| p.ends_with("/cache_type"))
        .cloned()
        .collect();
    assert!(paths.len() >= 4, "{paths:?}");
    for p in paths {
        m.files.insert(p, Ok(format!("{value}\n")));
    }
    m
}

#[test]
fn every_cache_type_the_kernel_prints_is_read_as_its_write_cache() {
    let d = load_file(Path::new("tests/vm/configs/microserver.yaml")).unwrap();
    for (value, on) in cache_type_table() {
        let o = observe(&machine_with_cache_type(&value)).unwrap();
        let disks: Vec<_> = o
            .block_devices
            .iter()
            .filter(|b| b.write_cache.is_some())
            .collect();
        assert!(disks.len() >= 4);
        for b in &disks {
            let wc = b.write_cache.unwrap();
            assert_eq!(wc.source, WriteCacheSource::ScsiCacheType, "{value}");
            assert_eq!(wc.enabled, Some(on), "`{value}` on {}", b.kname);
        }
        // The simulator answers the same state back in the kernel's words.
        let seen = observe(&SimHost::new(o.clone())).unwrap();
        for b in &disks {
            let again = seen.device(&b.kname).unwrap().write_cache.unwrap();
            assert_eq!(
                again.enabled,
                Some(on),
                "`{value}` read back on {}",
                b.kname
            );
        }
        // A `write_cache:` on such a disk is planned, never refused as unreadable: the file's
        // HDDs say `on`, so they are switched on exactly when the kernel says off.
        let p = plan(&d, &o, Policy::default()).unwrap();
        assert!(
            !p.refused
                .iter()
                .any(|r| r.reason.contains("does not report its write cache")),
            "`{value}`: {:?}",
            p.refused
        );
        let switched = p
            .steps
            .iter()
            .filter(|s| matches!(s.step, Step::SetWriteCache(_)))
            .count();
        assert_eq!(switched > 0, !on, "`{value}`: {switched} write-cache steps");
    }
}

#[test]
fn a_cache_type_the_kernel_does_not_print_is_unknown_never_guessed() {
    for value in ["", "write around", "temporary write back", "WRITE BACK"] {
        let o = observe(&machine_with_cache_type(value)).unwrap();
        assert!(
            o.block_devices
                .iter()
                .filter_map(|b| b.write_cache)
                .all(|w| w.enabled.is_none()),
            "`{value}`"
        );
    }
}

#[test]
fn an_lvm_report_without_a_needed_column_names_the_column_and_the_setting() {
    let text =
        std::fs::read_to_string("tests/fixtures/outside/lvm-fullreport-cols-full.json").unwrap();
    let e = hyraid::observe::lvm::parse_fullreport(&text, &|_, n| n.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no `vg_size` column"), "{e}");
    assert!(e.contains("report/vgs_cols_full"), "{e}");
    assert!(!e.contains("were --units b --nosuffix given"), "{e}");
    // A value with a unit is another cause, and says so.
    let full = std::fs::read_to_string("tests/fixtures/lvm-fullreport-pvmove.json").unwrap();
    let e = hyraid::observe::lvm::parse_fullreport(
        &full.replace("\"vg_size\":\"1065353216\"", "\"vg_size\":\"1016.00m\""),
        &|_, n| n.to_string(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("`vg_size` is `1016.00m`, not a whole number"),
        "{e}"
    );
}
