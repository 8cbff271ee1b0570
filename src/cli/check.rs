//! `hyraid check`: the state of the mirrors' checks, or (`--now`, and `--scheduled` from the
//! timers) a check run now, within its budget, resumed where the last run stopped; Ctrl-C stops
//! it cleanly (md is set idle, the place kept).

use super::{Machine, machine, write_out};
use crate::check::{self, Options, ProgressKind};
use crate::config::monitoring::{MonitoringSettings, human_duration};
use crate::error::{Error, msg};
use crate::history::checks::Outcome;
use crate::host::Host;
use crate::observe::monitoring::MONITORING_PATH;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct CheckArgs {
    /// The mirror (its name in the file; without a file, the array /dev/md/NAME). Default: every
    /// mirror hyraid's settings check.
    mirror: Option<String>,
    /// Run a check now (else: show each mirror's last check and where a paused one resumes).
    #[arg(long)]
    now: bool,
    /// Run as the mirror's timer does (a check now; the run is recorded as scheduled).
    #[arg(long, conflicts_with = "now")]
    scheduled: bool,
    /// How long this run may take (e.g. `30m`); default the mirror's `check.budget`, or 6h.
    #[arg(long, value_name = "DURATION")]
    budget: Option<String>,
    /// With --sim: write the simulated machine back to its snapshot after the run.
    #[arg(long)]
    sim_write: bool,
}

fn settings(host: &dyn Host) -> Result<Option<MonitoringSettings>, Error> {
    match host.read_file(MONITORING_PATH) {
        Ok(t) => MonitoringSettings::parse(&t)
            .map(Some)
            .map_err(|e| msg(format!("{MONITORING_PATH}: {e}"))),
        Err(_) => Ok(None),
    }
}

pub(super) fn run(sim: &Option<PathBuf>, a: CheckArgs) -> Result<u8, Error> {
    if a.sim_write && sim.is_none() {
        return Err(msg(
            "--sim-write needs --sim SNAPSHOT: it writes the simulated machine back to its snapshot",
        ));
    }
    let m = machine(sim)?;
    let host = m.host();
    let s = settings(host)?;
    let names = match &a.mirror {
        Some(n) => vec![n.clone()],
        None => check::mirrors(s.as_ref()),
    };
    if names.is_empty() {
        return Err(msg(format!(
            "no mirror to check: name one (`hyraid check NAME`), or give the file a `check:` and apply it ({MONITORING_PATH} lists the checked mirrors)"
        )));
    }
    if !(a.now || a.scheduled) {
        return show(host, s.as_ref(), &names);
    }
    if !host.is_root() {
        return Err(msg("hyraid check --now writes md's sysfs: run it as root"));
    }
    let budget = a
        .budget
        .as_deref()
        .map(|b| {
            // By hand a run may be as short as a second (a pause on purpose); 0 is no run.
            crate::config::monitoring::bounded_duration(
                b,
                "--budget",
                (1, crate::config::monitoring::BUDGET_SECS.1),
            )
        })
        .transpose()
        .map_err(msg)?;
    let progress = if std::io::stdout().is_terminal() && !a.scheduled {
        ProgressKind::Bar
    } else {
        ProgressKind::Lines
    };
    crate::machine::install_interrupt_handler();
    let interrupt = crate::machine::Stop::interrupt();
    let mut runs = Vec::new();
    for name in &names {
        let conf = s.as_ref().and_then(|s| s.checks.get(name));
        let mut opts = Options::of(conf, if a.scheduled { "scheduled" } else { "manual" });
        opts.progress = progress;
        if let Some(b) = budget {
            opts.budget = std::time::Duration::from_secs(b);
        }
        let t = check::target(host, s.as_ref(), name).map_err(msg)?;
        let stop = || interrupt.requested();
        let r = check::check(host, &t, &opts, &stop, &mut std::io::stdout()).map_err(msg)?;
        runs.push(r);
        if interrupt.requested() {
            break;
        }
    }
    // A check's mismatches are said at once, as the drift unit would say them.
    if runs.iter().any(|(r, rec)| {
        r.outcome == Outcome::Completed
            && rec
                .last_completed
                .as_ref()
                .is_some_and(|p| p.mismatches > 0)
    }) {
        let obs = crate::machine::observe_for(host, None)?;
        let records = crate::status::Records::read(host, &obs);
        let found = crate::status::checks::checks(&obs, &records, crate::history::now_secs());
        match super::alert::send(host, &found, None, false) {
            Ok(report) => {
                for l in report.lines() {
                    super::err_line(l);
                }
            }
            Err(e) => super::err_line(&format!("alerts: {}", e.report())),
        }
    }
    if let (Machine::Sim(h, path), true) = (&m, a.sim_write) {
        write_out(
            path,
            &(serde_json::to_string_pretty(&h.world()).unwrap() + "\n"),
        )?;
    }
    Ok(check::exit_code(&runs))
}

/// Each mirror's last check, as its record has it.
fn show(host: &dyn Host, s: Option<&MonitoringSettings>, names: &[String]) -> Result<u8, Error> {
    let now = crate::history::now_secs();
    let mut text = String::new();
    let mut unknown = 0;
    for name in names {
        let t = match check::target(host, s, name) {
            Ok(t) => t,
            Err(e) => {
                text.push_str(&format!("{e}\n"));
                unknown += 1;
                continue;
            }
        };
        let r = crate::history::checks::read(host, &t.uuid).map_err(msg)?;
        let schedule = s
            .and_then(|s| s.checks.get(name))
            .map(|c| {
                format!(
                    "scheduled {}, at most {} a run",
                    c.spec.schedule,
                    human_duration(c.spec.budget_secs)
                )
            })
            .unwrap_or_else(|| "no schedule of hyraid's".into());
        text.push_str(&format!("mirror {name} ({}, {schedule}):\n", t.device));
        match r.as_ref().and_then(|r| r.last_completed.as_ref()) {
            Some(p) => text.push_str(&format!(
                "  last completed check: {} ago, {} mismatch(es), in {} run(s)\n",
                human_duration(now.saturating_sub(p.end)),
                p.mismatches,
                p.runs
            )),
            None => text.push_str("  never checked to the end\n"),
        }
        if let Some(r) = &r {
            if let (Some(at), Some(last)) = (r.resume_at, r.last_run()) {
                text.push_str(&format!(
                    "  paused at {:.1}%: the next run resumes there\n",
                    at as f64 * 100.0 / last.total.max(1) as f64
                ));
            }
            if let Some(last) = r.last_run().filter(|l| l.outcome != Outcome::Completed) {
                text.push_str(&format!(
                    "  last run {} ago: {}{}\n",
                    human_duration(now.saturating_sub(last.end)),
                    last.outcome.word(),
                    last.reason
                        .as_ref()
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default()
                ));
            }
        }
    }
    super::out(text)?;
    // A mirror named that is not there (a typo, an array not running) is an error.
    Ok(if unknown > 0 { 1 } else { 0 })
}
