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
    // Every command the executor would run appears in the script, and the script runs nothing else.
    let (d, h) = example("microserver-gen8");
    let p = plan_for(&h, &d, Policy::default());
    let mut lines = 0;
    for s in &p.steps {
        for c in s.step.commands() {
            let line = render::command_line(&c);
            assert!(render::shell(&p).contains(&line));
            lines += 1;
        }
    }
    assert_eq!(
        lines,
        render::shell(&p)
            .lines()
            .filter(|l| !l.starts_with('#')
                && !l.is_empty()
                && !l.starts_with("set ")
                && !l.starts_with("export ")
                && !l.starts_with("exec "))
            .count()
    );
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
