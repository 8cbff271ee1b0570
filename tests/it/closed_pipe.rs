//! Output into a pipe whose reader has gone (`hyraid schema | head`, errors into `2>&1 | head`):
//! hyraid ends as `cat` or `yes` do, killed by SIGPIPE without a word, never with a panic
//! (exit 101); a full disk is an error. An apply whose steps have started finishes them.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};

const SIGPIPE: i32 = 13;

fn hyraid() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hyraid"));
    c.env_remove("CLICOLOR_FORCE").stdin(Stdio::null());
    c
}

/// `args` with standard output (and, with `stderr_too`, standard error) into a pipe whose only
/// reader was closed before hyraid started.
fn into_closed_pipe(args: &[&str], stderr_too: bool) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut c = hyraid();
    c.args(args).stderr(Stdio::piped());
    if stderr_too {
        c.stderr(writer.try_clone().unwrap());
    }
    c.stdout(writer).output().unwrap()
}

fn assert_quietly_killed(o: &Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_ne!(o.status.code(), Some(101), "{what}");
    assert_eq!(
        o.status.signal(),
        Some(SIGPIPE),
        "{what}: {:?} {err}",
        o.status
    );
    assert_eq!(err, "", "{what}");
}

#[test]
fn a_closed_stdout_ends_hyraid_by_sigpipe_without_a_panic() {
    let snap = "examples/snapshots/single-pair.json";
    let file = "examples/single-pair.yaml";
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("plan.json");
    let saved = saved.to_str().unwrap();
    let o = hyraid()
        .args(["plan", file, "--sim", snap, "-o", saved])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    for args in [
        &["schema"][..],
        &["schema", "--snapshot"],
        &["man"],
        &["completions", "bash"],
        &["validate", file],
        &[
            "validate",
            "tests/bad/member-twice.yaml",
            "--format",
            "json",
        ],
        &["plan", file, "--sim", snap],
        &["plan", file, "--sim", snap, "--format", "json"],
        &["plan", file, "--sim", snap, "--format", "markdown"],
        &["show", saved],
        &["status", "--sim", snap],
        &["status", file, "--sim", snap, "--format", "prometheus"],
        &["observe", "--sim", snap],
        &["import", "--sim", snap],
        &["--help"],
    ] {
        assert_quietly_killed(&into_closed_pipe(args, false), &args.join(" "));
    }
}

#[test]
fn errors_into_a_closed_pipe_end_hyraid_by_sigpipe_without_a_panic() {
    for args in [
        &[
            "plan",
            "no-such-file.yaml",
            "--sim",
            "examples/snapshots/single-pair.json",
        ][..],
        &["validate", "tests/bad/member-twice.yaml"],
        &[
            "plan",
            "examples/single-pair.yaml",
            "--sim",
            "no-such-snapshot.json",
        ],
        &["no-such-command"],
    ] {
        let o = into_closed_pipe(args, true);
        assert_ne!(o.status.code(), Some(101), "{args:?}");
        assert_eq!(o.status.signal(), Some(SIGPIPE), "{args:?}: {:?}", o.status);
    }
}

#[test]
fn a_full_disk_is_an_error_not_a_panic() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    for args in [&["schema"][..], &["man"], &["completions", "zsh"]] {
        let o = hyraid()
            .args(args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains("cannot write to standard output: No space left on device"),
            "{err}"
        );
    }
}

#[test]
fn an_apply_whose_reader_goes_before_the_steps_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("single-pair.json");
    std::fs::copy("examples/snapshots/single-pair.json", &snap).unwrap();
    let before = std::fs::read(&snap).unwrap();
    let s = snap.to_str().unwrap();
    let o = into_closed_pipe(
        &[
            "apply",
            "examples/single-pair.yaml",
            "--sim",
            s,
            "--yes",
            "--sim-write",
        ],
        false,
    );
    assert_quietly_killed(&o, "apply");
    assert_eq!(std::fs::read(&snap).unwrap(), before);
}

#[test]
fn an_apply_whose_reader_goes_once_the_steps_run_finishes_them() {
    use std::os::fd::AsFd;
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("box.json");
    std::fs::copy("examples/snapshots/microserver-partitioned.json", &snap).unwrap();
    let s = snap.to_str().unwrap();
    // A pipe of one page: hyraid blocks on it until the reader reads, so what it writes after
    // the reader has gone (the rest of the steps' lines, more than a page) finds no reader.
    let (mut reader, writer) = std::io::pipe().unwrap();
    nix::fcntl::fcntl(reader.as_fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(4096)).unwrap();
    let child = hyraid()
        .args([
            "apply",
            "examples/microserver-partitioned.yaml",
            "--sim",
            s,
            "--yes",
            "--sim-write",
        ])
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read, a little at a time, up to the first step's progress line; then go away.
    let mut seen = Vec::new();
    let mut buf = [0u8; 64];
    while !String::from_utf8_lossy(&seen).contains("\n[1/") {
        let n = reader.read(&mut buf).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    drop(reader);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{:?} {err}", o.status);
    // Every step ran and was verified: the snapshot written back plans nothing.
    let o = hyraid()
        .args([
            "plan",
            "examples/microserver-partitioned.yaml",
            "--sim",
            s,
            "--detailed-exitcode",
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
