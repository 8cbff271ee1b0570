//! The binary as users and CI run it, on simulated machines.

use crate::common;
use common::{hyraid, text};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn sim_copy(dir: &Path, example: &str) -> PathBuf {
    let p = dir.join(format!("{example}.json"));
    std::fs::copy(format!("examples/snapshots/{example}.json"), &p).unwrap();
    p
}

#[test]
fn plan_apply_plan_with_detailed_exitcode() {
    let dir = tempfile::tempdir().unwrap();
    let snap = sim_copy(dir.path(), "microserver-gen8");
    let s = snap.to_str().unwrap();
    let o = hyraid(&[
        "plan",
        "examples/microserver-gen8.yaml",
        "--sim",
        s,
        "--detailed-exitcode",
    ]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    let o = hyraid(&[
        "apply",
        "examples/microserver-gen8.yaml",
        "--sim",
        s,
        "--yes",
        "--sim-write",
        "--journal",
        dir.path().join("journal.jsonl").to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(
        out.contains("Applied 22 step(s); the machine now matches the file."),
        "{out}"
    );
    assert!(!out.contains("not written back"), "{out}");
    // Without --sim-write nothing is saved, and apply says so.
    let copy = dir.path().join("copy.json");
    std::fs::copy("examples/snapshots/microserver-gen8.json", &copy).unwrap();
    let before = std::fs::read_to_string(&copy).unwrap();
    let o = hyraid(&[
        "apply",
        "examples/microserver-gen8.yaml",
        "--sim",
        copy.to_str().unwrap(),
        "--yes",
    ]);
    let (out2, _) = text(&o);
    assert!(
        out2.contains(
            "The simulated machine was not written back (--sim-write saves it to the snapshot)."
        ),
        "{out2}"
    );
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), before);
    let o = hyraid(&[
        "plan",
        "examples/microserver-gen8.yaml",
        "--sim",
        s,
        "--detailed-exitcode",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).0.contains("No changes."));
    // The journal records every command with its exit status.
    let journal = std::fs::read_to_string(dir.path().join("journal.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), 24);
    assert!(
        journal
            .lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["status"] == 0)
    );
}

#[test]
fn apply_asks_and_refuses_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let snap = sim_copy(dir.path(), "single-pair");
    let before = std::fs::read(&snap).unwrap();
    let o = hyraid(&[
        "apply",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--sim-write",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("pass --yes"), "{:?}", text(&o));
    assert_eq!(std::fs::read(&snap).unwrap(), before);
}

#[test]
fn dry_run_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let snap = sim_copy(dir.path(), "nvme-plus-two-hdd");
    let before = std::fs::read(&snap).unwrap();
    let o = hyraid(&[
        "apply",
        "examples/nvme-plus-two-hdd.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--dry-run",
    ]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.contains("mdadm --create /dev/md/tank")
            && out.contains("Dry run: nothing was changed.")
    );
    assert_eq!(std::fs::read(&snap).unwrap(), before);
    assert_eq!(files_in(dir.path()), ["nvme-plus-two-hdd.json"]);
}

/// The names of the files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// An apply on a snapshot leaves nothing beside it: the lock is in the temporary directory and
/// a simulated machine keeps no journal unless `--journal` names one.
#[test]
fn apply_on_a_snapshot_leaves_no_files_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let snap = sim_copy(dir.path(), "single-pair");
    let o = hyraid(&[
        "apply",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--yes",
        "--sim-write",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert_eq!(files_in(dir.path()), ["single-pair.json"]);
    let o = hyraid(&[
        "apply",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert_eq!(files_in(dir.path()), ["single-pair.json"]);
}

#[test]
fn saved_plan_applies_and_a_stale_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let snap = sim_copy(dir.path(), "single-pair");
    let s = snap.to_str().unwrap();
    let plan = dir.path().join("plan.json");
    let o = hyraid(&[
        "plan",
        "examples/single-pair.yaml",
        "--sim",
        s,
        "-o",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let shown = hyraid(&["show", plan.to_str().unwrap(), "--format", "shell"]);
    assert!(text(&shown).0.contains("set -eu"));
    // Someone changes the machine in between.
    let mut w: serde_json::Value = serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    w["block_devices"][1]["write_cache"]["enabled"] = serde_json::json!(false);
    std::fs::write(&snap, serde_json::to_string(&w).unwrap()).unwrap();
    let before = std::fs::read(&snap).unwrap();
    let o = hyraid(&[
        "apply",
        plan.to_str().unwrap(),
        "--sim",
        s,
        "--yes",
        "--sim-write",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("plan is stale"), "{err}");
    assert_eq!(std::fs::read(&snap).unwrap(), before);
    // A fresh plan applies.
    hyraid(&[
        "plan",
        "examples/single-pair.yaml",
        "--sim",
        s,
        "-o",
        plan.to_str().unwrap(),
    ]);
    let o = hyraid(&[
        "apply",
        plan.to_str().unwrap(),
        "--sim",
        s,
        "--yes",
        "--sim-write",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

#[test]
fn validate_reports_positions_and_exit_codes() {
    let o = hyraid(&["validate", "tests/bad/unknown-key-mirror.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.starts_with("tests/bad/unknown-key-mirror.yaml:8:5: mirrors.data0.write_mosty: unknown key `write_mosty`\n    help: did you mean `write_mostly`?"));
    let o = hyraid(&["validate", "examples/single-pair.yaml"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        text(&o).0,
        "examples/single-pair.yaml: valid (2 disks, 1 mirror, 1 volume group, 1 logical volume)\n"
    );
}

#[test]
fn formats_and_observe() {
    let o = hyraid(&[
        "plan",
        "examples/single-pair.yaml",
        "--sim",
        "examples/snapshots/single-pair.json",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["steps"].as_array().unwrap().len(), 6);
    let o = hyraid(&[
        "plan",
        "examples/single-pair.yaml",
        "--sim",
        "examples/snapshots/single-pair.json",
        "--format",
        "markdown",
    ]);
    assert!(
        text(&o)
            .0
            .starts_with("<!-- hyraid-plan:pair -->\n### hyraid plan for `pair`")
    );
    let o = hyraid(&["observe", "--sim", "examples/snapshots/single-pair.json"]);
    let seen: hyraid::observe::Observed = serde_json::from_slice(&o.stdout).unwrap();
    let snap: hyraid::observe::Observed = serde_json::from_str(
        &std::fs::read_to_string("examples/snapshots/single-pair.json").unwrap(),
    )
    .unwrap();
    assert_eq!(seen, snap.normalized());
    let o = hyraid(&["schema"]);
    assert!(text(&o).0.contains("\"title\": \"hyraid configuration\""));
    let o = hyraid(&[
        "plan",
        "examples/single-pair.yaml",
        "--sim",
        "examples/does-not-exist.json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("does-not-exist.json"));
}

/// fio must be present where CI runs (`.ci/run` installs it); elsewhere the tests that need it
/// are compiled as ignored (build.rs), so the runner's count shows them.
fn have_fio() {
    assert!(
        Command::new("fio").arg("--version").output().is_ok(),
        "fio is not installed (it was when this test was built: rebuild, or install fio)"
    );
}

#[test]
#[cfg_attr(hyraid_no_fio, ignore = "fio is not installed")]
fn bench_measures_a_directory_saves_json_and_compares() {
    have_fio();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = dir.path().to_str().unwrap();
    let a = dir.path().join("a.json");
    let run = |out: &Path, label: &str| {
        hyraid(&[
            "bench",
            d,
            "--size",
            "16MiB",
            "--runtime",
            "1",
            "--ramp",
            "0",
            "--job",
            "rand-read-4k-qd1",
            "--job",
            "seq-write-1m",
            "--label",
            label,
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let o = run(&a, "first");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("(file, 16.00 MiB used, 1 s per job, fio-"),
        "{out}"
    );
    // Progress goes to stderr, a line per job when it is not a terminal.
    assert!(
        err.contains("[1/2] rand-read-4k-qd1 (bs 4k, queue depth 1)"),
        "{err}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    let jobs = report["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["rw"], "randread");
    assert!(jobs[0]["iops"].as_f64().unwrap() > 0.0);
    assert!(jobs[1]["bw_bytes"].as_f64().unwrap() > 0.0);
    // The test file is gone.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("hyraid-bench"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let b = dir.path().join("b.json");
    assert_eq!(run(&b, "second").status.code(), Some(0));
    let o = hyraid(&[
        "bench",
        "--compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let (out, _) = text(&o);
    assert!(
        out.contains("| first IOPS | MiB/s | second IOPS | MiB/s | × first |"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("| rand-read-4k-qd1") && l.ends_with("× |")),
        "{out}"
    );
}

#[test]
fn bench_refuses_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // Without fio: refused before any job is announced or any file is made.
    let o = Command::new(env!("CARGO_BIN_EXE_hyraid"))
        .args(["bench", d])
        .env("PATH", dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(err.contains("fio is not installed"), "{err}");
    assert!(!err.contains("[1/") && !out.contains("[1/"), "{out}{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let o = hyraid(&["bench", d, "--sim", "examples/snapshots/single-pair.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("does not run with --sim"));
    let o = hyraid(&["bench", d, "--job", "rand-read-8k"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("no job `rand-read-8k`; the jobs are seq-read-1m")
    );
    let o = hyraid(&[
        "bench",
        "--compare",
        "examples/single-pair.yaml",
        "examples/single-pair.yaml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("not a report of `hyraid bench -o`"));
    let f = dir.path().join("file");
    std::fs::write(&f, "precious").unwrap();
    let o = hyraid(&["bench", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("is a regular file; give a directory"),
        "{:?}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "precious");
}

fn plan_all(hosts: &Path, snaps: &Path) -> Output {
    Command::new("examples/ci/plan-all.sh")
        .args([hosts, snaps])
        .env("HYRAID", env!("CARGO_BIN_EXE_hyraid"))
        .output()
        .unwrap()
}

#[test]
fn ci_plan_all_comments_every_host_and_fails_on_errors() {
    let o = plan_all(Path::new("examples"), Path::new("examples/snapshots"));
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.starts_with("<!-- hyraid-plan-all -->\n## hyraid: 6 host file(s), 6 with changes\n"),
        "{out}"
    );
    for host in ["microserver8", "pair"] {
        assert!(
            out.contains(&format!("<!-- hyraid-plan:{host} -->")),
            "{host}"
        );
    }
    // An invalid file and a host without a snapshot fail the job, and the comment says why.
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::create_dir(&hosts).unwrap();
    std::fs::copy("examples/single-pair.yaml", hosts.join("new.yaml")).unwrap();
    std::fs::write(hosts.join("typo.yaml"), "version: 1\nmirors: {}\n").unwrap();
    let o = plan_all(&hosts, &dir.path().join("snapshots"));
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("2 host file(s), 0 with changes, errors below"),
        "{out}"
    );
    assert!(out.contains("/new.yaml`: no snapshot"), "{out}");
    assert!(out.contains("hyraid observe -o new.json"), "{out}");
    assert!(
        out.contains("/typo.yaml` is not valid") && out.contains("mirrors"),
        "{out}"
    );
}

#[test]
#[cfg_attr(hyraid_no_fio, ignore = "fio is not installed")]
fn bench_stops_on_ctrl_c_and_removes_its_file() {
    have_fio();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_hyraid"))
        .args([
            "bench",
            dir.path().to_str().unwrap(),
            "--size",
            "16MiB",
            "--runtime",
            "2",
            "--ramp",
            "0",
        ])
        .arg("--job=rand-read-4k-qd1")
        .arg("--job=rand-write-4k-qd1")
        .arg("--job=seq-read-1m")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted after 1 of 3 job(s)"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "the test file is removed: {left:?}");
}
