use super::summary_line;
use crate::plan::persist::unified_diff;
use crate::plan::step::{WriteFile, command_line};
use crate::plan::{Plan, Risk, Step};

use anstyle::{AnsiColor, Style};

/// A refusal's headline and a `destroys` mark.
const ALARM: Style = AnsiColor::Red.on_default().bold();
/// Any other risk mark.
const RISK: Style = AnsiColor::Magenta.on_default();
/// The symbols of the steps: create, remove, change.
const CREATE: Style = AnsiColor::Green.on_default();
const REMOVE: Style = AnsiColor::Red.on_default();
const CHANGE: Style = AnsiColor::Yellow.on_default();

/// `s` in `style` when colour is on (the caller decides, from anstream's reading of the
/// terminal and NO_COLOR/CLICOLOR/CLICOLOR_FORCE/TERM); plain otherwise.
fn paint(s: &str, style: Style, color: bool) -> String {
    if color {
        format!("{style}{s}{style:#}")
    } else {
        s.to_string()
    }
}

pub fn text(plan: &Plan, color: bool) -> String {
    let mut o = String::new();
    if !plan.refused.is_empty() {
        // Refusals first: they decide whether anything runs at all.
        o.push_str(&format!(
            "{}\n",
            paint(
                &format!(
                    "hyraid refuses {} change(s) the file asks for on {}; `hyraid apply` runs nothing until each is fixed:",
                    plan.refused.len(),
                    plan.host
                ),
                ALARM,
                color
            )
        ));
        for r in &plan.refused {
            o.push_str(&format!(
                "  ! {}: {}\n      fix: {}\n",
                r.object, r.reason, r.fix
            ));
        }
        o.push('\n');
        if plan.withheld {
            o.push_str("Nothing is planned until the refusals above are fixed (the file does not fit the machine as it is).\n");
        } else if !plan.steps.is_empty() {
            o.push_str("With the refusals fixed, hyraid would also make these changes:\n\n");
        }
    } else if plan.steps.is_empty() && !plan.waiting.is_empty() {
        o.push_str(&format!(
            "{}\n",
            paint(
                &format!(
                    "No changes to make, but host {} is not yet as the file says:",
                    plan.host
                ),
                CHANGE,
                color
            )
        ));
        for w in &plan.waiting {
            o.push_str(&format!("  ~ {w}\n"));
        }
    } else if plan.steps.is_empty() {
        o.push_str(&format!(
            "No changes. Host {} matches the file.\n",
            plan.host
        ));
    } else {
        o.push_str(&format!(
            "hyraid will make these changes on {}:\n\n",
            plan.host
        ));
    }
    for (i, s) in plan.steps.iter().enumerate() {
        let sym = s.step.symbol();
        let style = match sym {
            '+' => CREATE,
            '-' => REMOVE,
            _ => CHANGE,
        };
        let risk = match s.risk {
            Risk::Safe => String::new(),
            r => format!(
                "  [{}]",
                paint(
                    r.label(),
                    if r == Risk::Destroys { ALARM } else { RISK },
                    color
                )
            ),
        };
        o.push_str(&format!(
            "{:>3}. {} {}: {}{}\n",
            i + 1,
            paint(&sym.to_string(), style, color),
            s.step.object(),
            s.step.summary(),
            risk
        ));
        o.push_str(&format!("       why: {}\n", s.reason));
        if let Step::WriteFile(WriteFile {
            path, old, content, ..
        }) = &s.step
        {
            o.push_str(&format!("       $ write {path} (atomically), changing:\n"));
            for l in unified_diff(path, old.as_deref(), content).lines() {
                o.push_str(&format!("         {l}\n"));
            }
            continue;
        }
        for c in s.step.commands() {
            o.push_str(&format!("       $ {}\n", command_line(&c)));
        }
    }
    if !plan.notes.is_empty() {
        o.push_str("\nNotes:\n");
        for n in &plan.notes {
            o.push_str(&format!("  - {n}\n"));
        }
    }
    if !plan.foreign.is_empty() {
        o.push_str("\nNot in the file (left alone):\n");
        for f in &plan.foreign {
            o.push_str(&format!("  = {}: {}\n", f.object, f.detail));
        }
    }
    o.push_str(&format!("\n{}\n", summary_line(plan)));
    o
}
