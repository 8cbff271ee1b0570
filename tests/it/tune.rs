//! `hyraid tune` on the simulated machine: every configuration the layout allows measured with
//! the machine exactly in it, in a safe order, and the file's state back afterwards however the
//! run ends (done, a failing tool, Ctrl-C, or the process killed at any change, after which
//! `plan` shows the way back, `status` says so and `apply` converges and ends the record).

use crate::common;
use common::tune::{TUNE_YAML, tune_box};
use common::*;
use hyraid::host::{CmdOutput, Host, HostError};
use hyraid::observe::Observed;
use hyraid::plan::Policy;
use hyraid::sim::{Fault, SimHost};
use hyraid::tune::{self, Event, Options, Profile, Target, TuneError, TuneReport, Workload};
use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

fn options(target: Target) -> Options {
    Options {
        file: "hyraid.yaml".into(),
        text: TUNE_YAML.into(),
        target,
        profile: Profile::quick(),
        workload: Workload::Mixed,
        jobs: tune::JOBS.to_vec(),
        journal: None,
    }
}

fn dir() -> Options {
    options(Target::Directory("/srv/data".into()))
}

/// What a run's events said, in order.
#[derive(Default)]
struct Seen {
    changes: Vec<String>,
    jobs: usize,
    restores: usize,
    skipped: Vec<String>,
}

fn run_on(
    h: &dyn Host,
    d: &hyraid::config::Desired,
    o: &Options,
    stop_after_jobs: Option<usize>,
) -> (Result<TuneReport, TuneError>, Seen) {
    let seen = RefCell::new(Seen::default());
    // The run's own flag, requested once the n-th job has started.
    let stop = hyraid::machine::Stop::new();
    let r = tune::run(
        h,
        d,
        o,
        &mut |e| {
            let mut s = seen.borrow_mut();
            match e {
                Event::Change { config, .. } => s.changes.push(config.to_string()),
                Event::Job { .. } => {
                    s.jobs += 1;
                    if stop_after_jobs == Some(s.jobs) {
                        stop.request();
                    }
                }
                Event::Restore { .. } => s.restores += 1,
                Event::Skipped { config, why } => s.skipped.push(format!("{config}: {why}")),
                Event::Estimate { .. } => {}
            }
        },
        &stop,
    );
    (r, seen.into_inner())
}

/// The state a run must leave: the machine as the file says, no record of a run.
fn as_the_file_says(h: &SimHost, d: &hyraid::config::Desired, before: &Observed) {
    let p = plan_for(h, d, Policy::default());
    assert!(
        p.steps.is_empty() && p.refused.is_empty(),
        "{}",
        hyraid::render::text(&p, false)
    );
    let after = observe(h, d);
    assert!(
        after.boot.monitoring.tune_run.is_none(),
        "the run's record is left"
    );
    // Exactly the file's: member states, backlog, drive caches, the LVs.
    let members = |o: &Observed| {
        o.arrays
            .iter()
            .map(|a| {
                (
                    a.kname.clone(),
                    a.members
                        .iter()
                        .map(|m| (m.kname.clone(), m.state.clone()))
                        .collect::<Vec<_>>(),
                    a.bitmap.as_ref().map(|b| b.backlog),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(members(&after), members(before));
    let caches = |o: &Observed| {
        o.block_devices
            .iter()
            .map(|b| (b.kname.clone(), b.write_cache.and_then(|c| c.enabled)))
            .collect::<Vec<_>>()
    };
    assert_eq!(caches(&after), caches(before));
    let lvs = |o: &Observed| {
        o.lvm
            .lvs
            .iter()
            .map(|l| (l.name.clone(), l.size, l.segtype.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(lvs(&after), lvs(before));
}

#[test]
fn every_configuration_is_measured_in_it_and_the_file_s_state_comes_back() {
    let (d, h) = tune_box();
    let before = observe(&h, &d);
    // At each configuration's first job, the machine is exactly that configuration.
    let configs = tune::configs(
        &d,
        &before,
        "vg0",
        "data",
        false,
        Some((
            hyraid::config::desired::DeviceRef::Disk("ssd2".into()),
            1 << 30,
        )),
    );
    let checked = RefCell::new(Vec::new());
    let r = tune::run(
        &h,
        &d,
        &dir(),
        &mut |e| {
            if let Event::Job {
                config, index: 0, ..
            } = e
            {
                let c = configs
                    .iter()
                    .find(|c| c.name == config)
                    .expect("a known configuration");
                let p = plan_for(&h, &c.desired, Policy::default());
                assert!(
                    p.steps.is_empty(),
                    "measuring `{config}` with the machine elsewhere:\n{}",
                    hyraid::render::text(&p, false)
                );
                checked.borrow_mut().push(config.to_string());
            }
        },
        &hyraid::machine::Stop::new(),
    )
    .unwrap();
    let names: Vec<&str> = r.configs.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "as the file says",
            "write-mostly off",
            "write-behind 2048",
            "drive cache on",
            "writecache on ssd2"
        ]
    );
    assert_eq!(
        checked.borrow().len(),
        10,
        "every configuration in both rounds"
    );
    for m in &r.configs {
        assert_eq!(m.runs.len(), 2, "{}", m.name);
        assert!(m.runs.iter().all(|x| x.jobs.len() == 6), "{}", m.name);
    }
    as_the_file_says(&h, &d, &before);
    // The kernel's counters of each member: with the file's write-mostly the HDD serves no read.
    let hdd = hyraid::plan::disk_for(&before, &d.disks["hdd1"])
        .unwrap()
        .kname
        .clone();
    let hdd_reads = |name: &str| -> u64 {
        let m = r.configs.iter().find(|m| m.name == name).unwrap();
        m.runs
            .iter()
            .flat_map(|x| &x.jobs)
            .filter(|j| j.rw.ends_with("read"))
            .map(|j| j.members[&hdd].reads)
            .sum()
    };
    assert_eq!(hdd_reads("as the file says"), 0);
    assert!(hdd_reads("write-mostly off") > 0);
    // The simulated disks behave as the field report's: write-mostly off costs reads, the drive
    // cache and the writecache win writes.
    let rec = &r.recommendation;
    assert_eq!(rec.chosen, ["writecache on ssd2", "drive cache on"]);
    let diff = rec.diff.as_deref().expect("an edit of the file");
    assert!(
        diff.contains(
            "-    write_cache: off   # no UPS yet\n+    write_cache: on   # no UPS yet\n"
        ),
        "{diff}"
    );
    assert!(
        diff.contains("+        writecache: { size: 1GiB, pvs: [ssd2] }\n"),
        "{diff}"
    );
    assert_eq!(rec.risks.len(), 2, "both risks are said");
    let text = tune::table(&r);
    assert!(text.contains("| write-mostly off "), "{text}");
    assert!(
        text.contains("Recommendation: for a mixed workload"),
        "{text}"
    );
}

#[test]
fn the_recommended_file_plans_exactly_the_recommended_changes() {
    let (d, h) = tune_box();
    let r = run_on(&h, &d, &dir(), None).0.unwrap();
    let diff = r.recommendation.diff.unwrap();
    // Apply the diff's + lines the way a reader would: the file edited.
    let mut text = TUNE_YAML.replace(
        "write_cache: off   # no UPS yet",
        "write_cache: on   # no UPS yet",
    );
    text.push_str("        writecache: { size: 1GiB, pvs: [ssd2] }\n");
    assert!(diff.contains("writecache: { size: 1GiB"));
    let want = hyraid::config::load_str("hyraid.yaml", &text).unwrap();
    let p = plan_for(&h, &want, Policy::default());
    let objects: Vec<String> = p
        .steps
        .iter()
        .map(|s| s.step.object().to_string())
        .collect();
    assert!(objects.iter().any(|o| o == "disk hdd1"), "{objects:?}");
    assert!(objects.iter().any(|o| o == "lv vg0/data"), "{objects:?}");
    assert!(p.refused.is_empty());
}

#[test]
fn a_random_read_workload_keeps_what_it_has() {
    let (d, h) = tune_box();
    let mut o = dir();
    o.workload = Workload::RandomRead;
    let r = run_on(&h, &d, &o, None).0.unwrap();
    assert!(r.recommendation.chosen.is_empty(), "{:?}", r.recommendation);
    assert!(
        r.recommendation.words.starts_with("keep what you have"),
        "{}",
        r.recommendation.words
    );
}

#[test]
fn a_failing_fio_or_tool_puts_the_file_s_state_back() {
    for (needle, what) in [
        ("--name=rand-write-512k", "measuring `as the file says`"),
        ("hdparm -W1", "changing to `drive cache on`"),
        (
            "lvconvert --yes --type writecache",
            "changing to `writecache on ssd2`",
        ),
    ] {
        let (d, h) = tune_box();
        let before = observe(&h, &d);
        h.inject_fault(Fault {
            needle: needle.into(),
            status: 5,
            stderr: "Input/output error\n".into(),
        });
        let (r, seen) = run_on(&h, &d, &dir(), None);
        match r {
            Err(TuneError::Failed { error, state }) => {
                assert!(error.contains(what), "{needle}: {error}");
                assert_eq!(state, "The file's state was put back.", "{needle}");
            }
            other => panic!("{needle}: {other:?}"),
        }
        assert!(
            seen.restores >= 1 || needle.starts_with("--name"),
            "{needle}: nothing restored"
        );
        as_the_file_says(&h, &d, &before);
    }
}

#[test]
fn ctrl_c_stops_at_a_job_and_puts_the_file_s_state_back() {
    for after in [1, 7, 20, 33] {
        let (d, h) = tune_box();
        let before = observe(&h, &d);
        let (r, seen) = run_on(&h, &d, &dir(), Some(after));
        assert!(
            matches!(r, Err(TuneError::Interrupted(ref s)) if s == "The file's state was put back."),
            "after {after}: {r:?}"
        );
        assert!(
            seen.jobs <= after + 1,
            "after {after}: {} jobs ran",
            seen.jobs
        );
        as_the_file_says(&h, &d, &before);
    }
}

#[test]
fn refusals_before_anything_changes() {
    // Not as the file says.
    let (d, h) = tune_box();
    h.clear_log();
    let mut other = d.clone();
    other.mirrors.get_mut("data0").unwrap().write_behind = 512;
    let (r, _) = run_on(&h, &other, &dir(), None);
    assert!(
        matches!(&r, Err(TuneError::Refused(m)) if m.contains("not as hyraid.yaml says") && m.contains("apply the file first")),
        "{r:?}"
    );
    // A target outside the file.
    for (target, word) in [
        ("/", "not on a mounted filesystem"),
        ("/nowhere", "not on a mounted filesystem"),
    ] {
        let (r, _) = run_on(&h, &d, &options(Target::Directory(target.into())), None);
        assert!(
            matches!(&r, Err(TuneError::Refused(m)) if m.contains(word)),
            "{target}: {r:?}"
        );
    }
    // A resyncing mirror, and a degraded one.
    let h2 = common::tune::tune_blank();
    apply(&h2, &d, Policy::default()).unwrap();
    let (r, _) = run_on(&h2, &d, &dir(), None);
    assert!(
        matches!(&r, Err(TuneError::Refused(m)) if m.contains("is resyncing")),
        "{r:?}"
    );
    let (d, h3) = tune_box();
    let w = h3.world();
    let mut w2 = w.clone();
    w2.arrays[0].degraded = 1;
    let h3 = SimHost::new(w2);
    let (r, _) = run_on(&h3, &d, &dir(), None);
    assert!(
        matches!(&r, Err(TuneError::Refused(m)) if m.contains("is degraded")),
        "{r:?}"
    );
    // No room for a scratch LV: the numbers.
    let (r, _) = run_on(
        &h,
        &d,
        &options(Target::Scratch {
            size: 900 << 30,
            vg: None,
        }),
        None,
    );
    assert!(
        matches!(&r, Err(TuneError::Refused(m)) if m.contains("no room for a scratch LV of 900.00 GiB") && m.contains("data0: ")),
        "{r:?}"
    );
    // Nothing ran but observation.
    assert!(h.commands().iter().all(|c| {
        !["hdparm", "lvcreate", "lvconvert", "fio --name"]
            .iter()
            .any(|p| c.join(" ").starts_with(p))
    }));
}

#[test]
fn a_scratch_lv_is_made_measured_and_removed() {
    let (d, h) = tune_box();
    let before = observe(&h, &d);
    let (r, seen) = run_on(
        &h,
        &d,
        &options(Target::Scratch {
            size: 2 << 30,
            vg: None,
        }),
        None,
    );
    let r = r.unwrap();
    assert!(
        r.scratch && r.target == "/dev/vg0/hyraid-tune",
        "{}",
        r.target
    );
    assert!(
        seen.skipped
            .iter()
            .any(|s| s.starts_with("writecache: a writecache belongs to an LV of the file")),
        "{:?}",
        seen.skipped
    );
    let made = h.commands().iter().any(|c| {
        c.join(" ")
            .starts_with("lvcreate --yes -n hyraid-tune --addtag hyraid_tune")
    });
    assert!(made, "the scratch LV is made with its tag");
    assert!(h.commands().iter().any(|c| {
        c.join(" ")
            .contains("fio --name=seq-read-1m --filename=/dev/vg0/hyraid-tune")
    }));
    as_the_file_says(&h, &d, &before);
}

/// A host whose process dies after `left` more calls: from then on nothing reaches the machine.
struct Dying<'a> {
    inner: &'a SimHost,
    left: AtomicUsize,
    /// Calls that changed something, by their place in the sequence of all calls.
    changes: Mutex<Vec<usize>>,
    calls: AtomicUsize,
}

impl<'a> Dying<'a> {
    fn new(inner: &'a SimHost, left: usize) -> Self {
        Dying {
            inner,
            left: AtomicUsize::new(left),
            changes: Mutex::new(vec![]),
            calls: AtomicUsize::new(0),
        }
    }
    fn step(&self, changes: bool) -> Result<(), HostError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.left.load(Ordering::SeqCst) == 0 {
            return Err(HostError::Spawn {
                program: "hyraid".into(),
                detail: "killed".into(),
            });
        }
        self.left.fetch_sub(1, Ordering::SeqCst);
        if changes {
            self.changes.lock().unwrap().push(n);
        }
        Ok(())
    }
}

fn changing(argv: &[String]) -> bool {
    let p = argv[0].as_str();
    !matches!(
        p,
        "lsblk"
            | "lvm"
            | "fio"
            | "df"
            | "stat"
            | "mdadm"
            | "smartctl"
            | "systemctl"
            | "wipefs"
            | "blkid"
            | "systemd-analyze"
            | "dumpe2fs"
            | "partx"
            | "sgdisk"
            | "udevadm"
    ) || argv.iter().any(|a| {
        [
            "--add",
            "--remove",
            "--grow",
            "--fail",
            "--create",
            "--assemble",
        ]
        .contains(&a.as_str())
    }) || argv.iter().any(|a| a == "lvmdevices")
}

impl Host for Dying<'_> {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        self.step(changing(argv))?;
        self.inner.run(argv)
    }
    fn read_file(&self, path: &str) -> Result<String, HostError> {
        self.step(false)?;
        self.inner.read_file(path)
    }
    fn write_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        self.step(true)?;
        self.inner.write_file(path, content)
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
        self.step(false)?;
        self.inner.list_dir(path)
    }
    fn read_link(&self, path: &str) -> Result<String, HostError> {
        self.step(false)?;
        self.inner.read_link(path)
    }
    fn hostname(&self) -> String {
        self.inner.hostname()
    }
    fn is_root(&self) -> bool {
        true
    }
    fn is_simulated(&self) -> bool {
        true
    }
    fn sleep(&self, d: std::time::Duration) {
        self.inner.sleep(d)
    }
    fn exists(&self, path: &str) -> bool {
        self.inner.exists(path)
    }
    fn replace_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        self.step(true)?;
        self.inner.replace_file(path, content)
    }
}

#[test]
fn killed_at_any_change_plan_shows_the_way_back_and_apply_converges() {
    let (d, h0) = tune_box();
    let before = observe(&h0, &d);
    // The calls of a whole run, and which of them change the machine.
    let h1 = SimHost::new(h0.world());
    let probe = Dying::new(&h1, usize::MAX);
    run_on(&probe, &d, &dir(), None).0.unwrap();
    let points = probe.changes.into_inner().unwrap();
    let probe_points = points.len();
    assert!(points.len() > 20, "{} changes", points.len());
    let mut differed = 0;
    for k in points {
        let h = SimHost::new(h0.world());
        // Killed just after change k: nothing after it reaches the machine, not even the restore.
        let dying = Dying::new(&h, k + 1);
        let _ = run_on(&dying, &d, &dir(), None);
        let h = SimHost::new(h.world());
        let obs = observe(&h, &d);
        let p = plan_for(&h, &d, Policy::default());
        if let Some(t) = &obs.boot.monitoring.tune_run {
            // status says a run did not end; the plan says what it will undo.
            let findings = hyraid::status::status(&obs, Some(&d), None);
            assert!(
                findings
                    .iter()
                    .any(|f| f.message.starts_with("a `hyraid tune` run did not end")),
                "after call {k}"
            );
            assert!(
                p.notes
                    .iter()
                    .any(|n| n.contains(&format!("it was measuring `{}`", t.measuring))),
                "after call {k}: {:?}",
                p.notes
            );
        }
        assert!(
            p.refused.is_empty(),
            "after call {k}: {}",
            hyraid::render::text(&p, false)
        );
        assert!(
            p.steps
                .iter()
                .all(|s| s.risk != hyraid::plan::Risk::Destroys),
            "after call {k}"
        );
        if !p.steps.is_empty() {
            differed += 1;
        }
        apply(&h, &d, Policy::default()).unwrap_or_else(|e| panic!("after call {k}: {e}"));
        hyraid::tune::end_record(&h);
        as_the_file_says(&h, &d, &before);
    }
    assert!(
        differed > 5,
        "only {differed} kill points left the machine changed"
    );
    eprintln!(
        "{n} kill points, {differed} of them left the machine to put back",
        n = probe_points
    );
}
