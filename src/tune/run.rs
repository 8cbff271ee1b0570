//! One tune run: checked before anything changes (the machine as the file says, the mirrors
//! healthy and idle, the target on an LV of the file, room for a scratch LV or a temporary
//! writecache), then round after round each configuration applied and measured, and the file's
//! own state applied again at the end, however the run ends.

use super::target::{Resolved, cache_pv, members, mirrors_idle, refuse, resolve};
use super::{Config, Measured, Options, TuneError, TuneReport};
use crate::apply::{self, ExecOptions, Journal, Source};
use crate::bench;
use crate::config::size::human;
use crate::config::{Desired, TUNE_LV};
use crate::host::{Host, HostError};
use crate::machine::Stop;
use crate::observe::monitoring::TuneRun;
use crate::plan::{Policy, Risk, plan};

/// What a run tells the person watching it.
#[derive(Debug)]
pub enum Event<'a> {
    /// Before the first change: what will be measured and about how long it takes.
    Estimate {
        /// The configurations, in the order each round measures them.
        names: Vec<String>,
        configs: usize,
        rounds: u32,
        jobs: usize,
        seconds: u64,
    },
    /// A configuration that will not be measured, with why.
    Skipped { config: &'a str, why: &'a str },
    /// A change about to be applied: its configuration and the plan's steps.
    Change { config: &'a str, steps: Vec<String> },
    /// A job about to run.
    Job {
        config: &'a str,
        round: u32,
        rounds: u32,
        index: usize,
        total: usize,
        job: &'a str,
    },
    /// The file's state being put back: the plan's steps.
    Restore { steps: Vec<String> },
}

fn step_lines(p: &crate::plan::Plan) -> Vec<String> {
    p.steps
        .iter()
        .map(|s| {
            format!(
                "{} {}: {}",
                s.step.symbol(),
                s.step.object(),
                s.step.summary()
            )
        })
        .collect()
}

fn apply_opts(journal: &Option<std::path::PathBuf>, stop: &Stop) -> apply::Options {
    apply::Options {
        journal: Journal {
            path: journal.clone(),
        },
        exec: ExecOptions {
            no_wait: false,
            progress_bar: false,
            stop: stop.clone(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Apply `d` (its plan shown through `events` first); the error says what failed.
fn change_to(
    host: &dyn Host,
    d: &Desired,
    o: &Options,
    stop: &Stop,
    shown: &mut dyn FnMut(Vec<String>),
) -> Result<(), String> {
    let obs = crate::machine::observe_for(host, Some(d)).map_err(|e| e.to_string())?;
    let p = plan(d, &obs, Policy::default()).map_err(|e| e.to_string())?;
    if p.steps.is_empty() && p.refused.is_empty() {
        return Ok(());
    }
    shown(step_lines(&p));
    let mut sink = Vec::new();
    apply::apply(
        Source::Desired(Box::new(d.clone())),
        host,
        &apply_opts(&o.journal, stop),
        &mut |_| Ok(()),
        &mut sink,
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// The file's state back: through the base (a scratch LV loses its writecache before it is
/// removed), then the file; the record ended once it holds.
fn restore(
    host: &dyn Host,
    file: &Desired,
    r: &Resolved,
    o: &Options,
    events: &mut dyn FnMut(Event),
) -> Result<(), String> {
    // Put back whatever the run was asked: with a flag of its own, which nothing requests.
    let stop = Stop::new();
    if r.scratch {
        change_to(host, &r.base, o, &stop, &mut |steps| {
            events(Event::Restore { steps })
        })?;
    }
    change_to(host, file, o, &stop, &mut |steps| {
        events(Event::Restore { steps })
    })?;
    super::end_record(host);
    Ok(())
}

/// Measure every configuration the layout allows on `o.target`, and put the file's state back.
pub fn run(
    host: &dyn Host,
    file: &Desired,
    o: &Options,
    events: &mut dyn FnMut(Event),
    stop: &Stop,
) -> Result<TuneReport, TuneError> {
    if let Err(HostError::Spawn { .. }) = host.run(&["fio".to_string(), "--version".into()]) {
        return Err(refuse(
            "fio is not installed; install it (Debian: `apt-get install fio`) and run hyraid tune again",
        ));
    }
    let obs = crate::machine::observe_for(host, Some(file))?;
    let now = plan(file, &obs, Policy::default())?;
    if !now.steps.is_empty() || !now.refused.is_empty() {
        return Err(refuse(format!(
            "the machine is not as {} says ({} step(s) to make, {} refused; `hyraid plan {}` shows them): tune measures from the file's state and puts it back, so apply the file first",
            o.file,
            now.steps.len(),
            now.refused.len(),
            o.file
        )));
    }
    let r = resolve(file, &obs, &o.target)?;
    let spec = r.base.volume_groups[&r.vg].lvs[&r.lv].clone();
    mirrors_idle(&r.base, &obs, &r.vg, &spec)?;
    if super::mirrors_of(&r.base, &r.vg, &spec).is_empty() {
        return Err(refuse(format!(
            "lv {}/{} is on no mirror of the file: tune measures a mirror's settings",
            r.vg, r.lv
        )));
    }
    // A temporary writecache: four times the test file (at least twice), at most 8 GiB, on a
    // fast PV with room.
    let wc_size = (o.profile.size * 4).min(8 << 30);
    let wants_wc = spec.writecache.is_none() && spec.cache.is_none() && !r.scratch;
    let pv = wants_wc
        .then(|| cache_pv(&r.base, &obs, &r.vg, wc_size, o.profile.size * 2))
        .flatten();
    let all: Vec<Config> = super::configs(&r.base, &obs, &r.vg, &r.lv, o.profile.full, pv.clone());
    let mut skipped: Vec<(String, String)> = Vec::new();
    if r.scratch && spec.writecache.is_none() {
        skipped.push(("writecache".into(), "a writecache belongs to an LV of the file: give a directory on a mounted one to measure it".into()));
    } else if wants_wc && pv.is_none() {
        skipped.push((
            "writecache".into(),
            format!(
                "no PV of {} on SSDs alone has {} free for a temporary writecache (twice the test file; --size makes it smaller)",
                r.vg,
                human(o.profile.size * 2)
            ),
        ));
    }
    let mut configs: Vec<Config> = Vec::new();
    for c in all {
        let p = plan(&c.desired, &obs, Policy::default())?;
        let why = if !p.refused.is_empty() {
            Some(format!(
                "the plan refuses it: {}",
                p.refused
                    .iter()
                    .map(|x| x.reason.clone())
                    .collect::<Vec<_>>()
                    .join("; ")
            ))
        } else if p.steps.iter().any(|s| s.risk == Risk::Destroys) {
            Some("it would destroy data".into())
        } else {
            None
        };
        match why {
            Some(w) => skipped.push((c.name.clone(), w)),
            None => configs.push(c),
        }
    }
    for (c, why) in &skipped {
        events(Event::Skipped { config: c, why });
    }
    let jobs: Vec<bench::fio::Job> = o.jobs.iter().filter_map(|j| bench::fio::job(j)).collect();
    events(Event::Estimate {
        names: configs.iter().map(|c| c.name.clone()).collect(),
        configs: configs.len(),
        rounds: o.profile.repeats,
        jobs: jobs.len(),
        seconds: configs.len() as u64
            * o.profile.repeats as u64
            * jobs.len() as u64
            * o.profile.job_seconds(),
    });
    let mut record = TuneRun {
        started: crate::history::now_secs(),
        file: o.file.clone(),
        lv: format!("{}/{}", r.vg, if r.scratch { TUNE_LV } else { &r.lv }),
        measuring: configs[0].name.clone(),
        test_file: None,
    };
    let bo = bench::Options {
        target: r.bench_target.clone(),
        size: o.profile.size,
        runtime_s: o.profile.runtime_s,
        ramp_s: o.profile.ramp_s,
        loops: o.profile.loops,
        jobs: jobs.clone(),
        allow_destroy: r.scratch,
        label: None,
    };
    let mut runs: Vec<Vec<bench::Report>> = vec![Vec::new(); configs.len()];
    // Which configuration the machine is in (None: the file's own).
    let mut current: Option<usize> = None;
    let outcome: Result<(), TuneError> = (|| {
        write_record(host, &record)?;
        for round in 0..o.profile.repeats {
            for (i, c) in configs.iter().enumerate() {
                if stop.requested() {
                    return Err(TuneError::Interrupted(String::new()));
                }
                let at_file = current.is_none() && i == 0 && !r.scratch;
                if current != Some(i) && !at_file {
                    record.measuring = c.name.clone();
                    write_record(host, &record)?;
                    change_to(host, &c.desired, o, stop, &mut |steps| {
                        events(Event::Change {
                            config: &c.name,
                            steps,
                        })
                    })
                    .map_err(|e| TuneError::Failed {
                        error: format!("changing to `{}`: {e}", c.name),
                        state: String::new(),
                    })?;
                }
                current = Some(i);
                let mut bo = bo.clone();
                bo.label = Some(c.name.clone());
                let p = bench::prepare(host, &bo).map_err(|e| TuneError::Failed {
                    error: format!("measuring `{}`: {e}", c.name),
                    state: String::new(),
                })?;
                let mut p = p;
                if p.members.is_empty() {
                    p.members = members(&r.base, &obs, &r.vg, &spec);
                }
                if p.kind == bench::TargetKind::File {
                    record.test_file = Some(p.filename.clone());
                    write_record(host, &record)?;
                }
                let report = bench::run(
                    host,
                    &bo,
                    &p,
                    &mut |index, job| {
                        events(Event::Job {
                            config: &c.name,
                            round: round + 1,
                            rounds: o.profile.repeats,
                            index,
                            total: jobs.len(),
                            job: job.name,
                        })
                    },
                    &|| stop.requested(),
                )
                .map_err(|e| match e {
                    bench::BenchError::Interrupted { .. } => TuneError::Interrupted(String::new()),
                    e => TuneError::Failed {
                        error: format!("measuring `{}`: {e}", c.name),
                        state: String::new(),
                    },
                })?;
                runs[i].push(report);
            }
        }
        Ok(())
    })();
    let restored = restore(host, file, &r, o, events);
    let state = match &restored {
        Ok(()) => "The file's state was put back.".to_string(),
        Err(e) => format!(
            "Putting the file's state back failed: {e}\nThe machine differs from {f}: `hyraid plan {f}` shows how, and `hyraid apply {f}` puts it back (`hyraid status` says a tune run did not end until then).",
            f = o.file
        ),
    };
    match outcome {
        Err(TuneError::Interrupted(_)) => return Err(TuneError::Interrupted(state)),
        Err(TuneError::Failed { error, .. }) => return Err(TuneError::Failed { error, state }),
        Err(e) => return Err(e),
        Ok(()) => {}
    }
    if let Err(e) = restored {
        return Err(TuneError::Failed {
            error: "the run measured every configuration".into(),
            state: format!("{state}\n({e})"),
        });
    }
    let mut measured: Vec<Measured> = configs
        .iter()
        .zip(runs)
        .map(|(c, runs)| Measured {
            name: c.name.clone(),
            changes: c.changes.clone(),
            risk: c.risk.clone(),
            skipped: None,
            runs,
        })
        .collect();
    measured.extend(skipped.into_iter().map(|(name, why)| Measured {
        name,
        changes: vec![],
        risk: None,
        skipped: Some(why),
        runs: vec![],
    }));
    let mut rec = super::recommend(&measured, o.workload);
    if !rec.chosen.is_empty() {
        let chosen: Vec<&Desired> = rec
            .chosen
            .iter()
            .filter_map(|n| configs.iter().find(|c| &c.name == n).map(|c| &c.desired))
            .collect();
        if let Some(mut want) = super::recommend::merged(&r.base, &chosen) {
            if r.scratch {
                want.volume_groups
                    .get_mut(&r.vg)
                    .map(|v| v.lvs.remove(TUNE_LV));
            }
            rec.diff = super::recommend::file_diff(&o.file, &o.text, &rec.changes, &want);
        }
    }
    Ok(TuneReport {
        format: super::TUNE_FORMAT,
        hyraid_version: env!("CARGO_PKG_VERSION").into(),
        host: host.hostname(),
        file: o.file.clone(),
        lv: record.lv.clone(),
        target: r.bench_target.clone(),
        scratch: r.scratch,
        profile: o.profile.clone(),
        jobs: jobs.iter().map(|j| j.name.to_string()).collect(),
        configs: measured,
        recommendation: rec,
    })
}

fn write_record(host: &dyn Host, r: &TuneRun) -> Result<(), TuneError> {
    super::write_record(host, r).map_err(|e| TuneError::Failed {
        error: format!(
            "cannot keep the run's record {}: {e}",
            crate::observe::monitoring::TUNE_RUN_PATH
        ),
        state: String::new(),
    })
}
