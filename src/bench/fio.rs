//! fio: the job's command line and its `--output-format=json` report.

use serde::{Deserialize, Serialize};

/// One job of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    pub name: &'static str,
    /// fio's `rw`: read, write, randread, randwrite.
    pub rw: &'static str,
    pub bs: &'static str,
    pub iodepth: u32,
}

impl Job {
    pub fn reads(&self) -> bool {
        self.rw.ends_with("read")
    }
}

/// The field's standard matrix (CrystalDiskMark's classic rows): sequential 1M, random 512K and
/// random 4K at queue depth 1, and random 4K at queue depth 32; each read and write.
pub const MATRIX: [Job; 8] = [
    Job {
        name: "seq-read-1m",
        rw: "read",
        bs: "1M",
        iodepth: 1,
    },
    Job {
        name: "seq-write-1m",
        rw: "write",
        bs: "1M",
        iodepth: 1,
    },
    Job {
        name: "rand-read-512k",
        rw: "randread",
        bs: "512k",
        iodepth: 1,
    },
    Job {
        name: "rand-write-512k",
        rw: "randwrite",
        bs: "512k",
        iodepth: 1,
    },
    Job {
        name: "rand-read-4k-qd1",
        rw: "randread",
        bs: "4k",
        iodepth: 1,
    },
    Job {
        name: "rand-write-4k-qd1",
        rw: "randwrite",
        bs: "4k",
        iodepth: 1,
    },
    Job {
        name: "rand-read-4k-qd32",
        rw: "randread",
        bs: "4k",
        iodepth: 32,
    },
    Job {
        name: "rand-write-4k-qd32",
        rw: "randwrite",
        bs: "4k",
        iodepth: 32,
    },
];

pub fn job(name: &str) -> Option<Job> {
    MATRIX.iter().copied().find(|j| j.name == name)
}

/// The fio command line of one job against `filename` (a file or a block device), limited to
/// the first `size` bytes: direct I/O, libaio, time-based with a ramp, JSON report.
pub fn argv(job: &Job, filename: &str, size: u64, runtime_s: u32, ramp_s: u32) -> Vec<String> {
    [
        "fio".to_string(),
        format!("--name={}", job.name),
        format!("--filename={filename}"),
        format!("--size={size}"),
        format!("--rw={}", job.rw),
        format!("--bs={}", job.bs),
        format!("--iodepth={}", job.iodepth),
        "--ioengine=libaio".into(),
        "--direct=1".into(),
        "--numjobs=1".into(),
        "--time_based".into(),
        format!("--runtime={runtime_s}"),
        format!("--ramp_time={ramp_s}"),
        // Random offsets differ per run; a fixed seed keeps runs comparable.
        "--randrepeat=1".into(),
        "--output-format=json".into(),
    ]
    .into()
}

/// The job as the field report runs it: the whole `size`, `loops` times (fio's `--loops`), yet
/// never longer than `cap_s` seconds (fio's `--runtime` without `--time_based`).
pub fn argv_loops(job: &Job, filename: &str, size: u64, loops: u32, cap_s: u32) -> Vec<String> {
    argv(job, filename, size, cap_s, 0)
        .into_iter()
        .filter(|a| a != "--time_based" && !a.starts_with("--ramp_time="))
        .flat_map(|a| {
            if a.starts_with("--runtime=") {
                vec![format!("--loops={loops}"), a]
            } else {
                vec![a]
            }
        })
        .collect()
}

/// What one direction of one job measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Mean completion latency, µs (submission to completion, as fio's `lat`).
    pub lat_mean_us: f64,
    /// 99th percentile completion latency, µs.
    pub lat_p99_us: Option<f64>,
    pub io_bytes: u64,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FioError {
    #[error("fio printed no JSON report: {0}")]
    NoReport(String),
    #[error("fio's JSON report is not readable: {0}")]
    Json(String),
    #[error("fio job {job} failed with error {code} (an errno: {detail})")]
    Job {
        job: String,
        code: i64,
        detail: String,
    },
}

/// fio's version and the measured direction of the report's only job. fio can print warnings
/// before the JSON document, so the report starts at the first `{` of a line.
pub fn parse(stdout: &str, reads: bool) -> Result<(String, Measured), FioError> {
    let start = stdout
        .find("\n{")
        .map(|i| i + 1)
        .or_else(|| stdout.starts_with('{').then_some(0))
        .ok_or_else(|| FioError::NoReport(stdout.lines().next().unwrap_or("").to_string()))?;
    let v: serde_json::Value =
        serde_json::from_str(&stdout[start..]).map_err(|e| FioError::Json(e.to_string()))?;
    let version = v["fio version"].as_str().unwrap_or("fio").to_string();
    let job = v["jobs"]
        .get(0)
        .ok_or_else(|| FioError::Json("no `jobs` in the report".into()))?;
    let code = job["error"].as_i64().unwrap_or(0);
    if code != 0 {
        return Err(FioError::Job {
            job: job["jobname"].as_str().unwrap_or("?").to_string(),
            code,
            detail: std::io::Error::from_raw_os_error(code as i32).to_string(),
        });
    }
    let d = &job[if reads { "read" } else { "write" }];
    let num = |x: &serde_json::Value, what: &str| {
        x.as_f64()
            .ok_or_else(|| FioError::Json(format!("no number at {what}")))
    };
    let lat = &d["lat_ns"];
    let p99 = d["clat_ns"]["percentile"]["99.000000"].as_f64();
    Ok((
        version,
        Measured {
            iops: num(&d["iops"], "iops")?,
            bw_bytes: num(&d["bw_bytes"], "bw_bytes")?,
            lat_mean_us: num(&lat["mean"], "lat_ns.mean")? / 1e3,
            lat_p99_us: p99.map(|p| p / 1e3),
            io_bytes: d["io_bytes"].as_u64().unwrap_or(0),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::parse_util::fixture;

    #[test]
    fn parses_a_real_random_read_report() {
        let (v, m) = parse(&fixture("fio/rand-read-4k-qd32.json"), true).unwrap();
        assert_eq!(v, "fio-3.33");
        assert!((m.iops - 93001.49925).abs() < 1e-6);
        assert_eq!(m.bw_bytes, 380934140.0);
        assert!((m.lat_mean_us - 343.635364446).abs() < 1e-6);
        assert_eq!(m.lat_p99_us, Some(403.456));
        assert_eq!(m.io_bytes, 762249216);
    }

    #[test]
    fn the_measured_direction_is_the_job_s() {
        let text = fixture("fio/seq-write-1m-qd1.json");
        let (_, w) = parse(&text, false).unwrap();
        let (_, r) = parse(&text, true).unwrap();
        assert!(w.iops > 0.0 && w.io_bytes > 0);
        assert_eq!((r.iops, r.io_bytes), (0.0, 0));
    }

    #[test]
    fn warnings_before_the_report_are_skipped() {
        let text = format!(
            "fio: this platform does not support process shared mutexes\n{}",
            fixture("fio/rand-read-4k-qd32.json")
        );
        assert_eq!(parse(&text, true).unwrap().0, "fio-3.33");
    }

    #[test]
    fn a_failed_job_is_an_error_with_the_errno() {
        let text = fixture("fio/rand-read-4k-qd32.json").replace("\"error\" : 0", "\"error\" : 22");
        assert_eq!(
            parse(&text, true).unwrap_err(),
            FioError::Job {
                job: "randread-4k-qd32".into(),
                code: 22,
                detail: std::io::Error::from_raw_os_error(22).to_string()
            }
        );
        assert!(matches!(
            parse("fio: pid=0, err=2/file:filesetup.c", true),
            Err(FioError::NoReport(_))
        ));
    }

    #[test]
    fn the_field_report_s_loops_with_a_cap() {
        let a = argv_loops(&job("seq-read-1m").unwrap(), "/srv/t", 1000 << 20, 5, 60);
        assert_eq!(
            a.join(" "),
            "fio --name=seq-read-1m --filename=/srv/t --size=1048576000 --rw=read --bs=1M --iodepth=1 --ioengine=libaio --direct=1 --numjobs=1 --loops=5 --runtime=60 --randrepeat=1 --output-format=json"
        );
    }

    #[test]
    fn argv_is_direct_libaio_and_time_based() {
        let a = argv(
            &job("rand-write-4k-qd32").unwrap(),
            "/dev/md127",
            1 << 30,
            10,
            2,
        );
        let s = a.join(" ");
        assert_eq!(
            s,
            "fio --name=rand-write-4k-qd32 --filename=/dev/md127 --size=1073741824 --rw=randwrite --bs=4k --iodepth=32 --ioengine=libaio --direct=1 --numjobs=1 --time_based --runtime=10 --ramp_time=2 --randrepeat=1 --output-format=json"
        );
    }
}
