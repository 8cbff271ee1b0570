//! Waiting for an array to be idle (resync, recovery) before a step that needs it: polling md's
//! sysfs, with a progress bar on a terminal and a line every 30 seconds otherwise.

use super::ExecOptions;
use crate::host::{Host, HostError};
use std::io::Write;

/// The resync progress bar: percent, speed and ETA from sync_completed.
pub(super) fn progress_style() -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(
        "      {msg} [{bar:30}] {percent:>3}% {binary_bytes_per_sec} ETA {eta}",
    )
    .expect("a valid progress template")
    .progress_chars("=> ")
}

/// Polls (seconds) a wait accepts a frozen array for: mdadm freezes one for the moment of a
/// change; one that stays frozen has been frozen by someone and never resumes by itself.
const FROZEN_POLLS: u32 = 60;

pub(super) enum WaitEnd {
    Busy {
        action: String,
        pct: String,
    },
    /// Frozen for longer than [`FROZEN_POLLS`]: the kernel device, to say how to thaw it.
    Frozen {
        md: String,
    },
    Stopped,
    Host(HostError),
}

/// Poll `/sys/block/mdX/md/sync_action` until idle, showing progress from `sync_completed`.
pub(super) fn wait_idle(
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
    let mut frozen = 0u32;
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
        frozen = if action == "frozen" { frozen + 1 } else { 0 };
        if frozen > FROZEN_POLLS {
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            return Err(WaitEnd::Frozen { md });
        }
        if opts.stop.requested() {
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
