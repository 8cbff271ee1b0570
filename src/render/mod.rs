//! Plan outputs: text (terminal), Markdown (PR comments), JSON (saved plans) and shell (the exact
//! commands apply runs, from the same `Step::commands()`).

mod markdown;
mod shell;
mod text;

pub use crate::plan::step::command_line;
pub use markdown::markdown;
pub use shell::shell;
pub use text::text;

use crate::plan::Plan;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Shell,
}

pub fn render(plan: &Plan, format: Format, color: bool) -> String {
    match format {
        Format::Text => text(plan, color),
        Format::Markdown => markdown(plan),
        Format::Json => json(plan),
        Format::Shell => shell(plan),
    }
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
                "object": s.step.object().to_string(),
                "summary": s.step.summary(),
                "commands": s.step.commands().iter().map(command_line).collect::<Vec<_>>(),
            });
        }
    }
    v
}

/// `Plan: 3 to add, 2 to change, 0 to destroy/remove.` plus refusals.
pub fn summary_line(plan: &Plan) -> String {
    let (a, c, r) = plan.counts();
    let destroys = plan
        .steps
        .iter()
        .filter(|s| s.risk == crate::plan::Risk::Destroys)
        .count();
    let mut s = format!("Plan: {a} to add, {c} to change, {r} to remove");
    if destroys > 0 {
        s.push_str(&format!(" ({destroys} destroying)"));
    }
    s.push('.');
    if !plan.refused.is_empty() {
        s.push_str(&format!(
            " {} refused: apply runs nothing until fixed.",
            plan.refused.len()
        ));
    }
    s
}
