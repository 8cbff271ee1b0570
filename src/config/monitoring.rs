//! The file's monitoring: scheduled checks of the mirrors (`check:`, at the top as the default
//! for every mirror and on a mirror of its own) and where alerts go (`alerts:`). Raw (as
//! written, the schema's source) and resolved (what the planner, `hyraid check` and `hyraid
//! alert` read).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `check:` as written: `off`, or settings.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawCheck {
    /// `check: off`: no scheduled check of this mirror by hyraid; `check: on`: the file's
    /// defaults (or hyraid's, without a `check:` at the top).
    Switch(super::raw::OnOff),
    Settings(RawCheckSettings),
}

/// When and how a mirror is checked: md reads every member and compares the copies
/// (`sync_action` = check), which is the only time the write-mostly HDD is read at all.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCheckSettings {
    /// When a check starts, in systemd's calendar syntax (systemd.time(7)), e.g.
    /// `Sun *-*-1..7 01:00:00` (the first Sunday of the month: the default, Debian's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// How long one run may take, e.g. `6h` (the default, as Debian's mdcheck): a run that
    /// reaches it stops, and the next run resumes where it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// The most the check may read per second from each member, e.g. `100MiB` (md's
    /// `sync_speed_max` of the array while it runs; put back after). Default: md's own limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_max: Option<super::raw::RawSize>,
    /// What a run does when the mirror is degraded or rebuilding: `skip` (default: a check
    /// would read the one copy left and slow the rebuild) or `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_degraded: Option<WhenDegraded>,
    /// How old the last completed check may be before status says it is overdue, e.g. `35d`
    /// (the default: a monthly schedule and its budget's slack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overdue_after: Option<String>,
    /// Only at the top: the release's own scheduled check (Debian 12's monthly `checkarray`
    /// cron job, Debian 13's `mdcheck_start.timer`): `keep` (default) or `off` (hyraid switches
    /// it off, so that one schedule checks each mirror).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WhenDegraded {
    #[default]
    Skip,
    Run,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    #[default]
    Keep,
    Off,
}

/// `alerts:` as written: where hyraid sends what it finds (md's events, drift, a check's
/// mismatches, drive health). Secrets are read from files the file names, never written here.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawAlerts {
    /// Mail through the machine's sendmail (a mail transport: postfix, exim, msmtp-mta, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<RawEmail>,
    /// An HTTP POST of a JSON body to this URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<RawHttpSink>,
    /// An ntfy topic URL (`https://ntfy.sh/TOPIC` or a server of your own): a POST of the
    /// message as text with a title, priority and tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ntfy: Option<RawHttpSink>,
    /// A program run with the alert as JSON on its standard input (and `HYRAID_*` variables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// How often a problem that stands is said again, e.g. `24h` (the default and the least).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminder: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEmail {
    /// Addresses (`admin@example.com`, or a local user such as `root`).
    pub to: Vec<String>,
    /// The sender; default `hyraid@HOSTNAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawHttpSink {
    /// `https://…` (or `http://…` on a network you trust).
    pub url: String,
    /// A file holding the token sent as `Authorization: Bearer TOKEN` (root-only, e.g. mode
    /// 0600); never written in this file, the plan or any output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<String>,
}

/// A mirror's scheduled check, resolved: the mirror's own settings over the file's defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSpec {
    pub schedule: String,
    pub budget_secs: u64,
    /// KiB/s (md's unit for `sync_speed_max`); None: md's own limit.
    pub speed_max_kib: Option<u64>,
    pub when_degraded: WhenDegraded,
    pub overdue_after_secs: u64,
}

/// Debian's own schedule: the first Sunday of the month (`mdcheck_start.timer`).
pub const DEFAULT_SCHEDULE: &str = "Sun *-*-1..7 01:00:00";
/// Debian's `MDADM_CHECK_DURATION`.
pub const DEFAULT_BUDGET_SECS: u64 = 6 * 3600;
/// A monthly schedule, and slack for a run that needed two budgets.
pub const DEFAULT_OVERDUE_SECS: u64 = 35 * 86400;
/// The least (and default) time between two reminders of a problem that stands.
pub const MIN_REMINDER_SECS: u64 = 86400;

/// Where alerts go, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlertsSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<EmailSink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<HttpSink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ntfy: Option<HttpSink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    pub reminder_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmailSink {
    pub to: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpSink {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<String>,
}

impl AlertsSpec {
    /// The files the sinks need on the machine, each with the key that names it: the token
    /// files and the program.
    pub fn files(&self) -> Vec<(&'static str, &str)> {
        let mut v = Vec::new();
        if let Some(t) = self.webhook.as_ref().and_then(|h| h.token_file.as_deref()) {
            v.push(("webhook.token_file", t));
        }
        if let Some(t) = self.ntfy.as_ref().and_then(|h| h.token_file.as_deref()) {
            v.push(("ntfy.token_file", t));
        }
        if let Some(p) = self.program.as_deref() {
            v.push(("program", p));
        }
        v
    }

    /// The sinks by name, in the order they are tried.
    pub fn sink_names(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.email.is_some() {
            v.push("email");
        }
        if self.webhook.is_some() {
            v.push("webhook");
        }
        if self.ntfy.is_some() {
            v.push("ntfy");
        }
        if self.program.is_some() {
            v.push("program");
        }
        v
    }
}

/// `6h`, `90m`, `1d 12h`, `35d`, or a whole number of seconds: seconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    humantime::parse_duration(t)
        .map(|d| d.as_secs())
        .map_err(|e| {
            format!("`{text}` is not a duration ({e}); write it as `6h`, `90m`, `1d 12h` or `35d`")
        })
}

/// The least and the most a check run's budget may be: a minute, and a week (a run longer than
/// that outlasts every schedule; systemd's timers and md's sysfs take nothing like it).
pub const BUDGET_SECS: (u64, u64) = (60, 7 * 86400);
/// The least and the most `overdue_after` may be: a day, and a year.
pub const OVERDUE_SECS: (u64, u64) = (86400, 366 * 86400);

/// A duration within `(least, most)` seconds, for `what` (`budget`), as the file or the
/// command line gives it.
pub fn bounded_duration(text: &str, what: &str, (least, most): (u64, u64)) -> Result<u64, String> {
    let secs = parse_duration(text)?;
    if secs < least {
        return Err(format!(
            "`{text}` is shorter than {}, the least `{what}` hyraid takes",
            human_duration(least)
        ));
    }
    if secs > most {
        return Err(format!(
            "`{text}` is longer than {}, the most `{what}` hyraid takes",
            human_duration(most)
        ));
    }
    Ok(secs)
}

/// A duration as people write it: `6h`, `35d`, `1h 30m`.
/// Days at most (humantime's own formatter counts months of 30.44 days, so 35 days would read
/// `1month 4days 13h 26m 24s`); each part is one humantime parses back.
pub fn human_duration(secs: u64) -> String {
    let parts = [(86400, "d"), (3600, "h"), (60, "m"), (1, "s")];
    let mut left = secs;
    let mut out = Vec::new();
    for (unit, word) in parts {
        if left >= unit {
            out.push(format!("{}{word}", left / unit));
            left %= unit;
        }
    }
    if out.is_empty() {
        "0s".into()
    } else {
        out.join(" ")
    }
}

/// systemd's shorthands for a calendar expression (systemd.time(7)).
pub const CALENDAR_SHORTHANDS: [&str; 10] = [
    "minutely",
    "hourly",
    "daily",
    "weekly",
    "monthly",
    "yearly",
    "annually",
    "quarterly",
    "semiannually",
    "biannually",
];

/// Weekday names, short and long, as systemd reads them (any case).
pub const WEEKDAYS: [(&str, &str); 7] = [
    ("Mon", "Monday"),
    ("Tue", "Tuesday"),
    ("Wed", "Wednesday"),
    ("Thu", "Thursday"),
    ("Fri", "Friday"),
    ("Sat", "Saturday"),
    ("Sun", "Sunday"),
];

#[cfg(test)]
mod duration_tests {
    use super::*;

    #[test]
    fn durations_read_as_written_and_parse_back() {
        for (secs, text) in [
            (35 * 86400, "35d"),
            (6 * 3600, "6h"),
            (5400, "1h 30m"),
            (129600, "1d 12h"),
            (0, "0s"),
            (61, "1m 1s"),
        ] {
            assert_eq!(human_duration(secs), text);
            assert_eq!(parse_duration(text).unwrap(), secs, "{text}");
        }
    }
}

/// hyraid's runtime monitoring settings (`/etc/hyraid/monitoring.json`), written by apply from
/// the file: what `hyraid check` (run by the timers) and `hyraid alert` (run by mdadm's monitor
/// and the drift unit) read. Never a secret: sinks name their token files.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MonitoringSettings {
    pub format: u32,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub checks: std::collections::BTreeMap<String, CheckSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<AlertsSpec>,
}

/// One mirror's check, with the device its commands name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSettings {
    /// `/dev/md/NAME`, or the device of an array adopted by UUID.
    pub device: String,
    #[serde(flatten)]
    pub spec: CheckSpec,
}

/// The format of [`MonitoringSettings`] this hyraid writes and reads.
pub const SETTINGS_FORMAT: u32 = 1;

impl MonitoringSettings {
    /// The settings of a file: its checked mirrors and its alerts.
    pub fn of(d: &super::Desired) -> MonitoringSettings {
        MonitoringSettings {
            format: SETTINGS_FORMAT,
            checks: d
                .mirrors
                .values()
                .filter(|m| !m.absent)
                .filter_map(|m| {
                    Some((
                        m.name.clone(),
                        CheckSettings {
                            device: m.md_path(),
                            spec: m.check.clone()?,
                        },
                    ))
                })
                .collect(),
            alerts: d.alerts.clone(),
        }
    }

    /// Whether there is anything to keep: a check or alerts.
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty() && self.alerts.is_none()
    }

    pub fn render(&self) -> String {
        serde_json::to_string_pretty(self).expect("settings serialize") + "\n"
    }

    pub fn parse(text: &str) -> Result<MonitoringSettings, String> {
        let s: MonitoringSettings = serde_json::from_str(text)
            .map_err(|e| format!("not hyraid's monitoring settings: {e}"))?;
        if s.format != SETTINGS_FORMAT {
            return Err(format!(
                "monitoring settings of format {}; this hyraid reads format {SETTINGS_FORMAT} (run `hyraid apply` with this hyraid)",
                s.format
            ));
        }
        Ok(s)
    }
}
