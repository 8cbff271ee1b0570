//! What watches the mirrors on this machine: hyraid's own check units and monitoring settings,
//! the release's scheduled check (Debian 12: `/etc/cron.d/mdadm` running `checkarray --cron`
//! when `/etc/default/mdadm` says `AUTOCHECK=true`; Debian 13: `mdcheck_start.timer`, enabled
//! through `mdmonitor.service`), whether mail can leave the machine, and md's monitor.

use crate::host::Host;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// hyraid's runtime monitoring settings (the checks' and the alerts'), written by apply from
/// the file: `hyraid check` and `hyraid alert` read them, and so does `status` without a file.
pub const MONITORING_PATH: &str = "/etc/hyraid/monitoring.json";
/// Where systemd units the administrator owns live (hyraid's among them).
pub const UNIT_DIR: &str = "/etc/systemd/system";
/// The template service of hyraid's checks and the prefix of their timers.
pub const CHECK_UNIT_PREFIX: &str = "hyraid-check@";
/// Directories whose links say which units are enabled: timers, and what md's monitor pulls in
/// (Debian 13 enables mdcheck's timers there).
pub const WANTS_DIRS: [&str; 2] = [
    "/etc/systemd/system/timers.target.wants",
    "/etc/systemd/system/mdmonitor.service.wants",
];
pub const CRON_MDADM: &str = "/etc/cron.d/mdadm";
pub const DEFAULT_MDADM: &str = "/etc/default/mdadm";
pub const SENDMAIL: &str = "/usr/sbin/sendmail";
/// Where hyraid may be installed, in the order units and mdadm.conf name it.
pub const HYRAID_PATHS: [&str; 3] = [
    "/usr/bin/hyraid",
    "/usr/local/bin/hyraid",
    "/usr/sbin/hyraid",
];
/// Debian 13's scheduled check (and its continuation).
pub const MDCHECK_TIMERS: [&str; 2] = ["mdcheck_start.timer", "mdcheck_continue.timer"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Monitoring {
    /// The hyraid the machine's units and mdadm.conf run (None: none where systemd finds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyraid_path: Option<String>,
    /// hyraid's monitoring files, by path: its settings and its check units.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Units enabled by a link in one of [`WANTS_DIRS`], by name.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub enabled: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron_mdadm: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mdadm: Option<String>,
    /// Whether mail can leave the machine (`/usr/sbin/sendmail` exists).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sendmail: bool,
    /// `systemctl is-active mdmonitor.service` (`active`, `inactive`, `failed`); None where
    /// systemd does not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mdmonitor: Option<String>,
    /// The file's check schedules as `systemd-analyze calendar` reads them (probed only for a
    /// file with checks, where systemd-analyze is installed): the normalized form, or why not.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub calendars: BTreeMap<String, Result<String, String>>,
    /// hyraid's records under [`RECORDS_DIR`], by path: kept by a simulated machine (so that a
    /// snapshot carries its checks' history); the observer never reads them (status does).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub records: BTreeMap<String, String>,
    /// A `hyraid tune` run that changed settings and has not put them back: its record
    /// ([`TUNE_RUN_PATH`]), written before its first change and removed once the file's state is
    /// back (by the run, or by the apply that converges after it was killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune_run: Option<TuneRun>,
    /// The files the file's alerts need (token files, the program), probed only for a file
    /// with alerts: whether each is there, a file (and for the program, one that can be run).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub alert_files: BTreeMap<String, bool>,
    /// Whether systemctl is installed (it enables the check timers; false on a machine without
    /// systemd at all).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub systemctl: bool,
}

fn yes() -> bool {
    true
}

impl Default for Monitoring {
    fn default() -> Self {
        Monitoring {
            hyraid_path: None,
            files: BTreeMap::new(),
            enabled: BTreeSet::new(),
            cron_mdadm: None,
            default_mdadm: None,
            sendmail: false,
            mdmonitor: None,
            calendars: BTreeMap::new(),
            records: BTreeMap::new(),
            tune_run: None,
            alert_files: BTreeMap::new(),
            systemctl: true,
        }
    }
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Whether systemctl is installed: asked only when the file schedules checks (the timers need it).
pub fn probe_systemctl(host: &dyn Host, m: &mut Monitoring) {
    m.systemctl = SYSTEMCTL_PATHS.iter().any(|p| host.exists(p));
}

/// Where systemctl is installed (usrmerge: both are the same file).
pub const SYSTEMCTL_PATHS: [&str; 2] = ["/usr/bin/systemctl", "/bin/systemctl"];

/// Where a tune run keeps its record while it changes settings.
pub const TUNE_RUN_PATH: &str = "/var/lib/hyraid/tune.json";

/// What a tune run records before it changes anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TuneRun {
    /// Seconds since the epoch.
    pub started: u64,
    /// The file whose state the run puts back.
    pub file: String,
    /// `vg/lv` measured.
    pub lv: String,
    /// The configuration being set or measured last (`drive cache on`).
    pub measuring: String,
    /// fio's test file in the directory measured, while a job may be writing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_file: Option<String>,
}

impl TuneRun {
    /// The record as read: one that does not parse still says that a run did not end.
    pub fn parse(text: &str) -> TuneRun {
        serde_json::from_str(text).unwrap_or_else(|e| TuneRun {
            started: 0,
            file: "the file".into(),
            lv: "?".into(),
            measuring: format!("(its record {TUNE_RUN_PATH} is not readable: {e})"),
            test_file: None,
        })
    }
}

/// Where hyraid keeps its records (checks, alerts sent, drive counters).
pub const RECORDS_DIR: &str = "/var/lib/hyraid";

pub const SYSTEMD_ANALYZE: &str = "/usr/bin/systemd-analyze";

/// Ask systemd whether md's monitor runs (probed for a file with alerts, where systemd runs).
pub fn probe_mdmonitor(host: &dyn Host, m: &mut Monitoring) {
    if !host.exists(super::SYSTEMD_PATH) {
        return;
    }
    let argv: Vec<String> = ["systemctl", "is-active", "mdmonitor.service"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // is-active exits 3 for an inactive unit: the word is what counts.
    m.mdmonitor = host
        .run(&argv)
        .ok()
        .map(|o| o.stdout.trim().to_string())
        .filter(|w| !w.is_empty());
}

/// Whether each file the alerts need is there as they need it: a file (`test -f`), and for a
/// program one that can be run (`test -x`); a directory by that name is not.
pub fn probe_alert_files(host: &dyn Host, m: &mut Monitoring, files: &[(&str, bool)]) {
    let test = |flag: &str, p: &str| {
        let argv = ["test", flag, p].map(String::from);
        host.run(&argv).is_ok_and(|o| o.status == 0)
    };
    for (path, program) in files {
        let ok = test("-f", path) && (!program || test("-x", path));
        m.alert_files.insert(path.to_string(), ok);
    }
}

/// Have `systemd-analyze calendar` read each schedule (skipped where it is not installed).
pub fn probe_calendars(host: &dyn Host, m: &mut Monitoring, specs: &[String]) {
    if specs.is_empty() || !host.exists(SYSTEMD_ANALYZE) {
        return;
    }
    for spec in specs {
        let argv: Vec<String> = ["systemd-analyze", "calendar", spec.as_str()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let r = match host.run(&argv) {
            Ok(o) if o.status == 0 => Ok(o
                .stdout
                .lines()
                .find_map(|l| l.trim().strip_prefix("Normalized form:"))
                .map(|n| n.trim().to_string())
                .unwrap_or_else(|| spec.clone())),
            Ok(o) => Err(o.stderr.trim().to_string()),
            Err(e) => Err(e.to_string()),
        };
        m.calendars.insert(spec.clone(), r);
    }
}

/// The release's scheduled check, as it is on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DistributionCheck {
    /// Debian 12's cron job, on (`AUTOCHECK=true`).
    Cron,
    /// `mdcheck_start.timer` enabled.
    Timer,
}

impl Monitoring {
    /// Which of the release's schedules would check the arrays.
    pub fn distribution_checks(&self) -> Vec<DistributionCheck> {
        let mut v = Vec::new();
        if self.cron_runs_checkarray() && self.autocheck() {
            v.push(DistributionCheck::Cron);
        }
        if self.enabled.contains(MDCHECK_TIMERS[0]) {
            v.push(DistributionCheck::Timer);
        }
        v
    }

    /// `/etc/cron.d/mdadm` runs checkarray (a line that is not a comment names it).
    pub fn cron_runs_checkarray(&self) -> bool {
        self.cron_mdadm.as_deref().is_some_and(|t| {
            t.lines()
                .any(|l| !l.trim_start().starts_with('#') && l.contains("checkarray"))
        })
    }

    /// `AUTOCHECK` of /etc/default/mdadm as checkarray reads it (`${AUTOCHECK:-false}`, true for
    /// `true`, `yes`, `1`).
    pub fn autocheck(&self) -> bool {
        self.default_mdadm
            .as_deref()
            .and_then(autocheck_value)
            .is_some_and(|v| matches!(v.as_str(), "true" | "yes" | "1"))
    }
}

/// The value of the last `AUTOCHECK=` line, unquoted and lowercased.
pub fn autocheck_value(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("AUTOCHECK="))
        .map(|v| v.trim().trim_matches(['"', '\'']).to_ascii_lowercase())
}

/// Read what watches the mirrors. Nothing here fails the observation: what cannot be read is
/// absent.
pub fn read(host: &dyn Host) -> Monitoring {
    let read = |p: &str| host.read_file(p).ok();
    let mut files = BTreeMap::new();
    if let Some(t) = read(MONITORING_PATH) {
        files.insert(MONITORING_PATH.to_string(), t);
    }
    for n in host.list_dir(UNIT_DIR).unwrap_or_default() {
        if n.starts_with(CHECK_UNIT_PREFIX) {
            let p = format!("{UNIT_DIR}/{n}");
            if let Some(t) = read(&p) {
                files.insert(p, t);
            }
        }
    }
    let enabled = WANTS_DIRS
        .iter()
        .flat_map(|d| host.list_dir(d).unwrap_or_default())
        .collect();
    Monitoring {
        hyraid_path: HYRAID_PATHS
            .iter()
            .find(|p| host.exists(p))
            .map(|p| p.to_string()),
        files,
        enabled,
        cron_mdadm: read(CRON_MDADM),
        default_mdadm: read(DEFAULT_MDADM),
        sendmail: host.exists(SENDMAIL),
        mdmonitor: None,
        calendars: BTreeMap::new(),
        records: BTreeMap::new(),
        tune_run: read(TUNE_RUN_PATH).map(|t| TuneRun::parse(&t)),
        alert_files: BTreeMap::new(),
        // Probed only for a file with checks (see `probe_systemctl`).
        systemctl: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_12s_cron_job_runs_only_with_autocheck() {
        let cron = "57 0 * * 0 root if [ -x /usr/share/mdadm/checkarray ] && [ $(date +\\%d) -le 7 ]; then /usr/share/mdadm/checkarray --cron --all --idle --quiet; fi\n";
        let mut m = Monitoring {
            cron_mdadm: Some(cron.into()),
            default_mdadm: Some("AUTOCHECK=true\nAUTOSCAN=true\n".into()),
            ..Default::default()
        };
        assert_eq!(m.distribution_checks(), vec![DistributionCheck::Cron]);
        m.default_mdadm = Some("AUTOCHECK=false\n".into());
        assert!(m.distribution_checks().is_empty());
        // checkarray's default when the variable is unset: false.
        m.default_mdadm = Some("# AUTOCHECK=true\n".into());
        assert!(m.distribution_checks().is_empty());
        m.default_mdadm = Some("AUTOCHECK=\"yes\"\n".into());
        assert_eq!(m.distribution_checks(), vec![DistributionCheck::Cron]);
        m.cron_mdadm = Some(format!("# {cron}"));
        assert!(m.distribution_checks().is_empty());
    }

    #[test]
    fn debian_13s_timer_counts_when_enabled() {
        let mut m = Monitoring::default();
        m.enabled.insert("mdcheck_start.timer".into());
        assert_eq!(m.distribution_checks(), vec![DistributionCheck::Timer]);
    }
}
