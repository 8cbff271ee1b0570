//! A run as text: the field report's table (IOPS and MiB/s per job per configuration), each
//! configuration's ratio to the file's with the run-to-run spread, and the recommendation.

use super::recommend::{Verdict, cell, ratio};
use super::{TuneReport, Workload};
use std::fmt::Write;

/// Short column names, as the field report has them.
fn short(job: &str) -> &str {
    match job {
        "seq-read-1m" => "Seqread",
        "seq-write-1m" => "Seqwrite",
        "rand-read-512k" => "512Kread",
        "rand-write-512k" => "512Kwrite",
        "rand-read-4k-qd32" => "4kQD32read",
        "rand-write-4k-qd32" => "4kQD32write",
        j => j,
    }
}

use crate::bench::plot::figure as num;

/// The whole run as text.
pub fn table(r: &TuneReport) -> String {
    let mut s = String::new();
    let p = &r.profile;
    let _ = writeln!(
        s,
        "hyraid tune on {}: lv {} ({}{}), {} profile: {} per job{}, {} round(s)\n",
        r.host,
        r.lv,
        r.target,
        if r.scratch { ", a scratch LV" } else { "" },
        p.name,
        crate::config::size::human(p.size),
        match p.loops {
            Some(n) => format!(", {n} loops (at most {} s)", p.runtime_s),
            None => format!(", {} s", p.runtime_s),
        },
        p.repeats
    );
    let _ = write!(s, "| {:<34} |", "configuration");
    for j in &r.jobs {
        let _ = write!(s, " {} IOPS | {} MiB/s |", short(j), short(j));
    }
    s.push_str("\n|---|");
    for _ in &r.jobs {
        s.push_str("---:|---:|");
    }
    s.push('\n');
    for m in &r.configs {
        let _ = write!(s, "| {:<34} |", m.name);
        for j in &r.jobs {
            match cell(m, j) {
                Some(c) => {
                    let _ = write!(s, " {} | {} |", num(c.iops), num(c.bw_bytes / 1048576.0));
                }
                None => s.push_str(" - | - |"),
            }
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "\nMiB/s as a ratio of the file's (±: the run-to-run spread of that cell, largest − smallest over the median):\n"
    );
    let _ = write!(s, "| {:<34} |", "configuration");
    for j in &r.jobs {
        let _ = write!(s, " {} |", short(j));
    }
    s.push_str("\n|---|");
    for _ in &r.jobs {
        s.push_str("---:|");
    }
    s.push('\n');
    let base = &r.configs[0];
    for m in &r.configs {
        let _ = write!(s, "| {:<34} |", m.name);
        if let Some(why) = &m.skipped {
            let _ = writeln!(s, " not measured: {why} |");
            continue;
        }
        for j in &r.jobs {
            match (ratio(base, m, j), cell(m, j)) {
                (Some(x), Some(c)) => {
                    let x = if x < 0.1 {
                        format!("{x:.3}")
                    } else {
                        format!("{x:.2}")
                    };
                    let _ = write!(s, " ×{x} ±{:.0}% |", 100.0 * c.spread);
                }
                _ => s.push_str(" - |"),
            }
        }
        s.push('\n');
    }
    member_reads(r, &mut s);
    let rec = &r.recommendation;
    let _ = writeln!(
        s,
        "\nFor each workload (geometric mean of its jobs' ratios):\n"
    );
    for w in Workload::ALL {
        let sc = super::recommend(&r.configs, w);
        let line: Vec<String> = sc
            .scores
            .iter()
            .map(|x| {
                format!(
                    "{} ×{:.2}{}",
                    x.config,
                    x.score,
                    match x.verdict {
                        Verdict::Wins => " (wins)",
                        Verdict::Loses => " (loses)",
                        Verdict::Same => "",
                    }
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "- {}{}: {}",
            w.word(),
            if w == rec.workload { " (asked)" } else { "" },
            if line.is_empty() {
                "nothing else measured".into()
            } else {
                line.join(", ")
            }
        );
    }
    let _ = writeln!(s, "\nRecommendation: {}.", rec.words);
    for risk in &rec.risks {
        let _ = writeln!(s, "  Mind: {risk}.");
    }
    match (&rec.diff, rec.changes.is_empty()) {
        (Some(d), _) => {
            let _ = writeln!(s, "\nThe change to {}:\n\n{d}", r.file);
            let _ = writeln!(
                s,
                "Edit the file so, review `hyraid plan {}`, and apply it.",
                r.file
            );
        }
        (None, false) => {
            let _ = writeln!(s, "\nThe change to {}:", r.file);
            for c in &rec.changes {
                let _ = writeln!(
                    s,
                    "  {}: {} -> {}",
                    c.path.join("."),
                    c.from.as_deref().unwrap_or("(not set)"),
                    c.to.as_deref().unwrap_or("(removed)")
                );
            }
        }
        (None, true) => {}
    }
    s
}

/// The picture of a run: MiB/s per job, one bar per configuration.
pub fn bars(r: &TuneReport) -> crate::bench::plot::Bars {
    let series = r
        .configs
        .iter()
        .filter(|m| m.skipped.is_none())
        .map(|m| {
            let v = r
                .jobs
                .iter()
                .map(|j| super::recommend::cell(m, j).map(|c| c.bw_bytes / 1048576.0))
                .collect();
            (m.name.clone(), v)
        })
        .collect();
    crate::bench::plot::Bars {
        title: format!(
            "hyraid tune on {}: lv {}, {} profile, median of {} rounds",
            r.host, r.lv, r.profile.name, r.profile.repeats
        ),
        unit: "MiB/s".into(),
        groups: r.jobs.clone(),
        series,
    }
}

/// Which member served the read jobs' reads, per configuration (the kernel's counters, summed
/// over the rounds): write-mostly at work shows as an HDD that serves none.
fn member_reads(r: &TuneReport, s: &mut String) {
    let mut lines = Vec::new();
    for m in r.configs.iter().filter(|m| m.skipped.is_none()) {
        let mut per: std::collections::BTreeMap<&str, u64> = Default::default();
        for j in m
            .runs
            .iter()
            .flat_map(|x| &x.jobs)
            .filter(|j| j.rw.ends_with("read"))
        {
            for (k, io) in &j.members {
                *per.entry(k.as_str()).or_default() += io.reads;
            }
        }
        if !per.is_empty() {
            let v: Vec<String> = per.iter().map(|(k, n)| format!("{k} {n}")).collect();
            lines.push(format!("- {}: {}", m.name, v.join(", ")));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(
            s,
            "\nReads each member served in the read jobs (the kernel's counters):\n"
        );
        for l in lines {
            let _ = writeln!(s, "{l}");
        }
    }
}
