//! Resync-aware apply: waiting with progress, --no-wait, and a clean stop on Ctrl-C/SIGTERM.
//! Each apply is given its own stop flag: one stopped here stops no other (they run side by side
//! in this binary).

use crate::common;
use common::*;
use hyraid::apply::{self, ApplyError, ExecOptions, Journal};
use hyraid::host::{CmdOutput, Host, HostError};
use hyraid::machine::Stop;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

/// A host that asks the apply to stop right after its k-th changing command, as Ctrl-C would.
struct StopAfter<'a> {
    inner: &'a SimHost,
    k: usize,
    seen: std::sync::atomic::AtomicUsize,
    /// The flag this apply is given, requested after the k-th command.
    stop: Stop,
}

impl Host for StopAfter<'_> {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        let r = self.inner.run(argv);
        if !matches!(argv[0].as_str(), "lsblk" | "lvm" | "wipefs") {
            self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if self.seen.load(std::sync::atomic::Ordering::SeqCst) == self.k {
                self.stop.request();
            }
        }
        r
    }
    fn read_file(&self, p: &str) -> Result<String, HostError> {
        self.inner.read_file(p)
    }
    fn write_file(&self, p: &str, c: &str) -> Result<(), HostError> {
        self.inner.write_file(p, c)
    }
    fn list_dir(&self, p: &str) -> Result<Vec<String>, HostError> {
        self.inner.list_dir(p)
    }
    fn read_link(&self, p: &str) -> Result<String, HostError> {
        self.inner.read_link(p)
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
    fn exists(&self, p: &str) -> bool {
        self.inner.exists(p)
    }
    fn replace_file(&self, p: &str, c: &str) -> Result<(), HostError> {
        self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let r = self.inner.replace_file(p, c);
        if self.seen.load(std::sync::atomic::Ordering::SeqCst) == self.k {
            self.stop.request();
        }
        r
    }
}

fn rechunk() -> (hyraid::config::Desired, SimHost) {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap(); // leaves the initial resync running
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(128 << 20);
    (d, h)
}

#[test]
fn a_wait_shows_its_progress() {
    // The bitmap change waits for the initial resync, printing progress lines.
    let (d, h) = rechunk();
    let obs = observe(&h, &d);
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    let mut out = Vec::new();
    apply::execute_with(
        &h,
        &p,
        &obs,
        &Journal { path: None },
        &mut out,
        &ExecOptions::default(),
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("md-home: resync 0.0% at 97 MiB/s, about"),
        "{text}"
    );
    assert!(text.contains("md-home: idle now"), "{text}");
    assert_eq!(
        h.world()
            .array_named("md-home")
            .unwrap()
            .bitmap
            .as_ref()
            .unwrap()
            .chunk,
        128 << 20
    );
}

#[test]
fn no_wait_stops_at_the_wait_and_a_later_run_converges() {
    // Nothing after the wait ran.
    let (d, h) = rechunk();
    let obs = observe(&h, &d);
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    let e = apply::execute_with(
        &h,
        &p,
        &obs,
        &Journal { path: None },
        &mut std::io::sink(),
        &ExecOptions {
            no_wait: true,
            progress_bar: false,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(&e, ApplyError::NotIdle { index: 1, action, .. } if action == "resync"),
        "{e}"
    );
    assert!(e.to_string().contains("--no-wait"));
    assert_eq!(
        h.world()
            .array_named("md-home")
            .unwrap()
            .bitmap
            .as_ref()
            .unwrap()
            .chunk,
        64 << 20,
        "nothing changed"
    );
    h.finish_syncs();
    apply(&h, &d, Policy::default()).unwrap();
}

#[test]
fn an_interrupt_after_any_command_stops_cleanly_and_a_rerun_converges() {
    // After each changing command of a fresh build.
    let (d0, h0) = example("microserver-gen8");
    let n = plan_for(&h0, &d0, Policy::default())
        .steps
        .iter()
        .map(|s| s.step.commands().len())
        .sum::<usize>();
    for k in 1..n {
        let (d, h) = example("microserver-gen8");
        let stopper = StopAfter {
            inner: &h,
            k,
            seen: std::sync::atomic::AtomicUsize::new(0),
            stop: Stop::new(),
        };
        let obs = hyraid::machine::observe_for(&stopper, Some(&d)).unwrap();
        let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
        let e = apply::execute_with(
            &stopper,
            &p,
            &obs,
            &Journal { path: None },
            &mut std::io::sink(),
            &ExecOptions {
                stop: stopper.stop.clone(),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(matches!(e, ApplyError::Interrupted { .. }), "k={k}: {e}");
        assert!(e.to_string().contains("run apply again to continue"));
        assert_eq!(
            changes(&h).len(),
            k,
            "k={k}: exactly the commands before the stop ran"
        );
        // The next apply has a flag of its own, not the stopped one's.
        apply(&h, &d, Policy::default()).unwrap_or_else(|e| panic!("k={k}: {e}"));
    }
}

#[test]
fn a_stop_is_the_run_s_own() {
    // Two builds side by side: the one whose flag is requested stops, the other runs to the end.
    let (d, stopped) = example("microserver-gen8");
    let (_, running) = example("microserver-gen8");
    let stopper = StopAfter {
        inner: &stopped,
        k: 2,
        seen: std::sync::atomic::AtomicUsize::new(0),
        stop: Stop::new(),
    };
    let other = Stop::new();
    let obs = hyraid::machine::observe_for(&stopper, Some(&d)).unwrap();
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    let run = |host: &dyn hyraid::host::Host, stop: &Stop| {
        apply::execute_with(
            host,
            &p,
            &obs,
            &Journal { path: None },
            &mut std::io::sink(),
            &ExecOptions {
                stop: stop.clone(),
                ..Default::default()
            },
        )
    };
    std::thread::scope(|s| {
        let a = s.spawn(|| run(&stopper, &stopper.stop));
        let b = s.spawn(|| run(&running, &other));
        let a = a.join().unwrap();
        let b = b.join().unwrap();
        assert!(matches!(a, Err(ApplyError::Interrupted { .. })), "{a:?}");
        assert!(b.is_ok(), "the other apply ran every step: {b:?}");
    });
    assert!(stopper.stop.requested() && !other.requested());
    assert_eq!(changes(&stopped).len(), 2);
    assert_eq!(
        plan_for(&running, &d, Policy::default()).steps.len(),
        0,
        "the other machine is built"
    );
}

#[test]
fn sigint_and_sigterm_set_the_command_line_s_flag_only() {
    hyraid::machine::install_interrupt_handler();
    let cli = Stop::interrupt();
    let own = Stop::new();
    assert!(!cli.requested());
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(cli.requested(), "SIGINT reached the handler");
    assert!(
        Stop::interrupt().requested(),
        "one flag for the command line"
    );
    assert!(
        !own.requested(),
        "a run's own flag is not the command line's"
    );
    cli.clear();
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGTERM).unwrap();
    assert!(cli.requested(), "SIGTERM too");
    cli.clear();
}
