//! `hyraid status`: health of the arrays, LVs and drive caches, and lints from the field's
//! practice, each with the reason and the fix. Pure: observation (+ the file, + mdadm.conf) in,
//! findings out.

mod arrays;
mod boot;
pub mod checks;
mod drives;
mod encryption;
mod esp;
pub mod health;
pub mod loaders;
mod lvm;
mod prometheus;
mod render;

use crate::config::Desired;
use crate::observe::Observed;
use crate::observe::names::mdadm_conf_uuids;
pub use checks::Records;
pub use drives::stable_name;
pub use esp::system_disks;
pub use health::Health;
pub use prometheus::render_prometheus;
pub use render::render_text;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Lint,
    /// The file asks for a change hyraid refuses to make (from the plan).
    Refused,
    Degraded,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub object: String,
    pub message: String,
    pub reason: String,
    pub fix: String,
    /// For a lint a file may accept (see [`ACCEPTABLE_LINTS`]): its name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lint: Option<&'static str>,
}

pub use crate::config::desired::ACCEPTABLE_LINTS;

/// Exit code of `hyraid status`: 0 healthy, 1 error, 2 degraded or lint findings.
pub fn exit_code(findings: &[Finding]) -> u8 {
    match findings.iter().map(|f| f.severity).max() {
        Some(Severity::Error) => 1,
        Some(Severity::Degraded) | Some(Severity::Refused) | Some(Severity::Lint) => 2,
        _ => 0,
    }
}

/// The findings as the checks add them, in the order they add them (sorted once at the end).
#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    fn add(
        &mut self,
        severity: Severity,
        object: String,
        message: String,
        reason: &str,
        fix: &str,
    ) {
        self.0.push(Finding {
            severity,
            object,
            message,
            reason: reason.into(),
            fix: fix.into(),
            lint: None,
        });
    }

    /// A lint the file may accept, by its name in [`ACCEPTABLE_LINTS`].
    fn lint(
        &mut self,
        name: &'static str,
        object: String,
        message: String,
        reason: &str,
        fix: &str,
    ) {
        debug_assert!(ACCEPTABLE_LINTS.iter().any(|(n, _)| *n == name));
        self.add(Severity::Lint, object, message, reason, fix);
        if let Some(last) = self.0.last_mut() {
            last.lint = Some(name);
        }
    }
}

/// The lints `d` accepts become info: shown, with the word, and no longer counted.
fn accepted(findings: &mut [Finding], d: &Desired) {
    for f in findings.iter_mut() {
        let Some(name) = f.lint else { continue };
        if d.accept
            .get(&f.object)
            .is_some_and(|l| l.iter().any(|x| x == name))
        {
            f.severity = Severity::Info;
            f.message = format!("{} (accepted in the file: {name})", f.message);
        }
    }
}

/// Health and lints of the machine: the arrays, the /dev/md leftovers, the devices that could
/// not be probed, the writecaches and, with a file, the disks it names. Most severe first.
pub fn status(o: &Observed, desired: Option<&Desired>, mdadm_conf: Option<&str>) -> Vec<Finding> {
    let mut f = Findings::default();
    let conf_uuids = mdadm_conf.map(mdadm_conf_uuids).unwrap_or_default();
    arrays::arrays(o, &conf_uuids, &mut f);
    arrays::dev_md_strays(o, &mut f);
    drives::probe_errors(o, &mut f);
    esp::esp_redundancy(o, desired, &mut f);
    lvm::writecaches(o, desired, &mut f);
    if let Some(t) = &o.boot.monitoring.tune_run {
        f.add(
            Severity::Lint,
            format!("lv {}", t.lv),
            format!(
                "a `hyraid tune` run did not end: it was measuring `{}`{}",
                t.measuring,
                match t.started {
                    0 => String::new(),
                    s => format!(" (started {})", humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s))),
                }
            ),
            "tune changes the mirror's settings, drive caches and writecache while it measures and puts the file's back when it ends; this run was killed or lost power before it could, so the machine may differ from the file",
            &format!(
                "run `hyraid plan FILE` to see what differs, then `hyraid apply FILE`: it puts the file's settings back (and removes a scratch LV) and ends the run's record{}",
                t.test_file
                    .as_ref()
                    .map(|f| format!("; remove fio's test file if it is left (`rm -f {f}`)"))
                    .unwrap_or_default()
            ),
        );
    }
    lvm::dm_caches(o, desired, &mut f);
    lvm::moves(o, desired, &mut f);
    lvm::filesystems(o, desired, &mut f);
    if let Some(d) = desired {
        drives::named_disks(o, d, &mut f);
        lvm::declared_lvs(o, d, &mut f);
        encryption::encryption(o, d, &mut f);
        loaders::boot_disks(o, d, &mut f);
    }
    let mut f = f.0;
    if let Some(d) = desired {
        accepted(&mut f, d);
    }
    f.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.object.cmp(&b.object)));
    f
}

/// What stops the machine from booting when a disk of its mirrored system dies (the ESPs):
/// the findings `import` says of the machine it describes.
pub fn boot_redundancy(o: &Observed) -> Vec<Finding> {
    let mut f = Findings::default();
    esp::esp_redundancy(o, None, &mut f);
    f.0
}

/// The plan's refusals as findings: a machine the file cannot be applied to is not healthy.
pub fn refusals(p: &crate::plan::Plan) -> Vec<Finding> {
    p.refused
        .iter()
        .map(|r| Finding {
            severity: Severity::Refused,
            object: r.object.clone(),
            message: r.reason.clone(),
            reason: "the file asks for this, and `hyraid apply` refuses to do it (it runs nothing while a change is refused)".into(),
            fix: r.fix.clone(),
            lint: None,
        })
        .collect()
}

/// Where mdadm reads its configuration: /etc/mdadm.conf when it exists, else
/// /etc/mdadm/mdadm.conf.
pub const MDADM_CONF_PATHS: [&str; 2] = ["/etc/mdadm.conf", "/etc/mdadm/mdadm.conf"];

/// `hyraid status`'s verb: [`status`], and with a file, what it asks and hyraid refuses (or why
/// it cannot be planned here): a machine the file cannot be applied to is not healthy. Most
/// severe first; with the file's plan, which the metrics' drift comes from.
pub fn check(
    o: &Observed,
    desired: Option<&Desired>,
    mdadm_conf: Option<&str>,
) -> (Vec<Finding>, Option<crate::plan::Plan>) {
    let mut findings = status(o, desired, mdadm_conf);
    let mut plan = None;
    if let Some(d) = desired {
        match crate::plan::plan(d, o, crate::plan::Policy::default()) {
            Ok(p) => {
                // A disk the machine lacks is reported once: status's finding, with the
                // plan's fix (which names what is there, and the id one typo away).
                for r in refusals(&p) {
                    match findings.iter_mut().find(|f| {
                        r.object.starts_with("disk ")
                            && f.object == r.object
                            && f.severity >= Severity::Degraded
                    }) {
                        Some(f) => f.fix = r.fix,
                        None => findings.push(r),
                    }
                }
                plan = Some(p);
            }
            Err(e) => findings.push(Finding {
                severity: Severity::Error,
                object: "file".into(),
                message: e.to_string(),
                reason: "hyraid cannot plan this file on this machine".into(),
                fix: "see the message; `hyraid plan` shows the same".into(),
                lint: None,
            }),
        }
        findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.object.cmp(&b.object)));
    }
    (findings, plan)
}

/// The findings of the verb with what `hyraid status` reads besides the observation (the
/// checks' records, `now` in seconds since the epoch) added, the file's accepted lints made info,
/// most severe first.
pub fn with_records(
    mut findings: Vec<Finding>,
    o: &Observed,
    desired: Option<&Desired>,
    records: &Records,
    health: &Health,
    now: u64,
) -> Vec<Finding> {
    let mut more = checks::checks(o, records, now);
    let mut h = Findings::default();
    health::findings(health, &mut h);
    more.extend(h.0);
    if let Some(d) = desired {
        accepted(&mut more, d);
    }
    findings.extend(more);
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.object.cmp(&b.object)));
    findings
}
