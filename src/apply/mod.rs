//! Applying a configuration or a saved plan ([`apply`]): observe, plan (or re-derive the saved
//! plan), refuse refusals and unallowed destruction, ask, then run the steps (identity re-check,
//! each command with stdin from /dev/null, a journal of what ran, a stop at the first failure)
//! and a fresh observe + plan afterwards (a residue is an error).

mod execute;
mod journal;
pub mod passphrase;
pub mod preview;
pub mod saved;
mod wait;
mod wait_move;

pub use execute::{Applied, execute, execute_report, execute_with};
pub use journal::Journal;
pub use passphrase::{PassphraseSource, Passphrases};
pub use saved::check_saved;

use crate::config::Desired;
use crate::host::{Host, HostError};
use crate::machine::{LockError, Stop, observe_for, observe_started_for};
use crate::observe::{EarlyReads, ObserveError};
use crate::plan::{Plan, PlanError, Policy, Risk, plan};
use std::io::Write;

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("cannot observe the machine: {0}")]
    Observe(#[from] ObserveError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(
        "plan is stale: the machine changed since it was planned{}\nRun `hyraid plan` again and review the new plan.", stale_detail(.planned, .now, .changes)
    )]
    Stale {
        planned: String,
        now: String,
        /// What changed, object by object (empty when the file carries no observation).
        changes: Vec<String>,
    },
    #[error(
        "the saved plan is not what hyraid plans from its own desired state on this machine, so nothing was run: {0}\nA saved plan runs only exactly as hyraid plans it (was it edited after review?). Run `hyraid plan` again and review the new plan."
    )]
    Edited(String),
    #[error(
        "the saved plan's configuration ({file}, carried in the plan) is not valid, so nothing was run:\n{errors}\nA plan runs only a state `hyraid validate` accepts (was the plan edited?). Fix the file and plan again."
    )]
    SavedConfig { file: String, errors: String },
    #[error(
        "{count} change(s) the file asks for are refused (see above), so nothing was run: a partial apply would leave the machine neither as it was nor as the file says. Fix each refusal, then apply again."
    )]
    Refused { count: usize },
    #[error("the plan was made on host `{planned}`, this is `{actual}`; refusing to apply it here")]
    WrongHost { planned: String, actual: String },
    #[error("{}", crate::plan::planfile::wrong_format(*found))]
    Format { found: u32 },
    #[error(
        "the plan destroys data ({count} destroying step(s)); apply it only with --allow-destroy"
    )]
    DestroyNotAllowed { count: usize },
    #[error(
        "step {index}/{total} ({object}: {summary}) failed: `{command}` exited {status}\n{stderr}\nNothing after this step ran. Fix the cause, then run apply again: it plans from the current state and continues."
    )]
    StepFailed {
        index: usize,
        total: usize,
        object: String,
        summary: String,
        command: String,
        status: i32,
        stderr: String,
    },
    #[error("step {index}/{total} ({object}): {error}\nNothing after this step ran.")]
    StepHost {
        index: usize,
        total: usize,
        object: String,
        error: HostError,
    },
    #[error(
        "identity check failed before step {index} ({object}): {path} now points at {now}, planned as {planned}; nothing was run for this step — plan again"
    )]
    Identity {
        index: usize,
        object: String,
        path: String,
        planned: String,
        now: String,
    },
    #[error("stopped before step {index}/{total}: mirror {array} is busy ({action} {pct}) and --no-wait was given; nothing after step {}/{total} ran. Run apply again when it is idle (or without --no-wait to wait).", index - 1)]
    NotIdle {
        index: usize,
        total: usize,
        array: String,
        action: String,
        pct: String,
    },
    #[error("stopped at step {index}/{total}: mirror {array} has stayed frozen (sync_action = frozen) for over a minute, and md resumes no resync or recovery until it is set idle; nothing after step {}/{total} ran. Once whatever froze it is done, `echo idle > /sys/block/{md}/md/sync_action`, then run apply again.", index - 1)]
    Frozen {
        index: usize,
        total: usize,
        array: String,
        md: String,
    },
    #[error("stopped before step {index}/{total}: a pvmove in vg {vg} is running ({pct}) and --no-wait was given; nothing after step {}/{total} ran. The move goes on in the background: run apply again to wait for it and go on.", index - 1)]
    MoveBusy {
        index: usize,
        total: usize,
        vg: String,
        pct: String,
    },
    #[error(
        "stopped at step {index}/{total}: the pvmove in vg {vg} is not active, so nothing copies (`lvs -a` shows no copy_percent); activate the VG (`vgchange -ay {vg}`) and run apply again, which resumes it."
    )]
    MoveStalled {
        index: usize,
        total: usize,
        vg: String,
    },
    #[error(
        "interrupted after step {done}/{total}; the command that was running finished, nothing after it ran. The machine is consistent: run apply again to continue."
    )]
    Interrupted { done: usize, total: usize },
    #[error(
        "the plan reads the passphrase of {objects} from the terminal, and this apply has none to ask on (--yes, or stdin is not a terminal); nothing was run. Run apply at a terminal without --yes, or give --passphrase-file FILE (its first line is the passphrase)."
    )]
    NoPassphrase { objects: String },
    #[error("the passphrase of {object}: {detail}; nothing was run.")]
    Passphrase { object: String, detail: String },
    /// The confirmation said no; the reason is its own (`not applied`, no terminal to ask on).
    #[error("{0}")]
    NotConfirmed(String),
    #[error("applied, but the machine still differs from the file ({} step(s) remain):\n{}", .0.steps.len(), .0.steps.iter().map(|s| format!("  {} {}: {}", s.step.symbol(), s.step.object(), s.step.summary())).collect::<Vec<_>>().join("\n"))]
    Residue(Box<Plan>),
}

fn stale_detail(planned: &str, now: &str, changes: &[String]) -> String {
    if changes.is_empty() {
        return format!(" (basis {planned}, now {now})");
    }
    const MAX: usize = 20;
    let mut s = String::from(":");
    for c in changes.iter().take(MAX) {
        s.push_str("\n  ~ ");
        s.push_str(c);
    }
    if changes.len() > MAX {
        s.push_str(&format!("\n  … and {} more", changes.len() - MAX));
    }
    s
}

/// What must hold before the first command of a plan runs: nothing refused (a partial apply
/// would leave the machine neither as it was nor as the file says), and no destroying step
/// without --allow-destroy.
pub fn check_runnable(p: &Plan, allow_destroy: bool) -> Result<(), ApplyError> {
    if !p.refused.is_empty() {
        return Err(ApplyError::Refused {
            count: p.refused.len(),
        });
    }
    check_destroy(p, allow_destroy)
}

pub fn check_destroy(p: &Plan, allow_destroy: bool) -> Result<(), ApplyError> {
    let count = p.steps.iter().filter(|s| s.risk == Risk::Destroys).count();
    if count > 0 && !allow_destroy {
        return Err(ApplyError::DestroyNotAllowed { count });
    }
    Ok(())
}

/// How the executor behaves around waits.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Stop instead of waiting for a resync/recovery (`--no-wait`).
    pub no_wait: bool,
    /// Draw a progress bar (a terminal); otherwise print a line every 30 seconds.
    pub progress_bar: bool,
    /// Where the passphrases come from, and those gathered.
    pub passphrases: Passphrases,
    /// Asked to stop: the run ends before its next command (and leaves a wait) with
    /// [`ApplyError::Interrupted`]. This run's own; the command line gives [`Stop::interrupt`].
    pub stop: Stop,
}

/// After a plan that started mirrors (assembled, not running) or opened encrypted ones whose
/// content it could not see: what stands on them is planned now, shown, confirmed and run like
/// any plan (a saved plan stops instead: its reviewer saw only the start or the open).
fn next_round(
    p: Plan,
    applied: Applied,
    host: &dyn Host,
    opts: &Options,
    confirm: &mut Confirm,
    out: &mut dyn Write,
) -> Result<Outcome, ApplyError> {
    let _ = writeln!(
        out,
        "\nStarted or opened {}: what stands on them can be read now, and is planned.\n",
        p.behind_open.join(", ")
    );
    let next = apply_started(
        Source::Desired(Box::new(p.desired.clone())),
        EarlyReads::start(host),
        host,
        opts,
        confirm,
        out,
    )?;
    let mut all = applied;
    if let Some(more) = next.applied {
        let base = all.steps;
        all.steps += more.steps;
        all.warnings
            .extend(more.warnings.into_iter().map(|(i, w)| (i + base, w)));
    }
    Ok(Outcome {
        plan: p,
        applied: Some(all),
        waiting: next.waiting,
    })
}

/// After the last step: observe and plan again; anything left is an error.
pub fn verify(
    host: &dyn Host,
    desired: &Desired,
    policy: Policy,
    loaders_only: bool,
) -> Result<Plan, ApplyError> {
    let obs = observe_for(host, Some(desired))?;
    let mut residue = plan(desired, &obs, policy)?;
    if loaders_only {
        residue = crate::plan::loader::loaders_only(residue);
    }
    if !residue.steps.is_empty() {
        return Err(ApplyError::Residue(Box::new(residue)));
    }
    Ok(residue)
}

/// What to apply: a configuration (planned here against the machine) or a saved plan (re-derived
/// from the desired state it carries and run only when equal, see [`saved`]).
pub enum Source {
    Desired(Box<Desired>),
    Saved(Box<Plan>),
}

/// How an apply runs (`hyraid apply`'s options).
#[derive(Default)]
pub struct Options {
    /// Include steps that destroy data at rest (`--allow-destroy`).
    pub allow_destroy: bool,
    /// Disks to put back into their mirror although they left it without hyraid (`--re-add`).
    pub re_add: Vec<String>,
    /// Show the plan, check it, run nothing (`--dry-run`).
    pub dry_run: bool,
    /// Where the record of what ran goes.
    pub journal: Journal,
    /// `--no-wait` and the progress bar.
    pub exec: ExecOptions,
    /// Colour the plan's text (a terminal).
    pub color: bool,
    /// Run only the plan's boot loader steps (`--loaders-only`: what the update hooks run).
    pub loaders_only: bool,
    /// Install the SIGINT/SIGTERM handler once confirmed, so an interrupt stops at the next
    /// command boundary (the command line, whose `exec.stop` is [`Stop::interrupt`]; a library
    /// caller keeps its own signals and requests its own stop).
    pub handle_interrupts: bool,
}

/// What an apply did: the plan it showed, and what ran (`None`: a dry run, or nothing to do).
#[derive(Debug)]
pub struct Outcome {
    pub plan: Plan,
    pub applied: Option<Applied>,
    /// What is not yet as the file says although nothing is left to run (a mirror rebuilding),
    /// as the plan made after the steps says it.
    pub waiting: Vec<String>,
}

/// Asked once, after the plan is shown and checked and before the first command, when there is
/// something to run; `Err` says why not (the apply then ends with that message).
pub type Confirm<'a> = dyn FnMut(&Plan) -> Result<(), String> + 'a;

/// Apply `source` to the machine behind `host`: observe, plan (or re-derive the saved plan), show
/// the plan on `out`, refuse refusals, check destruction, ask `confirm`, run the steps (their
/// progress on `out`) and verify the machine now matches. A refused difference stops the whole
/// apply before anything runs, dry run or not. The caller holds the apply lock when it is not a
/// dry run.
pub fn apply(
    source: Source,
    host: &dyn Host,
    opts: &Options,
    confirm: &mut Confirm,
    out: &mut dyn Write,
) -> Result<Outcome, ApplyError> {
    apply_started(source, EarlyReads::start(host), host, opts, confirm, out)
}

/// [`apply`] with lsblk and the LVM report started before the file was read (the command line
/// starts them as soon as it holds the lock).
pub fn apply_started(
    source: Source,
    early: EarlyReads,
    host: &dyn Host,
    opts: &Options,
    confirm: &mut Confirm,
    out: &mut dyn Write,
) -> Result<Outcome, ApplyError> {
    let allow_destroy = opts.allow_destroy;
    let policy = Policy {
        allow_destroy,
        re_add: opts.re_add.clone(),
    };
    let saved = matches!(source, Source::Saved(_));
    let (p, obs) = match source {
        Source::Saved(saved) => {
            let obs = observe_started_for(host, Some(&saved.desired), early)?;
            crate::timings::mark("observed");
            // What runs is hyraid's own plan, re-derived and proven equal to the file's.
            (check_saved(&saved, host, &obs, &policy)?, obs)
        }
        Source::Desired(d) => {
            let obs = observe_started_for(host, Some(&d), early)?;
            crate::timings::mark("observed");
            (plan(&d, &obs, policy.clone())?, obs)
        }
    };
    let p = match opts.loaders_only {
        true => crate::plan::loader::loaders_only(p),
        false => p,
    };
    crate::timings::mark("planned");
    let _ = write!(out, "{}", crate::render::text(&p, opts.color));
    if !p.refused.is_empty() {
        check_runnable(&p, allow_destroy)?;
    }
    if opts.dry_run || p.steps.is_empty() {
        let waiting = p.waiting.clone();
        return Ok(Outcome {
            plan: p,
            applied: None,
            waiting,
        });
    }
    check_runnable(&p, allow_destroy)?;
    opts.exec.passphrases.check(&p)?;
    confirm(&p).map_err(ApplyError::NotConfirmed)?;
    opts.exec.passphrases.gather(&p)?;
    let _ = writeln!(out);
    if opts.handle_interrupts {
        crate::machine::install_interrupt_handler();
    }
    let applied = execute_report(host, &p, &obs, &opts.journal, out, &opts.exec)?;
    if !p.behind_open.is_empty() {
        if !saved {
            return next_round(p, applied, host, opts, confirm, out);
        }
        // A saved plan runs only what its reviewer saw: the open.
        let _ = writeln!(
            out,
            "\nStarted or opened {}: what stands on them can be read now. Plan again to review it.",
            p.behind_open.join(", ")
        );
        let waiting = vec![format!(
            "what stands on {} is planned once reviewed: run `hyraid plan` again",
            p.behind_open.join(", ")
        )];
        return Ok(Outcome {
            plan: p,
            applied: Some(applied),
            waiting,
        });
    }
    let after = verify(host, &p.desired, policy, opts.loaders_only)?;
    crate::timings::mark("verified: observed and planned again");
    Ok(Outcome {
        plan: p,
        applied: Some(applied),
        waiting: after.waiting,
    })
}
