//! The run of VM 39-tune on a real kernel (Debian 12, kernel 6.1; QEMU's HDD throttled to 100
//! IOPS / 40 MB/s), kept as `tune -o` wrote it: its recommendation is what its own numbers give,
//! the kernel's counters show where the reads went, and its picture is drawn from it.

use hyraid::tune::{self, TuneReport, Workload};

/// The run of VM 39-tune on Debian 12 (kernel 6.1, a QEMU HDD throttled to 100 IOPS / 40 MB/s),
/// kept as `tune -o` wrote it.
fn real_kernel_run() -> TuneReport {
    let text = std::fs::read_to_string("tests/fixtures/tune/vm-bookworm.json")
        .expect("the VM run's JSON is kept under tests/fixtures/tune");
    serde_json::from_str(&text).expect("tune -o's JSON reads back")
}

/// What the real run recommended is what its own numbers give: the scores and the choice are
/// computed again from the recorded rounds, for the workload it named and for every other.
#[test]
fn a_real_kernel_run_recommends_what_its_numbers_say() {
    let r = real_kernel_run();
    assert!(r.configs.len() >= 5, "{}", r.configs.len());
    let again = tune::recommend(&r.configs, r.recommendation.workload);
    assert_eq!(again.scores, r.recommendation.scores);
    assert_eq!(again.chosen, r.recommendation.chosen);
    assert_eq!(again.changes, r.recommendation.changes);
    for w in [
        Workload::Sequential,
        Workload::RandomRead,
        Workload::RandomWrite,
        Workload::Mixed,
    ] {
        let rec = tune::recommend(&r.configs, w);
        // A configuration is chosen only when it beats the file's by more than the spread
        // (and 5%), and every win is beyond it.
        for name in &rec.chosen {
            let s = rec.scores.iter().find(|s| &s.config == name).unwrap();
            assert_eq!(s.verdict, tune::recommend::Verdict::Wins, "{w:?}: {s:?}");
        }
        for s in &rec.scores {
            let beyond = s.score > 1.0 + s.spread.max(tune::recommend::MIN_GAIN);
            assert_eq!(
                s.verdict == tune::recommend::Verdict::Wins,
                beyond,
                "{w:?}: {s:?}"
            );
        }
    }
    // The table of the real run names every configuration measured, with the reads per member.
    let table = tune::table(&r);
    for m in r.configs.iter().filter(|m| m.skipped.is_none()) {
        assert!(
            table.contains(&format!("| {} ", m.name)),
            "{}\n{table}",
            m.name
        );
    }
    assert!(table.contains("Reads each member served"), "{table}");
}

/// The kernel's counters in the real run: with the file's write-mostly the HDD served no read
/// of the read jobs, with write-mostly off it served some.
#[test]
fn in_the_real_kernel_run_the_write_mostly_hdd_serves_no_read() {
    let r = real_kernel_run();
    let reads = |config: &str, member: &str| -> u64 {
        let m = r.configs.iter().find(|m| m.name == config).unwrap();
        m.runs
            .iter()
            .flat_map(|run| &run.jobs)
            .filter(|j| j.rw.ends_with("read"))
            .map(|j| j.members.get(member).map_or(0, |c| c.reads))
            .sum()
    };
    let members: Vec<String> = r.configs[0].runs[0].jobs[0]
        .members
        .keys()
        .cloned()
        .collect();
    assert_eq!(members.len(), 2, "{members:?}");
    let hdd = members
        .iter()
        .find(|k| reads("as the file says", k) == 0)
        .expect("one member served no read with write-mostly");
    let ssd = members.iter().find(|k| *k != hdd).unwrap();
    assert!(reads("as the file says", ssd) > 0);
    assert!(reads("write-mostly off", hdd) > 0);
}
