use crate::plan::Plan;
use crate::plan::step::command_line;

pub fn shell(plan: &Plan) -> String {
    let mut o = String::from("#!/bin/sh\n");
    o.push_str(&format!(
        "# hyraid {} plan for host {}\n# basis {}\n",
        plan.hyraid_version, plan.host, plan.basis
    ));
    o.push_str("# The exact commands `hyraid apply` runs, in order. hyraid runs them with stdin from\n# /dev/null and LC_ALL=C, and verifies the result afterwards; this script does not verify.\n");
    o.push_str("set -eu\nexport LC_ALL=C LVM_SUPPRESS_FD_WARNINGS=1\nexec </dev/null\n");
    if !crate::plan::passphrases::needed(plan).is_empty() {
        o.push_str("# A passphrase is asked at the terminal and written to the command without a newline,\n# as `hyraid apply` does (which asks it once, before the first step).\n");
        o.push_str(crate::plan::step::PASSPHRASE_FUNCTION);
        o.push('\n');
    }
    if !plan.refused.is_empty() {
        // As `hyraid apply` does: a refused change stops everything before the first command.
        for r in &plan.refused {
            o.push_str(&format!(
                "# REFUSED {}: {}\n#   fix: {}\n",
                r.object, r.reason, r.fix
            ));
        }
        o.push_str(&format!(
            "echo 'hyraid: {} change(s) refused (see REFUSED above); nothing was run' >&2\nexit 1\n",
            plan.refused.len()
        ));
    } else if plan.steps.is_empty() {
        o.push_str("# No changes.\n");
        for w in &plan.waiting {
            o.push_str(&format!("# Not yet as the file says: {w}\n"));
        }
    }
    for (i, s) in plan.steps.iter().enumerate() {
        o.push_str(&format!(
            "\n# {}. {} {}: {} [{}]\n",
            i + 1,
            s.step.symbol(),
            s.step.object(),
            s.step.summary(),
            s.risk.label()
        ));
        for c in s.step.commands() {
            o.push_str(&command_line(&c));
            o.push('\n');
        }
    }
    o
}
