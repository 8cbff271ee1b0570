//! Resync-aware apply: waiting with progress, --no-wait, and a clean stop on Ctrl-C/SIGTERM.
//! One test function: the stop flag is process-wide.

mod common;
use common::*;
use hyraid::apply::{self, ApplyError, ExecOptions, Journal};
use hyraid::host::{CmdOutput, Host, HostError};
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

/// A host that asks the apply to stop right after its k-th changing command, as Ctrl-C would.
struct StopAfter<'a> {
    inner: &'a SimHost,
    k: usize,
    seen: std::sync::atomic::AtomicUsize,
}

impl Host for StopAfter<'_> {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        let r = self.inner.run(argv);
        if !matches!(argv[0].as_str(), "lsblk" | "lvm" | "wipefs") {
            self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if self.seen.load(std::sync::atomic::Ordering::SeqCst) == self.k {
                apply::request_stop();
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
            apply::request_stop();
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
fn waits_with_progress_stops_on_no_wait_and_on_interrupt() {
    // 1. Waiting: the bitmap change waits for the initial resync, printing progress lines.
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

    // 2. --no-wait: stops at the wait, nothing after it ran; a later run converges.
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

    // 3. Interrupt after each changing command of a fresh build: stops cleanly, re-run converges.
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
        };
        let obs = apply::observe_for(&stopper, Some(&d)).unwrap();
        let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
        let e = apply::execute_with(
            &stopper,
            &p,
            &obs,
            &Journal { path: None },
            &mut std::io::sink(),
            &ExecOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(e, ApplyError::Interrupted { .. }), "k={k}: {e}");
        assert!(e.to_string().contains("run apply again to continue"));
        assert_eq!(
            changes(&h).len(),
            k,
            "k={k}: exactly the commands before the stop ran"
        );
        apply::clear_stop();
        apply(&h, &d, Policy::default()).unwrap_or_else(|e| panic!("k={k}: {e}"));
    }

    // 4. The real signal handler sets the same flag.
    apply::install_interrupt_handler();
    assert!(!apply::stop_requested());
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(apply::stop_requested(), "SIGINT reached the handler");
    apply::clear_stop();
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGTERM).unwrap();
    assert!(apply::stop_requested(), "SIGTERM too");
    apply::clear_stop();
}
