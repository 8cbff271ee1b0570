//! A saved plan (`hyraid plan -o plan.json`) travels between a CI job, a pull request and a host,
//! and apply runs as root: nothing in it is trusted as written. It carries the configuration
//! file it was made from; apply validates that file exactly as `hyraid validate` does, checks
//! the plan was made on this host from this very observation, plans again from the file with
//! hyraid's own risk classes and the command line's policy, and runs the re-derived plan only
//! when the file says the same in every step, risk, reason, refusal and note. `hyraid show`
//! re-derives it the same way from the observation it carries ([`rederive`]): what either shows
//! is hyraid's own words, never the file's.
//!
//! The file's format (writing, reading) is `plan::planfile`; checking it is here.

use super::ApplyError;
use super::preview::review;
use crate::config::Desired;
use crate::host::Host;
use crate::observe::Observed;
use crate::plan::fingerprint::{changes, fingerprint};
use crate::plan::step::command_line;
use crate::plan::{Foreign, PLAN_FORMAT, Plan, PlannedStep, Policy, Refusal, Risk, plan};

/// Check a saved plan against a fresh observation and re-derive it. Returns the plan hyraid
/// makes now, which is the one to run and to show: equal to the file's in every step, risk,
/// reason, refusal, note and foreign object, so that nothing the file says is other than what
/// hyraid says.
pub fn check_saved(
    saved: &Plan,
    host: &dyn Host,
    obs: &Observed,
    policy: &Policy,
) -> Result<Plan, ApplyError> {
    let allow_destroy = policy.allow_destroy;
    check_format(saved)?;
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
    // Every word of the file is hyraid's for the observation it carries (which the basis has
    // just bound to this machine): its notes may tell progress that has moved on since, so they
    // are checked there, not against the machine now.
    rederive(saved)?;
    let desired = desired_of(saved)?;
    // What runs is hyraid's plan of the machine now, with the command line's policy: the same
    // steps, risks, reasons and refusals as the file's.
    let derived = plan(&desired, obs, policy.clone())?;
    let Some(diff) = first_difference(saved, &derived, Words::Steps) else {
        return Ok(derived);
    };
    if !allow_destroy {
        // The file was planned with --allow-destroy: say that, rather than "edited".
        let with = plan(
            &desired,
            obs,
            Policy {
                allow_destroy: true,
                ..policy.clone()
            },
        )?;
        if first_difference(saved, &with, Words::Steps).is_none() {
            let count = with
                .steps
                .iter()
                .filter(|s| s.risk == Risk::Destroys)
                .count();
            return Err(ApplyError::DestroyNotAllowed { count });
        }
    }
    Err(edited(saved, diff))
}

/// A saved plan as hyraid says it (`hyraid show`): planned again, without the machine, from the
/// configuration and the observation the file carries, and refused when the file says anything
/// else. What is shown is always the re-derived plan, never the file's own text.
pub fn rederive(saved: &Plan) -> Result<Plan, ApplyError> {
    check_format(saved)?;
    let desired = desired_of(saved)?;
    let Some(observed) = &saved.observed else {
        return Err(ApplyError::Edited(
            "the file carries no observation (`observed`) to plan again from".into(),
        ));
    };
    if saved.basis != *fingerprint(observed) {
        return Err(ApplyError::Edited(
            "its `observed` is not the observation its `basis` fingerprints".into(),
        ));
    }
    let derived = review(&desired, observed, saved.policy.clone())?;
    if saved.host != derived.host {
        return Err(edited(
            saved,
            format!(
                "the file says it was planned on `{}`; its observation is of `{}`",
                saved.host, derived.host
            ),
        ));
    }
    match first_difference(saved, &derived, Words::All) {
        None => Ok(derived),
        Some(diff) => Err(edited(saved, diff)),
    }
}

fn check_format(saved: &Plan) -> Result<(), ApplyError> {
    if saved.format != PLAN_FORMAT {
        return Err(ApplyError::Format {
            found: saved.format,
        });
    }
    Ok(())
}

/// An edited plan's error, saying when another hyraid made it (its words may differ).
fn edited(saved: &Plan, diff: String) -> ApplyError {
    let this = env!("CARGO_PKG_VERSION");
    ApplyError::Edited(if saved.hyraid_version != this {
        format!(
            "{diff}
  (the plan was made by hyraid {}, this is {this}: plan again with this one)",
            saved.hyraid_version
        )
    } else {
        diff
    })
}

/// The desired state a saved plan runs to: its configuration file, validated exactly as
/// `hyraid validate` validates it, which must be the `desired` the file shows.
pub fn desired_of(saved: &Plan) -> Result<Desired, ApplyError> {
    let Some(c) = &saved.config else {
        return Err(ApplyError::Edited(
            "the file carries no configuration (`config`) to validate and plan again from".into(),
        ));
    };
    let d = crate::config::load_str(&c.file, &c.text).map_err(|e| ApplyError::SavedConfig {
        file: c.file.clone(),
        errors: e.to_string(),
    })?;
    if d != saved.desired {
        return Err(ApplyError::Edited(format!(
            "its `desired` is not the state its configuration file ({}, carried in `config`) describes",
            c.file
        )));
    }
    Ok(d)
}

/// One step as a reviewer sees it: symbol, object, summary, risk, why and the exact commands.
fn describe(s: &PlannedStep) -> String {
    let mut cmds: Vec<String> = s.step.commands().iter().map(command_line).collect();
    // What the file's `display` shows, where it is not the step's own.
    if let Some(d) = &s.display
        && *d != crate::plan::planfile::display(s)
    {
        cmds.push(format!("(its `display` says: {d})"));
    }
    format!(
        "`{} {}: {}` [{}]\n      why: {}{}",
        s.step.symbol(),
        s.step.object(),
        s.step.summary(),
        s.risk.label(),
        s.reason,
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

/// What of two plans is compared: the steps and refusals (what runs, and whether anything
/// does), or every word besides (notes, objects left alone, whether steps are withheld).
#[derive(Clone, Copy, PartialEq)]
enum Words {
    Steps,
    All,
}

/// Where the file's plan and hyraid's own first part, in words; None when they are the same.
fn first_difference(saved: &Plan, derived: &Plan, words: Words) -> Option<String> {
    let n = saved.steps.len().max(derived.steps.len());
    for i in 0..n {
        let (a, b) = (saved.steps.get(i), derived.steps.get(i));
        let same = match (a, b) {
            (Some(a), Some(b)) => {
                a.step == b.step
                    && a.risk == b.risk
                    && a.reason == b.reason
                    && a.display
                        .as_ref()
                        .is_none_or(|d| *d == crate::plan::planfile::display(b))
            }
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
    if words == Words::Steps {
        return None;
    }
    if saved.notes != derived.notes {
        return Some(lists_differ("notes", &saved.notes, &derived.notes));
    }
    if saved.waiting != derived.waiting {
        return Some(lists_differ(
            "what is under way",
            &saved.waiting,
            &derived.waiting,
        ));
    }
    if saved.foreign != derived.foreign {
        let text = |f: &[Foreign]| -> Vec<String> {
            f.iter()
                .map(|f| format!("{}: {}", f.object, f.detail))
                .collect()
        };
        return Some(lists_differ(
            "objects left alone",
            &text(&saved.foreign),
            &text(&derived.foreign),
        ));
    }
    if saved.withheld != derived.withheld {
        return Some(format!(
            "the file says its steps are {}withheld; hyraid's are {}",
            if saved.withheld { "" } else { "not " },
            if derived.withheld { "withheld" } else { "not" }
        ));
    }
    None
}

/// The first entry where two lists of hyraid's words part.
fn lists_differ(what: &str, file: &[String], hyraid: &[String]) -> String {
    let i = file
        .iter()
        .zip(hyraid)
        .position(|(a, b)| a != b)
        .unwrap_or(file.len().min(hyraid.len()));
    let at = |l: &[String]| {
        l.get(i)
            .map(|x| format!("`{x}`"))
            .unwrap_or_else(|| "nothing".into())
    };
    format!(
        "the {what} differ at {}: the file says {}; hyraid says {}",
        i + 1,
        at(file),
        at(hyraid)
    )
}
