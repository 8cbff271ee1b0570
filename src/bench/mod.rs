//! `hyraid bench`: the standard fio matrix against a file on a mounted filesystem or, with
//! `--allow-destroy`, a raw block device; a table of IOPS, MiB/s and latency per job, a JSON
//! report, and side-by-side comparison of reports. When the target is built from other devices
//! (an md array's members, an LV's PVs), the reads and writes each of them served during each job
//! are recorded from /sys/class/block counters, which shows write-mostly at work (the HDD member
//! serves no reads).

pub mod fio;

use crate::host::{Host, HostError};
use fio::{FioError, Job, Measured};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Version of the report format.
pub const REPORT_FORMAT: u32 = 1;

#[derive(Debug, Clone)]
pub struct Options {
    /// A directory on a mounted filesystem, or a block device.
    pub target: String,
    /// Bytes of the file (or of the device's first bytes) the jobs use.
    pub size: u64,
    pub runtime_s: u32,
    pub ramp_s: u32,
    pub jobs: Vec<Job>,
    pub allow_destroy: bool,
    /// Name of the run in comparisons (default: the target).
    pub label: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    Device,
}

/// I/O one md member served during one job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberIo {
    pub reads: u64,
    pub writes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    pub rw: String,
    pub bs: String,
    pub iodepth: u32,
    #[serde(flatten)]
    pub measured: Measured,
    /// For a stacked target (md, dm): per component kernel name, the I/Os it completed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub members: BTreeMap<String, MemberIo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format: u32,
    pub hyraid_version: String,
    pub host: String,
    pub label: String,
    pub target: String,
    pub kind: TargetKind,
    /// The file or device fio ran against.
    pub filename: String,
    pub size: u64,
    pub runtime_s: u32,
    pub fio_version: String,
    pub jobs: Vec<JobResult>,
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Host(#[from] HostError),
    #[error(transparent)]
    Fio(#[from] FioError),
    #[error(transparent)]
    Parse(#[from] crate::observe::ParseError),
    #[error("refused: {0}")]
    Refused(String),
    #[error("interrupted after {done} of {total} job(s); the test file (if any) was removed")]
    Interrupted { done: usize, total: usize },
    #[error("`{command}` failed (exit {status}): {stderr}")]
    Command {
        command: String,
        status: i32,
        stderr: String,
    },
}

fn run_ok(host: &dyn Host, argv: &[String]) -> Result<String, BenchError> {
    let out = host.run(argv)?;
    if out.status != 0 {
        return Err(BenchError::Command {
            command: argv.join(" "),
            status: out.status,
            stderr: out.stderr.trim().to_string(),
        });
    }
    Ok(out.stdout)
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Where fio will run, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub kind: TargetKind,
    pub filename: String,
    pub size: u64,
    /// The devices the target is built from (/sys/block/KNAME/slaves), whose counters are recorded.
    pub members: Vec<String>,
}

/// Check the target: a directory gets a new file of `size` bytes (when the filesystem has room);
/// a block device needs `--allow-destroy` and must not be mounted or hold anything (partitions,
/// arrays, LVs), with or without it.
pub fn prepare(host: &dyn Host, o: &Options) -> Result<Prepared, BenchError> {
    // Before anything is printed or created: without fio there is nothing to measure.
    if let Err(crate::host::HostError::Spawn { .. }) = host.run(&strings(&["fio", "--version"])) {
        return Err(BenchError::Refused(
            "fio is not installed; install it (Debian: `apt-get install fio`, EL: `dnf install fio`) and run hyraid bench again".into(),
        ));
    }
    let kind = run_ok(host, &strings(&["stat", "-L", "--format=%F", &o.target]))?;
    match kind.trim() {
        "directory" => {
            let df = run_ok(
                host,
                &strings(&["df", "--output=avail", "-B1", "--", &o.target]),
            )?;
            let avail: u64 = df
                .lines()
                .nth(1)
                .and_then(|l| l.trim().parse().ok())
                .ok_or_else(|| BenchError::Refused(format!("cannot read `df` for {}", o.target)))?;
            // Leave a tenth of the size free besides the file.
            if avail < o.size + o.size / 10 {
                return Err(BenchError::Refused(format!(
                    "{} has {} free; the test file needs {} (use --size)",
                    o.target,
                    crate::config::size::human(avail),
                    crate::config::size::human(o.size)
                )));
            }
            Ok(Prepared {
                kind: TargetKind::File,
                filename: format!(
                    "{}/hyraid-bench.{}.fio",
                    o.target.trim_end_matches('/'),
                    std::process::id()
                ),
                size: o.size,
                members: vec![],
            })
        }
        "block special file" => {
            let mut argv = crate::observe::lsblk::argv();
            argv.push(o.target.clone());
            let nodes = crate::observe::lsblk::parse(&run_ok(host, &argv)?)?;
            let dev = nodes
                .first()
                .ok_or_else(|| BenchError::Refused(format!("lsblk does not list {}", o.target)))?;
            if let Some(m) = nodes.iter().find_map(|n| n.mountpoint.as_ref()) {
                return Err(BenchError::Refused(format!(
                    "{} is mounted (at {m}); benchmark a directory on it instead",
                    o.target
                )));
            }
            if !dev.children.is_empty() {
                return Err(BenchError::Refused(format!(
                    "{} is in use: {} is on it; benchmark a device nothing is stacked on, or a directory",
                    o.target,
                    dev.children.join(", ")
                )));
            }
            if !o.allow_destroy {
                let what = dev
                    .fstype
                    .as_ref()
                    .map(|f| format!(" (it carries {f})"))
                    .unwrap_or_default();
                return Err(BenchError::Refused(format!(
                    "the write jobs destroy the data on {}{what}; pass --allow-destroy to benchmark the raw device, or give a directory on a mounted filesystem",
                    o.target
                )));
            }
            // The devices it is built from (md members, a dm device's PVs); none for a disk.
            let members = match host.list_dir(&format!("/sys/block/{}/slaves", dev.kname)) {
                Ok(m) => m,
                Err(HostError::NotFound { .. }) => vec![],
                Err(e) => return Err(e.into()),
            };
            Ok(Prepared {
                kind: TargetKind::Device,
                filename: o.target.clone(),
                size: if dev.size > 0 {
                    o.size.min(dev.size)
                } else {
                    o.size
                },
                members,
            })
        }
        other => Err(BenchError::Refused(format!(
            "{} is a {other}; give a directory on a mounted filesystem or a block device",
            o.target
        ))),
    }
}

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
            let argv = fio::argv(job, &p.filename, p.size, o.runtime_s, o.ramp_s);
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

fn mib(bytes_per_s: f64) -> f64 {
    bytes_per_s / (1024.0 * 1024.0)
}

/// A table of one report.
pub fn table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "hyraid bench on {}: {} ({}, {} used, {} s per job, {})\n",
        r.host,
        r.target,
        match r.kind {
            TargetKind::File => "file",
            TargetKind::Device => "raw device",
        },
        crate::config::size::human(r.size),
        r.runtime_s,
        r.fio_version
    );
    let members = r.jobs.iter().any(|j| !j.members.is_empty());
    let _ = write!(
        s,
        "| {:<18} | {:>10} | {:>9} | {:>10} | {:>10} |",
        "job", "IOPS", "MiB/s", "lat avg µs", "lat p99 µs"
    );
    if members {
        let _ = write!(s, " reads / writes per member |");
    }
    s.push('\n');
    let _ = write!(
        s,
        "|{:-<20}|{:->12}|{:->11}|{:->12}|{:->12}|",
        "", ":", ":", ":", ":"
    );
    if members {
        let _ = write!(s, "---|");
    }
    s.push('\n');
    for j in &r.jobs {
        let m = &j.measured;
        let _ = write!(
            s,
            "| {:<18} | {:>10.0} | {:>9.1} | {:>10.0} | {:>10} |",
            j.name,
            m.iops,
            mib(m.bw_bytes),
            m.lat_mean_us,
            m.lat_p99_us
                .map(|p| format!("{p:.0}"))
                .unwrap_or_else(|| "-".into())
        );
        if members {
            let per: Vec<String> = j
                .members
                .iter()
                .map(|(k, io)| format!("{k} {}/{}", io.reads, io.writes))
                .collect();
            let _ = write!(s, " {} |", per.join(", "));
        }
        s.push('\n');
    }
    s
}

/// Reports side by side: IOPS and MiB/s per job, and each run's IOPS as a ratio of the first's.
pub fn compare(reports: &[Report]) -> String {
    let mut s = String::new();
    let _ = write!(s, "| {:<18} |", "job");
    for (i, r) in reports.iter().enumerate() {
        let _ = write!(s, " {} IOPS | MiB/s |", r.label);
        if i > 0 {
            let _ = write!(s, " × {} |", reports[0].label);
        }
    }
    s.push('\n');
    let _ = write!(s, "|{:-<20}|", "");
    for i in 0..reports.len() {
        s.push_str("---:|---:|");
        if i > 0 {
            s.push_str("---:|");
        }
    }
    s.push('\n');
    let mut names: Vec<&str> = Vec::new();
    for r in reports {
        for j in &r.jobs {
            if !names.contains(&j.name.as_str()) {
                names.push(&j.name);
            }
        }
    }
    for name in names {
        let _ = write!(s, "| {name:<18} |");
        let base = reports[0].jobs.iter().find(|j| j.name == name);
        for (i, r) in reports.iter().enumerate() {
            match r.jobs.iter().find(|j| j.name == name) {
                Some(j) => {
                    let _ = write!(
                        s,
                        " {:.0} | {:.1} |",
                        j.measured.iops,
                        mib(j.measured.bw_bytes)
                    );
                    if i > 0 {
                        match base {
                            Some(b) if b.measured.iops > 0.0 => {
                                let _ = write!(s, " {:.2}× |", j.measured.iops / b.measured.iops);
                            }
                            _ => s.push_str(" - |"),
                        }
                    }
                }
                None => {
                    s.push_str(" - | - |");
                    if i > 0 {
                        s.push_str(" - |");
                    }
                }
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::CmdOutput;
    use crate::observe::parse_util::fixture;
    use std::cell::RefCell;

    /// A machine with one md array (sda + sdb), a directory, and fio answering from fixtures;
    /// every job moves the md members' counters as write-mostly does (sdb serves no reads).
    struct Box1 {
        log: RefCell<Vec<String>>,
        counters: RefCell<BTreeMap<String, MemberIo>>,
        mounted: bool,
        avail: u64,
    }

    impl Box1 {
        fn new() -> Box1 {
            Box1 {
                log: RefCell::new(vec![]),
                counters: RefCell::new(BTreeMap::new()),
                mounted: false,
                avail: 50 << 30,
            }
        }
    }

    impl Host for Box1 {
        fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
            self.log.borrow_mut().push(argv.join(" "));
            let ok = |s: String| {
                Ok(CmdOutput {
                    status: 0,
                    stdout: s,
                    stderr: String::new(),
                })
            };
            let last = argv.last().unwrap().as_str();
            match argv[0].as_str() {
                "stat" => match last {
                    "/srv" | "/srv/" => ok("directory\n".into()),
                    "/dev/md127" | "/dev/sdc" => ok("block special file\n".into()),
                    "/srv/f" => ok("regular file\n".into()),
                    _ => Ok(CmdOutput {
                        status: 1,
                        stdout: String::new(),
                        stderr: format!("stat: cannot statx '{last}': No such file or directory"),
                    }),
                },
                "df" => ok(format!("    Avail\n{}\n", self.avail)),
                "lsblk" if last == "/dev/md127" => ok(format!(
                    r#"{{"blockdevices":[{{"kname":"md127","name":"md127","type":"raid1","size":2145386496,"rota":false,"maj:min":"9:127","fstype":null,"mountpoint":{}}}]}}"#,
                    if self.mounted { "\"/srv\"" } else { "null" }
                )),
                "lsblk" => ok(r#"{"blockdevices":[{"kname":"sdc","name":"sdc","type":"disk","size":2147483648,"rota":true,"maj:min":"8:32","fstype":"ext4","children":[{"kname":"sdc1","name":"sdc1","type":"part","size":1048576,"rota":true,"maj:min":"8:33"}]}]}"#.into()),
                "fio" => {
                    let reads = argv.iter().any(|a| a.ends_with("read"));
                    let mut c = self.counters.borrow_mut();
                    let sda = c.entry("sda".into()).or_default();
                    if reads { sda.reads += 100 } else { sda.writes += 100 }
                    if !reads {
                        c.entry("sdb".into()).or_default().writes += 100;
                    }
                    ok(fixture(if reads { "fio/rand-read-4k-qd32.json" } else { "fio/seq-write-1m-qd1.json" }))
                }
                "rm" => ok(String::new()),
                _ => Err(HostError::Spawn { program: argv[0].clone(), detail: "not modelled".into() }),
            }
        }
        fn read_file(&self, path: &str) -> Result<String, HostError> {
            let k = path.split('/').nth(4).unwrap_or("");
            let c = self.counters.borrow().get(k).copied().unwrap_or_default();
            Ok(format!(
                "{} 0 0 0 {} 0 0 0 0 0 0 0 0 0 0 0 0\n",
                c.reads + 7,
                c.writes + 3
            ))
        }
        fn write_file(&self, _: &str, _: &str) -> Result<(), HostError> {
            unreachable!()
        }
        fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
            match path {
                "/sys/block/md127/slaves" => Ok(vec!["sda".into(), "sdb".into()]),
                _ => Ok(vec![]), // a disk's slaves directory is empty
            }
        }
        fn read_link(&self, path: &str) -> Result<String, HostError> {
            Err(HostError::NotFound { path: path.into() })
        }
        fn hostname(&self) -> String {
            "box1".into()
        }
        fn is_root(&self) -> bool {
            true
        }
        fn is_simulated(&self) -> bool {
            true
        }
        fn sleep(&self, _: std::time::Duration) {}
        fn exists(&self, _: &str) -> bool {
            false
        }
        fn replace_file(&self, _: &str, _: &str) -> Result<(), HostError> {
            unreachable!()
        }
    }

    fn opts(target: &str, allow_destroy: bool) -> Options {
        Options {
            target: target.into(),
            size: 1 << 30,
            runtime_s: 5,
            ramp_s: 1,
            jobs: fio::MATRIX.to_vec(),
            allow_destroy,
            label: None,
        }
    }

    #[test]
    fn a_raw_device_needs_allow_destroy_and_must_be_unused() {
        let h = Box1::new();
        let e = prepare(&h, &opts("/dev/md127", false))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("destroy the data on /dev/md127") && e.contains("--allow-destroy"),
            "{e}"
        );
        let e = prepare(&h, &opts("/dev/sdc", true))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/sdc is in use: sdc1 is on it"), "{e}");
        let mut h = Box1::new();
        h.mounted = true;
        let e = prepare(&h, &opts("/dev/md127", true))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is mounted (at /srv)"), "{e}");
        let e = prepare(&h, &opts("/srv/f", true)).unwrap_err().to_string();
        assert!(e.contains("is a regular file"), "{e}");
        assert!(
            prepare(&h, &opts("/nope", true))
                .unwrap_err()
                .to_string()
                .contains("No such file")
        );
        // Nothing was written: only probes ran (fio only asked its version).
        assert!(
            h.log
                .borrow()
                .iter()
                .all(|c| !c.starts_with("fio") || c == "fio --version")
        );
    }

    #[test]
    fn a_directory_needs_room_for_the_file() {
        let mut h = Box1::new();
        h.avail = 1 << 30;
        let e = prepare(&h, &opts("/srv", false)).unwrap_err().to_string();
        assert!(
            e.contains("/srv has 1.00 GiB free; the test file needs 1.00 GiB"),
            "{e}"
        );
        h.avail = 2 << 30;
        let p = prepare(&h, &opts("/srv/", false)).unwrap();
        assert_eq!(p.kind, TargetKind::File);
        assert!(p.filename.starts_with("/srv/hyraid-bench.") && p.filename.ends_with(".fio"));
    }

    #[test]
    fn runs_the_matrix_and_records_member_io_on_md() {
        let h = Box1::new();
        let o = opts("/dev/md127", true);
        let p = prepare(&h, &o).unwrap();
        assert_eq!(p.members, ["sda", "sdb"]);
        assert_eq!(p.size, 1 << 30);
        let mut seen = vec![];
        let r = run(&h, &o, &p, &mut |i, j| seen.push((i, j.name)), &|| false).unwrap();
        assert_eq!(seen.len(), 8);
        assert_eq!(r.jobs.len(), 8);
        assert_eq!(r.fio_version, "fio-3.33");
        let rr = &r.jobs[6];
        assert_eq!(rr.name, "rand-read-4k-qd32");
        assert!((rr.measured.iops - 93001.49925).abs() < 1e-6);
        assert_eq!(
            rr.members["sda"],
            MemberIo {
                reads: 100,
                writes: 0
            }
        );
        assert_eq!(
            rr.members["sdb"],
            MemberIo {
                reads: 0,
                writes: 0
            }
        );
        assert_eq!(
            r.jobs[1].members["sdb"],
            MemberIo {
                reads: 0,
                writes: 100
            }
        );
        // A device run leaves no file to remove.
        assert!(h.log.borrow().iter().all(|c| !c.starts_with("rm")));
        let t = table(&r);
        assert!(
            t.contains("| rand-read-4k-qd32  |      93001 |     363.3 |"),
            "{t}"
        );
        assert!(t.contains("sda 100/0, sdb 0/0"), "{t}");
        // The JSON report reads back.
        let back: Report = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn a_file_run_removes_its_file_even_when_fio_fails() {
        let h = Box1::new();
        let mut o = opts("/srv", false);
        o.jobs = vec![fio::job("rand-read-4k-qd32").unwrap()];
        let p = prepare(&h, &o).unwrap();
        run(&h, &o, &p, &mut |_, _| {}, &|| false).unwrap();
        assert_eq!(
            h.log.borrow().last().unwrap(),
            &format!("rm -f -- {}", p.filename)
        );
    }

    #[test]
    fn an_interrupt_starts_no_further_job_and_removes_the_file() {
        let h = Box1::new();
        let o = opts("/srv", false);
        let p = prepare(&h, &o).unwrap();
        let started = std::cell::Cell::new(0);
        let e = run(
            &h,
            &o,
            &p,
            &mut |_, _| started.set(started.get() + 1),
            &|| started.get() >= 2,
        )
        .unwrap_err();
        assert!(
            matches!(e, BenchError::Interrupted { done: 2, total: 8 }),
            "{e}"
        );
        let log = h.log.borrow();
        assert_eq!(
            log.iter()
                .filter(|c| c.starts_with("fio") && *c != "fio --version")
                .count(),
            2
        );
        assert_eq!(log.last().unwrap(), &format!("rm -f -- {}", p.filename));
    }

    #[test]
    fn compare_puts_runs_side_by_side_with_ratios() {
        let h = Box1::new();
        let mut o = opts("/dev/md127", true);
        o.jobs = vec![
            fio::job("rand-read-4k-qd32").unwrap(),
            fio::job("seq-write-1m").unwrap(),
        ];
        let p = prepare(&h, &o).unwrap();
        let mut a = run(&h, &o, &p, &mut |_, _| {}, &|| false).unwrap();
        a.label = "plain".into();
        let mut b = a.clone();
        b.label = "hyraid".into();
        b.jobs[0].measured.iops *= 5.0;
        b.jobs[0].measured.bw_bytes *= 5.0;
        b.jobs.pop();
        let t = compare(&[a, b]);
        let row = t.lines().find(|l| l.contains("rand-read-4k-qd32")).unwrap();
        assert!(
            row.contains("| 93001 | 363.3 | 465007 | 1816.4 | 5.00× |"),
            "{row}"
        );
        let row = t.lines().find(|l| l.contains("seq-write-1m")).unwrap();
        assert!(row.ends_with("| - | - | - |"), "{row}");
        assert!(
            t.starts_with(
                "| job                | plain IOPS | MiB/s | hyraid IOPS | MiB/s | × plain |"
            ),
            "{t}"
        );
    }
}
