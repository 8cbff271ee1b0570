//! Saved plans of format 1 (tests/fixtures/saved-plans/v1/, written by `hyraid plan -o` before
//! plans carried their configuration file) are refused by show and apply with the reason and
//! what to do: nothing runs, the machine is unchanged. A plan runs only from a file hyraid can
//! validate as `hyraid validate` does.

use crate::common;
use common::{hyraid, text};

fn fixture(name: &str) -> String {
    format!("tests/fixtures/saved-plans/v1/{name}.json")
}

/// The examples a format-1 plan was saved of (those that existed before format 2).
const EXAMPLES: &[&str] = &[
    "microserver-gen8",
    "microserver-partitioned",
    "nvme-plus-two-hdd",
    "single-pair",
];

#[test]
fn every_fixture_is_format_1_with_steps() {
    for name in EXAMPLES {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
        assert_eq!(v["format"], 1, "{name}");
        assert!(v.get("config").is_none(), "{name}");
        assert!(
            !v["steps"].as_array().unwrap().is_empty(),
            "{name}: no steps"
        );
    }
}

#[test]
fn v1_plans_are_refused_with_the_reason_by_show_and_apply() {
    for name in EXAMPLES {
        let o = hyraid(&["show", &fixture(name)]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {out}");
        assert!(out.is_empty(), "{name}: {out}");
        assert!(
            err.contains("the plan file is format 1; this hyraid applies format 2")
                && err.contains("carries no configuration file")
                && err.contains("make the plan again"),
            "{name}: {err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("machine.json");
        std::fs::copy(format!("examples/snapshots/{name}.json"), &snap).unwrap();
        let before = std::fs::read(&snap).unwrap();
        let journal = dir.path().join("journal.jsonl");
        let o = hyraid(&[
            "apply",
            &fixture(name),
            "--sim",
            snap.to_str().unwrap(),
            "--yes",
            "--sim-write",
            "--journal",
            journal.to_str().unwrap(),
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {out}");
        assert!(err.contains("the plan file is format 1"), "{name}: {err}");
        assert!(!journal.exists(), "{name}: something ran");
        assert_eq!(std::fs::read(&snap).unwrap(), before, "{name}");
    }
}
