//! A saved plan (`hyraid plan -o plan.json`) travels between a CI job, a pull request and a host,
//! and apply runs as root: its steps are never trusted as written. Apply reads the file, checks
//! it was made on this host from this very observation, then plans again from the desired state
//! embedded in it, with hyraid's own risk classes and the command line's policy, and runs the
//! re-derived plan only when it is the same, step by step, as the file.
//!
//! The saved-plan format lives here: writing it ([`json`], for `plan -o` and `--format json`),
//! reading it ([`read`], [`parse`]) and checking it against the machine ([`check_saved`]). Its
//! number, [`FORMAT`], is stamped into every plan by the planner.

use super::ApplyError;
use crate::host::Host;
use crate::observe::Observed;
use crate::plan::fingerprint::{changes, fingerprint};
use crate::plan::{PLAN_FORMAT, Plan, PlannedStep, Policy, Refusal, Risk, plan};
use crate::render::command_line;
use std::path::Path;

/// The saved-plan format this hyraid writes and applies.
pub use crate::plan::PLAN_FORMAT as FORMAT;

/// Whether `apply FILE` reads FILE as a saved plan (`plan -o`) rather than a configuration.
pub fn is_saved_plan(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
}

/// Read and [`parse`] a saved plan file; the message names the file.
pub fn read(path: &Path) -> Result<Plan, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parse a saved plan. The format is checked before anything else is read, so a plan of another
/// format is refused with that reason (by `apply` and `show` alike), not with a parse error.
pub fn parse(text: &str) -> Result<Plan, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a hyraid plan: {e}"))?;
    match v.get("format").and_then(|f| f.as_u64()) {
        Some(f) if f == PLAN_FORMAT as u64 => {}
        Some(f) => return Err(ApplyError::Format { found: f as u32 }.to_string()),
        None => return Err("not a hyraid plan: it has no `format`".into()),
    }
    serde_json::from_value(v).map_err(|e| format!("not a hyraid plan: {e}"))
}

/// Check a saved plan against a fresh observation and re-derive it. Returns the plan hyraid
/// makes now, which is the one to run: equal to the file's in every step, risk and refusal.
pub fn check_saved(
    saved: &Plan,
    host: &dyn Host,
    obs: &Observed,
    allow_destroy: bool,
) -> Result<Plan, ApplyError> {
    if saved.format != PLAN_FORMAT {
        return Err(ApplyError::Format {
            found: saved.format,
        });
    }
    let actual = host.hostname();
    if saved.host != actual {
        return Err(ApplyError::WrongHost {
            planned: saved.host.clone(),
            actual,
        });
    }
    let now = fingerprint(obs);
    if now != saved.basis {
        let changed = match &saved.observed {
            Some(then) if fingerprint(then) == saved.basis => changes(then, obs),
            _ => vec![],
        };
        return Err(ApplyError::Stale {
            planned: saved.basis.clone(),
            now,
            changes: changed,
        });
    }
    let derived = plan(&saved.desired, obs, Policy { allow_destroy })?;
    let Some(diff) = first_difference(saved, &derived) else {
        return Ok(derived);
    };
    if !allow_destroy {
        // The file was planned with --allow-destroy: say that, rather than "edited".
        let with = plan(
            &saved.desired,
            obs,
            Policy {
                allow_destroy: true,
            },
        )?;
        if first_difference(saved, &with).is_none() {
            let count = with
                .steps
                .iter()
                .filter(|s| s.risk == Risk::Destroys)
                .count();
            return Err(ApplyError::DestroyNotAllowed { count });
        }
    }
    Err(ApplyError::Edited(diff))
}

/// One step as a reviewer sees it: symbol, object, summary, risk and the exact commands.
fn describe(s: &PlannedStep) -> String {
    let cmds: Vec<String> = s.step.commands().iter().map(command_line).collect();
    format!(
        "`{} {}: {}` [{}]{}",
        s.step.symbol(),
        s.step.object(),
        s.step.summary(),
        s.risk.label(),
        if cmds.is_empty() {
            String::new()
        } else {
            format!("\n      $ {}", cmds.join("\n      $ "))
        }
    )
}

fn describe_refusal(r: &Refusal) -> String {
    format!("{}: {}", r.object, r.reason)
}

/// Where the file's plan and hyraid's own first part, in words; None when they are the same.
fn first_difference(saved: &Plan, derived: &Plan) -> Option<String> {
    let n = saved.steps.len().max(derived.steps.len());
    for i in 0..n {
        let (a, b) = (saved.steps.get(i), derived.steps.get(i));
        let same = match (a, b) {
            (Some(a), Some(b)) => a.step == b.step && a.risk == b.risk,
            _ => false,
        };
        if same {
            continue;
        }
        let index = i + 1;
        return Some(match (a, b) {
            (Some(a), Some(b)) => format!(
                "step {index} in the file is\n    {}\n  hyraid plans\n    {}",
                describe(a),
                describe(b)
            ),
            (Some(a), None) => format!(
                "step {index} in the file is\n    {}\n  hyraid plans no step {index} ({} step(s) in all)",
                describe(a),
                derived.steps.len()
            ),
            (None, Some(b)) => format!(
                "the file ends after step {}; hyraid plans step {index}\n    {}",
                saved.steps.len(),
                describe(b)
            ),
            (None, None) => unreachable!("i < max(len)"),
        });
    }
    if saved.refused != derived.refused {
        let list = |p: &Plan| {
            if p.refused.is_empty() {
                "none".to_string()
            } else {
                p.refused
                    .iter()
                    .map(describe_refusal)
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        };
        return Some(format!(
            "the refusals differ: the file lists {}; hyraid refuses {}",
            list(saved),
            list(derived)
        ));
    }
    None
}

/// The plan as JSON: what `apply PLAN.json` reads back, plus, per step, a `display` object for
/// tools (Ansible, CI bots): its symbol, object, one-line summary and exact command lines.
/// `display` is derived; apply ignores it.
pub fn json(plan: &Plan) -> String {
    let mut s = serde_json::to_string_pretty(&json_value(plan)).expect("plan serializes");
    s.push('\n');
    s
}

/// [`json`] as a value, for callers that add to it (`plan --format json` adds `objects`).
pub fn json_value(plan: &Plan) -> serde_json::Value {
    let mut v = serde_json::to_value(plan).expect("plan serializes");
    if let Some(steps) = v["steps"].as_array_mut() {
        for (j, s) in steps.iter_mut().zip(&plan.steps) {
            j["display"] = serde_json::json!({
                "symbol": s.step.symbol().to_string(),
                "object": s.step.object(),
                "summary": s.step.summary(),
                "commands": s.step.commands().iter().map(command_line).collect::<Vec<_>>(),
            });
        }
    }
    v
}
