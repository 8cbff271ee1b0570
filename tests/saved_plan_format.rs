//! Saved plans of format 1, written by `hyraid plan -o` before the code was reorganised
//! (tests/fixtures/saved-plans/v1/), still load, re-derive equal and apply on the machine they
//! were planned for, and the machine then converges.

mod common;
use common::{EXAMPLES, apply_saved, changes, example, hyraid, plan_for, text};
use hyraid::plan::{Command, Policy, planfile};

fn fixture(name: &str) -> String {
    format!("tests/fixtures/saved-plans/v1/{name}.json")
}

#[test]
fn every_fixture_is_format_1_with_steps() {
    for name in EXAMPLES {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
        assert_eq!(v["format"], 1, "{name}");
        assert!(
            !v["steps"].as_array().unwrap().is_empty(),
            "{name}: no steps"
        );
    }
}

#[test]
fn v1_plans_load_in_show() {
    for name in EXAMPLES {
        let o = hyraid(&["show", &fixture(name)]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
        assert!(
            out.contains("create_array") || out.contains("mdadm --create"),
            "{name}: {out}"
        );
    }
}

#[test]
fn v1_plans_re_derive_equal_and_apply_then_converge() {
    for name in EXAMPLES {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("machine.json");
        std::fs::copy(format!("examples/snapshots/{name}.json"), &snap).unwrap();
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
        assert_eq!(o.status.code(), Some(0), "{name}: {out}\n{err}");
        assert!(
            out.contains("the machine now matches the file"),
            "{name}: {out}"
        );
        assert!(journal.exists(), "{name}: nothing ran");
        let o = hyraid(&[
            "plan",
            &format!("examples/{name}.yaml"),
            "--sim",
            snap.to_str().unwrap(),
            "--detailed-exitcode",
        ]);
        assert_eq!(o.status.code(), Some(0), "{name}: {:?}", text(&o));
    }
}

#[test]
fn v1_plans_run_through_the_apply_verb_exactly_as_planned() {
    for name in EXAMPLES {
        let saved = planfile::read(std::path::Path::new(&fixture(name))).unwrap();
        let (d, h) = example(name);
        let expected: Vec<String> = saved
            .steps
            .iter()
            .flat_map(|s| s.step.commands())
            .filter_map(|c| match c {
                Command::Run { argv, .. } => Some(argv.join(" ")),
                _ => None,
            })
            .collect();
        let out = apply_saved(&h, saved.clone(), Policy::default()).unwrap();
        assert_eq!(
            out.plan.steps, saved.steps,
            "{name}: the re-derived plan differs"
        );
        let applied = out.applied.expect("steps ran");
        assert_eq!(applied.steps, saved.steps.len(), "{name}");
        assert!(!expected.is_empty(), "{name}: no commands");
        // Every program the file lists ran, with its exact arguments, in the file's order.
        let ran = changes(&h);
        let mut at = 0;
        for c in &expected {
            let pos = ran[at..].iter().position(|r| r == c);
            assert!(
                pos.is_some(),
                "{name}: `{c}` did not run (after {at} commands): {ran:?}"
            );
            at += pos.unwrap() + 1;
        }
        assert!(
            plan_for(&h, &d, Policy::default()).is_empty(),
            "{name}: not converged"
        );
    }
}
