//! A saved plan of the microserver example, to apply, edit and show in tests.

use super::{hyraid, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

pub struct Saved {
    pub _dir: tempfile::TempDir,
    pub snap: PathBuf,
    pub plan: PathBuf,
    pub journal: PathBuf,
}

/// The microserver example planned (with `extra` flags) and saved with `plan -o`.
pub fn saved(extra: &[&str]) -> Saved {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("machine.json");
    std::fs::copy("examples/snapshots/microserver-gen8.json", &snap).unwrap();
    let plan = dir.path().join("plan.json");
    let mut args = vec![
        "plan",
        "examples/microserver-gen8.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "-o",
        plan.to_str().unwrap(),
    ];
    args.extend(extra);
    let o = hyraid(&args);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let journal = dir.path().join("journal.jsonl");
    Saved {
        _dir: dir,
        snap,
        plan,
        journal,
    }
}

pub fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

impl Saved {
    pub fn apply(&self, extra: &[&str]) -> Output {
        let mut args = vec![
            "apply",
            self.plan.to_str().unwrap(),
            "--sim",
            self.snap.to_str().unwrap(),
            "--yes",
            "--sim-write",
            "--journal",
            self.journal.to_str().unwrap(),
        ];
        args.extend(extra);
        hyraid(&args)
    }

    pub fn edit(&self, f: impl FnOnce(&mut Value)) {
        let mut v = read(&self.plan);
        f(&mut v);
        std::fs::write(&self.plan, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    /// Apply the edited plan: refused, exit 1, nothing run, the machine unchanged.
    pub fn refused(&self, extra: &[&str]) -> String {
        let before = std::fs::read(&self.snap).unwrap();
        let o = self.apply(extra);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
        assert_eq!(
            std::fs::read(&self.snap).unwrap(),
            before,
            "the machine changed"
        );
        assert!(!self.journal.exists(), "something ran: {out}");
        err
    }
}
