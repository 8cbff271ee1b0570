//! The target of a run: a new file in a directory on a mounted filesystem, or with
//! `--allow-destroy` an unused block device; and the devices it is built from.

use super::{BenchError, Options, TargetKind, run_ok, strings};
use crate::host::{Host, HostError};

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
