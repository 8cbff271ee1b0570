//! Running a plan: identity re-check, each command with stdin from /dev/null, a journal of what
//! ran, a stop at the first failure, and a fresh observe + plan afterwards (a residue is an error).

pub mod lock;
pub mod preview;
pub mod saved;

pub use saved::check_saved;

use crate::config::Desired;
use crate::host::{Host, HostError};
use crate::observe::{ObserveError, Observed, observe, probe_write_cache};
use crate::plan::step::command_line;
use crate::plan::{Command, PLAN_FORMAT, Plan, PlanError, Policy, Risk, plan};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("cannot observe the machine: {0}")]
    Observe(#[from] ObserveError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Lock(#[from] lock::LockError),
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
        "{count} change(s) the file asks for are refused (see above), so nothing was run: a partial apply would leave the machine neither as it was nor as the file says. Fix each refusal, then apply again."
    )]
    Refused { count: usize },
    #[error("the plan was made on host `{planned}`, this is `{actual}`; refusing to apply it here")]
    WrongHost { planned: String, actual: String },
    #[error(
        "the plan file is format {found}; this hyraid applies format {PLAN_FORMAT} (make a new plan with this version)"
    )]
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
    #[error(
        "interrupted after step {done}/{total}; the command that was running finished, nothing after it ran. The machine is consistent: run apply again to continue."
    )]
    Interrupted { done: usize, total: usize },
    #[error("applied, but the machine still differs from the file ({} step(s) remain):\n{}", .0.steps.len(), .0.steps.iter().map(|s| format!("  {} {}: {}", s.step.symbol(), s.step.object(), s.step.summary())).collect::<Vec<_>>().join("\n"))]
    Residue(Box<Plan>),
}

#[derive(Debug, Serialize)]
struct JournalEntry<'a> {
    time: u64,
    host: &'a str,
    step: usize,
    object: String,
    command: String,
    status: i32,
    stdout: &'a str,
    stderr: &'a str,
}

/// Where the record of what ran goes (JSON lines, appended).
pub struct Journal {
    pub path: Option<PathBuf>,
}

impl Journal {
    fn record(&self, e: &JournalEntry) {
        let Some(p) = &self.path else { return };
        if let Some(d) = p.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
        {
            let _ = writeln!(f, "{}", serde_json::to_string(e).unwrap_or_default());
        }
    }
}

/// Observe the machine, asking hdparm only for disks whose cache the file manages and sysfs could not answer.
pub fn observe_for(host: &dyn Host, desired: Option<&Desired>) -> Result<Observed, ObserveError> {
    let mut obs = observe(host)?;
    if let Some(d) = desired {
        let knames: Vec<String> = d
            .disks
            .values()
            .filter(|s| s.write_cache.is_some())
            .filter_map(|s| crate::plan::disk_for(&obs, s))
            .map(|b| b.kname.clone())
            .collect();
        if !knames.is_empty() {
            probe_write_cache(host, &mut obs, &knames)?;
        }
    }
    Ok(obs)
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
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecOptions {
    /// Stop instead of waiting for a resync/recovery (`--no-wait`).
    pub no_wait: bool,
    /// Draw a progress bar (a terminal); otherwise print a line every 30 seconds.
    pub progress_bar: bool,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: nix::libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Ctrl-C or SIGTERM: finish the command that runs (it is in its own process group, so the
/// terminal's signal does not reach it), then stop before the next one.
pub fn install_interrupt_handler() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            let _ = sigaction(sig, &action);
        }
    }
}

/// Ask a running apply to stop before its next command (what the signal handler does).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

pub fn clear_stop() {
    STOP.store(false, Ordering::SeqCst);
}

/// The resync progress bar: percent, speed and ETA from sync_completed.
fn progress_style() -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(
        "      {msg} [{bar:30}] {percent:>3}% {binary_bytes_per_sec} ETA {eta}",
    )
    .expect("a valid progress template")
    .progress_chars("=> ")
}

enum WaitEnd {
    Busy { action: String, pct: String },
    Stopped,
    Host(HostError),
}

/// Poll `/sys/block/mdX/md/sync_action` until idle, showing progress from `sync_completed`.
fn wait_idle(
    host: &dyn Host,
    array: &str,
    opts: &ExecOptions,
    out: &mut dyn Write,
) -> Result<(), WaitEnd> {
    // /dev/md/NAME is a link to the kernel device; an adopted array is named by that device.
    let path = crate::plan::step::wait_path(array);
    let md = match path.strip_prefix("/dev/") {
        Some(k) if crate::observe::names::md_kernel_device(&path) => k.to_string(),
        _ => host.read_link(&path).map_err(WaitEnd::Host)?,
    };
    let md = md.rsplit('/').next().unwrap_or("").to_string();
    let attr = |name: &str| {
        host.read_file(&format!("/sys/block/{md}/md/{name}"))
            .map(|s| s.trim().to_string())
    };
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut polls = 0u64;
    loop {
        let mut action = attr("sync_action").map_err(WaitEnd::Host)?;
        // A resync that is needed but not yet started shows `idle` in sync_action (seen on the
        // real kernel right after `mdadm --readwrite`): `resync_start` says it is coming. An
        // array that is still read-only never starts it, so it is not waited for there.
        let state = attr("array_state").unwrap_or_default();
        let pending = action == "idle"
            && attr("resync_start").is_ok_and(|r| !r.is_empty() && r != "none")
            && state != "read-auto"
            && state != "readonly";
        if pending {
            action = "resync (pending)".into();
        }
        if action == "idle" {
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let _ = writeln!(
                out,
                "      {array}: {}",
                if polls == 0 { "idle" } else { "idle now" }
            );
            return Ok(());
        }
        let done_total = attr("sync_completed").ok().and_then(|s| {
            crate::observe::mdadm::parse_sync_completed(&s)
                .ok()
                .flatten()
        });
        let pct = done_total
            .map(|(d, t)| format!("{:.1}%", d as f64 * 100.0 / t.max(1) as f64))
            .unwrap_or_else(|| "?".into());
        if opts.no_wait {
            return Err(WaitEnd::Busy { action, pct });
        }
        if stop_requested() {
            return Err(WaitEnd::Stopped);
        }
        if opts.progress_bar {
            let b = bar.get_or_insert_with(|| {
                let b = indicatif::ProgressBar::new(0);
                b.set_style(progress_style());
                b
            });
            if let Some((d, t)) = done_total {
                b.set_length(t * 512);
                b.set_position(d * 512);
            }
            b.set_message(format!("{array}: {action}"));
        } else if polls.is_multiple_of(30) {
            let speed = attr("sync_speed").ok().and_then(|s| s.parse::<u64>().ok());
            let eta = match (done_total, speed) {
                (Some((d, t)), Some(k)) if k > 0 => {
                    format!(", about {} min left", ((t - d.min(t)) / 2 / k).div_ceil(60))
                }
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "      {array}: {action} {pct}{}{eta}",
                speed
                    .map(|k| format!(" at {} MiB/s", k / 1024))
                    .unwrap_or_default()
            );
        }
        polls += 1;
        host.sleep(std::time::Duration::from_secs(1));
    }
}

/// Run every step in order. `obs` is the observation the plan was made from: each by-id path a
/// step uses must still point at the device it pointed at then.
pub fn execute(
    host: &dyn Host,
    p: &Plan,
    obs: &Observed,
    journal: &Journal,
    out: &mut dyn Write,
) -> Result<usize, ApplyError> {
    execute_with(host, p, obs, journal, out, &ExecOptions::default())
}

/// [`execute`] with options (`--no-wait`, progress bar). Stops cleanly when a stop is requested.
pub fn execute_with(
    host: &dyn Host,
    p: &Plan,
    obs: &Observed,
    journal: &Journal,
    out: &mut dyn Write,
    opts: &ExecOptions,
) -> Result<usize, ApplyError> {
    execute_report(host, p, obs, journal, out, opts).map(|r| r.steps)
}

/// What an apply ran: the steps, and what the tools warned about in steps that succeeded.
#[derive(Debug, Default)]
pub struct Applied {
    pub steps: usize,
    /// (step number, the tool's line), in order; every one is also in the journal.
    pub warnings: Vec<(usize, String)>,
}

/// A line a tool printed that warns (LVM's `WARNING:`, mdadm's `mdadm: ... warning`).
fn is_warning(line: &str) -> bool {
    line.to_ascii_lowercase().contains("warning")
}

/// [`execute_with`], returning what the tools said: every stderr line of a command that
/// succeeded is shown under its step (`!` for warnings) and each warning is counted.
pub fn execute_report(
    host: &dyn Host,
    p: &Plan,
    obs: &Observed,
    journal: &Journal,
    out: &mut dyn Write,
    opts: &ExecOptions,
) -> Result<Applied, ApplyError> {
    let mut warnings = Vec::new();
    let total = p.steps.len();
    let hostname = host.hostname();
    for (i, s) in p.steps.iter().enumerate() {
        let index = i + 1;
        let object = s.step.object().to_string();
        let _ = writeln!(
            out,
            "[{index}/{total}] {} {object}: {}",
            s.step.symbol(),
            s.step.summary()
        );
        let cmds = s.step.commands();
        for path in cmds.iter().flat_map(by_id_paths) {
            let id = path.trim_start_matches("/dev/disk/by-id/");
            let Some(planned) = obs.by_id(id).map(|d| d.kname.clone()) else {
                continue;
            };
            let now = host
                .read_link(&path)
                .map(|t| t.rsplit('/').next().unwrap_or("").to_string())
                .unwrap_or_else(|_| "(missing)".into());
            if now != planned {
                return Err(ApplyError::Identity {
                    index,
                    object,
                    path,
                    planned,
                    now,
                });
            }
        }
        for c in &cmds {
            // Any command boundary is a consistent place to stop (the crash tests prove it).
            if stop_requested() {
                return Err(ApplyError::Interrupted {
                    done: index - 1,
                    total,
                });
            }
            let line = command_line(c);
            let _ = writeln!(out, "      $ {line}");
            let (status, stdout, stderr, ok) = match c {
                Command::Run { argv, ok_exit } => {
                    let r = host.run(argv).map_err(|error| ApplyError::StepHost {
                        index,
                        total,
                        object: object.clone(),
                        error,
                    })?;
                    let ok = ok_exit.contains(&r.status);
                    (r.status, r.stdout, r.stderr, ok)
                }
                Command::Write { path, value } => match host.write_file(path, value) {
                    Ok(()) => (0, String::new(), String::new(), true),
                    Err(e) => (1, String::new(), e.to_string(), false),
                },
                Command::ReplaceFile { path, content } => match host.replace_file(path, content) {
                    Ok(()) => (0, String::new(), String::new(), true),
                    Err(e) => (1, String::new(), e.to_string(), false),
                },
                Command::WaitIdle { array } => {
                    wait_idle(host, array, opts, out).map_err(|e| match e {
                        WaitEnd::Busy { action, pct } => ApplyError::NotIdle {
                            index,
                            total,
                            array: array.clone(),
                            action,
                            pct,
                        },
                        WaitEnd::Stopped => ApplyError::Interrupted {
                            done: index - 1,
                            total,
                        },
                        WaitEnd::Host(error) => ApplyError::StepHost {
                            index,
                            total,
                            object: object.clone(),
                            error,
                        },
                    })?;
                    (0, String::new(), String::new(), true)
                }
            };
            journal.record(&JournalEntry {
                time: now_secs(),
                host: &hostname,
                step: index,
                object: object.clone(),
                command: line.clone(),
                status,
                stdout: &stdout,
                stderr: &stderr,
            });
            if ok {
                for l in stderr.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    let warn = is_warning(l);
                    let _ = writeln!(out, "      {} {l}", if warn { "!" } else { "|" });
                    if warn {
                        warnings.push((index, l.to_string()));
                    }
                }
                for l in stdout.lines().map(str::trim).filter(|l| is_warning(l)) {
                    let _ = writeln!(out, "      ! {l}");
                    warnings.push((index, l.to_string()));
                }
            }
            if !ok {
                return Err(ApplyError::StepFailed {
                    index,
                    total,
                    object,
                    summary: s.step.summary(),
                    command: line,
                    status,
                    stderr: stderr.trim().to_string(),
                });
            }
        }
    }
    Ok(Applied {
        steps: total,
        warnings,
    })
}
fn by_id_paths(c: &Command) -> Vec<String> {
    match c {
        Command::WaitIdle { .. } | Command::ReplaceFile { .. } => vec![],
        Command::Run { argv, .. } => argv
            .iter()
            .filter(|a| a.starts_with("/dev/disk/by-id/"))
            .cloned()
            .collect(),
        Command::Write { .. } => vec![],
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// After the last step: observe and plan again; anything left is an error.
pub fn verify(host: &dyn Host, desired: &Desired, policy: Policy) -> Result<Plan, ApplyError> {
    let obs = observe_for(host, Some(desired))?;
    let residue = plan(desired, &obs, policy)?;
    if !residue.steps.is_empty() {
        return Err(ApplyError::Residue(Box::new(residue)));
    }
    Ok(residue)
}

#[cfg(test)]
mod tests {
    #[test]
    fn progress_bar_template_is_valid() {
        // A bad template would only show on a terminal, as a panic.
        let b = indicatif::ProgressBar::hidden();
        b.set_style(super::progress_style());
        b.set_length(1 << 30);
        b.set_position(1 << 29);
        b.set_message("data0: resync");
        b.finish_and_clear();
    }
}
