//! Reports as text: the table of one run, and runs side by side with their ratios.

use super::{Report, TargetKind};
use std::fmt::Write;

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
