//! One run of a mirror's check, as mdadm's mdcheck does it through sysfs: skipped when the
//! array is degraded, rebuilding or frozen (unless the file says `when_degraded: run`); a wait
//! while another array on the same disks resyncs or checks; `sync_min` set to where the last run
//! stopped and `check` written to `sync_action`; the array's `sync_speed_max` set for the run and
//! put back after; progress polled from `sync_completed`; at the budget, or when asked to stop,
//! `idle` written and the place md keeps in `sync_min` recorded for the next run.

use super::{Options, Progress, ProgressKind, Target};
use crate::config::monitoring::WhenDegraded;
use crate::history::checks::{CheckRecord, Outcome, Run};
use crate::history::now_secs;
use crate::host::Host;
use std::io::Write;
use std::time::{Duration, Instant};

/// Time as a run counts it: the wall clock on a real machine; on a simulated one (where a sleep
/// is instant and moves the machine on) the sum of the sleeps.
struct Clock {
    start: Instant,
    slept: Duration,
    simulated: bool,
}

impl Clock {
    fn elapsed(&self) -> Duration {
        if self.simulated {
            self.slept
        } else {
            self.start.elapsed()
        }
    }
    fn sleep(&mut self, host: &dyn Host, d: Duration) {
        host.sleep(d);
        self.slept += d;
    }
}

fn md_attr(host: &dyn Host, k: &str, attr: &str) -> Option<String> {
    host.read_file(&format!("/sys/block/{k}/md/{attr}"))
        .ok()
        .map(|s| s.trim().to_string())
}

fn set(host: &dyn Host, k: &str, attr: &str, value: &str) -> Result<(), String> {
    let path = format!("/sys/block/{k}/md/{attr}");
    host.write_file(&path, value)
        .map_err(|e| format!("cannot write `{value}` to {path}: {e}"))
}

/// `done / total` of `sync_completed`.
fn completed(host: &dyn Host, k: &str) -> Option<(u64, u64)> {
    let t = md_attr(host, k, "sync_completed")?;
    let (a, b) = t.split_once('/')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// `200000 (system)` / `50000 (local)` → the local limit, if one is set.
fn local_speed(text: &str) -> Option<u64> {
    text.contains("(local)")
        .then(|| text.split_whitespace().next()?.parse().ok())
        .flatten()
}

/// The whole disk a member is on (`sda2` → `sda`, `nvme0n1p2` → `nvme0n1`).
pub fn disk_of(kname: &str) -> String {
    if let Some(i) = kname.rfind('p')
        && kname.starts_with("nvme")
        && kname[i + 1..].chars().all(|c| c.is_ascii_digit())
        && i + 1 < kname.len()
    {
        return kname[..i].to_string();
    }
    if ["sd", "vd", "hd", "xvd"]
        .iter()
        .any(|p| kname.starts_with(p))
    {
        return kname
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .to_string();
    }
    kname.to_string()
}

/// Other arrays on the disks of array `k` that are busy (resync, recovery, check): their names.
fn busy_neighbours(host: &dyn Host, k: &str) -> Vec<String> {
    let Ok(text) = host.read_file("/proc/mdstat") else {
        return vec![];
    };
    let Ok(arrays) = crate::observe::mdstat::parse(&text) else {
        return vec![];
    };
    let disks = |a: &crate::observe::mdstat::MdstatArray| -> Vec<String> {
        a.members.iter().map(|m| disk_of(&m.kname)).collect()
    };
    let Some(me) = arrays.iter().find(|a| a.kname == k) else {
        return vec![];
    };
    let mine = disks(me);
    arrays
        .iter()
        .filter(|a| a.kname != k && disks(a).iter().any(|d| mine.contains(d)))
        .filter(|a| {
            md_attr(host, &a.kname, "sync_action").is_some_and(|s| !s.is_empty() && s != "idle")
        })
        .map(|a| a.kname.clone())
        .collect()
}

/// Why a run would not start on the array as it is now (None: it may).
fn skip_reason(host: &dyn Host, k: &str, opts: &Options) -> Option<String> {
    let state = md_attr(host, k, "array_state").unwrap_or_default();
    if state.is_empty() || state == "inactive" || state == "clear" {
        return Some("the array is not running".into());
    }
    if state == "readonly" {
        return Some("the array is read-only (`mdadm --readwrite` makes it writable)".into());
    }
    let action = md_attr(host, k, "sync_action").unwrap_or_default();
    match action.as_str() {
        "idle" => {}
        "frozen" => {
            return Some(format!(
                "the array is frozen (sync_action = frozen): once whatever froze it is done, `echo idle > /sys/block/{k}/md/sync_action`"
            ));
        }
        "check" | "repair" => return Some(format!("a {action} already runs on it")),
        other => {
            return Some(format!(
                "the array is rebuilding ({other}): it is checked once that ends"
            ));
        }
    }
    let degraded: u64 = md_attr(host, k, "degraded")
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    if degraded > 0 && opts.when_degraded == WhenDegraded::Skip {
        return Some(format!(
            "the array is degraded ({degraded} member(s) missing): a check would read the one copy left and find nothing to compare; replace the member first (`when_degraded: run` checks anyway)"
        ));
    }
    None
}

/// Run a check of `target` now, recording the run in `record`. `stop` says when asked to stop
/// (Ctrl-C, `systemctl stop`). Returns the run.
pub fn run(
    host: &dyn Host,
    target: &Target,
    record: &mut CheckRecord,
    opts: &Options,
    stop: &dyn Fn() -> bool,
    out: &mut dyn Write,
) -> Run {
    let mut clock = Clock {
        start: Instant::now(),
        slept: Duration::ZERO,
        simulated: host.is_simulated(),
    };
    let start = now_secs();
    let from = record.resume_at.unwrap_or(0);
    let finish = |outcome: Outcome,
                  to: u64,
                  total: u64,
                  mismatches: u64,
                  reason: Option<String>,
                  speed: Option<u64>| Run {
        start,
        end: now_secs(),
        outcome,
        from,
        to,
        total,
        mismatches,
        speed_kib: speed,
        reason,
        trigger: opts.trigger.to_string(),
    };
    let k = &target.kname;
    let total = md_attr(host, k, "component_size")
        .and_then(|s| s.parse::<u64>().ok())
        .map(|kib| kib * 2)
        .unwrap_or(0);
    if let Some(why) = skip_reason(host, k, opts) {
        let _ = writeln!(out, "check {}: skipped: {why}", target.mirror);
        return finish(Outcome::Skipped, from, total, 0, Some(why), None);
    }
    // Another array on the same disks resyncs or checks: two at once would halve both.
    let mut waited = None;
    loop {
        let busy = busy_neighbours(host, k);
        if busy.is_empty() {
            break;
        }
        if waited.is_none() {
            let _ = writeln!(
                out,
                "check {}: waiting for {} on the same disks",
                target.mirror,
                busy.join(", ")
            );
        }
        waited = Some(format!("waited for {} on the same disks", busy.join(", ")));
        if stop() || clock.elapsed() >= opts.budget {
            let why = format!("{} until the budget or a stop", waited.unwrap_or_default());
            return finish(Outcome::Paused, from, total, 0, Some(why), None);
        }
        clock.sleep(host, opts.poll);
    }
    let speed_before = md_attr(host, k, "sync_speed_max").unwrap_or_default();
    let fail = |why: String| finish(Outcome::Failed, from, total, 0, Some(why), None);
    if let Some(kib) = opts.speed_max_kib
        && let Err(e) = set(host, k, "sync_speed_max", &kib.to_string())
    {
        return fail(e);
    }
    let restore_speed = || {
        let v = local_speed(&speed_before).map_or("system".to_string(), |n| n.to_string());
        if opts.speed_max_kib.is_some() {
            let _ = set(host, k, "sync_speed_max", &v);
        }
    };
    if let Err(e) = set(host, k, "sync_min", &from.to_string())
        .and_then(|_| set(host, k, "sync_action", "check"))
    {
        restore_speed();
        return fail(e);
    }
    // Missing members when the check starts (`when_degraded: run`): only more than these is
    // a member that failed during it.
    let missing = |host: &dyn Host| -> u64 {
        md_attr(host, k, "degraded")
            .and_then(|d| d.parse().ok())
            .unwrap_or(0)
    };
    let missing_at_start = missing(host);
    let began = clock.elapsed();
    let mut bar = Progress::start(opts.progress, &target.mirror, from, total);
    let mut last_line = clock.elapsed();
    let mut done = from;
    let (outcome, to, reason) = loop {
        let action = md_attr(host, k, "sync_action").unwrap_or_default();
        if action != "check" {
            // Ended: at the end (md forgets sync_min), or stopped by something else.
            let at = md_attr(host, k, "sync_min")
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            let degraded = missing(host) > missing_at_start;
            break if at == 0 && !degraded {
                (Outcome::Completed, total, waited.clone())
            } else {
                (
                    Outcome::Interrupted,
                    at.max(done),
                    Some(if degraded {
                        "a member failed during the check (see `hyraid status`)".to_string()
                    } else {
                        format!("stopped by something else (sync_action = {action})")
                    }),
                )
            };
        }
        if let Some((d, _)) = completed(host, k) {
            done = d;
        }
        bar.update(done);
        if opts.progress == ProgressKind::Lines
            && clock.elapsed() - last_line >= Duration::from_secs(60)
        {
            last_line = clock.elapsed();
            let _ = writeln!(
                out,
                "check {}: {:.1}% ({done} of {total} sectors)",
                target.mirror,
                pct(done, total)
            );
        }
        let at_budget = clock.elapsed() >= opts.budget;
        if at_budget || stop() {
            let _ = set(host, k, "sync_action", "idle");
            // md stops between two of its blocks and then keeps the place in sync_min.
            for _ in 0..60 {
                if md_attr(host, k, "sync_action").as_deref() != Some("check") {
                    break;
                }
                clock.sleep(host, Duration::from_millis(500));
            }
            let at = md_attr(host, k, "sync_min")
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(done);
            let why = if at_budget {
                format!(
                    "its budget of {} was reached; the next run resumes here",
                    crate::config::monitoring::human_duration(opts.budget.as_secs())
                )
            } else {
                "stopped on request; the next run resumes here".to_string()
            };
            break (Outcome::Paused, at, Some(why));
        }
        clock.sleep(host, opts.poll);
    };
    bar.finish();
    let mismatches = md_attr(host, k, "mismatch_cnt")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    restore_speed();
    let secs = (clock.elapsed() - began).as_secs().max(1);
    let speed = Some(to.saturating_sub(from) / 2 / secs);
    let run = finish(outcome, to, total, mismatches, reason, speed);
    let _ = writeln!(out, "{}", summary(&target.mirror, &run, record));
    run
}

fn pct(done: u64, total: u64) -> f64 {
    if total == 0 {
        100.0
    } else {
        done as f64 * 100.0 / total as f64
    }
}

/// The run in one line, as the terminal and the journal show it.
pub fn summary(mirror: &str, run: &Run, record: &CheckRecord) -> String {
    match run.outcome {
        Outcome::Completed => {
            let pass = record.pass_mismatches + run.mismatches;
            if pass == 0 {
                format!("check {mirror}: completed, no mismatch")
            } else {
                format!(
                    "check {mirror}: completed, {pass} sector(s) differ between the members (mismatch_cnt): see `hyraid status`"
                )
            }
        }
        Outcome::Paused => format!(
            "check {mirror}: paused at {:.1}%: {}",
            pct(run.to, run.total),
            run.reason.clone().unwrap_or_default()
        ),
        o => format!(
            "check {mirror}: {}: {}",
            o.word(),
            run.reason.clone().unwrap_or_default()
        ),
    }
}
