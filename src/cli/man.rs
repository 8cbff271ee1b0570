//! `hyraid man`: the manual page hyraid(1) from the clap definitions, plus what clap does not know.

use super::Cli;

/// hyraid(1): the clap definitions (synopsis, options, every subcommand with its options), then
/// the safety model, files and exit codes, which clap does not know.
pub fn man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use clap::CommandFactory;
    use clap_mangen::roff::{Roff, roman};
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
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
        "Steps that destroy data or reduce redundancy are marked in the plan and refused by apply unless --allow-destroy is given. Objects the file does not name are reported and never touched. A disk is addressed only by its /dev/disk/by-id name, and a disk whose identity does not match the file is never touched.",
    )]);
    r.control("SH", ["FILES"]);
    r.text([roman(
        "/etc/mdadm/mdadm.conf (hyraid's ARRAY lines), /etc/udev/rules.d/61-hyraid-write-cache.rules (drive write caches at boot and hotplug), /var/log/hyraid/journal.jsonl (what apply ran), /run/lock/hyraid.lock (one apply at a time).",
    )]);
    r.control("SH", ["EXIT STATUS"]);
    r.text([roman(
        "0 success (plan --detailed-exitcode: no changes); 1 error, usage error, or a refused change (plan and apply alike; apply then runs nothing); 2 plan --detailed-exitcode: changes pending, status: degraded or findings; 130 apply interrupted.",
    )]);
    out.write_all(r.to_roff().as_bytes())?;
    man.render_version_section(out)?;
    Ok(())
}
