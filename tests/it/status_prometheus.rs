//! `hyraid status --format prometheus`: node_exporter's textfile format, on a converged machine,
//! with a failed member, with write-mostly lost (drift), and with a resync running. Each case
//! also leaves its textfile in target/hyraid-prometheus/ for tests/prometheus/parse.sh, which
//! reads them with prometheus_client's own parser.

use crate::common;

use common::*;
use hyraid::config::Desired;
use hyraid::host::Host;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;
use hyraid::status::{check, render_prometheus};

/// The textfile for the machine and the file, kept under `name`.
fn textfile(h: &SimHost, d: &Desired, name: &str) -> String {
    let obs = observe(h, d);
    let (findings, plan) = check(&obs, Some(d), None);
    let t = render_prometheus(
        &obs,
        plan.as_ref(),
        &findings,
        &Default::default(),
        &Default::default(),
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/hyraid-prometheus");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.prom")), &t).unwrap();
    t
}

/// The value of the sample `series` (name and labels exactly as written).
fn value(t: &str, series: &str) -> f64 {
    t.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no sample {series} in\n{t}"))
        .parse()
        .unwrap()
}

fn converged() -> (Desired, SimHost) {
    let (d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}

fn kname(h: &SimHost, array: &str) -> String {
    h.world().array_named(array).unwrap().kname.clone()
}

fn hdd0(h: &SimHost) -> String {
    h.world()
        .by_id("ata-ST1000LM048-2E7172_WDE00001")
        .unwrap()
        .kname
        .clone()
}

#[test]
fn every_family_has_help_and_type_once_before_its_samples() {
    let (d, h) = converged();
    let t = textfile(&h, &d, "converged");
    let mut seen = std::collections::BTreeSet::new();
    let mut current = String::new();
    for l in t.lines() {
        if let Some(r) = l.strip_prefix("# HELP ") {
            let name = r.split(' ').next().unwrap().to_string();
            assert!(seen.insert(name.clone()), "{name} twice");
            current = name;
        } else if let Some(r) = l.strip_prefix("# TYPE ") {
            assert_eq!(r, format!("{current} gauge"));
        } else {
            let name = l.split(['{', ' ']).next().unwrap();
            assert_eq!(name, current, "sample outside its family: {l}");
        }
    }
    for f in [
        "hyraid_md_degraded",
        "hyraid_md_sync_ratio",
        "hyraid_md_member_write_mostly",
        "hyraid_md_write_mostly_lost",
        "hyraid_writecache_dirty_blocks",
        "hyraid_findings",
        "hyraid_drift",
    ] {
        assert!(seen.contains(f), "{f} missing");
    }
}

#[test]
fn a_converged_machine_reports_no_drift_and_complete_arrays() {
    let (d, h) = converged();
    let t = textfile(&h, &d, "converged");
    let md = kname(&h, "data0");
    let id = format!("array=\"data0\",device=\"{md}\"");
    assert_eq!(value(&t, "hyraid_drift"), 0.0);
    assert_eq!(value(&t, &format!("hyraid_md_degraded{{{id}}}")), 0.0);
    assert_eq!(
        value(&t, &format!("hyraid_md_sync_ratio{{{id},action=\"idle\"}}")),
        1.0
    );
    let wm = format!(
        "hyraid_md_member_write_mostly{{{id},member=\"{}\"}}",
        hdd0(&h)
    );
    assert_eq!(value(&t, &wm), 1.0);
    assert_eq!(
        value(&t, &format!("hyraid_md_write_mostly_lost{{{id}}}")),
        0.0
    );
    assert_eq!(value(&t, "hyraid_plan_steps"), 0.0);
    assert_eq!(value(&t, "hyraid_findings{severity=\"degraded\"}"), 0.0);
}

#[test]
fn a_failed_member_shows_as_a_degraded_array() {
    let (d, h) = converged();
    let md = kname(&h, "data0");
    let dev = format!("/dev/{}", hdd0(&h));
    assert_eq!(
        run(&h, &["mdadm", &format!("/dev/{md}"), "--fail", &dev]).status,
        0
    );
    let t = textfile(&h, &d, "degraded");
    let id = format!("array=\"data0\",device=\"{md}\"");
    assert_eq!(value(&t, &format!("hyraid_md_degraded{{{id}}}")), 1.0);
    assert!(value(&t, "hyraid_findings{severity=\"degraded\"}") >= 1.0);
    assert_eq!(value(&t, "hyraid_status_exit_code"), 2.0);
}

#[test]
fn lost_write_mostly_is_drift() {
    let (d, h) = converged();
    let md = kname(&h, "data0");
    h.write_file(
        &format!("/sys/block/{md}/md/dev-{}/state", hdd0(&h)),
        "-writemostly",
    )
    .unwrap();
    let t = textfile(&h, &d, "drifted");
    let id = format!("array=\"data0\",device=\"{md}\"");
    assert_eq!(
        value(&t, &format!("hyraid_md_write_mostly_lost{{{id}}}")),
        1.0
    );
    let wm = format!(
        "hyraid_md_member_write_mostly{{{id},member=\"{}\"}}",
        hdd0(&h)
    );
    assert_eq!(value(&t, &wm), 0.0);
    assert_eq!(value(&t, "hyraid_drift"), 1.0);
    assert_eq!(value(&t, "hyraid_plan_steps"), 1.0);
}

#[test]
fn a_running_resync_reports_its_fraction() {
    let (d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    let t = textfile(&h, &d, "resyncing");
    let md = kname(&h, "data0");
    let line = t
        .lines()
        .find(|l| {
            l.starts_with(&format!(
                "hyraid_md_sync_ratio{{array=\"data0\",device=\"{md}\""
            ))
        })
        .unwrap();
    assert!(line.contains("action=\"resync\""), "{line}");
    let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((0.0..1.0).contains(&v), "{line}");
}
