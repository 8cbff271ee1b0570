//! One apply at a time: a second apply is refused with the holder's pid, a plan during an apply
//! warns, and the lock goes away with a crashed holder (flock). Also: non-root on a real host is
//! refused before anything is observed.

use crate::common;
use common::hyraid;
use hyraid::machine::Lock;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn sim(dir: &Path) -> PathBuf {
    let p = dir.join("pair.json");
    std::fs::copy("examples/snapshots/single-pair.json", &p).unwrap();
    p
}

#[test]
fn second_apply_is_refused_with_the_holders_pid() {
    let dir = tempfile::tempdir().unwrap();
    let snap = sim(dir.path());
    let held = Lock::acquire(&hyraid::machine::lock::for_snapshot(&snap)).unwrap();
    let before = std::fs::read(&snap).unwrap();
    let o = hyraid(&[
        "apply",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--yes",
        "--sim-write",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains(&format!(
            "another hyraid apply (pid {}) holds",
            std::process::id()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(&snap).unwrap(), before, "nothing changed");
    // A plan meanwhile still answers, and says an apply is running.
    let o = hyraid(&[
        "plan",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains(&format!("an apply (pid {}) is running", std::process::id()))
    );
    drop(held);
    let o = hyraid(&[
        "plan",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
    ]);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = hyraid(&[
        "apply",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--yes",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Run by `lock_is_released_when_the_holder_dies` in a child process.
#[test]
#[ignore]
fn lock_holder_helper() {
    if let Ok(path) = std::env::var("HYRAID_TEST_LOCK") {
        let _l = Lock::acquire(Path::new(&path)).unwrap();
        println!("LOCK-HELD");
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

#[test]
fn lock_is_released_when_the_holder_dies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("apply.lock");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            // The helper's name in this binary: its module, then the function.
            "concurrency::lock_holder_helper",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HYRAID_TEST_LOCK", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.unwrap().contains("LOCK-HELD")));
    let e = Lock::acquire(&path)
        .err()
        .expect("held by the child")
        .to_string();
    assert!(e.contains(&format!("pid {}", child.id())), "{e}");
    child.kill().unwrap(); // SIGKILL: no destructor, no unlock
    child.wait().unwrap();
    Lock::acquire(&path).expect("the kernel released the dead holder's lock");
}

#[test]
fn non_root_is_refused_before_observing_anything() {
    if !nix::unistd::geteuid().is_root() {
        let o = hyraid(&["plan", "examples/single-pair.yaml"]);
        assert!(String::from_utf8_lossy(&o.stderr).contains("needs root"));
        return;
    }
    // As root, drop to nobody for the child.
    let o = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_hyraid"),
            "plan",
            "examples/single-pair.yaml",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("hyraid needs root on a real machine") && err.contains("--sim SNAPSHOT"),
        "{err}"
    );
    assert!(
        !err.contains("lsblk") && !err.contains("lvm"),
        "failed before observing: {err}"
    );
    assert!(o.stdout.is_empty());
    // What needs no machine works as any user.
    let o = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_hyraid"),
            "validate",
            "examples/single-pair.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
