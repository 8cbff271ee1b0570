//! The texts of monitoring hyraid keeps: its check units, md's monitor lines of mdadm.conf and
//! Debian's `AUTOCHECK` switch. Pure text in, text out.

use crate::config::monitoring::{CheckSpec, human_duration};

/// The first line of every unit hyraid writes.
pub const UNIT_MARK: &str = "# hyraid: a scheduled check of a mirror (hyraid.yaml `check:`); `hyraid apply` keeps this file";

/// The service every check timer starts: one mirror's check, by its name in the file.
pub fn check_service(hyraid: &str) -> String {
    format!(
        "{UNIT_MARK}
[Unit]
Description=hyraid check of mirror %i
Documentation=man:hyraid(1)

[Service]
Type=oneshot
ExecStart={hyraid} check %i --scheduled
Nice=10
IOSchedulingClass=idle
# Stopped (or at its budget), the check is set idle and the next run resumes where it stopped.
TimeoutStopSec=2min
"
    )
}

/// The timer of one mirror's check.
pub fn check_timer(mirror: &str, spec: &CheckSpec) -> String {
    format!(
        "{UNIT_MARK}
[Unit]
Description=hyraid check of mirror {mirror} ({}, at most {} a run)

[Timer]
OnCalendar={}
Persistent=true
Unit=hyraid-check@{mirror}.service

[Install]
WantedBy=timers.target
",
        spec.schedule,
        human_duration(spec.budget_secs),
        spec.schedule
    )
}

/// The unit names of a mirror's check.
pub fn timer_name(mirror: &str) -> String {
    format!("hyraid-check@{mirror}.timer")
}
pub const SERVICE_NAME: &str = "hyraid-check@.service";

/// Marks the monitor lines hyraid keeps in mdadm.conf.
pub const MONITOR_MARK: &str = "# hyraid: md's monitor reports to hyraid (hyraid.yaml `alerts:`); `hyraid apply` keeps these lines";

/// mdadm.conf with md's monitor pointed at hyraid: every `MAILADDR` and `PROGRAM` line goes, and
/// hyraid's (`MAILADDR` only with an address) stand where the first of them stood, or at the
/// end. mdadm runs `PROGRAM EVENT DEVICE [MEMBER]`: hyraid takes an mdadm event as its first
/// argument as `hyraid alert --md-event`.
pub fn monitor_lines(conf: &str, program: &str, mailaddr: Option<&str>) -> String {
    let keyword = |l: &str| {
        l.split_whitespace()
            .next()
            .map(|w| w.to_ascii_uppercase())
            .filter(|w| w == "MAILADDR" || w == "PROGRAM")
            .is_some()
    };
    let mut block = format!("{MONITOR_MARK}\n");
    if let Some(a) = mailaddr {
        block.push_str(&format!("MAILADDR {a}\n"));
    }
    block.push_str(&format!("PROGRAM {program}\n"));
    let mut out = String::new();
    let mut placed = false;
    for line in conf.lines() {
        if line == MONITOR_MARK || keyword(line) {
            if !placed {
                out.push_str(&block);
                placed = true;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if !placed {
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&block);
    }
    out
}

/// /etc/default/mdadm with `AUTOCHECK=false` (Debian's switch of its monthly checkarray): the
/// last `AUTOCHECK=` line rewritten, or one added.
pub fn autocheck_off(text: &str) -> String {
    let last = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("AUTOCHECK="))
        .map(|(i, _)| i)
        .last();
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        if Some(i) == last {
            out.push_str("AUTOCHECK=false\n");
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    if last.is_none() {
        out.push_str("# hyraid: the mirrors are checked on hyraid's schedule (hyraid.yaml `check: { distribution: off }`)\nAUTOCHECK=false\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_monitor_lines_replace_debians_in_place_and_stay() {
        let debian = "# instruct the monitoring daemon where to send mail alerts\nMAILADDR root\n\n# definitions of existing MD arrays\nARRAY /dev/md/data0 UUID=1:2:3:4\n";
        let once = monitor_lines(debian, "/usr/bin/hyraid", None);
        assert_eq!(
            once,
            format!(
                "# instruct the monitoring daemon where to send mail alerts\n{MONITOR_MARK}\nPROGRAM /usr/bin/hyraid\n\n# definitions of existing MD arrays\nARRAY /dev/md/data0 UUID=1:2:3:4\n"
            )
        );
        assert_eq!(monitor_lines(&once, "/usr/bin/hyraid", None), once);
        let mail = monitor_lines(&once, "/usr/bin/hyraid", Some("admin@example.com"));
        assert!(mail.contains(&format!(
            "{MONITOR_MARK}\nMAILADDR admin@example.com\nPROGRAM /usr/bin/hyraid\n\n"
        )));
        assert_eq!(
            monitor_lines(&mail, "/usr/bin/hyraid", Some("admin@example.com")),
            mail
        );
        // Lowercase keywords and several lines: all go, one block stays.
        let messy = "mailaddr a@b.c\nARRAY /dev/md0 UUID=1\nprogram /bin/true\n";
        let m = monitor_lines(messy, "/usr/bin/hyraid", None);
        assert_eq!(m.matches("PROGRAM").count(), 1);
        assert!(!m.contains("mailaddr") && !m.contains("/bin/true"));
        // No line of them: the block goes at the end.
        assert!(
            monitor_lines("ARRAY /dev/md0 UUID=1\n", "/x", None)
                .ends_with(&format!("\n\n{MONITOR_MARK}\nPROGRAM /x\n"))
        );
    }

    #[test]
    fn autocheck_is_switched_off_where_it_stands() {
        let d = "# comment\nAUTOCHECK=true\nAUTOSCAN=true\n";
        assert_eq!(
            autocheck_off(d),
            "# comment\nAUTOCHECK=false\nAUTOSCAN=true\n"
        );
        assert_eq!(autocheck_off(&autocheck_off(d)), autocheck_off(d));
        assert!(autocheck_off("START_DAEMON=true\n").ends_with("AUTOCHECK=false\n"));
    }
}
