use super::*;
use crate::bench::fio::Measured as FioMeasured;
use crate::bench::{JobResult, Report, TargetKind};

/// A configuration measured in rounds: per round, each job's MiB/s (in [`JOBS`] order).
fn measured(name: &str, key: &str, rounds: &[[f64; 6]]) -> Measured {
    Measured {
        name: name.into(),
        changes: if key.is_empty() {
            vec![]
        } else {
            vec![Change {
                path: vec!["mirrors".into(), "data0".into(), key.into()],
                from: None,
                to: Some(name.into()),
            }]
        },
        risk: None,
        skipped: None,
        runs: rounds
            .iter()
            .map(|r| Report {
                format: 1,
                hyraid_version: "0".into(),
                host: "h".into(),
                label: name.into(),
                target: "/srv".into(),
                kind: TargetKind::File,
                filename: "/srv/f".into(),
                size: 1,
                runtime_s: 1,
                fio_version: "fio-3.33".into(),
                jobs: crate::tune::JOBS
                    .iter()
                    .zip(r)
                    .map(|(j, mib)| JobResult {
                        name: j.to_string(),
                        rw: "read".into(),
                        bs: "1M".into(),
                        iodepth: 1,
                        measured: FioMeasured {
                            iops: *mib,
                            bw_bytes: mib * 1048576.0,
                            lat_mean_us: 1.0,
                            lat_p99_us: None,
                            io_bytes: 1,
                        },
                        members: Default::default(),
                    })
                    .collect(),
            })
            .collect(),
    }
}

const BASE: [[f64; 6]; 2] = [
    [480.0, 50.0, 380.0, 33.0, 340.0, 0.7],
    [470.0, 51.0, 370.0, 32.0, 335.0, 0.7],
];

#[test]
fn median_and_spread_of_the_rounds() {
    let m = measured("f", "", &[[100.0; 6], [110.0; 6], [90.0; 6]]);
    let c = cell(&m, "seq-read-1m").unwrap();
    assert_eq!(c.bw_bytes, 100.0 * 1048576.0);
    assert!((c.spread - 0.2).abs() < 1e-9);
    assert_eq!(c.rounds, 3);
    assert!(cell(&m, "no-such-job").is_none());
}

#[test]
fn a_gain_inside_the_spread_is_no_gain() {
    // The file's own rounds differ by 10%; the candidate is 8% faster on every job.
    let base = measured("as the file says", "", &[[100.0; 6], [110.0; 6]]);
    let cand = measured(
        "write-behind 2048",
        "write_behind",
        &[[112.0; 6], [115.0; 6]],
    );
    let r = recommend(&[base, cand], Workload::Mixed);
    assert_eq!(r.scores[0].verdict, Verdict::Same, "{r:?}");
    assert!(r.chosen.is_empty());
    assert!(r.words.starts_with("keep what you have"), "{}", r.words);
    assert!(r.diff.is_none() && r.changes.is_empty());
}

#[test]
fn a_gain_beyond_the_spread_is_recommended_with_its_change() {
    let base = measured("as the file says", "", &BASE);
    let cache = measured(
        "drive cache on",
        "write_cache",
        &[
            [475.0, 124.0, 363.0, 45.0, 358.0, 1.0],
            [464.0, 123.0, 368.0, 58.0, 386.0, 1.0],
        ],
    );
    let r = recommend(&[base, cache], Workload::Sequential);
    assert_eq!(r.scores[0].verdict, Verdict::Wins);
    assert_eq!(r.chosen, vec!["drive cache on"]);
    assert_eq!(r.changes.len(), 1);
    assert!(r.words.contains("drive cache on (×1.5"), "{}", r.words);
}

#[test]
fn even_a_tiny_spread_asks_for_five_percent() {
    let base = measured("as the file says", "", &[[100.0; 6], [100.0; 6]]);
    let cand = measured("drive cache on", "write_cache", &[[104.0; 6], [104.0; 6]]);
    let r = recommend(&[base, cand], Workload::Mixed);
    assert_eq!(r.scores[0].verdict, Verdict::Same);
}

#[test]
fn the_workload_decides_a_trade() {
    // A writecache: writes 4x, reads 15% slower (the field report's shape).
    let base = measured("as the file says", "", &BASE);
    let wc = measured(
        "writecache on fast0",
        "writecache",
        &[
            [394.0, 196.0, 292.0, 167.0, 335.0, 50.0],
            [395.0, 195.0, 290.0, 166.0, 330.0, 49.0],
        ],
    );
    let configs = [base, wc];
    let read = recommend(&configs, Workload::RandomRead);
    assert_eq!(read.scores[0].verdict, Verdict::Loses);
    assert!(read.chosen.is_empty());
    let write = recommend(&configs, Workload::RandomWrite);
    assert_eq!(write.scores[0].verdict, Verdict::Wins);
    assert_eq!(write.chosen, vec!["writecache on fast0"]);
    assert_eq!(
        recommend(&configs, Workload::Mixed).scores[0].verdict,
        Verdict::Wins
    );
}

#[test]
fn one_value_per_setting_and_write_mostly_off_excludes_write_behind() {
    let base = measured("as the file says", "", &BASE);
    let wb1 = measured(
        "write-behind 512",
        "write_behind",
        &[[600.0; 6], [600.0; 6]],
    );
    let wb2 = measured(
        "write-behind 2048",
        "write_behind",
        &[[700.0; 6], [700.0; 6]],
    );
    let wm = measured(
        "write-mostly off",
        "write_mostly",
        &[[650.0; 6], [650.0; 6]],
    );
    let cache = measured("drive cache on", "write_cache", &[[620.0; 6], [620.0; 6]]);
    let r = recommend(&[base, wb1, wb2, wm, cache], Workload::Mixed);
    assert_eq!(r.chosen, vec!["write-behind 2048", "drive cache on"]);
    assert!(r.words.contains("measured on its own"), "{}", r.words);
}

#[test]
fn skipped_configurations_are_not_scored() {
    let base = measured("as the file says", "", &BASE);
    let mut wc = measured("writecache on fast0", "writecache", &[[900.0; 6]]);
    wc.skipped = Some("no room".into());
    wc.runs.clear();
    assert!(recommend(&[base, wc], Workload::Mixed).scores.is_empty());
}
