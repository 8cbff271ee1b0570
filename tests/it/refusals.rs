//! A difference hyraid will not make is a refusal, never "no changes": shown first in every
//! format, exit 1 from plan (with or without --detailed-exitcode), and apply runs nothing.

use crate::common;
use common::{hyraid, text};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The microserver built from its example, and a file that shrinks its LV (refused) and
/// re-chunks data1's bitmap (a step hyraid would make).
fn built_with_refusal() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("machine.json");
    std::fs::copy("examples/snapshots/microserver-gen8.json", &snap).unwrap();
    let o = hyraid(&[
        "apply",
        "examples/microserver-gen8.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--yes",
        "--sim-write",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let yaml = std::fs::read_to_string("examples/microserver-gen8.yaml")
        .unwrap()
        .replace("size: 800GiB", "size: 100GiB")
        .replace(
            "  data1:\n    members: [ssd1, hdd1]",
            "  data1:\n    members: [ssd1, hdd1]\n    bitmap: { chunk: 128MiB }",
        );
    let file = dir.path().join("hyraid.yaml");
    std::fs::write(&file, yaml).unwrap();
    (dir, snap, file)
}

fn plan(file: &Path, snap: &Path, extra: &[&str]) -> Output {
    let mut a = vec![
        "plan",
        file.to_str().unwrap(),
        "--sim",
        snap.to_str().unwrap(),
    ];
    a.extend(extra);
    hyraid(&a)
}

#[test]
fn a_refusal_leads_every_format_and_plan_exits_1() {
    let (_dir, snap, file) = built_with_refusal();
    for flags in [&[][..], &["--detailed-exitcode"][..]] {
        let o = plan(&file, &snap, flags);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{flags:?}: {out}\n{err}");
        assert!(!out.contains("No changes"), "{out}");
        let refusal = out
            .find("never shrinks an LV")
            .expect("the refusal is shown");
        let step = out.find("bitmap").expect("the bitmap step is shown");
        assert!(refusal < step, "the refusal comes first:\n{out}");
        assert!(
            out.starts_with("hyraid refuses 1 change(s) the file asks for on microserver8"),
            "{out}"
        );
    }
    let o = plan(&file, &snap, &["--format", "markdown"]);
    let out = text(&o).0;
    assert_eq!(o.status.code(), Some(1));
    let caution = out.find("[!CAUTION]").unwrap();
    assert!(caution < out.find("#### All steps").unwrap(), "{out}");
    assert!(out.contains("runs nothing until each is fixed"), "{out}");
    // The shell script does as apply does: it stops before the first command.
    let o = plan(&file, &snap, &["--format", "shell"]);
    let out = text(&o).0;
    let exit = out.find("\nexit 1\n").expect("the script exits first");
    assert!(
        out.find("mdadm").is_none_or(|m| m > exit),
        "no command before the exit:\n{out}"
    );
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), &out).unwrap();
    let sh = Command::new("sh").arg(script.path()).output().unwrap();
    assert_eq!(sh.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&sh.stderr).contains("1 change(s) refused"));
    // JSON: the refusal is there, and the saved plan records it.
    let o = plan(&file, &snap, &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["refused"][0]["object"], "lv vg0/nextcloud");
}

#[test]
fn apply_with_a_refusal_runs_nothing_and_says_why() {
    let (dir, snap, file) = built_with_refusal();
    let before = std::fs::read(&snap).unwrap();
    let journal = dir.path().join("journal.jsonl");
    for extra in [&[][..], &["--dry-run"][..]] {
        let mut a = vec![
            "apply",
            file.to_str().unwrap(),
            "--sim",
            snap.to_str().unwrap(),
            "--yes",
            "--sim-write",
            "--journal",
            journal.to_str().unwrap(),
        ];
        a.extend(extra);
        let o = hyraid(&a);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
        assert!(!out.contains("matches the file"), "{out}");
        assert!(
            err.contains(
                "1 change(s) the file asks for are refused (see above), so nothing was run"
            ),
            "{err}"
        );
        assert_eq!(std::fs::read(&snap).unwrap(), before);
        assert!(!journal.exists());
    }
    // A saved plan with the refusal is refused the same way.
    let saved = dir.path().join("plan.json");
    plan(&file, &snap, &["-o", saved.to_str().unwrap()]);
    let o = hyraid(&[
        "apply",
        saved.to_str().unwrap(),
        "--sim",
        snap.to_str().unwrap(),
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("refused"), "{:?}", text(&o));
}

#[test]
fn status_with_a_refusal_is_not_healthy() {
    let (_dir, snap, file) = built_with_refusal();
    let o = hyraid(&[
        "status",
        file.to_str().unwrap(),
        "--sim",
        snap.to_str().unwrap(),
    ]);
    let (out, _) = text(&o);
    assert_ne!(o.status.code(), Some(0), "{out}");
    assert!(!out.contains("Healthy"), "{out}");
    assert!(out.contains("never shrinks an LV"), "{out}");
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    for args in [
        &["plan", "--no-such-flag", "examples/single-pair.yaml"][..],
        &["plan"][..],
        &["status", "--format", "yaml"][..],
        &["frobnicate"][..],
    ] {
        let o = hyraid(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {:?}", text(&o));
        assert!(text(&o).1.starts_with("error:"), "{args:?}");
    }
    for args in [&["--help"][..], &["plan", "--help"][..], &["--version"][..]] {
        let o = hyraid(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
    }
}
