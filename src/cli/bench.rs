//! `hyraid bench`: fio's matrix against a directory or (with --allow-destroy) a device, and
//! saved runs side by side.

use super::write_out;
use crate::bench::{self, Report};
use crate::error::{Error, msg};
use crate::host::RealHost;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct BenchArgs {
    /// A directory on a mounted filesystem, or a block device (with --allow-destroy).
    #[arg(required_unless_present = "compare", conflicts_with = "compare")]
    target: Option<String>,
    /// Size of the test file, or of the region of the device, e.g. 1GiB or 256MiB.
    #[arg(long, default_value = "1GiB", value_parser = parse_size, conflicts_with = "compare")]
    size: u64,
    /// Seconds each job measures (after the ramp).
    #[arg(long, default_value_t = 10, conflicts_with = "compare")]
    runtime: u32,
    /// Seconds each job runs before measuring.
    #[arg(long, default_value_t = 2, conflicts_with = "compare")]
    ramp: u32,
    /// Run only these jobs (repeat the option); default the whole matrix.
    #[arg(long = "job", value_name = "NAME", value_parser = parse_job, conflicts_with = "compare")]
    jobs: Vec<crate::bench::fio::Job>,
    /// Allow a raw block device as target: the write jobs destroy its data.
    #[arg(long, conflicts_with = "compare")]
    allow_destroy: bool,
    /// Save the report as JSON (for --compare).
    #[arg(short = 'o', long = "out", conflicts_with = "compare")]
    out: Option<PathBuf>,
    /// Name of this run in comparisons (default: the target).
    #[arg(long, conflicts_with = "compare")]
    label: Option<String>,
    /// Print saved reports side by side, with each run's IOPS as a ratio of the first's.
    #[arg(long, num_args = 2.., value_name = "REPORT")]
    compare: Vec<PathBuf>,
    /// With --compare: draw the runs as grouped bars (SVG).
    #[arg(long, value_name = "FILE.svg", requires = "compare")]
    plot: Option<PathBuf>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::config::size::parse_bytes(s).map_err(|e| e.to_string())
}

fn parse_job(s: &str) -> Result<crate::bench::fio::Job, String> {
    crate::bench::fio::job(s).ok_or_else(|| {
        let names: Vec<&str> = crate::bench::fio::MATRIX.iter().map(|j| j.name).collect();
        format!("no job `{s}`; the jobs are {}", names.join(", "))
    })
}

pub(super) fn run(sim: &Option<PathBuf>, a: BenchArgs) -> Result<u8, Error> {
    if !a.compare.is_empty() {
        let reports = a
            .compare
            .iter()
            .map(|p| {
                let text =
                    std::fs::read_to_string(p).map_err(|e| msg(format!("{}: {e}", p.display())))?;
                serde_json::from_str::<Report>(&text).map_err(|e| {
                    msg(format!(
                        "{}: not a report of `hyraid bench -o`: {e}",
                        p.display()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        super::out(bench::compare(&reports))?;
        if let Some(p) = &a.plot {
            let svg = bench::plot::svg(&bench::plot::bench_bars(&reports)).map_err(msg)?;
            write_out(p, &svg)?;
        }
        return Ok(0);
    }
    if sim.is_some() {
        return Err(msg(
            "hyraid bench measures a real machine's I/O; it does not run with --sim",
        ));
    }
    let target = a.target.expect("clap requires a target without --compare");
    let o = bench::Options {
        target,
        size: a.size,
        runtime_s: a.runtime,
        ramp_s: a.ramp,
        loops: None,
        jobs: if a.jobs.is_empty() {
            bench::fio::MATRIX.to_vec()
        } else {
            a.jobs
        },
        allow_destroy: a.allow_destroy,
        label: a.label,
    };
    let host = RealHost;
    let p = bench::prepare(&host, &o)?;
    let per_job = (o.runtime_s + o.ramp_s) as u64;
    let total = o.jobs.len();
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(total as u64);
        b.set_style(bench_progress_style());
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        Some(b)
    } else {
        None
    };
    crate::machine::install_interrupt_handler();
    let stop = crate::machine::Stop::interrupt();
    let r = bench::run(
        &host,
        &o,
        &p,
        &mut |i, job| {
            let line = format!(
                "{} (bs {}, queue depth {}), ~{per_job} s",
                job.name, job.bs, job.iodepth
            );
            match &bar {
                Some(b) => {
                    b.set_position(i as u64);
                    b.set_message(line);
                }
                None => super::err_line(&format!("[{}/{total}] {line}", i + 1)),
            }
        },
        &|| stop.requested(),
    );
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // Interrupted exits 130, the shell's convention for "stopped by SIGINT" (Error::exit_code).
    let r = r?;
    super::out(bench::table(&r))?;
    if let Some(path) = a.out {
        write_out(&path, &(serde_json::to_string_pretty(&r).unwrap() + "\n"))?;
    }
    Ok(0)
}

fn bench_progress_style() -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} ({elapsed})")
        .expect("a valid progress template")
}

#[cfg(test)]
mod tests {
    #[test]
    fn bench_progress_template_is_valid() {
        // A bad template would only show on a terminal, as a panic.
        let b = indicatif::ProgressBar::hidden();
        b.set_style(super::bench_progress_style());
        b.set_message("rand-read-4k-qd32 (bs 4k, queue depth 32), ~12 s");
        b.set_position(3);
    }
}
