//! `hyraid alert --test`: a test message through every sink, each one's outcome said; md's
//! monitor calling hyraid as its PROGRAM (`hyraid EVENT DEVICE [MEMBER]`); and what `status
//! --alert` (the drift unit) sends of its findings.

use super::machine;
use crate::alert::{self, Alert, Problem, State};
use crate::config::monitoring::{AlertsSpec, MonitoringSettings};
use crate::error::{Error, msg};
use crate::host::{Host, RealHost};
use crate::observe::monitoring::MONITORING_PATH;
use crate::status::{Finding, Severity};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct AlertArgs {
    /// Send a test message through every sink installed on this machine (the `alerts:` of the
    /// file `hyraid apply` last applied, kept in /etc/hyraid/monitoring.json) and say how each
    /// went (exit 1 when one failed).
    #[arg(long, required = true)]
    test: bool,
}

/// The alerts of hyraid's settings on the machine; None without.
pub(super) fn spec(host: &dyn Host) -> Result<Option<AlertsSpec>, Error> {
    match host.read_file(MONITORING_PATH) {
        Ok(t) => Ok(MonitoringSettings::parse(&t)
            .map_err(|e| msg(format!("{MONITORING_PATH}: {e}")))?
            .alerts),
        Err(_) => Ok(None),
    }
}

/// What `status --alert` finds of where its alerts would go, before it sends any: no sink on
/// this machine, said as information when no one asked for alerts (a fleet that alerts from
/// the textfile runs the drift unit too) and as an error when the file has `alerts:` not yet
/// installed (so the drift unit fails where a person sees it); or a file whose `alerts:` are
/// not the ones installed (sent through the installed ones).
pub(super) fn sink_findings(
    host: &dyn Host,
    d: Option<&crate::config::Desired>,
) -> Result<Vec<Finding>, Error> {
    let installed = spec(host)?;
    let filed = d.and_then(|d| d.alerts.as_ref());
    let finding = |severity, message: String, reason: &str, fix: &str| Finding {
        severity,
        object: "alerts".into(),
        message,
        reason: reason.into(),
        fix: fix.into(),
        lint: None,
    };
    Ok(match (installed, filed) {
        (None, Some(_)) => vec![finding(
            Severity::Error,
            format!("no alert sink is configured on this machine ({MONITORING_PATH} has no `alerts`): nothing was sent"),
            "the file's `alerts:` are not installed yet, and an alert that cannot go anywhere is not sent",
            "run `hyraid apply` with the file: it installs its alerts",
        )],
        (None, None) => vec![finding(
            Severity::Info,
            format!("no alert sink is configured on this machine ({MONITORING_PATH} has no `alerts`): nothing was sent"),
            "`--alert` sends through the alerts `hyraid apply` installs, and there are none",
            "give the file an `alerts:` section (email, webhook, ntfy or a program: docs/monitoring.md) and run `hyraid apply`",
        )],
        (Some(i), Some(f)) if i != *f => vec![finding(
            Severity::Info,
            "the file's `alerts:` differ from those installed on this machine: this run sends through the installed ones".into(),
            "alerts go where the last `hyraid apply` put them",
            "run `hyraid apply` with the file to install its alerts",
        )],
        _ => vec![],
    })
}

pub(super) fn run(sim: &Option<PathBuf>, _a: AlertArgs) -> Result<u8, Error> {
    let m = machine(sim)?;
    let host = m.host();
    let Some(spec) = spec(host)? else {
        return Err(msg(format!(
            "no alerts to test: {MONITORING_PATH} has none (give the file an `alerts:` and apply it)"
        )));
    };
    let now = crate::history::now_secs();
    let a = Alert {
        host: host.hostname(),
        state: State::Test,
        severity: "info".into(),
        object: "hyraid".into(),
        event: "test".into(),
        message: "a test alert from `hyraid alert --test`".into(),
        fix: "nothing to do: this is what hyraid's alerts look like".into(),
        time: now,
    };
    let deliveries = alert::sinks::send(host, &spec, &a, &[]);
    let mut failed = 0;
    let mut text = String::new();
    for d in &deliveries {
        match &d.result {
            Ok(()) if d.simulated => text.push_str(&format!(
                "{}: simulated, not sent (the machine is simulated: nothing leaves it)\n",
                d.sink
            )),
            Ok(()) => text.push_str(&format!("{}: sent\n", d.sink)),
            Err(e) => {
                failed += 1;
                text.push_str(&format!("{}: FAILED: {e}\n", d.sink));
            }
        }
    }
    super::out(text)?;
    Ok(if failed > 0 { 1 } else { 0 })
}

/// mdadm's monitor ran hyraid as its PROGRAM: send the event where the alerts go. Never fails
/// mdadm's way (it ignores the exit status): what happened goes to standard error (the journal).
pub fn md_event(args: &[String]) -> std::process::ExitCode {
    let host = RealHost;
    let spec = match spec(&host) {
        Ok(Some(s)) => s,
        Ok(None) => {
            super::err_line(&format!(
                "hyraid: md event {} ignored: {MONITORING_PATH} has no alerts",
                args.join(" ")
            ));
            return std::process::ExitCode::SUCCESS;
        }
        Err(e) => {
            super::err_line(&format!(
                "hyraid: md event {}: {}",
                args.join(" "),
                e.report()
            ));
            return std::process::ExitCode::FAILURE;
        }
    };
    match alert::md_event::handle(&host, &spec, args, crate::history::now_secs()) {
        Ok(sent) => {
            for l in alert::report(&sent).lines() {
                super::err_line(&format!("hyraid: {l}"));
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            super::err_line(&format!("hyraid: md event {}: {e}", args.join(" ")));
            std::process::ExitCode::FAILURE
        }
    }
}

/// What the drift unit sends: each finding that is more than information, and the drift, as a
/// problem; those said before and gone now, as resolved.
pub(super) fn findings(
    host: &dyn Host,
    findings: &[Finding],
    plan: Option<&crate::plan::Plan>,
) -> Result<String, Error> {
    send(host, findings, plan, true)
}

/// [`findings`]; `resolve`: whether what was said and is not found now is resolved (only a
/// run that looked at everything may say so).
pub(super) fn send(
    host: &dyn Host,
    findings: &[Finding],
    plan: Option<&crate::plan::Plan>,
    resolve: bool,
) -> Result<String, Error> {
    let Some(spec) = spec(host)? else {
        return Ok(String::new());
    };
    let now = crate::history::now_secs();
    let word = |s: Severity| match s {
        Severity::Error => "error",
        Severity::Degraded => "degraded",
        Severity::Refused => "refused",
        Severity::Lint => "lint",
        Severity::Info => "info",
    };
    // One alert per object: its most severe finding (findings come most severe first), with
    // what else is found on it said in the same alert. A failed member is one alert, not one
    // for the member, one for the degraded array and one for the plan's refusal.
    let mut problems: Vec<Problem> = Vec::new();
    for f in findings.iter().filter(|f| f.severity > Severity::Info) {
        if let Some(p) = problems.iter_mut().find(|p| p.alert.object == f.object) {
            p.alert.message.push_str(&format!("; also: {}", f.message));
            continue;
        }
        problems.push(Problem {
            key: alert::finding_key(&f.object, word(f.severity), f.lint, &f.message),
            alert: Alert {
                host: host.hostname(),
                state: State::New,
                severity: word(f.severity).into(),
                object: f.object.clone(),
                event: "finding".into(),
                message: f.message.clone(),
                fix: f.fix.clone(),
                time: now,
            },
        });
    }
    // Drift is sent only when apply would make it: while a change is refused, the refusal is
    // the alert, and "`hyraid apply` makes them" would be a fix that does not work.
    if let Some(p) = plan.filter(|p| !p.steps.is_empty() && p.refused.is_empty()) {
        problems.push(Problem {
            key: "finding:host:drift".into(),
            alert: Alert {
                host: host.hostname(),
                state: State::New,
                severity: "degraded".into(),
                object: "host".into(),
                event: "drift".into(),
                message: format!(
                    "the machine differs from the file: {} change(s) to make",
                    p.steps.len()
                ),
                fix: "`hyraid plan` shows them; `hyraid apply` makes them (or change the file)"
                    .into(),
                time: now,
            },
        });
    }
    let mut ledger = crate::history::alerts::read(host).map_err(msg)?;
    let mut sent = alert::notify_with(host, &spec, &problems, now, &mut ledger, &[]);
    if resolve {
        sent.extend(alert::resolve(
            host,
            &spec,
            &problems,
            now,
            &mut ledger,
            "finding:",
        ));
    }
    crate::history::alerts::write(host, &ledger).map_err(msg)?;
    Ok(alert::report(&sent))
}
