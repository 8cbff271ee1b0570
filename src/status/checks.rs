//! The mirrors' checks, from the records `hyraid check` keeps: the last completed check of each
//! mirror, a mismatch it found (a finding, with what `repair` would do), a mirror never checked
//! or overdue, a pass paused, a check running (not an alarm), and which schedules check it.

use super::{Finding, Findings, Severity};
use crate::config::monitoring::{DEFAULT_OVERDUE_SECS, MonitoringSettings, human_duration};
use crate::history::checks::CheckRecord;
use crate::host::Host;
use crate::observe::names::norm_uuid;
use crate::observe::{MdArray, Observed};
use std::collections::BTreeMap;

/// What `status` reads besides the observation: hyraid's monitoring settings and the mirrors'
/// check records (by normalized UUID).
#[derive(Debug, Clone, Default)]
pub struct Records {
    pub settings: Option<MonitoringSettings>,
    pub checks: BTreeMap<String, CheckRecord>,
    /// Records that could not be read, with why.
    pub unreadable: Vec<String>,
}

impl Records {
    pub fn read(host: &dyn Host, o: &Observed) -> Records {
        let mut r = Records::default();
        if let Some(t) = o
            .boot
            .monitoring
            .files
            .get(crate::observe::monitoring::MONITORING_PATH)
        {
            match MonitoringSettings::parse(t) {
                Ok(s) => r.settings = Some(s),
                Err(e) => r.unreadable.push(e),
            }
        }
        for a in o.arrays.iter().filter(|a| a.is_mirror()) {
            let Some(u) = a.uuid.as_deref() else { continue };
            match crate::history::checks::read(host, u) {
                Ok(Some(rec)) => {
                    r.checks.insert(norm_uuid(u), rec);
                }
                Ok(None) => {}
                Err(e) => r.unreadable.push(e),
            }
        }
        r
    }

    pub fn of(&self, a: &MdArray) -> Option<&CheckRecord> {
        self.checks.get(&norm_uuid(a.uuid.as_deref()?))
    }

    /// The mirror of the settings whose array is `a` (by its device's name), if hyraid checks it.
    fn settings_of(
        &self,
        a: &MdArray,
    ) -> Option<(&String, &crate::config::monitoring::CheckSettings)> {
        self.settings.as_ref()?.checks.iter().find(|(name, c)| {
            a.name.as_deref() == Some(name.as_str())
                || c.device == format!("/dev/{}", a.kname)
                || a.name
                    .as_deref()
                    .is_some_and(|n| c.device == format!("/dev/md/{n}"))
        })
    }
}

/// The sectors md's own count (`mismatch_cnt`) says its last check found, when that is not what
/// hyraid's record says: a check or repair after hyraid's (the release's schedule, one by hand)
/// found them, or no record of hyraid's has it. md resets the count when the next check starts
/// and when the array is assembled, so 0 says nothing, and a count read mid-check is partial.
pub fn md_mismatches(a: &MdArray, rec: Option<&CheckRecord>) -> Option<u64> {
    let n = a.mismatch_cnt;
    // hyraid's own runs read md's count at their end: the same count is theirs.
    let ours = rec.is_some_and(|r| {
        r.last_completed.as_ref().is_some_and(|p| p.mismatches == n)
            || r.runs.iter().any(|x| x.mismatches == n)
    });
    (a.is_idle() && n > 0 && !ours).then_some(n)
}

/// The findings of the mirrors' checks, `now` in seconds since the epoch.
pub fn checks(o: &Observed, r: &Records, now: u64) -> Vec<Finding> {
    let mut f = Findings::default();
    for e in &r.unreadable {
        f.add(Severity::Error, "records".into(), e.clone(), "hyraid keeps its checks' records and its settings as JSON", "move the file away (a new record starts), or run `hyraid apply` to write the settings again");
    }
    let dist = o.boot.monitoring.distribution_checks();
    for a in o
        .arrays
        .iter()
        .filter(|a| a.is_mirror() && a.metadata.is_none() && a.array_state != "inactive")
    {
        let object = a.title();
        let rec = r.of(a);
        let ours = r.settings_of(a);
        let overdue_after = ours.map_or(DEFAULT_OVERDUE_SECS, |(_, c)| c.spec.overdue_after_secs);
        let name = a.name.clone().unwrap_or_else(|| a.kname.clone());
        if matches!(a.sync_action.as_str(), "check" | "repair") {
            let pct = a
                .sync_completed
                .map(|(d, t)| d as f64 * 100.0 / t.max(1) as f64)
                .unwrap_or(0.0);
            f.add(
                Severity::Info,
                object.clone(),
                format!("a {} runs: {pct:.1}%", a.sync_action),
                "md reads every member and compares the copies",
                "nothing to do; `hyraid check` shows where it is",
            );
        } else if let Some(at) = rec.and_then(|r| r.resume_at) {
            let total = rec.and_then(|r| r.last_run()).map_or(1, |l| l.total.max(1));
            f.add(
                Severity::Info,
                object.clone(),
                format!(
                    "a check is paused at {:.1}%; its next run resumes there",
                    at as f64 * 100.0 / total as f64
                ),
                "a run stops at its budget and the next scheduled run goes on",
                &format!("nothing to do, or `hyraid check {name} --now` to go on now"),
            );
        }
        let resyncing =
            matches!(a.sync_action.as_str(), "resync" | "recover" | "reshape") || a.resync_pending;
        let md_found = md_mismatches(a, rec);
        match rec.and_then(|r| r.last_completed.as_ref()) {
            // md's count is newer than hyraid's record (or there is no record): md's last
            // check, whoever ran it, found sectors that differ.
            _ if md_found.is_some() => mismatch(&mut f, &object, &name, &a.kname, md_found.unwrap_or_default(), None),
            Some(p) if p.mismatches > 0 => mismatch(&mut f, &object, &name, &a.kname, p.mismatches, Some(now.saturating_sub(p.end))),
            Some(p) if now.saturating_sub(p.end) > overdue_after => f.lint(
                "check-overdue",
                object.clone(),
                format!("its last completed check was {} ago (overdue after {})", human_duration(now.saturating_sub(p.end)), human_duration(overdue_after)),
                "a write-mostly member is read only by a check: its bad sectors surface when the other member dies and the rebuild reads it",
                &format!("`hyraid check {name} --now`, and see why its schedule did not run (`systemctl status hyraid-check@{name}.timer`)"),
            ),
            Some(p) => f.add(Severity::Info, object.clone(), format!("last check completed {} ago, no mismatch", human_duration(now.saturating_sub(p.end))), "md compared every member", "nothing to do"),
            None if a.sync_action == "check" || ours.is_none() => {}
            None if resyncing => f.add(Severity::Info, object.clone(), "not checked yet: it is resyncing, and its first check runs on its schedule after".into(), "a check compares the members once they hold the same data", "nothing to do"),
            None => f.lint(
                "never-checked",
                object.clone(),
                "no check of it has completed (hyraid's record of its checks has none)".into(),
                "md reads a write-mostly member only during a check: its bad sectors surface when the other member dies and the rebuild reads it for the first time",
                &format!("`hyraid check {name} --now` now (it resumes where it stops), or let its schedule run it (`systemctl list-timers 'hyraid-check@*'`)"),
            ),
        }
        match (ours.is_some(), dist.is_empty()) {
            (false, true) => f.lint(
                "no-scheduled-check",
                object.clone(),
                "no schedule checks it: neither hyraid's (`check:` in the file) nor the release's".into(),
                "without a scheduled check a member's silent errors are found only by the rebuild that needs it",
                "add a `check:` to the file (at the top for every mirror) and apply it",
            ),
            (false, false) => f.add(
                Severity::Info,
                object.clone(),
                format!("checked by the release's schedule ({})", crate::plan::monitoring_describe(&dist)),
                "hyraid keeps no record of those checks, so it cannot say when the last one ended (md's mismatch_cnt still tells what it found)",
                "nothing to do; a `check:` in the file makes hyraid schedule, record and report the checks",
            ),
            (true, false) => f.lint(
                "two-check-schedules",
                object.clone(),
                format!("two schedules check it: hyraid's and the release's ({})", crate::plan::monitoring_describe(&dist)),
                "each reads every member in full: twice the wear and the load",
                "give the file `check: { distribution: off }` (hyraid switches the release's off), or remove this mirror's `check:`",
            ),
            (true, true) => {}
        }
    }
    f.0
}

/// A check found sectors that differ: what it means and what `repair` would do.
fn mismatch(
    f: &mut Findings,
    object: &str,
    name: &str,
    kname: &str,
    sectors: u64,
    ago: Option<u64>,
) {
    let when = match ago {
        Some(s) => format!("its last check (completed {} ago)", human_duration(s)),
        None => {
            "md's last check or repair (its mismatch_cnt, newer than any record of hyraid's)".into()
        }
    };
    f.add(
        Severity::Degraded,
        object.to_string(),
        format!("{when} found {sectors} sector(s) that differ between the members"),
        "one copy is not what the other holds: a write lost on one member (a power cut with a drive cache on, a cable), or a sector that reads back wrong. md cannot tell which copy is right",
        &format!("look for I/O errors (`dmesg`, `smartctl -a` of each member); then `echo repair > /sys/block/{kname}/md/sync_action` has md copy the first member that reads (on RAID1: the lowest slot in sync, usually the SSD) over the others, and `hyraid check {name} --now` checks again. Back up what matters first"),
    );
}
