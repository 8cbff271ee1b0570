//! `hyraid man`: the manual page hyraid(1) from the clap definitions, plus what clap does not know.

use super::Cli;

/// The date in the page's title line: the last change to the page's own text (a fixed date, so
/// that the page a package ships is the same on every build).
const MANUAL_DATE: &str = "2026-12-01";

const EXAMPLES: &[(&str, &str)] = &[
    (
        "hyraid validate /etc/hyraid/hyraid.yaml",
        "Check the file: every error with file:line:col and the fix.",
    ),
    (
        "hyraid plan /etc/hyraid/hyraid.yaml",
        "Observe the machine and print the ordered changes; nothing is changed.",
    ),
    (
        "hyraid plan hyraid.yaml --format markdown > plan.md",
        "The plan for a pull request (also json, and shell: the exact commands).",
    ),
    (
        "hyraid plan hyraid.yaml --out plan.json && hyraid apply plan.json",
        "Save a plan for review and apply it later: apply re-derives it and refuses if the machine changed.",
    ),
    (
        "hyraid apply /etc/hyraid/hyraid.yaml",
        "Plan, ask, run the steps and verify the result.",
    ),
    (
        "hyraid plan /etc/hyraid/hyraid.yaml --detailed-exitcode",
        "A drift check for a timer: exit 2 when the machine differs from the file.",
    ),
    (
        "hyraid import > hyraid.yaml",
        "Write a file that describes an existing, hand-built layout.",
    ),
    (
        "hyraid status",
        "Health and lints: degraded arrays, resyncs, lost write-mostly flags, dirty caches.",
    ),
    (
        "hyraid status hyraid.yaml --textfile /var/lib/prometheus/node-exporter/hyraid.prom",
        "Health and its exit code, and node_exporter's textfile from the same observation.",
    ),
    (
        "hyraid observe -o box.json; hyraid plan hyraid.yaml --sim box.json",
        "Plan against a snapshot of a machine instead of the machine (for CI).",
    ),
];

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "NO_COLOR",
        "When set to a non-empty value, the text output is not coloured.",
    ),
    ("CLICOLOR", "0: no colour; otherwise colour on a terminal."),
    (
        "CLICOLOR_FORCE",
        "When set to a value other than 0, colour even when stdout is not a terminal (NO_COLOR still wins; --color overrides both).",
    ),
    ("TERM", "dumb: no colour."),
    (
        "PATH",
        "Where mdadm, lvm, lsblk, hdparm, sdparm, sgdisk, partx, growpart, mkfs.* and the other tools hyraid runs are found.",
    ),
    (
        "HYRAID_TIMINGS",
        "When set to a non-empty value other than 0, hyraid prints on stderr, at each boundary of its work (the arguments parsed, the file read, each tool's answer, the plan, each command apply runs), the milliseconds since it started: where a slow plan or apply spends its time.",
    ),
];

const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "Success; for plan --detailed-exitcode: no changes; for status: healthy.",
    ),
    (
        "1",
        "An error, a usage error, or a refused change (plan and apply alike; apply then runs nothing).",
    ),
    (
        "2",
        "plan --detailed-exitcode: changes pending, or the machine not yet as the file says (a mirror rebuilding a member); status: degraded or lint findings.",
    ),
    ("130", "apply interrupted; run it again to complete it."),
    (
        "141",
        "(the shell's number for SIGPIPE) the reader of the output went away, as with any tool; an apply whose steps had started finished them first.",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "/etc/mdadm/mdadm.conf",
        "hyraid's ARRAY lines (/etc/mdadm.conf on dracut systems).",
    ),
    (
        "/etc/udev/rules.d/61-hyraid-write-cache.rules",
        "The drives' write caches at boot and hotplug.",
    ),
    (
        "/etc/fstab",
        "The lines between hyraid's marker lines: the filesystems of the file; every other line is left as it is.",
    ),
    (
        "/var/log/hyraid/journal.jsonl",
        "What apply ran: one JSON line per command with its exit status and output.",
    ),
    ("/run/lock/hyraid.lock", "One apply at a time."),
];

const SEE_ALSO: &str = "mdadm(8), md(4), lvm(8), lvmcache(7), lvmraid(7), lsblk(8), hdparm(8), sdparm(8), sgdisk(8), partx(8), growpart(1), mkfs.ext4(8), mkfs.xfs(8), fstab(5)";

/// A section of tagged paragraphs (.TP): the tag in bold (or as a command line), then its text.
fn list(r: &mut clap_mangen::roff::Roff, title: &str, items: &[(&str, &str)], commands: bool) {
    use clap_mangen::roff::{bold, roman};
    r.control("SH", [title]);
    for (tag, text) in items {
        r.control("TP", []);
        if commands {
            r.text([bold(format!("$ {tag}"))]);
        } else {
            r.text([bold(*tag)]);
        }
        r.text([roman(*text)]);
    }
}

/// hyraid(1): the clap definitions (synopsis, options, every subcommand with its options), then
/// what clap does not know: the safety model, examples, environment, exit status, files and the
/// related pages.
///
/// Characters outside ASCII (a dash, an ellipsis in the help texts) are written as groff's
/// `\[uXXXX]` escapes, so the page reads the same whatever encoding the formatter assumes.
pub fn man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut page = Vec::new();
    render(&mut page)?;
    let mut text = String::new();
    for c in String::from_utf8_lossy(&page).chars() {
        if c.is_ascii() {
            text.push(c);
        } else {
            text.push_str(&format!("\\[u{:04X}]", c as u32));
        }
    }
    out.write_all(text.as_bytes())
}

fn render(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use clap::CommandFactory;
    use clap_mangen::roff::{Roff, roman};
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone())
        .date(MANUAL_DATE)
        .manual("User Commands");
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut r = Roff::new();
        r.control(
            "SH",
            [format!("HYRAID {}", sub.get_name().to_uppercase()).as_str()],
        );
        let about = sub
            .get_long_about()
            .or(sub.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        r.text([roman(about)]);
        out.write_all(r.to_roff().as_bytes())?;
        let m = clap_mangen::Man::new(sub.clone().bin_name(format!("hyraid {}", sub.get_name())));
        m.render_synopsis_section(out)?;
        m.render_options_section(out)?;
    }
    let mut r = Roff::new();
    r.control("SH", ["SAFETY"]);
    r.text([roman(
        "Every step is marked with its risk: destroys (what is on a device is erased: a wipe, a filesystem, LV or array removed or re-created), degrades (redundancy is lower: for a while during a recovery, a resync or a moment without a bitmap; for good when a member is removed or an array's slots dropped) or data-at-risk (acknowledged writes depend on one device: write-behind, a writecache on a PV without redundancy). Steps that destroy data or reduce redundancy for good are refused unless --allow-destroy is given; the others are shown in the plan and run by apply once confirmed. Objects the file does not name are reported and never touched. A disk is addressed only by its /dev/disk/by-id name, and a disk whose identity does not match the file is never touched.",
    )]);
    list(&mut r, "EXAMPLES", EXAMPLES, true);
    list(&mut r, "ENVIRONMENT", ENVIRONMENT, false);
    list(&mut r, "EXIT STATUS", EXIT_STATUS, false);
    list(&mut r, "FILES", FILES, false);
    r.control("SH", ["SEE ALSO"]);
    r.text([roman(SEE_ALSO)]);
    out.write_all(r.to_roff().as_bytes())?;
    man.render_version_section(out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// Every example is a command line the CLI accepts (up to a shell operator), so the page
    /// cannot show an option that does not exist.
    #[test]
    fn every_example_parses() {
        for (cmd, _) in EXAMPLES {
            for part in cmd.split(['&', ';']).filter(|p| !p.trim().is_empty()) {
                let words: Vec<&str> = part.split('>').next().unwrap().split_whitespace().collect();
                assert_eq!(words[0], "hyraid", "{cmd}");
                if let Err(e) = Cli::try_parse_from(&words) {
                    panic!("{cmd}: {e}");
                }
            }
        }
    }

    /// Every hyraid command the packaged units run is a command line the CLI accepts.
    #[test]
    fn the_drift_units_commands_parse() {
        let unit = include_str!("../../contrib/systemd/hyraid-drift.service");
        let cmds: Vec<&str> = unit
            .lines()
            .filter_map(|l| l.strip_prefix("ExecStart="))
            .map(|c| c.trim_start_matches('-'))
            .collect();
        // One status run gives the exit code and the textfile; the plan, the drift.
        assert_eq!(cmds.len(), 2, "{unit}");
        assert!(
            cmds[0].contains(" status ") && cmds[0].contains(" --textfile "),
            "{unit}"
        );
        assert!(
            cmds[1].contains(" plan ") && cmds[1].contains(" --detailed-exitcode"),
            "{unit}"
        );
        for c in cmds {
            let words: Vec<&str> = c.split_whitespace().collect();
            assert_eq!(words[0], "/usr/bin/hyraid", "{c}");
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("{c}: {e}");
            }
        }
    }
}
