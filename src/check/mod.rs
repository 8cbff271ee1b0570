//! `hyraid check`: a mirror's check run now (by hand, or by its timer), resumed where the last
//! run stopped, within a time budget, its result kept in the mirror's record
//! (`history::checks`). md reads every member and compares the copies: the only time a
//! write-mostly HDD is read at all.

pub mod run;

use crate::config::monitoring::{
    CheckSettings, DEFAULT_BUDGET_SECS, MonitoringSettings, WhenDegraded,
};
use crate::history::checks::{self, CheckRecord, Outcome, Run};
use crate::host::Host;
use std::io::Write;
use std::time::Duration;

/// How progress is shown: a bar on a terminal, a line a minute otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressKind {
    Bar,
    Lines,
    Quiet,
}

/// The progress of one run (a bar when asked for).
pub struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    fn start(kind: ProgressKind, mirror: &str, from: u64, total: u64) -> Progress {
        if kind != ProgressKind::Bar || total == 0 {
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "check {msg} [{bar:40}] {percent}% (eta {eta})",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.set_message(mirror.to_string());
        bar.set_position(from);
        Progress(Some(bar))
    }
    fn update(&mut self, done: u64) {
        if let Some(b) = &self.0 {
            b.set_position(done);
        }
    }
    fn finish(&mut self) {
        if let Some(b) = self.0.take() {
            b.finish_and_clear();
        }
    }
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct Options {
    pub budget: Duration,
    pub speed_max_kib: Option<u64>,
    pub when_degraded: WhenDegraded,
    /// `scheduled` (its timer) or `manual`.
    pub trigger: &'static str,
    /// How often the array is looked at.
    pub poll: Duration,
    pub progress: ProgressKind,
}

impl Options {
    /// A run with a mirror's settings from the file (or hyraid's defaults without them).
    pub fn of(settings: Option<&CheckSettings>, trigger: &'static str) -> Options {
        Options {
            budget: Duration::from_secs(
                settings.map_or(DEFAULT_BUDGET_SECS, |s| s.spec.budget_secs),
            ),
            speed_max_kib: settings.and_then(|s| s.spec.speed_max_kib),
            when_degraded: settings.map(|s| s.spec.when_degraded).unwrap_or_default(),
            trigger,
            poll: Duration::from_secs(2),
            progress: ProgressKind::Quiet,
        }
    }
}

/// The array a mirror's check runs on.
#[derive(Debug, Clone)]
pub struct Target {
    pub mirror: String,
    pub device: String,
    pub kname: String,
    pub uuid: String,
}

/// The mirror `name` of the settings (or, without settings, the array `/dev/md/NAME`), as it is
/// on the machine now.
pub fn target(
    host: &dyn Host,
    settings: Option<&MonitoringSettings>,
    name: &str,
) -> Result<Target, String> {
    let device = settings
        .and_then(|s| s.checks.get(name))
        .map(|c| c.device.clone())
        .unwrap_or_else(|| format!("/dev/md/{name}"));
    let kname = if let Some(k) = device.strip_prefix("/dev/").filter(|k| !k.contains('/')) {
        k.to_string()
    } else {
        let link = host.read_link(&device).map_err(|_| {
            format!(
                "mirror {name}: {device} does not exist (is the array running? `cat /proc/mdstat`)"
            )
        })?;
        link.rsplit('/').next().unwrap_or(&link).to_string()
    };
    let uuid = host
        .read_file(&format!("/sys/block/{kname}/md/uuid"))
        .map(|u| u.trim().to_string())
        .ok()
        .filter(|u| u.chars().any(|c| c.is_ascii_hexdigit() && c != '0'))
        .ok_or_else(|| {
            format!("mirror {name}: {device} ({kname}) shows no array UUID (is it running?)")
        })?;
    Ok(Target {
        mirror: name.into(),
        device,
        kname,
        uuid,
    })
}

/// Run the check of `t` now and keep the run in its record. Returns the run and the record.
pub fn check(
    host: &dyn Host,
    t: &Target,
    opts: &Options,
    stop: &dyn Fn() -> bool,
    out: &mut dyn Write,
) -> Result<(Run, CheckRecord), String> {
    let mut record =
        checks::read(host, &t.uuid)?.unwrap_or_else(|| CheckRecord::new(&t.mirror, &t.uuid));
    record.mirror = t.mirror.clone();
    if let Some(at) = record.resume_at {
        let _ = writeln!(out, "check {}: resuming at sector {at}", t.mirror);
    }
    let r = run::run(host, t, &mut record, opts, stop, out);
    let resume = matches!(r.outcome, Outcome::Paused | Outcome::Interrupted).then_some(r.to);
    record.push(r.clone(), resume);
    checks::write(host, &record)?;
    Ok((r, record))
}

/// The mirrors a check without a name covers: the settings' checked mirrors.
pub fn mirrors(settings: Option<&MonitoringSettings>) -> Vec<String> {
    settings
        .map(|s| s.checks.keys().cloned().collect())
        .unwrap_or_default()
}

/// The exit status of runs: 1 when one failed, 2 when one found mismatches, else 0.
pub fn exit_code(runs: &[(Run, CheckRecord)]) -> u8 {
    if runs.iter().any(|(r, _)| r.outcome == Outcome::Failed) {
        1
    } else if runs.iter().any(|(r, rec)| {
        r.outcome == Outcome::Completed
            && rec
                .last_completed
                .as_ref()
                .is_some_and(|p| p.mismatches > 0)
    }) {
        2
    } else {
        0
    }
}
