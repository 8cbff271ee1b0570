//! lsblk and the LVM report started before the file is read (a real machine starts them at once
//! and reads the file meanwhile): observation uses what they answered, runs neither again, and
//! sees what the one-order observation sees; and a plan without steps describes the machine as
//! observed, its lints included. And on the real machine a started program runs beside the caller.

use crate::common;

use hyraid::apply;
use hyraid::host::{CmdOutput, Host, HostError, Started};
use hyraid::observe::{EarlyReads, Observed};
use hyraid::plan::Policy;
use hyraid::sim::SimHost;
use std::sync::Mutex;

/// The simulated machine, saying it runs its reads side by side (as only a real machine does),
/// and keeping the order in which programs were started.
struct SideBySide {
    sim: SimHost,
    started: Mutex<Vec<String>>,
}

impl SideBySide {
    fn new(sim: SimHost) -> SideBySide {
        SideBySide {
            sim,
            started: Mutex::new(vec![]),
        }
    }
    fn programs(&self) -> Vec<String> {
        self.started.lock().unwrap().clone()
    }
}

impl Host for SideBySide {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        self.started.lock().unwrap().push(argv.join(" "));
        self.sim.run(argv)
    }
    fn read_file(&self, path: &str) -> Result<String, HostError> {
        self.sim.read_file(path)
    }
    fn write_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        self.sim.write_file(path, content)
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
        self.sim.list_dir(path)
    }
    fn read_link(&self, path: &str) -> Result<String, HostError> {
        self.sim.read_link(path)
    }
    fn hostname(&self) -> String {
        self.sim.hostname()
    }
    fn is_root(&self) -> bool {
        true
    }
    fn is_simulated(&self) -> bool {
        true
    }
    fn sleep(&self, d: std::time::Duration) {
        self.sim.sleep(d)
    }
    fn exists(&self, path: &str) -> bool {
        self.sim.exists(path)
    }
    fn replace_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        self.sim.replace_file(path, content)
    }
    fn concurrent(&self) -> bool {
        true
    }
    fn start(&self, argv: &[String]) -> Started {
        Started::done(self.run(argv))
    }
}

fn first_word(cmds: &[String], tool: &str) -> usize {
    cmds.iter()
        .filter(|c| c.split(' ').next() == Some(tool))
        .count()
}

/// The microserver example built, its resyncs done: a machine with arrays, PVs, a VG and LVs.
fn built() -> (hyraid::config::Desired, Observed) {
    let (d, h) = common::example("microserver-gen8");
    common::apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h.world())
}

#[test]
fn early_reads_are_used_once_and_observe_what_one_order_observes() {
    for (d, world) in [
        {
            let (d, h) = common::example("microserver-gen8");
            (d, h.world())
        },
        built(),
    ] {
        let one_order =
            hyraid::machine::observe_for(&SimHost::new(world.clone()), Some(&d)).unwrap();
        let host = SideBySide::new(SimHost::new(world));
        let early = EarlyReads::start(&host);
        assert_eq!(
            host.programs().len(),
            2,
            "both reads start before the file is read: {:?}",
            host.programs()
        );
        let side_by_side = hyraid::machine::observe_started_for(&host, Some(&d), early).unwrap();
        assert_eq!(side_by_side, one_order);
        let cmds = host.programs();
        assert!(cmds[0].starts_with("lvm fullreport"), "{cmds:?}");
        assert!(cmds[1].starts_with("lsblk --json"), "{cmds:?}");
        assert_eq!(first_word(&cmds, "lsblk"), 1, "{cmds:?}");
        assert_eq!(first_word(&cmds, "lvm"), 1, "{cmds:?}");
        assert!(first_word(&cmds, "wipefs") <= 1, "{cmds:?}");
    }
}

#[test]
fn a_host_that_answers_in_one_order_starts_nothing_early() {
    let (d, h) = common::example("microserver-gen8");
    let early = EarlyReads::start(&h);
    assert!(h.commands().is_empty(), "{:?}", h.commands());
    hyraid::machine::observe_started_for(&h, Some(&d), early).unwrap();
    let cmds: Vec<String> = h.commands().iter().map(|c| c[0].clone()).collect();
    assert_eq!(cmds.first().map(String::as_str), Some("lsblk"), "{cmds:?}");
    assert_eq!(cmds.last().map(String::as_str), Some("lvm"), "{cmds:?}");
}

#[test]
fn a_converged_plan_lists_the_lints_status_reports() {
    // A writecache on one SSD: a lint that stands on the converged machine (the example accepts
    // it; this file does not).
    let (mut d, world) = built();
    let accepting = d.clone();
    assert!(!accepting.accept.is_empty());
    d.accept.clear();
    let h = SimHost::new(world);
    let obs = hyraid::machine::observe_for(&h, Some(&d)).unwrap();
    let p = apply::preview::review(&d, &obs, Policy::default()).unwrap();
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    let lints: Vec<String> = hyraid::status::status(&obs, Some(&d), obs.boot.mdadm_conf.as_deref())
        .into_iter()
        .filter(|f| f.severity == hyraid::status::Severity::Lint)
        .map(|f| format!("{}: {}", f.object, f.message))
        .collect();
    assert!(!lints.is_empty(), "the example keeps a lint");
    let noted: Vec<&String> = p
        .notes
        .iter()
        .filter(|n| n.starts_with("lint, after this plan: "))
        .collect();
    assert_eq!(noted.len(), lints.len(), "{noted:?} vs {lints:?}");
    for l in &lints {
        assert!(
            noted.iter().any(|n| n.contains(l.as_str())),
            "{l} not in {noted:?}"
        );
    }
    // Accepted in the file, the lint is no longer one: neither status nor the plan lists it.
    let p = apply::preview::review(&accepting, &obs, Policy::default()).unwrap();
    assert!(
        !p.notes
            .iter()
            .any(|n| n.starts_with("lint, after this plan: ")),
        "{:?}",
        p.notes
    );
    let found = hyraid::status::status(&obs, Some(&accepting), obs.boot.mdadm_conf.as_deref());
    assert_eq!(hyraid::status::exit_code(&found), 0, "{found:#?}");
    assert!(found.iter().any(|f| {
        f.message
            .contains("accepted in the file: writecache-not-redundant")
    }));
}

// The real machine's `start`: a program runs in a thread of its own.

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_started_program_runs_while_the_caller_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("flag");
    // It waits (5 s at most) for a file only the caller makes after starting it: were
    // `start` to run it to the end first, it would find no file and exit 1.
    let script = format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; [ -e '{0}' ] && echo seen",
        flag.display()
    );
    let started = hyraid::host::RealHost.start(&argv(&["sh", "-c", &script]));
    std::fs::write(&flag, "").unwrap();
    let out = started.wait().unwrap();
    assert_eq!((out.status, out.stdout.as_str()), (0, "seen\n"), "{out:?}");
}

#[test]
fn a_started_program_dropped_unwaited_holds_nothing_up_and_still_ends() {
    // An error before the observation (a bad file) is reported at once: dropping what was
    // started does not wait for it, and the program goes on to its end by itself.
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    let script = format!("sleep 1; touch '{}'", done.display());
    let t = std::time::Instant::now();
    drop(hyraid::host::RealHost.start(&argv(&["sh", "-c", &script])));
    assert!(
        !done.exists() && t.elapsed() < std::time::Duration::from_millis(900),
        "the drop waited for the program"
    );
    let mut waited = 0;
    while !done.exists() && waited < 100 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    assert!(done.exists(), "the program did not run to its end");
}

#[test]
fn a_program_that_cannot_start_says_so_when_waited_for() {
    let e = hyraid::host::RealHost
        .start(&argv(&["hyraid-no-such-program"]))
        .wait()
        .unwrap_err();
    assert!(e.to_string().contains("not installed"), "{e}");
}
