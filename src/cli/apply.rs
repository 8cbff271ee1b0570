//! `hyraid apply`: the lock, the file (a configuration or a saved plan), the terminal prompt, and
//! [`crate::apply::apply`]; then, with `--sim-write`, the simulated machine back to its snapshot.

use super::{Machine, color, early_reads, machine, write_out};
use crate::apply::{self, ApplyError, ExecOptions, Journal, PassphraseSource, Passphrases, Source};
use crate::error::Error;
use crate::machine::{Lock, LockError, Stop};
use crate::observe::EarlyReads;
use crate::plan::Plan;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct ApplyArgs {
    /// hyraid.yaml, or a plan saved with `plan -o`.
    file: PathBuf,
    /// Show what would run; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Allow the steps that destroy data or reduce redundancy for good (a disk wiped, a
    /// filesystem or LV or array removed or re-created, an LV shrunk, a member removed); without
    /// it they are refused. Never allows touching anything in use.
    #[arg(long)]
    allow_destroy: bool,
    /// Put disk NAME (the file's name) back into its mirror although it left it without
    /// hyraid: md failed it, or it was missing when the array started. Only for a transient
    /// cause (a loose cable, a power cut) and a clean `smartctl -a`; a disk md failed for I/O
    /// errors is replaced instead (name the new disk's id under `disks.NAME`). Repeatable.
    #[arg(long = "re-add", value_name = "NAME")]
    re_add: Vec<String>,
    /// Do not ask for confirmation.
    #[arg(long)]
    yes: bool,
    /// Run only the steps that refresh the boot disks' loaders and firmware entries (`boot:`),
    /// and only their refusals stop it: what the kernel, initramfs and apt hooks run after an
    /// update. Not with a saved plan.
    #[arg(long)]
    loaders_only: bool,
    /// Where to append the journal of what ran (default /var/log/hyraid/journal.jsonl; with --sim, none unless given).
    #[arg(long)]
    journal: Option<PathBuf>,
    /// With --sim: write the simulated machine's new state back to the snapshot file.
    #[arg(long)]
    sim_write: bool,
    /// Stop at a step that needs an idle array instead of waiting for the resync to finish.
    #[arg(long)]
    no_wait: bool,
    /// Read the passphrase of `encryption: {passphrase: true}` from the first line of FILE (for
    /// every device that needs one) instead of asking at the terminal; the one way to give it
    /// under --yes. Keep FILE off disk (a pipe, `/dev/stdin`, a tmpfs) or delete it after.
    #[arg(long, value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
}

impl ApplyArgs {
    /// What clap cannot say of a global option: `--sim-write` needs `--sim`.
    pub(super) fn usage_error(&self, sim: &Option<PathBuf>) -> Option<clap::Error> {
        use clap::CommandFactory;
        (self.sim_write && sim.is_none()).then(|| {
            let mut cmd = super::Cli::command();
            cmd.build();
            let apply = cmd.find_subcommand_mut("apply").expect("apply is a subcommand");
            apply.error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "the argument '--sim-write' needs '--sim <SNAPSHOT>': it writes the simulated machine back to its snapshot",
            )
        })
    }
}

pub(super) fn run(
    sim: &Option<PathBuf>,
    a: ApplyArgs,
    early: EarlyReads,
    early_lock: Option<Result<Lock, LockError>>,
) -> Result<u8, Error> {
    let m = machine(sim)?;
    // One apply at a time; a dry run changes nothing and takes no lock. The lock is taken
    // before the file is read, so a second apply is refused before anything else (taken before
    // the arguments were parsed for the plain form, see `early_for_args`).
    let _lock = match (a.dry_run, early_lock) {
        (true, _) => None,
        (false, Some(taken)) => Some(taken.map_err(ApplyError::from)?),
        (false, None) => Some(Lock::acquire(&m.lock_path()).map_err(ApplyError::from)?),
    };
    // lsblk and the LVM report run while the file is read (after the lock: what they read is
    // the machine no other apply is changing); not while standard input is awaited (it may
    // take any time, and what was read before it and after it would be two moments of the
    // machine).
    let early = match a.file.as_os_str() == "-" {
        true => Default::default(),
        false => early.or_else(|| early_reads(sim)),
    };
    let source = match super::input::read_input(&a.file)? {
        // A saved plan runs as its reviewer saw it, whole: never a part of it.
        super::input::Input::Plan(_) if a.loaders_only => {
            return Err(Error::Msg(format!(
                "{}: --loaders-only takes the configuration file, not a saved plan: a saved plan runs as it was reviewed, whole (give the file, as the update hooks do, or apply the plan without --loaders-only)",
                a.file.display()
            )));
        }
        super::input::Input::Plan(p) => Source::Saved(p),
        super::input::Input::Config(d, _) => Source::Desired(d),
    };
    crate::timings::mark("file read");
    let opts = apply::Options {
        allow_destroy: a.allow_destroy,
        re_add: a.re_add,
        dry_run: a.dry_run,
        journal: Journal {
            path: a.journal.or_else(|| m.journal_path()),
        },
        exec: ExecOptions {
            no_wait: a.no_wait,
            progress_bar: std::io::stdout().is_terminal(),
            passphrases: Passphrases::new(match (&a.passphrase_file, a.yes) {
                (Some(f), _) => PassphraseSource::File(f.clone()),
                // `--yes` asks nothing; without a terminal there is no one to ask.
                (None, false) if std::io::stdin().is_terminal() => PassphraseSource::Terminal,
                (None, _) => PassphraseSource::None,
            }),
            // What SIGINT and SIGTERM set, once the handler is installed after the confirmation.
            stop: Stop::interrupt(),
        },
        color: color(),
        loaders_only: a.loaders_only,
        handle_interrupts: true,
    };
    // Whether the steps were let run: only then does --sim-write write the snapshot back.
    let mut confirmed = false;
    let mut confirm = |p: &Plan| {
        prompt(p, a.yes)?;
        confirmed = true;
        Ok(())
    };
    let result = apply::apply_started(
        source,
        early,
        m.host(),
        &opts,
        &mut confirm,
        &mut std::io::stdout(),
    );
    // The machine is as the file says: a tune run that was killed before it put the file's
    // state back has nothing left to undo.
    let ended = result.is_ok() && !a.dry_run && crate::tune::end_record(m.host());
    if let (Machine::Sim(h, path), true, true) = (&m, a.sim_write, confirmed || ended) {
        write_out(
            path,
            &(serde_json::to_string_pretty(&h.world()).unwrap() + "\n"),
        )?;
    }
    let outcome = result?;
    if ended {
        super::err_line(&format!(
            "The record of a `hyraid tune` run that did not end ({}) was removed: the machine is as the file says.",
            crate::observe::monitoring::TUNE_RUN_PATH
        ));
    }
    let Some(applied) = outcome.applied else {
        if a.dry_run {
            super::out("Dry run: nothing was changed.\n")?;
        }
        return Ok(0);
    };
    let sim_note = match (&m, a.sim_write) {
        (Machine::Sim(..), false) => {
            " The simulated machine was not written back (--sim-write saves it to the snapshot)."
        }
        _ => "",
    };
    // The steps ran and the machine was verified: an output that cannot be written (a reader
    // gone, a full disk) does not make that a failure.
    let now = if outcome.waiting.is_empty() {
        "the machine now matches the file.".to_string()
    } else {
        format!(
            "nothing is left to change, but the machine is not yet as the file says: {}.",
            outcome.waiting.join("; ")
        )
    };
    let _ = super::out(format!(
        "\nApplied {} step(s); {now}{sim_note}{}\n",
        applied.steps,
        match applied.warnings.len() {
            0 => String::new(),
            n => format!(
                " The tools printed {n} warning(s), shown under their steps above (steps {}) and kept in the journal.",
                applied
                    .warnings
                    .iter()
                    .map(|(i, _)| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    ));
    Ok(0)
}

/// The terminal's confirmation (none with `--yes`): `yes` typed at the prompt, or why not.
fn prompt(p: &Plan, yes: bool) -> Result<(), String> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(
            "stdin is not a terminal, so hyraid cannot ask for confirmation; review the plan and pass --yes".into(),
        );
    }
    let _ = super::out(format!(
        "\nApply these {} step(s) to {}? Type `yes` to continue: ",
        p.steps.len(),
        p.host
    ));
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    if answer.trim() != "yes" {
        return Err("not applied".into());
    }
    Ok(())
}
