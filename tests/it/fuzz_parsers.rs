//! Hostile observations: every parser, and the whole observer, on truncated, mutated, shuffled
//! and random versions of the real captures must return Ok or Err — never panic. And the whole
//! observer, on the real capture with foreign objects added and mutated in the tools' own
//! formats (other md levels, file bitmaps, odd sysfs values, LVM segment types, fstypes, device
//! types, /dev/md entries, signatures), must return Ok (issue §6).
//! Bounded for CI by HYRAID_FUZZ_CASES (default 1500 mutated inputs per parser); every prefix of
//! every capture is tried as well. Run with --nocapture for the execution counts.

use crate::common;
#[path = "fuzz/foreign.rs"]
mod foreign;
use common::foreign::{OBJECTS, machine};
use hyraid::host::record::{Exchange, Replay};
use hyraid::observe::capture::Capture;
use hyraid::observe::{lsblk, lvm, mdadm, mdstat, observe, wipefs, write_cache};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::sync::atomic::{AtomicU64, Ordering};

type Parse = fn(&str);

fn parsers() -> Vec<(&'static str, &'static [&'static str], Parse)> {
    vec![
        (
            "lsblk",
            &["lsblk-json", "lsblk.json", "lsblk_stdout"],
            |t| drop(lsblk::parse(t)),
        ),
        ("mdstat", &["mdstat", "proc_mdstat"], |t| {
            drop(mdstat::parse(t))
        }),
        ("lvm fullreport", &["fullreport", "lvm_stdout"], |t| {
            drop(lvm::parse_fullreport(t, &|mm, n| format!("{mm}{n}")))
        }),
        ("lvs", &["lvs-"], |t| drop(lvm::parse_lvs(t))),
        ("mdadm --export", &["export"], |t| {
            drop(mdadm::parse_export(t).map(|m| mdadm::export_members(&m)))
        }),
        ("mdadm --examine", &["mdadm-examine-"], |t| {
            drop(mdadm::parse_examine(t))
        }),
        ("mdadm -X", &["examine-bitmap"], |t| {
            drop(mdadm::parse_examine_bitmap(t))
        }),
        ("hdparm -W", &["hdparm-"], |t| {
            let _ = write_cache::parse_hdparm_w(t);
        }),
        ("cache_type", &["cache_type", "cache-type"], |t| {
            let _ = write_cache::parse_cache_type(t);
        }),
        ("wipefs", &["wipefs"], |t| drop(wipefs::parse(t))),
        ("md sysfs", &["sysfs-", ".sysfs.", "md_sysfs"], |t| {
            mdadm::parse_member_state(t);
            drop(mdadm::parse_sync_completed(t));
            mdadm::parse_slot(t);
            drop(mdadm::parse_number("x", t));
            mdadm::leading_number(t);
        }),
    ]
}

/// Real captures: tests/fixtures files, and the stdout/content of the VM captures.
fn corpus() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for dir in [
        "tests/fixtures",
        "tests/fixtures/layout-three-arrays",
        "tests/fixtures/foreign",
    ] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_file()
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                v.push((p.file_name().unwrap().to_string_lossy().into_owned(), t));
            }
        }
    }
    for (name, cap) in vm_captures() {
        for x in cap.exchanges {
            match x {
                Exchange::Run { argv, stdout, .. } => {
                    v.push((format!("{name}:{}_stdout", argv[0]), stdout))
                }
                Exchange::Read {
                    path,
                    content: Some(c),
                    ..
                } if path.contains("/md/") => v.push((format!("{name}:md_sysfs"), c)),
                Exchange::Read {
                    path,
                    content: Some(c),
                    ..
                } if path == "/proc/mdstat" => v.push((format!("{name}:proc_mdstat"), c)),
                Exchange::Read {
                    path,
                    content: Some(c),
                    ..
                } if path.contains("cache_type") => v.push((format!("{name}:cache-type"), c)),
                _ => {}
            }
        }
    }
    v
}

fn vm_captures() -> Vec<(String, Capture)> {
    std::fs::read_dir("tests/fixtures/vm")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap(),
            )
        })
        .collect()
}

fn cases() -> u32 {
    std::env::var("HYRAID_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500)
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Truncate(usize),
    SwapLines(usize, usize),
    DupLine(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop::sample::select(vec![
        b'"', b'{', b'}', b'[', b']', b',', b':', b'\n', b'/', b'(', b')', b'=', b'0', b'-', b' ',
        0xff,
    ]);
    prop_oneof![
        (any::<usize>(), prop_oneof![any::<u8>(), interesting])
            .prop_map(|(p, b)| Mutation::Flip(p, b)),
        (any::<usize>(), 1usize..64).prop_map(|(p, n)| Mutation::Delete(p, n)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(p, b)| Mutation::Insert(p, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<usize>().prop_map(Mutation::DupLine),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut b = text.as_bytes().to_vec();
    for m in muts {
        let n = b.len().max(1);
        match m {
            Mutation::Flip(p, x) => {
                if !b.is_empty() {
                    b[p % n] = *x
                }
            }
            Mutation::Delete(p, k) => {
                let s = p % n;
                let e = (s + k).min(b.len());
                if s < e {
                    b.drain(s..e);
                }
            }
            Mutation::Insert(p, x) => {
                let s = if b.is_empty() { 0 } else { p % (b.len() + 1) };
                b.splice(s..s, x.iter().copied());
            }
            Mutation::Truncate(p) => b.truncate(p % n),
            Mutation::SwapLines(i, j) => {
                let mut lines: Vec<Vec<u8>> =
                    b.split(|c| *c == b'\n').map(|l| l.to_vec()).collect();
                let k = lines.len();
                lines.swap(i % k, j % k);
                b = lines.join(&b'\n');
            }
            Mutation::DupLine(i) => {
                let mut lines: Vec<Vec<u8>> =
                    b.split(|c| *c == b'\n').map(|l| l.to_vec()).collect();
                let k = lines.len();
                let l = lines[i % k].clone();
                lines.insert(i % k, l);
                b = lines.join(&b'\n');
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn prefixes(text: &str) -> Vec<&str> {
    let cuts: Vec<usize> = (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .collect();
    let step = (cuts.len() / 2048).max(1);
    cuts.iter().step_by(step).map(|c| &text[..*c]).collect()
}

#[test]
fn parsers_never_panic() {
    let corpus = corpus();
    let mut total = 0u64;
    let t0 = std::time::Instant::now();
    for (name, patterns, parse) in parsers() {
        let seeds: Vec<String> = corpus
            .iter()
            .filter(|(f, _)| patterns.iter().any(|p| f.contains(p)))
            .map(|(_, t)| t.clone())
            .collect();
        assert!(!seeds.is_empty(), "{name}: no captures to start from");
        let runs = AtomicU64::new(0);
        for s in &seeds {
            for p in prefixes(s) {
                parse(p);
                runs.fetch_add(1, Ordering::Relaxed);
            }
        }
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (
            0..seeds.len(),
            prop::collection::vec(mutation(), 1..8),
            any::<bool>(),
            ".{0,200}",
        );
        runner
            .run(&strategy, |(i, muts, random, junk)| {
                let input = if random {
                    junk
                } else {
                    apply(&seeds[i], &muts)
                };
                std::panic::catch_unwind(|| parse(&input))
                    .map_err(|_| TestCaseError::fail(format!("{name} panicked on {input:?}")))?;
                runs.fetch_add(1, Ordering::Relaxed);
                Ok(())
            })
            .unwrap();
        let n = runs.load(Ordering::Relaxed);
        eprintln!(
            "fuzz {name}: {} seeds, {n} executions, 0 panics",
            seeds.len()
        );
        total += n;
    }
    eprintln!(
        "fuzz total: {total} executions in {:.1}s, 0 panics",
        t0.elapsed().as_secs_f64()
    );
}

#[test]
fn the_observer_never_panics_on_a_mangled_machine() {
    let caps = vm_captures();
    let runs = AtomicU64::new(0);
    let mut runner = TestRunner::new(Config {
        cases: cases() / 3,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        0..caps.len(),
        any::<usize>(),
        prop::collection::vec(mutation(), 1..6),
    );
    runner
        .run(&strategy, |(c, which, muts)| {
            let mut cap = caps[c].1.clone();
            let k = which % cap.exchanges.len();
            match &mut cap.exchanges[k] {
                Exchange::Run { stdout, .. } => *stdout = apply(stdout, &muts),
                Exchange::Read {
                    content: Some(t), ..
                } => *t = apply(t, &muts),
                _ => {}
            }
            std::panic::catch_unwind(|| drop(observe(&Replay::from(cap.clone()))))
                .map_err(|_| TestCaseError::fail(format!("observer panicked, exchange {k}")))?;
            runs.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    eprintln!(
        "fuzz observer: {} executions, 0 panics",
        runs.load(Ordering::Relaxed)
    );
}

#[test]
fn future_versions_are_read() {
    // util-linux 2.39+ adds columns (ID-LINK, PARTN, DISK-SEQ as a number, MQ).
    let n = lsblk::parse(r#"{"blockdevices":[{"name":"sda","kname":"sda","type":"disk","size":100,"rota":false,"id-link":"wwn-0x1","partn":null,"disk-seq":9,"mq":"  4","maj:min":"8:0"}]}"#).unwrap();
    assert_eq!(
        (n[0].kname.as_str(), n[0].size, n[0].maj_min.as_str()),
        ("sda", 100, "8:0")
    );
    // mdadm 4.5+ adds MD_RESHAPE_ACTIVE to --export.
    let m = mdadm::parse_export("MD_LEVEL=raid1\nMD_DEVICES=2\nMD_RESHAPE_ACTIVE=False\nMD_DEVICE_dev_sda_ROLE=0\nMD_DEVICE_dev_sda_DEV=/dev/sda\n").unwrap();
    assert_eq!(
        mdadm::export_members(&m),
        vec![("/dev/sda".to_string(), "0".to_string())]
    );
    // Newer kernels may add lines to /proc/mdstat and drop the bitmap group when there is none.
    let a = mdstat::parse("Personalities : [raid1] \nmd0 : active raid1 sdb[1](W) sda[0]\n      1000 blocks super 1.2 [2/2] [UU]\n      some future line\n\nunused devices: <none>\n").unwrap();
    assert_eq!(a[0].members.len(), 2);
    assert_eq!(a[0].bitmap, None);
}

#[test]
fn the_whole_observer_never_fails_on_foreign_objects() {
    let d = hyraid::config::load_file(std::path::Path::new("tests/vm/configs/microserver.yaml"))
        .unwrap();
    let runs = AtomicU64::new(0);
    let mut runner = TestRunner::new(Config {
        cases: cases() / 3,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        0u32..(1 << OBJECTS.len()),
        prop::collection::vec(foreign::foreign(), 1..10),
    );
    runner
        .run(&strategy, |(set, changes)| {
            let objects: Vec<&str> = OBJECTS
                .iter()
                .enumerate()
                .filter(|(i, _)| set & (1 << i) != 0)
                .map(|(_, o)| *o)
                .collect();
            let mut m = machine(&objects);
            for f in &changes {
                foreign::put(&mut m, f);
            }
            let o = std::panic::catch_unwind(|| observe(&m))
                .map_err(|_| {
                    TestCaseError::fail(format!("observer panicked: {objects:?} {changes:?}"))
                })?
                .map_err(|e| {
                    TestCaseError::fail(format!("observer failed: {e}\n{objects:?} {changes:?}"))
                })?;
            // What is observed can be planned against, judged and simulated without a panic.
            std::panic::catch_unwind(|| {
                drop(hyraid::plan::plan(&d, &o, hyraid::plan::Policy::default()));
                drop(hyraid::status::status(&o, Some(&d), None));
                drop(observe(&hyraid::sim::SimHost::new(o.clone())));
            })
            .map_err(|_| {
                TestCaseError::fail(format!("panicked after observing: {objects:?} {changes:?}"))
            })?;
            runs.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    eprintln!(
        "fuzz foreign observer: {} machines observed, 0 failures",
        runs.load(Ordering::Relaxed)
    );
}
