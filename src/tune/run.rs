//! One tune run: checked before anything changes (the machine as the file says, the mirrors
//! healthy and idle, the target on an LV of the file, room for a scratch LV or a temporary
//! writecache), then round after round each configuration applied and measured, and the file's
//! own state applied again at the end, however the run ends.

use super::{Config, Measured, Options, Target, TuneError, TuneReport};
use crate::apply::{self, ExecOptions, Journal, Source};
use crate::bench;
use crate::config::desired::DeviceRef;
use crate::config::size::{LvSize, human};
use crate::config::{Desired, LvSpec, TUNE_LV, TUNE_TAG};
use crate::host::{Host, HostError};
use crate::observe::Observed;
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

/// Where the jobs run, resolved.
struct Resolved {
    vg: String,
    lv: String,
    /// The file's state, plus the scratch LV when there is one.
    base: Desired,
    /// What fio is pointed at (a directory, or the scratch LV's device).
    bench_target: String,
    scratch: bool,
}

/// The members of the mirrors an LV lies on (kernel names): each job records the reads and
/// writes each of them served.
fn members(d: &Desired, o: &Observed, vg: &str, lv: &LvSpec) -> Vec<String> {
    super::mirrors_of(d, vg, lv)
        .iter()
        .filter_map(|m| crate::plan::array_for(o, d.mirrors.get(m)?))
        .flat_map(|a| a.members.iter().map(|m| m.kname.clone()))
        .collect()
}

fn refuse(s: impl Into<String>) -> TuneError {
    TuneError::Refused(s.into())
}

/// The LV a directory is on: the longest mount point that holds it.
fn lv_of_dir(o: &Observed, d: &Desired, dir: &str) -> Result<(String, String), TuneError> {
    let dir = match dir.trim_end_matches('/') {
        "" => "/",
        d => d,
    };
    let f = o
        .filesystems
        .iter()
        .filter(|f| {
            f.mountpoint.as_deref().is_some_and(|m| {
                let m = m.trim_end_matches('/');
                dir == m || dir.starts_with(&format!("{m}/")) || m.is_empty()
            })
        })
        .max_by_key(|f| f.mountpoint.as_ref().map_or(0, |m| m.len()))
        .ok_or_else(|| {
            refuse(format!(
                "{dir} is not on a mounted filesystem hyraid sees; give a directory on a mounted LV of the file, or --scratch SIZE"
            ))
        })?;
    let mp = f.mountpoint.clone().unwrap_or_default();
    if f.md || f.lv.is_empty() {
        return Err(refuse(format!(
            "{dir} is on {mp} ({}), not on an LV of the file; tune measures an LV of the file (or --scratch SIZE)",
            f.kname
        )));
    }
    if !d
        .volume_groups
        .get(&f.vg)
        .is_some_and(|v| v.lvs.contains_key(&f.lv))
    {
        return Err(refuse(format!(
            "{dir} is on lv {}/{} (mounted at {mp}), which the file does not declare; tune changes only what the file manages",
            f.vg, f.lv
        )));
    }
    Ok((f.vg.clone(), f.lv.clone()))
}

/// The PV a file reference is, by kernel name.
fn pv_kname(d: &Desired, o: &Observed, r: &DeviceRef) -> Option<String> {
    match r {
        DeviceRef::Mirror(m) => {
            crate::plan::array_for(o, d.mirrors.get(m)?).map(|a| a.kname.clone())
        }
        DeviceRef::Disk(n) => crate::plan::disk_for(o, d.disks.get(n)?).map(|b| b.kname.clone()),
    }
}

fn pv_free(d: &Desired, o: &Observed, r: &DeviceRef) -> u64 {
    pv_kname(d, o, r)
        .and_then(|k| o.lvm.pvs.iter().find(|p| p.kname == k).map(|p| p.free))
        .unwrap_or(0)
}

fn resolve(d: &Desired, o: &Observed, t: &Target) -> Result<Resolved, TuneError> {
    match t {
        Target::Directory(dir) => {
            let (vg, lv) = lv_of_dir(o, d, dir)?;
            Ok(Resolved {
                vg,
                lv,
                base: d.clone(),
                bench_target: dir.clone(),
                scratch: false,
            })
        }
        Target::Scratch { size, vg } => {
            let vg = match vg {
                Some(v) if d.volume_groups.contains_key(v) => v.clone(),
                Some(v) => return Err(refuse(format!("the file has no volume group `{v}`"))),
                None => {
                    let with: Vec<&String> = d
                        .volume_groups
                        .iter()
                        .filter(|(_, v)| {
                            !v.absent && v.pvs.iter().any(|p| matches!(p, DeviceRef::Mirror(_)))
                        })
                        .map(|(n, _)| n)
                        .collect();
                    match with.as_slice() {
                        [one] => (*one).clone(),
                        [] => {
                            return Err(refuse(
                                "the file has no volume group on a mirror to make a scratch LV in",
                            ));
                        }
                        many => {
                            return Err(refuse(format!(
                                "the file has {} volume groups on mirrors ({}); name one with --vg",
                                many.len(),
                                many.iter()
                                    .map(|s| s.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )));
                        }
                    }
                }
            };
            if let Some(l) = o.lv(&vg, TUNE_LV)
                && !l.tags.iter().any(|t| t == TUNE_TAG)
            {
                return Err(refuse(format!(
                    "vg {vg} has an LV named {TUNE_LV} that hyraid did not make (no tag {TUNE_TAG}); rename it to let tune make its scratch LV"
                )));
            }
            let spec = &d.volume_groups[&vg];
            let mirrors: Vec<(&DeviceRef, u64)> = spec
                .pvs
                .iter()
                .filter(|p| matches!(p, DeviceRef::Mirror(_)))
                .map(|p| (p, pv_free(d, o, p)))
                .collect();
            let Some((pv, _)) = mirrors
                .iter()
                .filter(|(_, f)| *f >= *size)
                .max_by_key(|(_, f)| *f)
            else {
                let have: Vec<String> = mirrors
                    .iter()
                    .map(|(p, f)| format!("{}: {}", p.name(), human(*f)))
                    .collect();
                return Err(refuse(format!(
                    "vg {vg} has no room for a scratch LV of {}: free on its mirrors {}; give a smaller --scratch, or a directory on a mounted LV of the file",
                    human(*size),
                    have.join(", ")
                )));
            };
            let mut base = d.clone();
            base.volume_groups
                .get_mut(&vg)
                .expect("checked")
                .lvs
                .insert(
                    TUNE_LV.into(),
                    LvSpec {
                        name: TUNE_LV.into(),
                        size: LvSize::Bytes(*size),
                        pvs: Some(vec![(*pv).clone()]),
                        stripes: None,
                        stripe_size: None,
                        writecache: None,
                        cache: None,
                        filesystem: None,
                        absent: false,
                        tags: vec![TUNE_TAG.into()],
                    },
                );
            Ok(Resolved {
                bench_target: format!("/dev/{vg}/{TUNE_LV}"),
                vg,
                lv: TUNE_LV.into(),
                base,
                scratch: true,
            })
        }
    }
}

/// Refused unless every mirror the LV lies on is complete and idle.
fn mirrors_idle(d: &Desired, o: &Observed, vg: &str, lv: &LvSpec) -> Result<(), TuneError> {
    for m in super::mirrors_of(d, vg, lv) {
        let Some(spec) = d.mirrors.get(&m) else {
            continue;
        };
        let a = crate::plan::array_for(o, spec)
            .ok_or_else(|| refuse(format!("mirror {m} is not on this machine")))?;
        if a.degraded > 0 || a.members.iter().any(|x| x.faulty()) {
            return Err(refuse(format!(
                "mirror {m} ({}) is degraded: tune measures a healthy mirror, and changing its settings now would only add risk; `hyraid status` says what to do",
                a.kname
            )));
        }
        if a.sync_action != "idle" {
            let what = match a.sync_action.as_str() {
                "check" => "checking",
                "repair" => "repairing",
                "resync" => "resyncing",
                "recover" => "rebuilding",
                other => other,
            };
            let done = a
                .sync_completed
                .map(|(x, t)| format!(" ({:.0}% done)", 100.0 * x as f64 / t.max(1) as f64))
                .unwrap_or_default();
            return Err(refuse(format!(
                "mirror {m} ({}) is {what}{done}: its I/O would be in every figure; run tune once it is idle (`cat /proc/mdstat`; a check stops with `echo idle > /sys/block/{}/md/sync_action` and `hyraid check` resumes it later)",
                a.kname, a.kname
            )));
        }
    }
    Ok(())
}

/// A fast PV of the VG (every disk under it an SSD) with room for a temporary writecache for an
/// LV that has no cache: `size`, or what the PV has free (in whole 4 MiB extents, one left) when
/// that is less, as long as it holds twice the test file (`least`).
fn cache_pv(
    d: &Desired,
    o: &Observed,
    vg: &str,
    size: u64,
    least: u64,
) -> Option<(DeviceRef, u64)> {
    let fast = |n: &str| {
        d.disks
            .get(n.split(':').next().unwrap_or(n))
            .and_then(|s| crate::plan::disk_for(o, s))
            .is_some_and(|b| !b.rotational)
    };
    d.volume_groups[vg]
        .pvs
        .iter()
        .filter(|r| match r {
            DeviceRef::Disk(n) => fast(n),
            DeviceRef::Mirror(m) => d
                .mirrors
                .get(m)
                .is_some_and(|x| x.members.iter().all(|n| fast(n))),
        })
        .map(|r| {
            let extent = 4u64 << 20;
            let room = (pv_free(d, o, r) / extent).saturating_sub(1) * extent;
            (r.clone(), size.min(room))
        })
        .find(|(_, s)| *s >= least)
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

fn apply_opts(journal: &Option<std::path::PathBuf>) -> apply::Options {
    apply::Options {
        journal: Journal {
            path: journal.clone(),
        },
        exec: ExecOptions {
            no_wait: false,
            progress_bar: false,
        },
        ..Default::default()
    }
}

/// Apply `d` (its plan shown through `events` first); the error says what failed.
fn change_to(
    host: &dyn Host,
    d: &Desired,
    o: &Options,
    shown: &mut dyn FnMut(Vec<String>),
) -> Result<(), String> {
    let obs = apply::observe_for(host, Some(d)).map_err(|e| e.to_string())?;
    let p = plan(d, &obs, Policy::default()).map_err(|e| e.to_string())?;
    if p.steps.is_empty() && p.refused.is_empty() {
        return Ok(());
    }
    shown(step_lines(&p));
    let mut sink = Vec::new();
    apply::apply(
        Source::Desired(d.clone()),
        host,
        &apply_opts(&o.journal),
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
    crate::apply::clear_stop();
    if r.scratch {
        change_to(host, &r.base, o, &mut |steps| {
            events(Event::Restore { steps })
        })?;
    }
    change_to(host, file, o, &mut |steps| events(Event::Restore { steps }))?;
    super::end_record(host);
    Ok(())
}

/// Measure every configuration the layout allows on `o.target`, and put the file's state back.
pub fn run(
    host: &dyn Host,
    file: &Desired,
    o: &Options,
    events: &mut dyn FnMut(Event),
    stop: &dyn Fn() -> bool,
) -> Result<TuneReport, TuneError> {
    if let Err(HostError::Spawn { .. }) = host.run(&["fio".to_string(), "--version".into()]) {
        return Err(refuse(
            "fio is not installed; install it (Debian: `apt-get install fio`) and run hyraid tune again",
        ));
    }
    let obs = apply::observe_for(host, Some(file))?;
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
    let jobs: Vec<bench::fio::Job> = super::JOBS
        .iter()
        .filter_map(|j| bench::fio::job(j))
        .collect();
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
                if stop() {
                    return Err(TuneError::Interrupted(String::new()));
                }
                let at_file = current.is_none() && i == 0 && !r.scratch;
                if current != Some(i) && !at_file {
                    record.measuring = c.name.clone();
                    write_record(host, &record)?;
                    change_to(host, &c.desired, o, &mut |steps| {
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
                    stop,
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
