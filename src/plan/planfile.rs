//! The saved-plan file (`hyraid plan -o plan.json`), format [`FORMAT`]: writing it ([`json`], for
//! `plan -o`, `--format json` and `show`) and reading it back ([`read`], [`parse`]). What apply
//! does with a saved plan (re-derive it and compare, never trust it) is `apply::saved`.

use super::Plan;
use super::step::command_line;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The saved-plan format this hyraid writes and applies; the planner stamps it into every plan.
/// Format 2 carries the configuration file's text ([`PlanConfig`]); format 1 did not.
pub const FORMAT: u32 = 2;

/// Why a plan of another format is refused.
pub fn wrong_format(found: u32) -> String {
    let why = if found < FORMAT {
        " (it carries no configuration file to validate and plan again from)"
    } else {
        ""
    };
    format!(
        "the plan file is format {found}; this hyraid applies format {FORMAT}{why}: make the plan again with this hyraid (`hyraid plan FILE -o PLAN`)"
    )
}

/// The configuration file a saved plan was made from: its name (for positions in errors) and
/// its text, exactly as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanConfig {
    pub file: String,
    pub text: String,
}

/// Whether `text` is a saved plan (`plan -o`, `plan --format json`) rather than a
/// configuration, decided by its content the same way in every verb: a JSON object with the
/// plan's own keys (`format`, `basis`, `steps`), which no configuration has (its top-level keys
/// are `version`, `host`, `disks`, …, and a JSON configuration is read as the YAML it is).
pub fn looks_like_plan(text: &[u8]) -> bool {
    if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return false;
    }
    #[derive(Deserialize)]
    struct Keys {
        format: Option<serde::de::IgnoredAny>,
        basis: Option<serde::de::IgnoredAny>,
        steps: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Keys>(text)
        .is_ok_and(|k| k.format.is_some() && k.basis.is_some() && k.steps.is_some())
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
        Some(f) if f == FORMAT as u64 => {}
        Some(f) => return Err(wrong_format(f as u32)),
        None => return Err("not a hyraid plan: it has no `format`".into()),
    }
    serde_json::from_value(v).map_err(|e| format!("not a hyraid plan: {e}"))
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
            j["display"] = display(s);
        }
    }
    v
}

/// What the saved plan shows of a step for tools: its symbol, object, summary and commands.
pub fn display(s: &super::PlannedStep) -> serde_json::Value {
    serde_json::json!({
        "symbol": s.step.symbol().to_string(),
        "object": s.step.object().to_string(),
        "summary": s.step.summary(),
        "commands": s.step.commands().iter().map(command_line).collect::<Vec<_>>(),
    })
}
