//! Waiting for a pvmove to finish: polling the VG's move LV (`lvs -a`, `copy_percent`) until
//! LVM removes it, with a progress bar on a terminal and a line every 30 seconds otherwise. The
//! move itself runs in LVM's poller, not here: stopping the wait leaves it running.

use super::{ApplyError, ExecOptions};
use crate::host::{Host, HostError};
use crate::observe::lvm::{moves_argv, parse_moves};
use std::io::Write;

enum MoveEnd {
    Busy {
        pct: String,
    },
    /// The move LV is there but not active: nothing copies until it is activated.
    Stalled,
    Stopped,
    Host(HostError),
}

/// Polls that may see an inactive move LV before the wait gives up (the poller activates it).
const INACTIVE_POLLS: u64 = 10;

/// Poll `lvs -a … VG` until no pvmove LV is left.
fn wait_move(
    host: &dyn Host,
    vg: &str,
    opts: &ExecOptions,
    out: &mut dyn Write,
) -> Result<(), MoveEnd> {
    let mut bar: Option<indicatif::ProgressBar> = None;
    let (mut polls, mut inactive) = (0u64, 0u64);
    loop {
        let r = host.run(&moves_argv(vg)).map_err(MoveEnd::Host)?;
        let moves = if r.status == 0 {
            parse_moves(&r.stdout).map_err(|e| {
                MoveEnd::Host(HostError::Spawn {
                    program: moves_argv(vg).join(" "),
                    detail: e.to_string(),
                })
            })?
        } else {
            return Err(MoveEnd::Host(HostError::Spawn {
                program: moves_argv(vg).join(" "),
                detail: format!("exit {}: {}", r.status, r.stderr.trim()),
            }));
        };
        let Some(m) = moves.first() else {
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let _ = writeln!(
                out,
                "      {vg}: {}",
                if polls == 0 {
                    "no pvmove left"
                } else {
                    "pvmove finished"
                }
            );
            return Ok(());
        };
        let pct = m
            .copy_percent
            .map(|p| format!("{p:.2}%"))
            .unwrap_or_else(|| "?".into());
        if opts.no_wait {
            return Err(MoveEnd::Busy { pct });
        }
        if opts.stop.requested() {
            return Err(MoveEnd::Stopped);
        }
        inactive = if m.copy_percent.is_none() {
            inactive + 1
        } else {
            0
        };
        if inactive > INACTIVE_POLLS {
            return Err(MoveEnd::Stalled);
        }
        let what = format!("{vg}: {} moving off {}", m.name, m.source);
        if opts.progress_bar {
            let b = bar.get_or_insert_with(|| {
                let b = indicatif::ProgressBar::new(10_000);
                b.set_style(progress_style());
                b
            });
            b.set_position((m.copy_percent.unwrap_or(0.0) * 100.0) as u64);
            b.set_message(what);
        } else if polls.is_multiple_of(30) {
            let _ = writeln!(out, "      {what}: {pct}");
        }
        polls += 1;
        host.sleep(std::time::Duration::from_secs(1));
    }
}

/// [`wait_move`] as a step of apply: its ends as apply's errors.
pub(super) fn wait_move_step(
    host: &dyn Host,
    vg: &str,
    opts: &ExecOptions,
    out: &mut dyn Write,
    (index, total): (usize, usize),
    object: &str,
) -> Result<(), ApplyError> {
    wait_move(host, vg, opts, out).map_err(|e| match e {
        MoveEnd::Busy { pct } => ApplyError::MoveBusy {
            index,
            total,
            vg: vg.into(),
            pct,
        },
        MoveEnd::Stalled => ApplyError::MoveStalled {
            index,
            total,
            vg: vg.into(),
        },
        MoveEnd::Stopped => ApplyError::Interrupted {
            done: index - 1,
            total,
        },
        MoveEnd::Host(error) => ApplyError::StepHost {
            index,
            total,
            object: object.into(),
            error,
        },
    })
}

fn progress_style() -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template("      {msg} [{bar:30}] {percent:>3}% ETA {eta}")
        .expect("a valid progress template")
        .progress_chars("=> ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn progress_bar_template_is_valid() {
        let b = indicatif::ProgressBar::hidden();
        b.set_style(super::progress_style());
        b.set_length(10_000);
        b.set_position(2_344);
        b.set_message("vg0: pvmove0 moving off /dev/md126");
        b.finish_and_clear();
    }
}
