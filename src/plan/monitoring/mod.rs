//! Monitoring: the mirrors' scheduled checks (hyraid's settings file, a service template and a
//! timer per mirror, enabled), the release's own schedule switched off when the file says so,
//! and what alerts need on the machine (hyraid installed where mdadm and systemd run it, a mail
//! transport for email). md's monitor lines of mdadm.conf are written with its ARRAY lines
//! (`boot.rs`).

pub mod text;

use super::*;
use crate::config::monitoring::{Distribution, MonitoringSettings};
use crate::observe::monitoring::{
    DEFAULT_MDADM, DistributionCheck, MDCHECK_TIMERS, MONITORING_PATH, UNIT_DIR,
};
use crate::plan::step::{DisableUnits, EnableUnits, WriteFile};

impl<'a> Planner<'a> {
    pub(in crate::plan) fn monitoring(&mut self) {
        let settings = MonitoringSettings::of(self.d);
        let m = &self.o.boot.monitoring;
        let object = "monitoring";
        if !settings.is_empty() && !self.monitoring_possible(&settings) {
            return;
        }
        let systemd = self.o.boot.systemd;
        // The files: settings, the service template and one timer per checked mirror.
        let mut want: BTreeMap<String, (String, String)> = BTreeMap::new();
        if !settings.is_empty() {
            want.insert(
                MONITORING_PATH.into(),
                (
                    settings.render(),
                    "hyraid's monitoring settings: the checks and the alerts".into(),
                ),
            );
        }
        if !settings.checks.is_empty() {
            let hyraid = m.hyraid_path.clone().unwrap_or_default();
            want.insert(
                format!("{UNIT_DIR}/{}", text::SERVICE_NAME),
                (
                    text::check_service(&hyraid),
                    "the service of the mirrors' checks".into(),
                ),
            );
        }
        for (name, c) in &settings.checks {
            want.insert(
                format!("{UNIT_DIR}/{}", text::timer_name(name)),
                (
                    text::check_timer(name, &c.spec),
                    format!("the schedule of mirror {name}'s check"),
                ),
            );
        }
        let mut changed_timers = Vec::new();
        for (path, (content, purpose)) in &want {
            let old = m.files.get(path).cloned();
            if old.as_deref() == Some(content.as_str()) {
                continue;
            }
            if old.is_some() && path.ends_with(".timer") {
                changed_timers.push(unit_of(path));
            }
            self.steps.push(ps(
                Step::WriteFile(WriteFile {
                    path: path.clone(),
                    old,
                    content: content.clone(),
                    purpose: purpose.clone(),
                }),
                Risk::Safe,
                "kept from the file's `check:` and `alerts:`",
            ));
        }
        // Timers enabled (started where systemd runs); a changed one re-armed.
        let new: Vec<String> = settings
            .checks
            .keys()
            .map(|n| text::timer_name(n))
            .filter(|u| !m.enabled.contains(u))
            .collect();
        let restart: Vec<String> = changed_timers
            .into_iter()
            .filter(|u| m.enabled.contains(u))
            .collect();
        if !new.is_empty() || (systemd && !restart.is_empty()) {
            self.steps.push(ps(
                Step::EnableUnits(EnableUnits {
                    units: new,
                    now: systemd,
                    restart: if systemd { restart } else { vec![] },
                }),
                Risk::Safe,
                if systemd {
                    "a timer runs its mirror's check on schedule (Persistent: a run missed while the machine was off runs at boot)"
                } else {
                    "systemd does not run here: the timers are linked, and run from the next boot with systemd"
                },
            ));
        }
        self.drop_checks(&want, systemd);
        self.distribution_schedule(!settings.checks.is_empty(), object);
    }

    /// Whether what the file's monitoring needs is on the machine; refused with why if not.
    fn monitoring_possible(&mut self, s: &MonitoringSettings) -> bool {
        let m = &self.o.boot.monitoring;
        let mut ok = true;
        if m.hyraid_path.is_none() {
            self.refuse(
                "monitoring",
                format!("hyraid is not installed where its check timers and md's monitor can run it ({})", crate::observe::monitoring::HYRAID_PATHS.join(", ")),
                "install the package (`apt install ./hyraid_*.deb`), or `cargo install --root /usr/local hyraid`, then plan again",
            );
            ok = false;
        }
        if !s.checks.is_empty() && !m.systemctl {
            self.refuse(
                "monitoring",
                "the check timers are systemd units, and this machine has no systemctl (no systemd): they could not be enabled, and nothing would run them",
                "install systemd, or leave `check:` out of the file and run `hyraid check NAME --now` from cron",
            );
            ok = false;
        }
        if let Some(a) = &s.alerts
            && a.email.is_some()
            && !m.sendmail
        {
            self.refuse(
                "alerts",
                "`alerts.email` sends mail through sendmail, and this machine has none (/usr/sbin/sendmail): mail would go nowhere",
                "install a mail transport (`apt install msmtp-mta` to relay through your provider, or postfix), or use a webhook, ntfy or a program instead",
            );
            ok = false;
        }
        for (key, path) in s.alerts.iter().flat_map(|a| a.files()) {
            if m.alert_files.get(path) == Some(&false) {
                let (sink, fix) = match key {
                    "program" => (
                        "program",
                        format!(
                            "install the program at {path} (executable, taking the alert as JSON on its standard input), or remove `alerts.program`"
                        ),
                    ),
                    _ => (
                        key.split('.').next().unwrap_or(key),
                        format!(
                            "write the token into {path} (`install -m 0600 /dev/stdin {path}`, then the token and Ctrl-D), or remove `alerts.{key}` if the topic needs none"
                        ),
                    ),
                };
                self.refuse(
                    "alerts",
                    format!("`alerts.{key}` names {path}, which is not a {} on this machine: every alert through {sink} would fail", if key == "program" { "program that can be run" } else { "file" }),
                    fix,
                );
                ok = false;
            }
        }
        for (name, c) in &s.checks {
            if let Some(Err(why)) = m.calendars.get(&c.spec.schedule) {
                self.refuse(
                    format!("mirror {name}"),
                    format!("systemd does not read the check's schedule `{}`: {why}", c.spec.schedule),
                    "write it in systemd's calendar syntax (systemd.time(7)); `systemd-analyze calendar 'SPEC'` shows how systemd reads it",
                );
                ok = false;
            }
        }
        ok
    }

    /// hyraid's timers for mirrors the file no longer checks: disabled and removed (and the
    /// template and settings when nothing uses them).
    fn drop_checks(&mut self, want: &BTreeMap<String, (String, String)>, systemd: bool) {
        let m = &self.o.boot.monitoring;
        let stale: Vec<&String> = m.files.keys().filter(|p| !want.contains_key(*p)).collect();
        if stale.is_empty() {
            return;
        }
        let units: Vec<String> = stale
            .iter()
            .filter(|p| p.ends_with(".timer"))
            .map(|p| unit_of(p))
            .filter(|u| m.enabled.contains(u))
            .collect();
        self.steps.push(ps(
            Step::DisableUnits(DisableUnits {
                units,
                now: systemd,
                remove: stale.into_iter().cloned().collect(),
            }),
            Risk::Safe,
            "the file no longer asks for these checks (or alerts); nothing of the mirrors changes",
        ));
    }

    /// The release's own scheduled check: switched off when the file says so; beside hyraid's,
    /// noted (status lints two schedules).
    fn distribution_schedule(&mut self, checks: bool, object: &str) {
        let m = &self.o.boot.monitoring;
        let active = m.distribution_checks();
        if active.is_empty() {
            return;
        }
        if self.d.check_distribution == Distribution::Keep {
            if checks {
                self.notes.push(format!("{object}: the release's own scheduled check ({}) also checks every mirror; the file keeps it (`check: {{ distribution: off }}` switches it off)", describe(&active)));
            }
            return;
        }
        for a in active {
            match a {
                DistributionCheck::Cron => {
                    let old = m.default_mdadm.clone().unwrap_or_default();
                    self.steps.push(ps(
                        Step::WriteFile(WriteFile {
                            path: DEFAULT_MDADM.into(),
                            content: text::autocheck_off(&old),
                            old: m.default_mdadm.clone(),
                            purpose: "AUTOCHECK=false: Debian's monthly checkarray stays off".into(),
                        }),
                        Risk::Safe,
                        "the file switches the release's schedule off (`check: { distribution: off }`); hyraid's own schedule checks the mirrors",
                    ));
                }
                DistributionCheck::Timer => {
                    let units: Vec<String> = MDCHECK_TIMERS
                        .iter()
                        .filter(|u| m.enabled.contains(**u))
                        .map(|u| u.to_string())
                        .collect();
                    self.steps.push(ps(
                        Step::DisableUnits(DisableUnits {
                            units,
                            now: self.o.boot.systemd,
                            remove: vec![],
                        }),
                        Risk::Safe,
                        "the file switches the release's schedule off (`check: { distribution: off }`); hyraid's own schedule checks the mirrors",
                    ));
                }
            }
        }
    }
}

/// The unit a file under /etc/systemd/system is.
fn unit_of(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// The release's schedules in words.
pub fn describe(active: &[DistributionCheck]) -> String {
    active
        .iter()
        .map(|a| match a {
            DistributionCheck::Cron => {
                "Debian's monthly checkarray, /etc/cron.d/mdadm with AUTOCHECK=true"
            }
            DistributionCheck::Timer => "mdcheck_start.timer",
        })
        .collect::<Vec<_>>()
        .join(" and ")
}
