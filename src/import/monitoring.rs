//! The monitoring hyraid keeps on the machine (its settings file), written back as the file's
//! `check:` of each mirror and its `alerts:`, so that the imported file plans no change to them.

use crate::config::monitoring::{
    CheckSpec, MonitoringSettings, RawAlerts, RawCheck, RawCheckSettings, RawEmail, RawHttpSink,
    WhenDegraded, human_duration,
};
use crate::config::raw::RawMirror;
use crate::observe::Observed;
use crate::observe::monitoring::MONITORING_PATH;
use std::collections::BTreeMap;

/// hyraid's settings on the machine, when there are some it can read.
pub(super) fn settings(o: &Observed) -> Option<MonitoringSettings> {
    MonitoringSettings::parse(o.boot.monitoring.files.get(MONITORING_PATH)?).ok()
}

/// Each imported mirror gets the check the settings give the array of its device.
pub(super) fn checks(s: &MonitoringSettings, mirrors: &mut BTreeMap<String, RawMirror>) {
    for (name, m) in mirrors.iter_mut() {
        let dev = m
            .device
            .clone()
            .unwrap_or_else(|| format!("/dev/md/{name}"));
        if let Some(c) = s.checks.values().find(|c| c.device == dev) {
            m.check = Some(RawCheck::Settings(raw_check(&c.spec)));
        }
    }
}

fn raw_check(c: &CheckSpec) -> RawCheckSettings {
    RawCheckSettings {
        schedule: Some(c.schedule.clone()),
        budget: Some(human_duration(c.budget_secs)),
        speed_max: c.speed_max_kib.map(|k| super::disks::size(k * 1024)),
        when_degraded: (c.when_degraded != WhenDegraded::Skip).then_some(c.when_degraded),
        overdue_after: Some(human_duration(c.overdue_after_secs)),
        distribution: None,
    }
}

pub(super) fn alerts(s: &MonitoringSettings) -> Option<RawAlerts> {
    let a = s.alerts.as_ref()?;
    let http = |h: &crate::config::monitoring::HttpSink| RawHttpSink {
        url: h.url.clone(),
        token_file: h.token_file.clone(),
    };
    Some(RawAlerts {
        email: a.email.as_ref().map(|e| RawEmail {
            to: e.to.clone(),
            from: e.from.clone(),
        }),
        webhook: a.webhook.as_ref().map(http),
        ntfy: a.ntfy.as_ref().map(http),
        program: a.program.clone(),
        reminder: Some(human_duration(a.reminder_secs)),
    })
}
