//! Alerts that arrive: what hyraid finds (md's events through mdadm's monitor, the drift unit's
//! findings and drift, a check's mismatches, drive health) sent through the sinks of the file's
//! `alerts:`. A problem is said once when it is new, again when its reminder is due, and once
//! more when it is gone (the ledger under /var/lib/hyraid keeps what was said).

pub mod md_event;
pub mod sinks;

use crate::config::monitoring::AlertsSpec;
use crate::history::alerts::{Ledger, Said};
use crate::host::Host;
use serde::Serialize;
pub use sinks::Delivery;

/// Whether a problem is new, said again, gone, an event of md's, or a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    New,
    Reminder,
    Resolved,
    Event,
    Test,
}

impl State {
    pub fn word(self) -> &'static str {
        match self {
            State::New => "new",
            State::Reminder => "reminder",
            State::Resolved => "resolved",
            State::Event => "event",
            State::Test => "test",
        }
    }
}

/// One alert, as every sink gets it (the webhook's JSON body, the program's input).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Alert {
    pub host: String,
    pub state: State,
    /// `error`, `degraded`, `refused`, `lint`, `info` (a finding's), or md's own word.
    pub severity: String,
    /// What it is about: `mirror data0`, `disk hdd0`, `host`.
    pub object: String,
    /// What happened: md's event (`Fail`, `DegradedArray`, …), `finding`, `drift`, `test`.
    pub event: String,
    pub message: String,
    pub fix: String,
    /// Seconds since the epoch.
    pub time: u64,
}

impl Alert {
    pub fn title(&self) -> String {
        let what = match self.state {
            State::Resolved => "resolved: ",
            State::Reminder => "still: ",
            _ => "",
        };
        format!(
            "[hyraid] {}: {what}{}: {}",
            self.host, self.object, self.message
        )
        .chars()
        .take(200)
        .collect()
    }
    pub fn body(&self) -> String {
        let mut b = format!("{} on {}: {}\n", self.object, self.host, self.message);
        if self.state != State::Resolved && !self.fix.is_empty() {
            b.push_str(&format!("\nWhat to do: {}\n", self.fix));
        }
        b.push_str(&format!(
            "\n({} {}, {}; `hyraid status` on {} shows every finding)\n",
            self.state.word(),
            self.event,
            self.severity,
            self.host
        ));
        b
    }
    pub fn json(&self) -> String {
        serde_json::to_string(self).expect("alerts serialize")
    }
    fn urgent(&self) -> bool {
        matches!(self.severity.as_str(), "error" | "degraded" | "critical")
    }
    pub fn ntfy_priority(&self) -> &'static str {
        match (self.state, self.urgent()) {
            (State::Resolved, _) | (State::Test, _) => "default",
            (_, true) => "high",
            _ => "default",
        }
    }
    pub fn ntfy_tags(&self) -> &'static str {
        match (self.state, self.urgent()) {
            (State::Resolved, _) => "white_check_mark",
            (State::Test, _) => "test_tube",
            (_, true) => "rotating_light",
            _ => "warning",
        }
    }
}

/// A problem found now: its key (what stays the same while it stands) and its alert.
#[derive(Debug, Clone)]
pub struct Problem {
    pub key: String,
    pub alert: Alert,
}

/// What was sent (or not), per alert.
#[derive(Debug)]
pub struct Sent {
    pub alert: Alert,
    pub deliveries: Vec<Delivery>,
}

/// The ledger's view of `problems` now: the new ones and those whose reminder is due are sent,
/// those said before and no longer found are sent as resolved; the ledger then says what was
/// delivered (an alert no sink took is tried again next time). `now` in seconds since the epoch.
pub fn notify(
    host: &dyn Host,
    spec: &AlertsSpec,
    problems: &[Problem],
    now: u64,
) -> Result<Vec<Sent>, String> {
    let mut ledger = crate::history::alerts::read(host)?;
    let sent = notify_with(host, spec, problems, now, &mut ledger, &[]);
    crate::history::alerts::write(host, &ledger)?;
    Ok(sent)
}

/// [`notify`] on a ledger in hand; `skip` names sinks not to use (md mails its events itself).
pub fn notify_with(
    host: &dyn Host,
    spec: &AlertsSpec,
    problems: &[Problem],
    now: u64,
    ledger: &mut Ledger,
    skip: &[&str],
) -> Vec<Sent> {
    let mut out = Vec::new();
    let delivered = |d: &[Delivery]| d.is_empty() || d.iter().any(|x| x.result.is_ok());
    for p in problems {
        let state = match ledger.standing.get(&p.key) {
            None => State::New,
            Some(s) if now.saturating_sub(s.last) >= spec.reminder_secs => State::Reminder,
            Some(_) => continue,
        };
        let mut a = p.alert.clone();
        if a.state != State::Event {
            a.state = state;
        }
        let deliveries = sinks::send(host, spec, &a, skip);
        if delivered(&deliveries) {
            let first = ledger.standing.get(&p.key).map_or(now, |s| s.first);
            ledger.standing.insert(
                p.key.clone(),
                Said {
                    object: a.object.clone(),
                    message: a.message.clone(),
                    severity: a.severity.clone(),
                    first,
                    last: now,
                },
            );
        }
        out.push(Sent {
            alert: a,
            deliveries,
        });
    }
    out
}

/// Problems said before that are no longer found: each sent as resolved and dropped from the
/// ledger (kept when no sink took it). Only keys `scope` owns are looked at (the drift unit's
/// findings, not md's events).
pub fn resolve(
    host: &dyn Host,
    spec: &AlertsSpec,
    problems: &[Problem],
    now: u64,
    ledger: &mut Ledger,
    scope: &str,
) -> Vec<Sent> {
    let current: Vec<&str> = problems.iter().map(|p| p.key.as_str()).collect();
    let gone: Vec<String> = ledger
        .standing
        .keys()
        .filter(|k| k.starts_with(scope) && !current.contains(&k.as_str()))
        .cloned()
        .collect();
    let mut out = Vec::new();
    for k in gone {
        let s = ledger.standing[&k].clone();
        // Its object still has a problem (a lint grown into a degraded finding): that one is
        // said now, and this is not "resolved".
        if problems.iter().any(|p| p.alert.object == s.object) {
            ledger.standing.remove(&k);
            continue;
        }
        let a = Alert {
            host: host.hostname(),
            state: State::Resolved,
            severity: s.severity.clone(),
            object: s.object.clone(),
            event: "finding".into(),
            message: s.message.clone(),
            fix: String::new(),
            time: now,
        };
        let deliveries = sinks::send(host, spec, &a, &[]);
        if deliveries.is_empty() || deliveries.iter().any(|d| d.result.is_ok()) {
            ledger.standing.remove(&k);
        }
        out.push(Sent {
            alert: a,
            deliveries,
        });
    }
    out
}

/// The key of a finding: its object and lint, or its object, severity and message with the
/// numbers that move (percentages, ages) left out.
pub fn finding_key(object: &str, severity: &str, lint: Option<&str>, message: &str) -> String {
    match lint {
        Some(l) => format!("finding:{object}:{l}"),
        None => {
            // A word with a digit in it (`12.5%`, `3h`, `sdb1`…) is one that moves: `#`, and a
            // run of them one `#` (`3h 5m` and `0s` read the same).
            let mut words: Vec<&str> = Vec::new();
            for w in message.split_whitespace() {
                let w = if w.chars().any(|c| c.is_ascii_digit()) {
                    "#"
                } else {
                    w
                };
                if !(w == "#" && words.last() == Some(&"#")) {
                    words.push(w);
                }
            }
            format!("finding:{object}:{severity}:{}", words.join(" "))
        }
    }
}

/// A line per delivery, as `hyraid alert --test` and the logs show them.
pub fn report(sent: &[Sent]) -> String {
    let mut o = String::new();
    for s in sent {
        for d in &s.deliveries {
            match &d.result {
                Ok(()) if d.simulated => o.push_str(&format!(
                    "simulated, not sent: {} {} to {}: {}\n",
                    s.alert.state.word(),
                    s.alert.event,
                    d.sink,
                    s.alert.title()
                )),
                Ok(()) => o.push_str(&format!(
                    "sent {} {} to {}: {}\n",
                    s.alert.state.word(),
                    s.alert.event,
                    d.sink,
                    s.alert.title()
                )),
                Err(e) => o.push_str(&format!(
                    "FAILED {} {} to {}: {e}\n",
                    s.alert.state.word(),
                    s.alert.event,
                    d.sink
                )),
            }
        }
    }
    o
}
