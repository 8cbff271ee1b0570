//! `hyraid check` on the simulated kernel: a run completes and is recorded; a budget pauses it
//! and the next run resumes from md's `sync_min`, the pass summing every run's mismatches; a
//! block that differs between the members is found; a degraded or rebuilding mirror is skipped
//! with why; a run waits for another array on the same disks; the speed limit is set for the run
//! and put back; a stop pauses it.

use crate::common;
use common::*;
use hyraid::check::{self, Options, ProgressKind, Target};
use hyraid::config::monitoring::WhenDegraded;
use hyraid::history::checks::Outcome;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;
use std::time::Duration;

fn opts(budget_secs: u64) -> Options {
    Options {
        budget: Duration::from_secs(budget_secs),
        speed_max_kib: None,
        when_degraded: WhenDegraded::Skip,
        trigger: "manual",
        poll: Duration::from_secs(1),
        progress: ProgressKind::Quiet,
    }
}

fn built(name: &str) -> (hyraid::config::Desired, SimHost) {
    let (d, h) = example(name);
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}

fn target(h: &SimHost, mirror: &str) -> Target {
    check::target(h, None, mirror).unwrap()
}

fn never() -> bool {
    false
}

fn writes(h: &SimHost, attr: &str) -> Vec<String> {
    h.commands()
        .into_iter()
        .filter(|c| c.first().map(String::as_str) == Some("(write)") && c[1].ends_with(attr))
        .map(|c| c[2].clone())
        .collect()
}

#[test]
fn a_check_completes_and_is_recorded() {
    let (_, h) = built("single-pair");
    let t = target(&h, "md-home");
    let mut out = Vec::new();
    let (run, rec) = check::check(&h, &t, &opts(3600), &never, &mut out).unwrap();
    assert_eq!(
        run.outcome,
        Outcome::Completed,
        "{}",
        String::from_utf8_lossy(&out)
    );
    assert_eq!((run.from, run.to), (0, run.total));
    assert!(run.total > 0);
    let pass = rec.last_completed.unwrap();
    assert_eq!((pass.mismatches, pass.runs), (0, 1));
    assert_eq!(writes(&h, "/md/sync_action"), ["check"]);
    assert_eq!(writes(&h, "/md/sync_min"), ["0"]);
    // The record is on the machine, by the array's UUID.
    let again = hyraid::history::checks::read(&h, &t.uuid).unwrap().unwrap();
    assert_eq!(again.runs.len(), 1);
    assert!(String::from_utf8_lossy(&out).contains("check md-home: completed, no mismatch"));
}

#[test]
fn a_budget_pauses_the_check_and_the_next_run_resumes_where_md_stopped() {
    let (_, h) = built("single-pair");
    let t = target(&h, "md-home");
    // The simulator moves a check a quarter on per poll: 2 polls of 1 s fit a 2 s budget.
    h.corrupt("md-home", 10);
    let (first, rec) = check::check(&h, &t, &opts(2), &never, &mut Vec::new()).unwrap();
    assert_eq!(first.outcome, Outcome::Paused);
    assert!(first.to > 0 && first.to < first.total, "{first:?}");
    assert_eq!(rec.resume_at, Some(first.to));
    assert_eq!(writes(&h, "/md/sync_action"), ["check", "idle"]);
    // The mismatch lay before the pause: counted by the first run, kept for the pass.
    assert_eq!((first.mismatches, rec.pass_mismatches), (8, 8));
    let w = h.world();
    assert_eq!(w.array_named("md-home").unwrap().sync_action, "idle");
    let (second, rec) = check::check(&h, &t, &opts(3600), &never, &mut Vec::new()).unwrap();
    assert_eq!(second.outcome, Outcome::Completed);
    assert_eq!(second.from, first.to, "resumed where md stopped");
    assert_eq!(
        writes(&h, "/md/sync_min"),
        ["0".to_string(), first.to.to_string()]
    );
    let pass = rec.last_completed.unwrap();
    assert_eq!(
        (pass.mismatches, pass.runs),
        (8, 2),
        "the pass sums its runs"
    );
    assert_eq!(rec.resume_at, None);
    assert_eq!(check::exit_code(&[(second, rec_again(&h, &t))]), 2);
}

fn rec_again(h: &SimHost, t: &Target) -> hyraid::history::checks::CheckRecord {
    hyraid::history::checks::read(h, &t.uuid).unwrap().unwrap()
}

#[test]
fn a_block_that_differs_is_found_and_a_clean_pass_says_so() {
    let (_, h) = built("single-pair");
    let t = target(&h, "md-home");
    let total = h.world().array_named("md-home").unwrap().size_kib * 2;
    h.corrupt("md-home", total / 2);
    h.corrupt("md-home", total - 8);
    let mut out = Vec::new();
    let r = check::check(&h, &t, &opts(3600), &never, &mut out).unwrap();
    assert_eq!(r.0.outcome, Outcome::Completed);
    assert_eq!(r.1.last_completed.as_ref().unwrap().mismatches, 16);
    assert!(
        String::from_utf8_lossy(&out).contains("16 sector(s) differ"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    assert_eq!(check::exit_code(&[r]), 2);
}

#[test]
fn a_degraded_or_rebuilding_mirror_is_skipped_with_why() {
    let (_, h) = built("single-pair");
    let hdd = "/dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001";
    assert_eq!(
        run(&h, &["mdadm", "/dev/md/md-home", "--fail", hdd]).status,
        0
    );
    let t = target(&h, "md-home");
    let (r, rec) = check::check(&h, &t, &opts(3600), &never, &mut Vec::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Skipped);
    assert!(
        r.reason
            .as_ref()
            .unwrap()
            .contains("degraded (1 member(s) missing)"),
        "{r:?}"
    );
    assert!(
        writes(&h, "/md/sync_action").is_empty(),
        "nothing was started"
    );
    assert!(rec.last_completed.is_none());
    // `when_degraded: run` checks anyway.
    let mut o = opts(3600);
    o.when_degraded = WhenDegraded::Run;
    let (r, rec) = check::check(&h, &t, &o, &never, &mut Vec::new()).unwrap();
    // The member was missing before it started: the check completes, it is not "a member failed
    // during the check", and no pass is left paused.
    assert_eq!(r.outcome, Outcome::Completed, "{r:?}");
    assert_eq!(rec.resume_at, None, "{rec:?}");
    assert!(rec.last_completed.is_some(), "{rec:?}");
    // A resync running: skipped, it is checked once that ends.
    let (_, h) = example("single-pair");
    apply(&h, &example("single-pair").0, Policy::default()).unwrap();
    let t = target(&h, "md-home");
    let (r, _) = check::check(&h, &t, &opts(3600), &never, &mut Vec::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Skipped);
    assert!(
        r.reason.as_ref().unwrap().contains("rebuilding (resync)"),
        "{r:?}"
    );
}

#[test]
fn a_check_waits_for_another_array_on_the_same_disks() {
    // microserver-partitioned: data0 and cache share the SSDs' partitions.
    let (d, h) = built("microserver-partitioned");
    let _ = d;
    // The cache mirror resyncs again (a new array would): data0's check waits for it.
    let mut w = h.world();
    let cache = w
        .arrays
        .iter_mut()
        .find(|a| a.name.as_deref() == Some("cache"))
        .unwrap();
    cache.sync_action = "resync".into();
    cache.sync_completed = Some((0, cache.size_kib * 2));
    let h = SimHost::new(w);
    let t = target(&h, "data0");
    let mut out = Vec::new();
    let (r, _) = check::check(&h, &t, &opts(3600), &never, &mut out).unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("waiting for md"), "{text}");
    assert_eq!(r.outcome, Outcome::Completed, "{text}");
    assert!(r.reason.as_ref().unwrap().contains("waited for"), "{r:?}");
    // Within a budget the wait uses up, nothing starts.
    let mut w = h.world();
    let cache = w
        .arrays
        .iter_mut()
        .find(|a| a.name.as_deref() == Some("cache"))
        .unwrap();
    cache.sync_action = "resync".into();
    cache.sync_completed = Some((0, cache.size_kib * 2));
    let h = SimHost::new(w);
    let (r, _) = check::check(&h, &t, &opts(1), &never, &mut Vec::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Paused);
    assert!(writes(&h, "/md/sync_action").is_empty());
}

#[test]
fn the_speed_limit_is_set_for_the_run_and_put_back() {
    let (_, h) = built("single-pair");
    let t = target(&h, "md-home");
    let mut o = opts(3600);
    o.speed_max_kib = Some(51200);
    check::check(&h, &t, &o, &never, &mut Vec::new()).unwrap();
    assert_eq!(writes(&h, "/md/sync_speed_max"), ["51200", "system"]);
    assert_eq!(
        h.world().array_named("md-home").unwrap().sync_speed_max,
        None
    );
    // A limit of the array's own stays after the run.
    let mut w = h.world();
    w.arrays[0].sync_speed_max = Some(30000);
    let h = SimHost::new(w);
    check::check(&h, &t, &o, &never, &mut Vec::new()).unwrap();
    assert_eq!(h.world().arrays[0].sync_speed_max, Some(30000));
}

#[test]
fn a_stop_pauses_the_check_and_keeps_the_place() {
    let (_, h) = built("single-pair");
    let t = target(&h, "md-home");
    let polls = std::cell::Cell::new(0);
    let stop = || {
        polls.set(polls.get() + 1);
        polls.get() > 2
    };
    let (r, rec) = check::check(&h, &t, &opts(3600), &stop, &mut Vec::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Paused);
    assert!(r.reason.as_ref().unwrap().contains("stopped on request"));
    assert_eq!(rec.resume_at, Some(r.to));
    assert_eq!(
        h.world().array_named("md-home").unwrap().sync_action,
        "idle"
    );
}

#[test]
fn without_systemctl_the_timers_are_refused_at_plan_time() {
    // A machine without systemd: enabling a timer would fail at apply, and nothing would run it.
    let text = std::fs::read_to_string("examples/single-pair.yaml").unwrap()
        + "check: { budget: 1h, distribution: off }\n";
    let d = hyraid::config::load_str("checked.yaml", &text).unwrap();
    let (_, h) = example("single-pair");
    let mut w = h.world();
    w.boot.monitoring.hyraid_path = Some("/usr/bin/hyraid".into());
    let with = SimHost::new(w.clone());
    let p = plan_for(&with, &d, Policy::default());
    assert!(p.refused.is_empty(), "{}", hyraid::render::text(&p, false));
    w.missing_tools.push("systemctl".into());
    let without = SimHost::new(w);
    let p = plan_for(&without, &d, Policy::default());
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "monitoring")
        .expect("refused");
    assert!(r.reason.contains("no systemctl"), "{}", r.reason);
    assert!(r.fix.contains("from cron"), "{}", r.fix);
    assert!(apply(&without, &d, Policy::default()).is_err());
    assert!(
        !without
            .commands()
            .iter()
            .any(|c| c[0] == "mdadm" && c.iter().any(|a| a == "--create"))
    );
}
