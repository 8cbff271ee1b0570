//! The plans of the examples on their blank machines, as text, shell and Markdown.

mod common;
use common::*;
use hyraid::plan::Policy;
use hyraid::render;

#[test]
fn example_plans() {
    for name in EXAMPLES {
        let (d, h) = example(name);
        let p = plan_for(&h, &d, Policy::default());
        insta::assert_snapshot!(format!("{name}.text"), render::text(&p, false));
        insta::assert_snapshot!(format!("{name}.shell"), render::shell(&p));
        insta::assert_snapshot!(format!("{name}.markdown"), render::markdown(&p));
    }
}

#[test]
fn shell_script_is_what_apply_runs() {
    // Every command the executor would run appears in the script, in order, and once they are
    // taken out only comments and the preamble remain: the script runs nothing else.
    let (d, h) = example("microserver-gen8");
    let p = plan_for(&h, &d, Policy::default());
    let mut rest = render::shell(&p);
    let mut n = 0;
    for s in &p.steps {
        for c in s.step.commands() {
            let line = render::command_line(&c);
            let at = rest
                .find(&line)
                .unwrap_or_else(|| panic!("missing or out of order: {line}"));
            rest = rest[at + line.len()..].to_string();
            n += 1;
        }
    }
    assert!(n >= 16);
    let mut whole = render::shell(&p);
    for s in &p.steps {
        for c in s.step.commands() {
            whole = whole.replacen(&render::command_line(&c), "", 1);
        }
    }
    for l in whole.lines() {
        let l = l.trim();
        assert!(
            l.is_empty()
                || l.starts_with('#')
                || [
                    "set -eu",
                    "export LC_ALL=C LVM_SUPPRESS_FD_WARNINGS=1",
                    "exec </dev/null"
                ]
                .contains(&l),
            "the script would also run: {l}"
        );
    }
}

#[test]
fn json_plan_round_trips() {
    let (d, h) = example("nvme-plus-two-hdd");
    let p = plan_for(&h, &d, Policy::default());
    let back: hyraid::plan::Plan = serde_json::from_str(&render::json(&p)).unwrap();
    assert_eq!(back, p);
    let v: serde_json::Value = serde_json::from_str(&render::json(&p)).unwrap();
    assert_eq!(v["format"], 1);
    assert_eq!(v["steps"][0]["op"], "create_array");
    assert_eq!(v["steps"][0]["risk"], "data-at-risk");
}
