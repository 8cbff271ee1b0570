use crate::plan::{Command, Plan};

/// Quote one word for a POSIX shell (single quotes; plain words stay bare).
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// One command as a shell line, exactly as the executor runs it.
pub fn command_line(c: &Command) -> String {
    match c {
        Command::Run { argv, ok_exit } => {
            let line = argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ");
            let extra: Vec<String> = ok_exit
                .iter()
                .filter(|c| **c != 0)
                .map(|c| format!("[ $? -eq {c} ]"))
                .collect();
            if extra.is_empty() {
                line
            } else {
                format!("{line} || {}", extra.join(" || "))
            }
        }
        Command::Write { path, value } => {
            format!("printf '%s\\n' {} > {}", quote(value), quote(path))
        }
        Command::ReplaceFile { path, content } => {
            let mut marker = String::from("HYRAID_EOF");
            while content.contains(&marker) {
                marker.push('_');
            }
            format!(
                "cat > {}.hyraid-new <<'{marker}' && mv {0}.hyraid-new {0}\n{content}{marker}",
                quote(path)
            )
        }
        // hyraid polls the same files (and shows progress) instead of running a loop: busy while
        // sync_action is not idle, or a resync is pending (resync_start) on a writable array.
        Command::WaitIdle { array } => format!(
            "md=/sys/block/$(basename \"$(readlink -f {})\")/md; while [ \"$(cat $md/sync_action)\" != idle ] || {{ [ \"$(cat $md/resync_start)\" != none ] && ! grep -qx -e read-auto -e readonly $md/array_state; }}; do sleep 1; done",
            crate::plan::step::wait_path(array)
        ),
    }
}

pub fn shell(plan: &Plan) -> String {
    let mut o = String::from("#!/bin/sh\n");
    o.push_str(&format!(
        "# hyraid {} plan for host {}\n# basis {}\n",
        plan.hyraid_version, plan.host, plan.basis
    ));
    o.push_str("# The exact commands `hyraid apply` runs, in order. hyraid runs them with stdin from\n# /dev/null and LC_ALL=C, and verifies the result afterwards; this script does not verify.\n");
    o.push_str("set -eu\nexport LC_ALL=C LVM_SUPPRESS_FD_WARNINGS=1\nexec </dev/null\n");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote("/dev/md/data0"), "/dev/md/data0");
        assert_eq!(
            quote("high_watermark=50 writeback_jobs=1024"),
            "'high_watermark=50 writeback_jobs=1024'"
        );
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(reboot)"), "'$(reboot)'");
        assert_eq!(quote(""), "''");
    }
}
