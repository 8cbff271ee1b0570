//! Running a plan's steps in order: each by-id path re-checked against the observation the plan
//! was made from, every command journalled, what the tools warned about shown under its step, a
//! stop at the first failure or at a requested stop.

use super::journal::{JournalEntry, now_secs};
use super::wait::{WaitEnd, wait_idle};
use super::wait_move::wait_move_step;
use super::{ApplyError, ExecOptions, Journal};
use crate::host::Host;
use crate::observe::Observed;
use crate::plan::step::command_line;
use crate::plan::{Command, Plan};
use std::io::Write;

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

/// How long a cryptsetup command that reads a passphrase may run (a format's key derivation
/// takes seconds; a device that hangs must not hold the apply for ever).
const CRYPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

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
            if opts.stop.requested() {
                return Err(ApplyError::Interrupted {
                    done: index - 1,
                    total,
                });
            }
            let line = command_line(c);
            let _ = writeln!(out, "      $ {line}");
            let (status, stdout, stderr, ok) = match c {
                Command::Run {
                    argv,
                    ok_exit,
                    passphrase_of,
                    passphrase_env,
                } => {
                    let r = match passphrase_of {
                        None => host.run(argv),
                        Some(of) => {
                            let pass = opts.passphrases.of(of).ok_or_else(|| {
                                ApplyError::Passphrase {
                                    object: of.clone(),
                                    detail: format!(
                                        "step {index}/{total} reads it, and it was not asked for"
                                    ),
                                }
                            })?;
                            match passphrase_env {
                                None => host.run_input(argv, &pass, &[], CRYPT_TIMEOUT),
                                Some(var) => host.run_input(
                                    argv,
                                    "",
                                    &[(var.clone(), pass.to_string())],
                                    CRYPT_TIMEOUT,
                                ),
                            }
                        }
                    }
                    .map_err(|error| ApplyError::StepHost {
                        index,
                        total,
                        object: object.clone(),
                        error,
                    })?;
                    // Success that is not 0 (a probe that found nothing) is also silence.
                    let ok = ok_exit.contains(&r.status)
                        && (ok_exit.contains(&0)
                            || (r.stdout.trim().is_empty() && r.stderr.trim().is_empty()));
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
                        WaitEnd::Frozen { md } => ApplyError::Frozen {
                            index,
                            total,
                            array: array.clone(),
                            md,
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
                Command::WaitMove { vg } => {
                    wait_move_step(host, vg, opts, out, (index, total), &object)?;
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
            if crate::timings::enabled() {
                let first = line.lines().next().unwrap_or_default();
                crate::timings::mark(&format!("step {index}/{total}: {first}"));
            }
            if !ok {
                return Err(ApplyError::StepFailed {
                    index,
                    total,
                    object,
                    summary: s.step.summary(),
                    command: line,
                    status,
                    // What the tool said: stderr, or stdout when it wrote only there (`blkid -p`
                    // naming what it found).
                    stderr: match stderr.trim() {
                        "" => stdout.trim().to_string(),
                        e => e.to_string(),
                    },
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
        Command::WaitIdle { .. } | Command::WaitMove { .. } | Command::ReplaceFile { .. } => vec![],
        Command::Run { argv, .. } => argv
            .iter()
            .filter(|a| a.starts_with("/dev/disk/by-id/"))
            .cloned()
            .collect(),
        Command::Write { .. } => vec![],
    }
}
