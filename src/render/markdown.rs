use super::summary_line;
use crate::plan::persist::unified_diff;
use crate::plan::step::{WriteFile, command_line};
use crate::plan::{Plan, Risk, Step};

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The marker a CI job can search for to update its earlier comment instead of adding one.
pub fn comment_marker(host: &str) -> String {
    format!("<!-- hyraid-plan:{host} -->")
}

fn step_row(i: usize, s: &crate::plan::PlannedStep) -> String {
    let risk = if s.risk == Risk::Safe {
        "safe".to_string()
    } else {
        format!("**{}**", s.risk.label())
    };
    format!(
        "| {} | `{}` | {} | {} | {} | {} |\n",
        i + 1,
        s.step.symbol(),
        cell(&s.step.object().to_string()),
        cell(&s.step.summary()),
        risk,
        cell(&s.reason)
    )
}

const TABLE_HEAD: &str = "| # | | Object | Change | Risk | Why |\n|---|---|---|---|---|---|\n";

/// For a pull-request comment: the summary; what hyraid refuses; the steps that are not safe,
/// first and on their own; every step in the order apply runs them; the change to each managed
/// file as a diff; the exact commands folded away.
pub fn markdown(plan: &Plan) -> String {
    let mut o = format!(
        "{}\n### hyraid plan for `{}`\n\n**{}**\n\n",
        comment_marker(&plan.host),
        plan.host,
        summary_line(plan)
    );
    if plan.matches() {
        o.push_str("No changes: the machine matches the file.\n");
    } else if plan.steps.is_empty() && plan.refused.is_empty() {
        o.push_str("No changes to make, but the machine is not yet as the file says:\n\n");
        for w in &plan.waiting {
            o.push_str(&format!("- {w}\n"));
        }
    }
    if !plan.refused.is_empty() {
        o.push_str(&format!(
            "> [!CAUTION]\n> hyraid refuses {} change(s) the file asks for; `hyraid apply` runs nothing until each is fixed:\n>\n",
            plan.refused.len()
        ));
        for r in &plan.refused {
            o.push_str(&format!(
                "> - **{}**: {} — *fix:* {}\n",
                r.object, r.reason, r.fix
            ));
        }
        o.push('\n');
    }
    let risky: Vec<usize> = (0..plan.steps.len())
        .filter(|i| plan.steps[*i].risk != Risk::Safe)
        .collect();
    if !risky.is_empty() {
        o.push_str(&format!(
            "> [!WARNING]\n> {} step(s) are not `safe`; review them first.\n\n#### Review first\n\n{TABLE_HEAD}",
            risky.len()
        ));
        let mut order = risky.clone();
        order.sort_by_key(|i| (std::cmp::Reverse(plan.steps[*i].risk), *i));
        for i in order {
            o.push_str(&step_row(i, &plan.steps[i]));
        }
        o.push('\n');
    }
    if !plan.steps.is_empty() {
        o.push_str(&format!(
            "#### All steps, in the order apply runs them\n\n{TABLE_HEAD}"
        ));
        for (i, s) in plan.steps.iter().enumerate() {
            o.push_str(&step_row(i, s));
        }
        for s in &plan.steps {
            if let Step::WriteFile(WriteFile {
                path, old, content, ..
            }) = &s.step
            {
                o.push_str(&format!("\n<details><summary>Change to <code>{path}</code></summary>\n\n```diff\n{}```\n\n</details>\n", unified_diff(path, old.as_deref(), content)));
            }
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
