//! md's monitor (`mdadm --monitor`, PROGRAM in mdadm.conf) runs `hyraid EVENT DEVICE [MEMBER]`
//! for every event it sees: the ones that matter are sent through the sinks (a failure at once,
//! the same one again only when its reminder is due), the progress ones only logged.

use super::{Alert, Problem, Sent, State};
use crate::config::monitoring::AlertsSpec;
use crate::host::Host;

/// mdadm's events (Monitor.c), as it names them when it runs PROGRAM; besides these, a
/// rebuild's progress `RebuildNN` (see [`is_progress`]).
pub const EVENTS: [&str; 12] = [
    "Fail",
    "FailSpare",
    "DegradedArray",
    "SparesMissing",
    "DeviceDisappeared",
    "RebuildStarted",
    "RebuildFinished",
    "SpareActive",
    "NewArray",
    "MoveSpare",
    "TestMessage",
    "ArrayDisappeared",
];

/// Events mdadm also mails to MAILADDR itself: not mailed twice.
const MAILED_BY_MDADM: [&str; 5] = [
    "Fail",
    "FailSpare",
    "DegradedArray",
    "SparesMissing",
    "TestMessage",
];

/// A rebuild's progress: `Rebuild` and the percentage md reached, printed `%02d` (Monitor.c),
/// at every step of `mdadm --monitor --increment N` (default 20: Rebuild20, Rebuild40...; with
/// 5, Rebuild05...).
pub fn is_progress(event: &str) -> bool {
    event
        .strip_prefix("Rebuild")
        .is_some_and(|n| (2..=3).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `argv` (the program's name left out) is mdadm's call of its PROGRAM.
pub fn is_md_event(args: &[String]) -> bool {
    args.first()
        .is_some_and(|e| EVENTS.contains(&e.as_str()) || is_progress(e))
        && args.get(1).is_some_and(|d| d.starts_with("/dev/"))
        && args.len() <= 3
}

/// What an event says: severity, message, fix; None for progress that is only logged.
fn describe(
    event: &str,
    device: &str,
    member: Option<&str>,
) -> Option<(&'static str, String, String)> {
    let m = member.unwrap_or("a member");
    let status = "`hyraid status` (and `hyraid plan`) say what to do";
    Some(match event {
        "Fail" => (
            "critical",
            format!("md failed {m} of {device}: the mirror runs with one copy fewer"),
            format!(
                "read `smartctl -a` of {m} and `dmesg`; {status}: name a new disk in the file to replace it, or `--re-add` it only if the cause was transient (a cable, a power cut)"
            ),
        ),
        "FailSpare" => (
            "critical",
            format!("the spare {m} of {device} failed while it was being rebuilt"),
            format!("the mirror is still short of a member; {status}"),
        ),
        "DegradedArray" => (
            "critical",
            format!("{device} is degraded: it runs without one of its members"),
            status.to_string(),
        ),
        "SparesMissing" => (
            "warning",
            format!("{device} has fewer spares than mdadm.conf says"),
            status.to_string(),
        ),
        "DeviceDisappeared" | "ArrayDisappeared" => (
            "critical",
            format!("{device} disappeared"),
            format!("see `cat /proc/mdstat` and `dmesg`; {status}"),
        ),
        "RebuildFinished" => (
            "info",
            format!("{device} finished its rebuild or check"),
            "nothing to do; `hyraid status` shows what a check found".to_string(),
        ),
        "TestMessage" => (
            "info",
            format!("a test from md's monitor for {device}"),
            "nothing to do: this is what an alert from md looks like".to_string(),
        ),
        _ => return None,
    })
}

/// The object an event is about: `mirror NAME` for /dev/md/NAME, else `array DEVICE`.
fn object(host: &dyn Host, device: &str) -> String {
    if let Some(n) = device.strip_prefix("/dev/md/") {
        return format!("mirror {n}");
    }
    // /dev/md127: its name is the /dev/md/ link that points at it.
    let k = device.trim_start_matches("/dev/");
    for n in host.list_dir("/dev/md").unwrap_or_default() {
        if host
            .read_link(&format!("/dev/md/{n}"))
            .is_ok_and(|t| t.rsplit('/').next() == Some(k))
        {
            return format!("mirror {n}");
        }
    }
    format!("array {device}")
}

/// md's events that say an array has its members back (a rebuild ended, a spare took a slot).
const RECOVERED: [&str; 2] = ["RebuildFinished", "SpareActive"];

/// Send md's event through the sinks; returns what was sent (nothing for progress events).
pub fn handle(
    host: &dyn Host,
    spec: &AlertsSpec,
    args: &[String],
    now: u64,
) -> Result<Vec<Sent>, String> {
    let event = args[0].as_str();
    let device = args[1].as_str();
    let member = args.get(2).map(String::as_str);
    let Some((severity, message, fix)) = describe(event, device, member) else {
        return Ok(vec![]);
    };
    let alert = Alert {
        host: host.hostname(),
        state: State::Event,
        severity: severity.into(),
        object: object(host, device),
        event: event.into(),
        message,
        fix,
        time: now,
    };
    // A test, and a rebuild's end, are said each time; a failure once per reminder.
    let key = match event {
        "TestMessage" | "RebuildFinished" => format!("md:{event}:{device}:{now}"),
        _ => format!("md:{event}:{device}:{}", member.unwrap_or("")),
    };
    let skip: &[&str] = if MAILED_BY_MDADM.contains(&event) {
        &["email"]
    } else {
        &[]
    };
    let mut ledger = crate::history::alerts::read(host)?;
    // md's keys are only for not saying one event twice within a reminder: old ones go.
    ledger.standing.retain(|k, s| {
        !k.starts_with("md:") || now.saturating_sub(s.last) < spec.reminder_secs.max(7 * 86400)
    });
    // A rebuild that ended closes the array's failures: the next Fail of a member (re-added,
    // rebuilt, failed again) is news, whatever the reminder.
    if RECOVERED.contains(&event) {
        ledger
            .standing
            .retain(|k, _| !(k.starts_with("md:") && k.split(':').nth(2) == Some(device)));
    }
    let sent = super::notify_with(
        host,
        spec,
        &[Problem { key, alert }],
        now,
        &mut ledger,
        skip,
    );
    crate::history::alerts::write(host, &ledger)?;
    Ok(sent)
}
