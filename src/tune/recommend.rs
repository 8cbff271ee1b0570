//! From repeated runs to a recommendation: each job's median and run-to-run spread per
//! configuration, each configuration's ratio to the file's, and for the workload named the
//! settings whose gain exceeds the spread (a gain inside it is no gain). Settings that win on
//! their own are recommended together, each kind once (the best write-behind value), and the
//! recommendation says they were measured one at a time.

use super::{Change, Measured, Workload};
use serde::{Deserialize, Serialize};

/// The least gain ever called a win, whatever the measured spread (two rounds can agree by luck).
pub const MIN_GAIN: f64 = 0.05;

/// One job under one configuration, over its rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub iops: f64,
    /// Bytes per second (median).
    pub bw_bytes: f64,
    /// (largest − smallest) / median of the rounds' bandwidth; 0 with one round.
    pub spread: f64,
    pub rounds: usize,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The cell of `job` in a configuration's runs (`None`: not measured).
pub fn cell(m: &Measured, job: &str) -> Option<Cell> {
    let rows: Vec<&crate::bench::JobResult> = m
        .runs
        .iter()
        .filter_map(|r| r.jobs.iter().find(|j| j.name == job))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut bw: Vec<f64> = rows.iter().map(|j| j.measured.bw_bytes).collect();
    let mut iops: Vec<f64> = rows.iter().map(|j| j.measured.iops).collect();
    let (lo, hi) = bw
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
    let med = median(&mut bw);
    Some(Cell {
        iops: median(&mut iops),
        bw_bytes: med,
        spread: if med > 0.0 { (hi - lo) / med } else { 0.0 },
        rounds: rows.len(),
    })
}

/// A configuration's bandwidth on `job` as a ratio of the file's.
pub fn ratio(base: &Measured, m: &Measured, job: &str) -> Option<f64> {
    let (b, c) = (cell(base, job)?, cell(m, job)?);
    (b.bw_bytes > 0.0).then(|| c.bw_bytes / b.bw_bytes)
}

/// How one configuration fared for the workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub config: String,
    /// Geometric mean of the workload's jobs' ratios to the file's.
    pub score: f64,
    /// The largest run-to-run spread among the cells compared.
    pub spread: f64,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Faster beyond the spread.
    Wins,
    /// Slower beyond the spread.
    Loses,
    /// Within the spread: no difference that the runs can tell.
    Same,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    pub workload: Workload,
    pub scores: Vec<Score>,
    /// The configurations recommended (one per kind of setting).
    pub chosen: Vec<String>,
    /// Their changes to the file.
    pub changes: Vec<Change>,
    /// The risks they carry.
    pub risks: Vec<String>,
    /// The file's text edited, as a unified diff (`None`: keep what you have, or the edit could
    /// not be made in place and `changes` says it).
    pub diff: Option<String>,
    pub words: String,
}

/// The kind of setting a configuration changes (`write_behind`), by its changes' last key.
fn kind(m: &Measured) -> Option<&str> {
    m.changes
        .first()
        .and_then(|c| c.path.last())
        .map(String::as_str)
}

/// Score every measured configuration against the first (the file's) for `w`, and choose.
pub fn recommend(configs: &[Measured], w: Workload) -> Recommendation {
    let jobs = w.jobs();
    let base = &configs[0];
    let mut scores = Vec::new();
    for m in configs.iter().skip(1).filter(|m| m.skipped.is_none()) {
        let ratios: Vec<f64> = jobs.iter().filter_map(|j| ratio(base, m, j)).collect();
        if ratios.is_empty() || ratios.iter().any(|r| *r <= 0.0) {
            continue;
        }
        let score = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        let spread = jobs
            .iter()
            .flat_map(|j| [cell(base, j), cell(m, j)])
            .flatten()
            .map(|c| c.spread)
            .fold(0.0, f64::max);
        let gain = spread.max(MIN_GAIN);
        let verdict = if score > 1.0 + gain {
            Verdict::Wins
        } else if score < 1.0 / (1.0 + gain) {
            Verdict::Loses
        } else {
            Verdict::Same
        };
        scores.push(Score {
            config: m.name.clone(),
            score,
            spread,
            verdict,
        });
    }
    // The best winner of each kind; write-mostly off and write-behind exclude each other (md
    // writes behind only to a write-mostly member).
    let mut chosen: Vec<&Measured> = Vec::new();
    let mut winners: Vec<(&Measured, f64)> = scores
        .iter()
        .filter(|s| s.verdict == Verdict::Wins)
        .filter_map(|s| Some((configs.iter().find(|m| m.name == s.config)?, s.score)))
        .collect();
    winners.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (m, _) in winners {
        let k = kind(m);
        let clash = chosen.iter().any(|c| {
            let ck = kind(c);
            ck == k
                || matches!(
                    (ck, k),
                    (Some("write_mostly"), Some("write_behind"))
                        | (Some("write_behind"), Some("write_mostly"))
                )
        });
        if !clash {
            chosen.push(m);
        }
    }
    let spread = scores.iter().map(|s| s.spread).fold(0.0, f64::max);
    let words = if chosen.is_empty() {
        format!(
            "keep what you have: for a {} workload no configuration beat the file's by more than the run-to-run spread ({:.0}%; a gain under {:.0}% never counts)",
            w.word(),
            100.0 * spread,
            100.0 * MIN_GAIN
        )
    } else {
        let names: Vec<String> = chosen
            .iter()
            .map(|m| {
                let s = scores.iter().find(|s| s.config == m.name).expect("scored");
                format!(
                    "{} (×{:.2}, spread {:.0}%)",
                    m.name,
                    s.score,
                    100.0 * s.spread
                )
            })
            .collect();
        format!(
            "for a {} workload, {} beat the file's beyond the run-to-run spread{}",
            w.word(),
            names.join(" and "),
            if chosen.len() > 1 {
                "; each was measured on its own: run `hyraid tune` again after applying to measure them together"
            } else {
                ""
            }
        )
    };
    Recommendation {
        workload: w,
        chosen: chosen.iter().map(|m| m.name.clone()).collect(),
        changes: chosen.iter().flat_map(|m| m.changes.clone()).collect(),
        risks: chosen.iter().filter_map(|m| m.risk.clone()).collect(),
        scores,
        diff: None,
        words,
    }
}

/// The file's text with the recommended changes, as a unified diff; `None` when an edit cannot
/// be made in place, or when the edited text does not load to exactly `want` (the state the
/// recommended configurations make).
pub fn file_diff(
    name: &str,
    text: &str,
    changes: &[Change],
    want: &crate::config::Desired,
) -> Option<String> {
    let edits: Vec<super::yaml_edit::Edit> = changes
        .iter()
        .map(|c| super::yaml_edit::Edit {
            path: &c.path,
            to: c.to.as_deref(),
        })
        .collect();
    let new = super::yaml_edit::apply(text, &edits)?;
    let loaded = crate::config::load_str(name, &new).ok()?;
    (loaded == *want).then(|| super::yaml_edit::diff(name, text, &new))
}

/// The state of the file with each chosen configuration's differences from the file's: merged
/// field by field (their changes touch different settings).
pub fn merged(
    file: &crate::config::Desired,
    chosen: &[&crate::config::Desired],
) -> Option<crate::config::Desired> {
    use serde_json::Value;
    fn patch(base: &Value, variant: &Value, out: &mut Value) {
        match (base, variant) {
            (Value::Object(b), Value::Object(v)) => {
                let Value::Object(o) = out else { return };
                for (k, vv) in v {
                    match b.get(k) {
                        Some(bv) if bv == vv => {}
                        Some(bv) => {
                            let slot = o.entry(k.clone()).or_insert(Value::Null);
                            if bv.is_object() && vv.is_object() && slot.is_object() {
                                patch(bv, vv, slot);
                            } else {
                                *slot = vv.clone();
                            }
                        }
                        None => {
                            o.insert(k.clone(), vv.clone());
                        }
                    }
                }
                for k in b.keys().filter(|k| !v.contains_key(*k)) {
                    o.remove(k);
                }
            }
            _ => *out = variant.clone(),
        }
    }
    let base = serde_json::to_value(file).ok()?;
    let mut out = base.clone();
    for c in chosen {
        patch(&base, &serde_json::to_value(c).ok()?, &mut out);
    }
    serde_json::from_value(out).ok()
}

#[cfg(test)]
mod tests;
