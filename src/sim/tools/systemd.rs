//! systemd as the simulated machine has it: `systemctl` (enable, disable, restart, is-active,
//! daemon-reload), `systemd-analyze calendar`, and the files of hyraid's monitoring
//! (`observe::monitoring`): its settings and check units, /etc/default/mdadm, the release's
//! cron job. Unit links live in `Monitoring::enabled`.

use crate::host::{CmdOutput, HostError};
use crate::observe::Observed;
use crate::observe::monitoring::{
    CRON_MDADM, DEFAULT_MDADM, MDCHECK_TIMERS, MONITORING_PATH, UNIT_DIR, WANTS_DIRS,
};
use crate::sim::world::SimState;
use crate::sim::{fail, out};

/// `systemctl ARGS`, on a machine where systemd runs.
pub fn systemctl(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    // Enabling and disabling are links in the unit directories: systemctl makes them offline
    // too; everything else needs the manager.
    let offline =
        matches!(args.first(), Some(&"enable" | &"disable")) && args.get(1) != Some(&"--now");
    if !st.world.boot.systemd && !offline {
        return fail(
            1,
            "System has not been booted with systemd as init system (PID 1). Can't operate.\n",
        );
    }
    let m = &mut st.world.boot.monitoring;
    let args: Vec<&str> = match args {
        [verb @ ("enable" | "disable"), rest @ ..] if rest.first() != Some(&"--now") => {
            std::iter::once(*verb)
                .chain(std::iter::once("--now"))
                .chain(rest.iter().copied())
                .collect()
        }
        _ => args.to_vec(),
    };
    match args.as_slice() {
        ["daemon-reload"] => out(""),
        ["is-active", unit] => match *unit {
            "mdmonitor.service" => {
                let w = m.mdmonitor.clone().unwrap_or_else(|| "inactive".into());
                let status = if w == "active" { 0 } else { 3 };
                Ok(CmdOutput {
                    status,
                    stdout: format!("{w}\n"),
                    stderr: String::new(),
                })
            }
            _ => Ok(CmdOutput {
                status: 3,
                stdout: "inactive\n".into(),
                stderr: String::new(),
            }),
        },
        ["restart" | "start", "mdmonitor.service"] => {
            m.mdmonitor = Some("active".into());
            out("")
        }
        ["enable", "--now", units @ ..] if !units.is_empty() => {
            for u in units {
                if !unit_known(&st.world, u) {
                    return fail(
                        1,
                        format!("Failed to enable unit: Unit file {u} does not exist.\n"),
                    );
                }
            }
            let m = &mut st.world.boot.monitoring;
            let mut said = String::new();
            for u in units {
                if m.enabled.insert(u.to_string()) {
                    said.push_str(&format!(
                        "Created symlink {}/{u} → {UNIT_DIR}/{u}.\n",
                        wants_dir(u)
                    ));
                }
            }
            Ok(CmdOutput {
                status: 0,
                stdout: String::new(),
                stderr: said,
            })
        }
        ["disable", "--now", units @ ..] if !units.is_empty() => {
            let mut said = String::new();
            for u in units {
                if m.enabled.remove(*u) {
                    said.push_str(&format!("Removed \"{}/{u}\".\n", wants_dir(u)));
                }
            }
            Ok(CmdOutput {
                status: 0,
                stdout: String::new(),
                stderr: said,
            })
        }
        _ => crate::sim::unsupported(
            &std::iter::once("systemctl")
                .chain(args.iter().copied())
                .map(String::from)
                .collect::<Vec<_>>(),
        ),
    }
}

/// The directory whose link enables `unit` (Debian 13 links mdcheck's timers from md's monitor).
fn wants_dir(unit: &str) -> &'static str {
    if MDCHECK_TIMERS.contains(&unit) {
        WANTS_DIRS[1]
    } else {
        WANTS_DIRS[0]
    }
}

/// A unit systemd would find: one of hyraid's files, or the release's own.
fn unit_known(w: &Observed, unit: &str) -> bool {
    MDCHECK_TIMERS.contains(&unit)
        || w.boot
            .monitoring
            .files
            .contains_key(&format!("{UNIT_DIR}/{unit}"))
}

/// `systemd-analyze calendar SPEC`: the normalized form of what systemd's grammar reads (the
/// simulator takes weekday lists, dates with ranges and `*`, and times), as systemd 252 prints
/// it; anything else as systemd refuses it.
pub fn analyze_calendar(spec: &str) -> Result<CmdOutput, HostError> {
    match normalize_calendar(spec) {
        Some(norm) => out(&format!(
            "  Original form: {spec}\nNormalized form: {norm}\n    Next elapse: Sun 2027-01-03 01:00:00 UTC\n       (in UTC): Sun 2027-01-03 01:00:00 UTC\n       From now: 3 weeks 6 days left\n"
        )),
        None => fail(
            1,
            format!("Failed to parse calendar specification '{spec}': Invalid argument\n"),
        ),
    }
}

fn normalize_calendar(spec: &str) -> Option<String> {
    use crate::config::monitoring::{CALENDAR_SHORTHANDS, WEEKDAYS};
    let t = spec.trim();
    if CALENDAR_SHORTHANDS.contains(&t) {
        return Some(t.to_string());
    }
    let mut parts: Vec<&str> = t.split_whitespace().collect();
    // A time zone at the end (`UTC`, `Europe/Berlin`) is kept as written.
    let zone = parts
        .last()
        .filter(|z| {
            parts.len() > 1
                && (**z == "UTC" || z.contains('/') && z.chars().any(|c| c.is_ascii_alphabetic()))
        })
        .map(|z| z.to_string());
    if zone.is_some() {
        parts.pop();
    }
    let mut out = Vec::new();
    // Weekdays in any case, short or long (`sunday`, `Mon..Fri`), said short as systemd does.
    let short = |d: &str| {
        (WEEKDAYS.iter())
            .find(|(s, l)| d.eq_ignore_ascii_case(s) || d.eq_ignore_ascii_case(l))
            .map(|(s, _)| *s)
    };
    if let Some(first) = parts.first()
        && first
            .split([',', '.'])
            .filter(|x| !x.is_empty())
            .all(|d| short(d).is_some())
    {
        let mut said = String::new();
        let mut word = String::new();
        for c in first.chars().chain(std::iter::once(',')) {
            if c.is_ascii_alphabetic() {
                word.push(c);
                continue;
            }
            if !word.is_empty() {
                said.push_str(short(&word).unwrap_or_default());
                word.clear();
            }
            said.push(c);
        }
        said.pop();
        out.push(said);
        parts.remove(0);
    }
    let (date, time) = match parts.as_slice() {
        [] => ("*-*-*".to_string(), "00:00:00".to_string()),
        [x] if x.contains(':') => ("*-*-*".to_string(), (*x).to_string()),
        [x] => ((*x).to_string(), "00:00:00".to_string()),
        [d, t] => ((*d).to_string(), (*t).to_string()),
        _ => return None,
    };
    let field = |f: &str| {
        f == "*"
            || f.split([',', '.', '/'])
                .filter(|x| !x.is_empty())
                .all(|x| x.chars().all(|c| c.is_ascii_digit()))
    };
    let dp: Vec<&str> = date.split('-').collect();
    if dp.len() != 3 || !dp.iter().all(|f| field(f)) {
        return None;
    }
    let mut tp: Vec<String> = time.split(':').map(str::to_string).collect();
    if tp.len() == 2 {
        tp.push("00".into());
    }
    if tp.len() != 3 || !tp.iter().all(|f| field(f)) {
        return None;
    }
    let pad = |f: &str| {
        if f.len() == 1 && f != "*" {
            format!("0{f}")
        } else {
            f.to_string()
        }
    };
    let date = dp.iter().map(|f| pad(f)).collect::<Vec<_>>().join("-");
    let time = tp.iter().map(|f| pad(f)).collect::<Vec<_>>().join(":");
    out.push(date);
    out.push(time);
    out.extend(zone);
    Some(out.join(" "))
}

/// A monitoring file's content, when the simulated machine has it.
pub fn read_file(w: &Observed, path: &str) -> Option<String> {
    let m = &w.boot.monitoring;
    match path {
        CRON_MDADM => m.cron_mdadm.clone(),
        DEFAULT_MDADM => m.default_mdadm.clone(),
        _ if is_record(path) => m.records.get(path).cloned(),
        _ => m.files.get(path).cloned(),
    }
}

/// A file of hyraid's records (under /var/lib/hyraid).
fn is_record(path: &str) -> bool {
    path.strip_prefix(crate::observe::monitoring::RECORDS_DIR)
        .is_some_and(|r| r.starts_with('/') && !r.contains("/../"))
}

/// Replace a monitoring file; false when the path is not one.
pub fn replace_file(w: &mut Observed, path: &str, content: &str) -> bool {
    let m = &mut w.boot.monitoring;
    if is_record(path) {
        m.records.insert(path.into(), content.into());
    } else if path == DEFAULT_MDADM {
        m.default_mdadm = Some(content.into());
    } else if path == MONITORING_PATH || is_check_unit(path) {
        m.files.insert(path.into(), content.into());
    } else {
        return false;
    }
    true
}

/// `rm -f PATH` of one of hyraid's unit files.
pub fn remove_file(w: &mut Observed, path: &str) -> Result<CmdOutput, HostError> {
    if is_record(path) {
        w.boot.monitoring.records.remove(path);
        return out("");
    }
    if !is_check_unit(path) && path != MONITORING_PATH {
        return fail(
            1,
            format!("rm: the simulated host does not remove {path}\n"),
        );
    }
    w.boot.monitoring.files.remove(path);
    out("")
}

fn is_check_unit(path: &str) -> bool {
    path.strip_prefix(UNIT_DIR)
        .and_then(|r| r.strip_prefix('/'))
        .is_some_and(|n| {
            n.starts_with(crate::observe::monitoring::CHECK_UNIT_PREFIX) && !n.contains('/')
        })
}

/// The entries of a directory of monitoring files, when `path` is one.
pub fn list_dir(w: &Observed, path: &str) -> Option<Vec<String>> {
    let m = &w.boot.monitoring;
    if path == UNIT_DIR {
        return Some(
            m.files
                .keys()
                .filter_map(|p| p.strip_prefix(UNIT_DIR)?.strip_prefix('/'))
                .map(str::to_string)
                .collect(),
        );
    }
    if is_record(&format!("{path}/x")) {
        let prefix = format!("{path}/");
        return Some(
            m.records
                .keys()
                .filter_map(|p| p.strip_prefix(&prefix))
                .filter(|r| !r.contains('/'))
                .map(str::to_string)
                .collect(),
        );
    }
    let i = WANTS_DIRS.iter().position(|d| *d == path)?;
    Some(
        m.enabled
            .iter()
            .filter(|u| wants_dir(u) == WANTS_DIRS[i])
            .cloned()
            .collect(),
    )
}

/// Whether a file of the monitoring model exists: where hyraid is installed, and sendmail.
pub fn exists(w: &Observed, path: &str) -> Option<bool> {
    let m = &w.boot.monitoring;
    if crate::observe::monitoring::HYRAID_PATHS.contains(&path) {
        return Some(m.hyraid_path.as_deref() == Some(path));
    }
    if path == crate::observe::monitoring::SENDMAIL {
        return Some(m.sendmail);
    }
    if crate::observe::monitoring::SYSTEMCTL_PATHS.contains(&path) {
        return Some(!w.missing_tools.iter().any(|t| t == "systemctl"));
    }
    if path == crate::observe::monitoring::SYSTEMD_ANALYZE {
        return Some(w.boot.systemd);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::normalize_calendar as n;

    /// As systemd 252 normalizes them (`systemd-analyze calendar`), and what it refuses.
    #[test]
    fn calendars_read_as_systemd_reads_them() {
        for (spec, want) in [
            ("Sun *-*-1..7 01:00:00", "Sun *-*-1..7 01:00:00"),
            ("Sun 01:00 UTC", "Sun *-*-* 01:00:00 UTC"),
            ("sunday 3:00", "Sun *-*-* 03:00:00"),
            ("Mon..Fri 02:30", "Mon..Fri *-*-* 02:30:00"),
            ("monthly", "monthly"),
        ] {
            assert_eq!(n(spec).as_deref(), Some(want), "{spec}");
        }
        for spec in ["every sunday", "Sun 01:00 nowhere", "UTC"] {
            assert_eq!(n(spec), None, "{spec}");
        }
    }
}
