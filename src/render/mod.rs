//! Plan outputs: text (terminal), Markdown (PR comments), JSON (the saved-plan format, written by
//! `plan::planfile::json`) and shell (the exact commands apply runs, from the same `Step::commands()`).

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
        Format::Json => crate::plan::planfile::json(plan),
        Format::Shell => shell(plan),
    }
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
