//! Running the matrix: fio job by job, the members' I/O counters around each, the test file
//! removed at the end however the run ends.

use super::fio::{self, Job};
use super::{
    BenchError, JobResult, MemberIo, Options, Prepared, REPORT_FORMAT, Report, TargetKind, strings,
};
use crate::host::Host;
use std::collections::BTreeMap;

/// Completed reads and writes of a block device (/sys/class/block/NAME/stat fields 1 and 5).
pub fn io_counters(host: &dyn Host, kname: &str) -> Result<MemberIo, BenchError> {
    let text = host.read_file(&format!("/sys/class/block/{kname}/stat"))?;
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    if f.len() < 5 {
        return Err(BenchError::Refused(format!(
            "/sys/class/block/{kname}/stat is not a block stat line: {text:?}"
        )));
    }
    Ok(MemberIo {
        reads: f[0],
        writes: f[4],
    })
}

/// Run the jobs one by one; `progress(i, job)` is called before each, and `stop()` too: when it
/// says so (Ctrl-C), no further job starts (fio runs in its own process group and finishes the
/// current one within its runtime), and the test file is removed.
pub fn run(
    host: &dyn Host,
    o: &Options,
    p: &Prepared,
    progress: &mut dyn FnMut(usize, &Job),
    stop: &dyn Fn() -> bool,
) -> Result<Report, BenchError> {
    let mut results = Vec::new();
    let mut version = String::new();
    let outcome = (|| {
        for (i, job) in o.jobs.iter().enumerate() {
            if stop() {
                return Err(BenchError::Interrupted {
                    done: i,
                    total: o.jobs.len(),
                });
            }
            progress(i, job);
            let before: Vec<MemberIo> = p
                .members
                .iter()
                .map(|m| io_counters(host, m))
                .collect::<Result<_, _>>()?;
            let argv = match o.loops {
                None => fio::argv(job, &p.filename, p.size, o.runtime_s, o.ramp_s),
                Some(n) => fio::argv_loops(job, &p.filename, p.size, n, o.runtime_s),
            };
            let out = host.run(&argv)?;
            let parsed = fio::parse(&out.stdout, job.reads());
            let (v, measured) = match (parsed, out.status) {
                (Ok(x), 0) => x,
                (Err(e), _) if out.status == 0 => return Err(e.into()),
                _ => {
                    return Err(BenchError::Command {
                        command: argv.join(" "),
                        status: out.status,
                        stderr: out.stderr.trim().to_string(),
                    });
                }
            };
            let mut members = BTreeMap::new();
            for (m, b) in p.members.iter().zip(before) {
                let a = io_counters(host, m)?;
                members.insert(
                    m.clone(),
                    MemberIo {
                        reads: a.reads.saturating_sub(b.reads),
                        writes: a.writes.saturating_sub(b.writes),
                    },
                );
            }
            version = v;
            results.push(JobResult {
                name: job.name.into(),
                rw: job.rw.into(),
                bs: job.bs.into(),
                iodepth: job.iodepth,
                measured,
                members,
            });
        }
        Ok(())
    })();
    if p.kind == TargetKind::File {
        // The test file is ours; remove it whatever happened.
        let _ = host.run(&strings(&["rm", "-f", "--", &p.filename]));
    }
    outcome?;
    Ok(Report {
        format: REPORT_FORMAT,
        hyraid_version: env!("CARGO_PKG_VERSION").into(),
        host: host.hostname(),
        label: o.label.clone().unwrap_or_else(|| o.target.clone()),
        target: o.target.clone(),
        kind: p.kind,
        filename: p.filename.clone(),
        size: p.size,
        runtime_s: o.runtime_s,
        fio_version: version,
        jobs: results,
    })
}
