//! A saved plan (`hyraid plan -o plan.json`) travels between a CI job, a pull request and a host,
//! and apply runs as root: its steps are never trusted as written. Apply reads the file, checks
//! it was made on this host from this very observation, then plans again from the desired state
//! embedded in it, with hyraid's own risk classes and the command line's policy, and runs the
//! re-derived plan only when it is the same, step by step, as the file.
//!
//! The file's format (writing, reading) is `plan::planfile`; checking it against the machine is
//! here ([`check_saved`]).

use super::ApplyError;
use crate::host::Host;
use crate::observe::Observed;
use crate::plan::fingerprint::{changes, fingerprint};
use crate::plan::step::command_line;
use crate::plan::{PLAN_FORMAT, Plan, PlannedStep, Policy, Refusal, Risk, plan};

/// Check a saved plan against a fresh observation and re-derive it. Returns the plan hyraid
/// makes now, which is the one to run: equal to the file's in every step, risk and refusal.
pub fn check_saved(
    saved: &Plan,
    host: &dyn Host,
    obs: &Observed,
    policy: &Policy,
) -> Result<Plan, ApplyError> {
    let allow_destroy = policy.allow_destroy;
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
    if saved.basis != *now {
        let changed = match &saved.observed {
            Some(then) if saved.basis == *fingerprint(then) => changes(then, obs),
            _ => vec![],
        };
        return Err(ApplyError::Stale {
            planned: saved.basis.to_string(),
            now,
            changes: changed,
        });
    }
    let derived = plan(&saved.desired, obs, policy.clone())?;
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
                ..policy.clone()
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
