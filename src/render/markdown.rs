use super::shell::command_line;
use super::summary_line;
use crate::plan::persist::unified_diff;
use crate::plan::{Plan, Risk, Step};

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// For a pull-request comment: summary, risky steps first in a table, commands folded.
pub fn markdown(plan: &Plan) -> String {
    let mut o = format!(
        "### hyraid plan for `{}`\n\n**{}**\n\n",
        plan.host,
        summary_line(plan)
    );
    if plan.steps.is_empty() && plan.refused.is_empty() {
        o.push_str("No changes: the machine matches the file.\n");
    }
    let risky = plan.steps.iter().filter(|s| s.risk != Risk::Safe).count();
    if risky > 0 {
        o.push_str(&format!(
            "> [!WARNING]\n> {risky} step(s) are not `safe`; review them first.\n\n"
        ));
    }
    if !plan.steps.is_empty() {
        o.push_str("| # | | Object | Change | Risk | Why |\n|---|---|---|---|---|---|\n");
        let mut order: Vec<usize> = (0..plan.steps.len()).collect();
        order.sort_by_key(|i| (std::cmp::Reverse(plan.steps[*i].risk), *i));
        for i in order {
            let s = &plan.steps[i];
            let risk = if s.risk == Risk::Safe {
                "safe".to_string()
            } else {
                format!("**{}**", s.risk.label())
            };
            o.push_str(&format!(
                "| {} | `{}` | {} | {} | {} | {} |\n",
                i + 1,
                s.step.symbol(),
                cell(&s.step.object()),
                cell(&s.step.summary()),
                risk,
                cell(&s.reason)
            ));
        }
        o.push_str(
            "\n<details><summary>Commands, in the order apply runs them</summary>\n\n```sh\n",
        );
        for (i, s) in plan.steps.iter().enumerate() {
            o.push_str(&format!("# {}. {}\n", i + 1, s.step.object()));
            for c in s.step.commands() {
                o.push_str(&command_line(&c));
                o.push('\n');
            }
        }
        o.push_str("```\n\n</details>\n");
        for s in &plan.steps {
            if let Step::WriteFile {
                path, old, content, ..
            } = &s.step
            {
                o.push_str(&format!("\n<details><summary>Change to <code>{path}</code></summary>\n\n```diff\n{}```\n\n</details>\n", unified_diff(path, old.as_deref(), content)));
            }
        }
    }
    if !plan.refused.is_empty() {
        o.push_str("\n#### Refused\n\n");
        for r in &plan.refused {
            o.push_str(&format!(
                "- **{}**: {} — *fix:* {}\n",
                r.object, r.reason, r.fix
            ));
        }
    }
    if !plan.notes.is_empty() {
        o.push_str("\n#### Notes\n\n");
        for n in &plan.notes {
            o.push_str(&format!("- {n}\n"));
        }
    }
    if !plan.foreign.is_empty() {
        o.push_str("\n#### Not in the file (left alone)\n\n");
        for f in &plan.foreign {
            o.push_str(&format!("- {}: {}\n", f.object, f.detail));
        }
    }
    o
}
