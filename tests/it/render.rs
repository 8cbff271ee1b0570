//! The plans of the examples on their blank machines, as text, shell and Markdown.

use crate::common;
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
    let back: hyraid::plan::Plan = serde_json::from_str(&hyraid::plan::planfile::json(&p)).unwrap();
    assert_eq!(back, p);
    let v: serde_json::Value = serde_json::from_str(&hyraid::plan::planfile::json(&p)).unwrap();
    assert_eq!(v["format"], hyraid::plan::PLAN_FORMAT);
    assert_eq!(v["steps"][0]["op"], "create_array");
    assert_eq!(v["steps"][0]["risk"], "data-at-risk");
}

#[test]
fn markdown_is_a_pr_comment_with_refusals_and_risky_steps_first() {
    let (d, h) = example("microserver-gen8");
    let mut p = plan_for(&h, &d, Policy::default());
    p.refused.push(hyraid::plan::Refusal {
        object: "mirror data9".into(),
        reason: "disk hdd9 carries ext4".into(),
        fix: "wipe it, or pass --allow-destroy".into(),
    });
    let md = render::markdown(&p);
    let at = |needle: &str| {
        md.find(needle)
            .unwrap_or_else(|| panic!("missing {needle:?} in\n{md}"))
    };
    // A marker first, so a CI job can update its comment; then refusals, the risky steps on
    // their own, every step in apply order, file diffs, and the commands folded.
    assert!(md.starts_with("<!-- hyraid-plan:microserver8 -->\n"));
    assert!(at("> [!CAUTION]") < at("#### Review first"));
    assert!(
        at("> - **mirror data9**: disk hdd9 carries ext4 — *fix:* wipe it")
            < at("#### Review first")
    );
    let review = &md[at("#### Review first")..at("#### All steps")];
    assert_eq!(
        review.matches("\n| ").count(),
        2,
        "header and one risky step:\n{review}"
    );
    assert!(review.contains("| 22 | `+` | lv vg0/nextcloud | attach writecache"));
    assert!(review.contains("**data-at-risk**"));
    let all = &md[at("#### All steps")..];
    assert_eq!(all.matches("\n| ").count(), 1 + p.steps.len());
    assert!(
        at("<summary>Change to <code>/etc/mdadm/mdadm.conf</code></summary>")
            < at("<summary>Commands, in the order apply runs them</summary>")
    );
    assert!(md.contains("```diff\n--- /etc/mdadm/mdadm.conf\n+++ /etc/mdadm/mdadm.conf\n"));
    // A machine that matches says so.
    let done = hyraid::plan::Plan {
        steps: vec![],
        refused: vec![],
        ..p
    };
    assert!(render::markdown(&done).contains("No changes: the machine matches the file."));
}
