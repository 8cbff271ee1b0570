//! `hyraid status --format prometheus`: the machine's health in the Prometheus text exposition
//! format (version 0.0.4), as node_exporter's textfile collector reads it from a `*.prom` file:
//! each metric family once, with its HELP and TYPE lines, then its samples. Pure: the
//! observation, the plan of the file (when one is given) and the findings in, text out.

use super::{Finding, Severity};
use crate::observe::Observed;
use crate::plan::{Plan, Step};
use std::fmt::Write;

/// A label value escaped as the format asks: backslash, double quote and line feed.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One metric family: its HELP and TYPE lines and its samples (label pairs, value).
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }
    fn add(&mut self, labels: Vec<(&'static str, String)>, value: f64) {
        self.samples.push((labels, value));
    }
    fn write(&self, o: &mut String) {
        let _ = writeln!(o, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(o, "# TYPE {} gauge", self.name);
        for (labels, v) in &self.samples {
            let l: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", esc(v)))
                .collect();
            let labels = match l.is_empty() {
                true => String::new(),
                false => format!("{{{}}}", l.join(",")),
            };
            let _ = writeln!(o, "{}{labels} {v}", self.name);
        }
    }
}

/// The metrics of the arrays: degraded members, the running sync's progress, write-mostly
/// members, and (with a plan) the write-mostly flags the file asks for that the machine lost.
fn arrays(o: &Observed, plan: Option<&Plan>) -> Vec<Family> {
    let mut degraded = Family::new(
        "hyraid_md_degraded",
        "Members the md array is missing or has failed (0: complete).",
    );
    let mut ratio = Family::new(
        "hyraid_md_sync_ratio",
        "Fraction done of the array's running resync, recovery, check or reshape (1 when idle).",
    );
    let mut wm = Family::new(
        "hyraid_md_member_write_mostly",
        "1 when the member is write-mostly (md's dev-*/state), 0 when it is not.",
    );
    let mut lost = Family::new(
        "hyraid_md_write_mostly_lost",
        "Members the file marks write-mostly that are not (hyraid apply sets them again); only with a file.",
    );
    for a in &o.arrays {
        let id = |more: Vec<(&'static str, String)>| {
            let mut l = vec![
                ("array", a.name.clone().unwrap_or_default()),
                ("device", a.kname.clone()),
            ];
            l.extend(more);
            l
        };
        let failed = a.members.iter().filter(|m| m.faulty()).count() as u32;
        let working = a
            .members
            .iter()
            .filter(|m| m.has("in_sync") && !m.faulty())
            .count() as u32;
        let missing = a
            .degraded
            .max(a.raid_disks.saturating_sub(working))
            .max(failed);
        degraded.add(id(vec![]), missing as f64);
        let r = match (a.is_idle(), a.sync_completed) {
            (true, _) => 1.0,
            (false, Some((d, t))) if t > 0 => d as f64 / t as f64,
            (false, _) => 0.0,
        };
        ratio.add(id(vec![("action", a.sync_action.clone())]), r);
        if a.is_mirror() {
            for m in &a.members {
                let on = m.write_mostly() as u8 as f64;
                wm.add(id(vec![("member", m.kname.clone())]), on);
            }
        }
        if let Some(p) = plan {
            let n = p
                .steps
                .iter()
                .filter(|s| matches!(&s.step, Step::SetWriteMostly(w) if w.on && w.md == a.kname))
                .count();
            lost.add(id(vec![]), n as f64);
        }
    }
    vec![degraded, ratio, wm, lost]
}

/// The mirrors' checks, from their records: the last completed one, what it found, and where a
/// paused pass resumes.
fn checks(o: &Observed, r: &super::Records) -> Vec<Family> {
    let mut when = Family::new(
        "hyraid_check_last_completed_timestamp_seconds",
        "When the mirror's last completed check ended (seconds since the epoch); absent: never.",
    );
    let mut found = Family::new(
        "hyraid_check_mismatch_sectors",
        "Sectors that differed between the members in the mirror's last completed check (md's own mismatch_cnt when a check hyraid did not run came after hyraid's record).",
    );
    let mut running = Family::new(
        "hyraid_check_running",
        "1 while a check (or repair) of the mirror runs, else 0.",
    );
    let mut paused = Family::new(
        "hyraid_check_resume_ratio",
        "Where the mirror's paused check resumes, as a fraction of the array (0: none paused).",
    );
    for a in o
        .arrays
        .iter()
        .filter(|a| a.is_mirror() && a.metadata.is_none())
    {
        let id = || {
            vec![
                ("array", a.name.clone().unwrap_or_default()),
                ("device", a.kname.clone()),
            ]
        };
        let rec = r.of(a);
        if let Some(p) = rec.and_then(|x| x.last_completed.as_ref()) {
            when.add(id(), p.end as f64);
        }
        // md's own count when it is newer than the record (a check hyraid did not run).
        let sectors = super::checks::md_mismatches(a, rec)
            .or_else(|| Some(rec?.last_completed.as_ref()?.mismatches));
        if let Some(n) = sectors {
            found.add(id(), n as f64);
        }
        let on = matches!(a.sync_action.as_str(), "check" | "repair");
        running.add(id(), on as u8 as f64);
        let at = rec
            .and_then(|x| Some((x.resume_at?, x.last_run()?.total.max(1))))
            .map_or(0.0, |(at, t)| at as f64 / t as f64);
        paused.add(id(), at);
    }
    vec![when, found, running, paused]
}

/// The drives' SMART, as status read it.
fn drives(h: &super::Health) -> Vec<Family> {
    let mut fams = vec![
        Family::new(
            "hyraid_drive_smart_passed",
            "1 when the drive passes its own SMART assessment, 0 when it fails it.",
        ),
        Family::new(
            "hyraid_drive_reallocated_sectors",
            "ATA attribute 5, Reallocated_Sector_Ct (raw).",
        ),
        Family::new(
            "hyraid_drive_pending_sectors",
            "ATA attribute 197, Current_Pending_Sector (raw).",
        ),
        Family::new(
            "hyraid_drive_offline_uncorrectable_sectors",
            "ATA attribute 198, Offline_Uncorrectable (raw).",
        ),
        Family::new(
            "hyraid_drive_nvme_media_errors",
            "NVMe SMART log: media and data integrity errors.",
        ),
        Family::new(
            "hyraid_drive_nvme_critical_warning",
            "NVMe SMART log: critical warning bits (0: none).",
        ),
        Family::new(
            "hyraid_drive_nvme_percentage_used",
            "NVMe SMART log: percentage of rated endurance used.",
        ),
        Family::new(
            "hyraid_drive_scsi_grown_defects",
            "SCSI/SAS grown defect list entries.",
        ),
        Family::new("hyraid_drive_power_on_hours", "Power-on hours."),
        Family::new("hyraid_drive_temperature_celsius", "Current temperature."),
    ];
    let mut wm = Family::new(
        "hyraid_drive_write_mostly",
        "1 when the drive is a write-mostly member of a mirror (md reads it only during a check or rebuild).",
    );
    let mut readable = Family::new(
        "hyraid_drive_smart_readable",
        "1 when smartctl read the drive, 0 when it could not (the drive gone or not answering, or no permission); none for a drive that gives no SMART.",
    );
    for r in &h.readings {
        let Ok(x) = &r.health else { continue };
        let id = || {
            vec![
                ("disk", r.object.trim_start_matches("disk ").to_string()),
                ("serial", r.serial.clone().unwrap_or_default()),
            ]
        };
        if x.unreadable.is_some() {
            readable.add(id(), 0.0);
            continue;
        }
        if !x.available {
            continue;
        }
        readable.add(id(), 1.0);
        let values = [
            x.passed.map(|p| p as u64 as f64),
            x.reallocated.map(|v| v as f64),
            x.pending.map(|v| v as f64),
            x.offline_uncorrectable.map(|v| v as f64),
            x.nvme_media_errors.map(|v| v as f64),
            x.nvme_critical_warning.map(|v| v as f64),
            x.nvme_percentage_used.map(|v| v as f64),
            x.scsi_grown_defects.map(|v| v as f64),
            x.power_on_hours.map(|v| v as f64),
            x.temperature.map(|v| v as f64),
        ];
        for (fam, v) in fams.iter_mut().zip(values) {
            if let Some(v) = v {
                fam.add(id(), v);
            }
        }
        wm.add(id(), r.write_mostly as u8 as f64);
    }
    fams.push(wm);
    fams.push(readable);
    fams
}

/// The caches' blocks not yet written back to their origin LV.
fn caches(o: &Observed) -> Vec<Family> {
    let mut wc = Family::new(
        "hyraid_writecache_dirty_blocks",
        "Blocks of the LV's dm-writecache not yet written back (total - free).",
    );
    let mut dc = Family::new(
        "hyraid_dmcache_dirty_blocks",
        "Dirty blocks of the LV's dm-cache (lvs cache_dirty_blocks).",
    );
    for l in o.lvm.lvs.iter().filter(|l| !l.hidden) {
        let id = || vec![("vg", l.vg.clone()), ("lv", l.name.clone())];
        if let Some(w) = &l.writecache {
            let used = w
                .total_blocks
                .zip(w.free_blocks)
                .and_then(|(t, f)| t.checked_sub(f))
                .or(w.writeback_blocks);
            if let Some(n) = used {
                wc.add(id(), n as f64);
            }
        }
        if let Some(n) = l.cache.as_ref().and_then(|c| c.dirty_blocks) {
            dc.add(id(), n as f64);
        }
    }
    vec![wc, dc]
}

/// The metrics of one status run: arrays, caches, findings by severity, the exit code, and with
/// a plan, the drift (a step to run or a refusal: the machine is not what the file says).
pub fn render_prometheus(
    o: &Observed,
    plan: Option<&Plan>,
    findings: &[Finding],
    records: &super::Records,
    health: &super::Health,
) -> String {
    let mut fams = arrays(o, plan);
    fams.extend(checks(o, records));
    fams.extend(drives(health));
    fams.extend(caches(o));
    if let Some(p) = plan
        && p.desired.boot.is_some()
    {
        let mut ready = Family::new(
            "hyraid_boot_disk_ready",
            "1 when the boot disk can start the machine now (its loader current, its firmware entry made, its copy of /boot in sync), else 0.",
        );
        for (disk, problems) in super::loaders::readiness(o, &p.desired) {
            ready.add(vec![("disk", disk)], problems.is_empty() as u8 as f64);
        }
        fams.push(ready);
    }
    let mut by = Family::new(
        "hyraid_findings",
        "Findings of hyraid status by severity (lint: advice from the field's practice).",
    );
    for (s, name) in [
        (Severity::Error, "error"),
        (Severity::Degraded, "degraded"),
        (Severity::Refused, "refused"),
        (Severity::Lint, "lint"),
        (Severity::Info, "info"),
    ] {
        let n = findings.iter().filter(|f| f.severity == s).count();
        by.add(vec![("severity", name.into())], n as f64);
    }
    fams.push(by);
    let mut exit = Family::new(
        "hyraid_status_exit_code",
        "Exit code of hyraid status: 0 healthy, 1 error, 2 degraded, refused or lint findings.",
    );
    exit.add(vec![], super::exit_code(findings) as f64);
    fams.push(exit);
    if let Some(p) = plan {
        let mut drift = Family::new(
            "hyraid_drift",
            "1 when the machine differs from the file (the plan has steps or refusals), else 0.",
        );
        drift.add(
            vec![],
            (!p.is_empty() || !p.refused.is_empty()) as u8 as f64,
        );
        let mut steps = Family::new(
            "hyraid_plan_steps",
            "Steps the plan of the file would run on this machine.",
        );
        steps.add(vec![], p.steps.len() as f64);
        let mut refused = Family::new(
            "hyraid_plan_refused",
            "Changes the file asks for that hyraid refuses to make here.",
        );
        refused.add(vec![], p.refused.len() as f64);
        fams.extend([drift, steps, refused]);
    }
    let mut out = String::new();
    for f in &fams {
        f.write(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(esc("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn a_family_without_samples_keeps_its_help_and_type() {
        let mut o = String::new();
        Family::new("hyraid_x", "Help.").write(&mut o);
        assert_eq!(o, "# HELP hyraid_x Help.\n# TYPE hyraid_x gauge\n");
    }
}
