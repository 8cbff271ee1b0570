//! `hyraid tune FILE TARGET`: the lock, the file, what will change and for how long (asked
//! first, as apply asks), the progress, and the run's table, JSON and picture.

use super::{machine, write_out};
use crate::apply::ApplyError;
use crate::bench::plot;
use crate::error::{Error, msg};
use crate::machine::{Lock, Stop};
use crate::tune::{self, Event, Options, Profile, Target, Workload};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct TuneArgs {
    /// hyraid.yaml: the state measured against, and put back at the end.
    file: PathBuf,
    /// A directory on a mounted filesystem on an LV of the file (a test file is made in it and
    /// removed).
    #[arg(required_unless_present = "scratch", conflicts_with = "scratch")]
    target: Option<String>,
    /// Instead of a directory: a temporary LV of SIZE (e.g. 2GiB) in the VG's free space on its
    /// mirror, removed at the end.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    scratch: Option<u64>,
    /// With --scratch: the volume group (default: the file's only VG on a mirror).
    #[arg(long, requires = "scratch")]
    vg: Option<String>,
    /// The field report's fio parameters (1000 MiB, 5 loops, each job at most 60 s), three
    /// rounds, and more write-behind values; default a quick profile of a few minutes.
    #[arg(long)]
    full: bool,
    /// Size of the test file (default: 256MiB, with --full 1000MiB; at least 16MiB).
    #[arg(long, value_parser = parse_test_size)]
    size: Option<u64>,
    /// Seconds each job measures (default: 4, with --full at most 60 per job).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    runtime: Option<u32>,
    /// Rounds of every configuration (the spread comes from these; at least 2).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..))]
    repeats: Option<u32>,
    /// What the machine mostly does: sequential, random-read, random-write or mixed.
    #[arg(long, default_value = "mixed", value_parser = parse_workload)]
    workload: Workload,
    /// Measure only this job of the six (repeatable; default all six): seq-read-1m,
    /// seq-write-1m, rand-read-512k, rand-write-512k, rand-read-4k-qd32, rand-write-4k-qd32. At
    /// least one must be a job the workload weighs.
    #[arg(long = "job", value_name = "JOB", value_parser = tune::job_named)]
    jobs: Vec<&'static str>,
    /// Do not ask before changing the settings.
    #[arg(long)]
    yes: bool,
    /// Save the whole run as JSON.
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// Draw the run as grouped bars (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::config::size::parse_bytes(s).map_err(|e| e.to_string())
}

/// A test file fio measures the disks with, not their caches.
fn parse_test_size(s: &str) -> Result<u64, String> {
    let b = parse_size(s)?;
    if b < 16 << 20 {
        return Err(format!(
            "`{s}` is under 16MiB: a file that small lives in the drives' and the kernel's caches, and the figures would measure them"
        ));
    }
    Ok(b)
}

/// Where a result is written, checked before an hour of runs: a directory that is there, and
/// not a directory by that name.
fn writable_path(what: &str, p: &std::path::Path) -> Result<(), Error> {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(msg(format!(
            "{what} {}: the directory {} does not exist",
            p.display(),
            dir.display()
        )));
    }
    if p.is_dir() {
        return Err(msg(format!(
            "{what} {}: is a directory; name a file",
            p.display()
        )));
    }
    Ok(())
}

fn parse_workload(s: &str) -> Result<Workload, String> {
    s.parse()
}

fn minutes(secs: u64) -> String {
    if secs < 120 {
        format!("{secs} s")
    } else {
        format!("{} min", secs.div_ceil(60))
    }
}

pub(super) fn run(sim: &Option<PathBuf>, a: TuneArgs) -> Result<u8, Error> {
    let jobs = tune::chosen_jobs(&a.jobs, a.workload).map_err(msg)?;
    for (what, p) in [("-o", &a.out), ("--plot", &a.plot)] {
        if let Some(p) = p {
            writable_path(what, p)?;
        }
    }
    let m = machine(sim)?;
    let _lock = Lock::acquire(&m.lock_path()).map_err(ApplyError::from)?;
    let text =
        std::fs::read_to_string(&a.file).map_err(|e| msg(format!("{}: {e}", a.file.display())))?;
    let name = a.file.display().to_string();
    let desired = crate::config::load_str(&name, &text)?;
    let mut profile = if a.full {
        Profile::full()
    } else {
        Profile::quick()
    };
    if let Some(n) = a.repeats {
        profile.repeats = n;
    }
    if let Some(b) = a.size {
        profile.size = b;
    }
    if let Some(t) = a.runtime {
        profile.runtime_s = t;
    }
    let o = Options {
        file: name,
        text,
        target: match (a.target, a.scratch) {
            (Some(t), _) => Target::Directory(t),
            (None, Some(size)) => Target::Scratch { size, vg: a.vg },
            (None, None) => unreachable!("clap requires a target or --scratch"),
        },
        profile,
        workload: a.workload,
        jobs,
        journal: m.journal_path(),
    };
    let terminal = std::io::stderr().is_terminal();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut asked = a.yes;
    let mut refusal: Option<String> = None;
    // SIGINT and SIGTERM set it once the handler is installed, before the run.
    let stop = Stop::interrupt();
    let mut events = |e: Event| match e {
        Event::Skipped { config, why } => {
            super::err_line(&format!("not measured: {config}: {why}"))
        }
        Event::Estimate {
            names,
            configs,
            rounds,
            jobs,
            seconds,
        } => {
            super::err_line(&format!("measured: {}", names.join(", ")));
            super::err_line(&format!(
                "{configs} configuration(s) × {rounds} round(s) × {jobs} job(s): about {} of fio, plus the changes between them",
                minutes(seconds)
            ));
            if !asked {
                if let Err(why) = confirm() {
                    refusal = Some(why);
                    stop.request();
                }
                asked = true;
            }
            if terminal {
                let b = indicatif::ProgressBar::new((configs * rounds as usize * jobs) as u64);
                b.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{spinner} [{pos}/{len}] {msg} ({elapsed}, ~{eta} left)",
                    )
                    .expect("a valid progress template"),
                );
                b.enable_steady_tick(std::time::Duration::from_millis(200));
                bar = Some(b);
            }
        }
        Event::Change { config, steps } => {
            let line = format!("→ {config}: {}", steps.join("; "));
            match &bar {
                Some(b) => b.println(line),
                None => super::err_line(&line),
            }
        }
        Event::Job {
            config,
            round,
            rounds,
            index,
            total,
            job,
        } => {
            let line = format!(
                "round {round}/{rounds}, {config}: {job} ({}/{total})",
                index + 1
            );
            match &bar {
                Some(b) => {
                    b.inc(if index == 0 && b.position() == 0 {
                        0
                    } else {
                        1
                    });
                    b.set_message(line);
                }
                None => super::err_line(&line),
            }
        }
        Event::Restore { steps } => {
            let line = format!("← the file's state: {}", steps.join("; "));
            match &bar {
                Some(b) => b.println(line),
                None => super::err_line(&line),
            }
        }
    };
    crate::machine::install_interrupt_handler();
    let r = tune::run(m.host(), &desired, &o, &mut events, &stop);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(why) = refusal {
        // Nothing was changed: the run stopped before its first change.
        return Err(msg(why));
    }
    let r = r?;
    super::out(tune::table(&r))?;
    if let Some(p) = &a.out {
        write_out(p, &(serde_json::to_string_pretty(&r).unwrap() + "\n"))?;
    }
    if let Some(p) = &a.plot {
        write_out(p, &plot::svg(&tune::bars(&r)).map_err(msg)?)?;
    }
    Ok(0)
}

/// The terminal's confirmation before the first change.
fn confirm() -> Result<(), String> {
    if !std::io::stdin().is_terminal() {
        return Err("stdin is not a terminal, so hyraid cannot ask before it changes the settings; pass --yes".into());
    }
    let _ = super::out(
        "tune changes these settings live, one configuration at a time, and puts the file's back when it ends (also on Ctrl-C or an error; after a crash `hyraid apply` does). A drive cache turned on loses what it holds at a power cut during the run. Type `yes` to continue: ",
    );
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    match answer.trim() {
        "yes" => Ok(()),
        _ => Err("not confirmed; nothing was changed".into()),
    }
}
