//! A box as docs/monitoring.md describes one that needs attention: the last completed check of
//! its mirror found sectors that differ, the pass after it is paused at its budget, and its
//! write-mostly HDD has pending sectors. `hyraid status` and its Prometheus textfile, run as a
//! user runs them (on a snapshot of the simulated machine), say each of these in the words and
//! metrics the docs list. `cargo test --test it monitoring_box:: -- --nocapture` prints both.

use crate::common;
use common::*;
use hyraid::check::{self, Options, ProgressKind};
use hyraid::config::monitoring::WhenDegraded;
use hyraid::history::checks::Outcome;
use hyraid::observe::smart::{DriveHealth, Protocol};
use hyraid::plan::Policy;
use hyraid::sim::SimHost;
use std::time::Duration;

fn opts(budget_secs: u64) -> Options {
    Options {
        budget: Duration::from_secs(budget_secs),
        speed_max_kib: None,
        when_degraded: WhenDegraded::Skip,
        trigger: "scheduled",
        poll: Duration::from_secs(1),
        progress: ProgressKind::Quiet,
    }
}

#[test]
fn status_and_the_textfile_say_a_mismatch_a_paused_check_and_pending_sectors() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut w = h.world();
    let hdd = w
        .block_devices
        .iter()
        .find(|b| b.rotational && b.parent.is_none())
        .unwrap()
        .kname
        .clone();
    for b in w.block_devices.iter().filter(|b| b.parent.is_none()) {
        let pending = if b.kname == hdd { 8 } else { 0 };
        w.smart.insert(
            b.kname.clone(),
            DriveHealth {
                protocol: Some(Protocol::Ata),
                available: true,
                passed: Some(true),
                reallocated: Some(0),
                pending: Some(pending),
                offline_uncorrectable: Some(0),
                power_on_hours: Some(31000),
                temperature: Some(36),
                ..Default::default()
            },
        );
    }
    let h = SimHost::new(w);
    let t = check::target(&h, None, "md-home").unwrap();
    // A completed check that finds one block (8 sectors) that differs, then a pass paused.
    h.corrupt("md-home", 10);
    let (first, _) = check::check(&h, &t, &opts(3600), &|| false, &mut Vec::new()).unwrap();
    assert_eq!((first.outcome, first.mismatches), (Outcome::Completed, 8));
    let (second, rec) = check::check(&h, &t, &opts(2), &|| false, &mut Vec::new()).unwrap();
    assert_eq!(second.outcome, Outcome::Paused, "{second:?}");
    let resume = rec.resume_at.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("box.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let (file, snap) = ("examples/single-pair.yaml", snap.to_str().unwrap());
    let o = hyraid(&["status", file, "--sim", snap]);
    let (out, err) = text(&o);
    println!(
        "$ hyraid status {file} --sim box.json   # exit {:?}\n{out}{err}",
        o.status.code()
    );
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    // The check completed moments ago: on a slow machine "0s" can be "1s" or more.
    let mismatch = out
        .lines()
        .find(|l| l.starts_with("DEGRADED  mirror md-home: its last check (completed "))
        .unwrap_or_else(|| panic!("status does not say when the last check completed:\n{out}"));
    let age = mismatch
        .split("(completed ")
        .nth(1)
        .and_then(|r| r.split(" ago)").next())
        .unwrap();
    assert!(
        age.ends_with('s')
            && age
                .trim_end_matches('s')
                .parse::<u64>()
                .is_ok_and(|s| s < 60),
        "the check just completed, status says {age:?}:\n{out}"
    );
    for (what, words) in [
        (
            "the mismatch, degraded",
            " ago) found 8 sector(s) that differ",
        ),
        (
            "what repair would do",
            "has md copy the first member that reads (on RAID1: the lowest slot in sync",
        ),
        (
            "the paused pass, as information",
            "info  mirror md-home: a check is paused at 50.0%; its next run resumes there",
        ),
        (
            "the pending sectors",
            "8 pending sectors; it is a write-mostly member",
        ),
    ] {
        assert!(
            out.contains(words),
            "status does not say {what} ({words:?}):\n{out}"
        );
    }
    let o = hyraid(&["status", file, "--sim", snap, "--format", "prometheus"]);
    let (prom, err) = text(&o);
    println!("$ hyraid status {file} --sim box.json --format prometheus\n{prom}{err}");
    let metric = |name: &str| -> Vec<(String, f64)> {
        prom.lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .map(|l| {
                let (labels, v) = l.rsplit_once(' ').unwrap();
                (labels.to_string(), v.parse().unwrap())
            })
            .collect()
    };
    for name in [
        "hyraid_check_mismatch_sectors",
        "hyraid_check_resume_ratio",
        "hyraid_check_last_completed_timestamp_seconds",
        "hyraid_drive_pending_sectors",
    ] {
        assert!(
            prom.contains(&format!("# HELP {name} ")),
            "no HELP of {name}"
        );
        assert!(
            prom.contains(&format!("# TYPE {name} gauge")),
            "no TYPE of {name}"
        );
    }
    assert_eq!(metric("hyraid_check_mismatch_sectors")[0].1, 8.0);
    let ratio = metric("hyraid_check_resume_ratio")[0].1;
    assert!(
        ratio > 0.0 && ratio < 1.0,
        "resumes at {resume} of {}: {ratio}",
        second.total
    );
    let pending = metric("hyraid_drive_pending_sectors");
    assert!(
        pending
            .iter()
            .any(|(l, v)| l.contains("disk=\"hdd\"") && *v == 8.0),
        "{pending:?}"
    );
}

/// hyraid's record says its last check found nothing; a later check it did not run (the
/// release's schedule, which `distribution: keep` leaves on, or one by hand) left md's own count
/// at 128. Status and the textfile say md's 128, not the record's 0.
#[test]
fn a_later_check_hyraid_did_not_run_is_read_from_md() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let t = check::target(&h, None, "md-home").unwrap();
    let (first, _) = check::check(&h, &t, &opts(3600), &|| false, &mut Vec::new()).unwrap();
    assert_eq!((first.outcome, first.mismatches), (Outcome::Completed, 0));
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("box.json");
    let status = |w: &hyraid::observe::Observed| {
        std::fs::write(&snap, serde_json::to_string(w).unwrap()).unwrap();
        let s = snap.to_str().unwrap();
        let file = "examples/single-pair.yaml";
        let o = hyraid(&["status", file, "--sim", s]);
        let p = hyraid(&["status", file, "--sim", s, "--format", "prometheus"]);
        (o.status.code(), text(&o).0, text(&p).0)
    };
    let (code, out, prom) = status(&h.world());
    assert!(out.contains("no mismatch"), "{out}");
    assert!(
        prom.contains("hyraid_check_mismatch_sectors{array=\"md-home\""),
        "{prom}"
    );
    let mut w = h.world();
    let a = w
        .arrays
        .iter_mut()
        .find(|a| a.name.as_deref() == Some("md-home"))
        .unwrap();
    a.mismatch_cnt = 128;
    let (later, out2, prom2) = status(&w);
    assert_eq!((code, later), (Some(0), Some(2)), "{out2}");
    assert!(
        out2.contains("DEGRADED  mirror md-home: md's last check or repair (its mismatch_cnt, newer than any record of hyraid's) found 128 sector(s) that differ"),
        "{out2}"
    );
    let line = prom2
        .lines()
        .find(|l| l.starts_with("hyraid_check_mismatch_sectors{"))
        .unwrap();
    assert!(line.ends_with(" 128"), "{line}");
}

/// `hyraid check NAME` of a mirror that is not there (a typo) lists nothing and exits 1.
#[test]
fn listing_a_mirror_that_is_not_there_fails() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("box.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let s = snap.to_str().unwrap();
    let o = hyraid(&["check", "md-home", "--sim", s]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = hyraid(&["check", "md-hmoe", "--sim", s]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("mirror md-hmoe: /dev/md/md-hmoe does not exist"),
        "{out}{err}"
    );
    // A run with no time at all is refused before anything starts.
    let o = hyraid(&["check", "md-home", "--now", "--budget", "0", "--sim", s]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("`0` is shorter than 1s, the least `--budget` hyraid takes"),
        "{err}"
    );
}
