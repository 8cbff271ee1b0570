//! `hyraid tune --job`: only the jobs asked for are measured, under every configuration and in
//! every round, in the field report's order; a choice that the workload cannot be weighed on is
//! refused before anything changes.

use crate::common;
use common::tune::{TUNE_YAML, tune_box};
use common::{changes, hyraid, text};
use hyraid::machine::Stop;
use hyraid::tune::{self, Options, Profile, Target, Workload};

fn options(jobs: Vec<&'static str>, workload: Workload) -> Options {
    Options {
        file: "hyraid.yaml".into(),
        text: TUNE_YAML.into(),
        target: Target::Directory("/srv/data".into()),
        profile: Profile::quick(),
        workload,
        jobs,
        journal: None,
    }
}

#[test]
fn only_the_chosen_jobs_run_under_every_configuration() {
    let (d, h) = tune_box();
    let jobs = tune::chosen_jobs(
        &["rand-write-4k-qd32", "rand-read-4k-qd32"],
        Workload::Mixed,
    )
    .unwrap();
    assert_eq!(
        jobs,
        ["rand-read-4k-qd32", "rand-write-4k-qd32"],
        "the field report's order"
    );
    let o = options(jobs.clone(), Workload::Mixed);
    let mut announced = 0;
    let r = tune::run(
        &h,
        &d,
        &o,
        &mut |e| {
            if let tune::Event::Estimate { jobs, .. } = e {
                announced = jobs;
            }
        },
        &Stop::new(),
    )
    .unwrap();
    assert_eq!(announced, 2, "the estimate counts the chosen jobs");
    assert_eq!(r.jobs, jobs);
    let measured: Vec<_> = r.configs.iter().filter(|c| c.skipped.is_none()).collect();
    assert!(measured.len() >= 4, "{:?}", r.configs);
    for c in &measured {
        assert_eq!(c.runs.len(), 2, "{}: two rounds", c.name);
        for run in &c.runs {
            let names: Vec<&str> = run.jobs.iter().map(|j| j.name.as_str()).collect();
            assert_eq!(names, jobs, "{}", c.name);
        }
    }
    // fio ran each chosen job once per configuration and round, and no other.
    let fio: Vec<String> = changes(&h)
        .into_iter()
        .filter(|c| c.starts_with("fio --name="))
        .collect();
    assert_eq!(fio.len(), 2 * 2 * measured.len(), "{fio:#?}");
    assert!(
        fio.iter()
            .all(|c| c.contains("rand-read-4k-qd32") || c.contains("rand-write-4k-qd32")),
        "{fio:#?}"
    );
    assert!(!r.recommendation.words.is_empty());
}

#[test]
fn a_workload_with_none_of_its_jobs_measured_is_refused() {
    let e = tune::chosen_jobs(&["seq-read-1m"], Workload::RandomWrite).unwrap_err();
    assert!(
        e.contains("random-write workload is weighed on rand-write-512k, rand-write-4k-qd32"),
        "{e}"
    );
    assert_eq!(
        tune::chosen_jobs(&[], Workload::RandomWrite).unwrap(),
        tune::JOBS
    );
    assert!(
        tune::job_named("rand-read-1m")
            .unwrap_err()
            .contains("tune's jobs are seq-read-1m")
    );
}

#[test]
fn the_command_line_refuses_an_unknown_job_and_a_job_set_the_workload_cannot_weigh() {
    let o = hyraid(&["tune", "hyraid.yaml", "/srv/data", "--job", "rand-read-1m"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no job `rand-read-1m`; tune's jobs are"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hyraid.yaml");
    std::fs::write(&file, TUNE_YAML).unwrap();
    let o = hyraid(&[
        "tune",
        file.to_str().unwrap(),
        "/srv/data",
        "--workload",
        "sequential",
        "--job",
        "rand-read-4k-qd32",
        "--sim",
        "tests/fixtures/does-not-matter.json",
    ]);
    let (_, err) = text(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("a sequential workload is weighed on seq-read-1m, seq-write-1m"),
        "{err}"
    );
}
