//! `hyraid status` on real VM captures and simulated machines.

mod common;
use common::*;
use hyraid::host::record::{Capture, Replay};
use hyraid::plan::Policy;
use hyraid::plan::lint::{Finding, Severity, exit_code, status};

fn vm(f: &str) -> hyraid::observe::Observed {
    let cap: Capture = serde_json::from_str(
        &std::fs::read_to_string(format!("tests/fixtures/vm/{f}.json")).unwrap(),
    )
    .unwrap();
    hyraid::observe::observe(&Replay::new(cap)).unwrap()
}

fn has(f: &[Finding], sev: Severity, text: &str) -> bool {
    f.iter()
        .any(|x| x.severity == sev && x.message.contains(text))
}

fn conf_for(o: &hyraid::observe::Observed) -> String {
    o.arrays
        .iter()
        .map(|a| {
            format!(
                "ARRAY /dev/md/{} metadata=1.2 UUID={}\n",
                a.name.clone().unwrap(),
                a.uuid.clone().unwrap().replace('-', ":")
            )
        })
        .collect()
}

#[test]
fn degraded_and_recovering_arrays_from_the_real_kernel() {
    let o = vm("data-survives-degraded");
    let f = status(&o, None, Some(&conf_for(&o)));
    assert!(
        has(&f, Severity::Degraded, "degraded: 1 of 2 members in sync"),
        "{f:?}"
    );
    assert_eq!(exit_code(&f), 2);
    assert!(
        f[0].fix.contains("replace"),
        "worst first, with a fix: {f:?}"
    );
    let o = vm("data-survives-recovering");
    let f = status(&o, None, Some(&conf_for(&o)));
    assert!(
        f.iter().any(|x| x.severity == Severity::Info
            && x.message.starts_with("recover ")
            && x.message.ends_with("% in progress")),
        "{f:?}"
    );
}

#[test]
fn drifted_real_array_gets_both_lints() {
    let o = vm("drift-drifted");
    let f = status(&o, None, Some(&conf_for(&o)));
    assert!(
        has(&f, Severity::Lint, "rotational member is not write-mostly"),
        "{f:?}"
    );
    assert!(
        has(
            &f,
            Severity::Lint,
            "write-behind is set but no member is write-mostly"
        ),
        "{f:?}"
    );
}

#[test]
fn built_layout_lints_and_mdadm_conf() {
    let o = vm("fresh-build-built");
    let d = hyraid::config::load_file(std::path::Path::new("tests/vm/configs/microserver.yaml"))
        .unwrap();
    let without = status(&o, Some(&d), None);
    assert_eq!(
        without
            .iter()
            .filter(|x| x.message == "not listed in mdadm.conf")
            .count(),
        2
    );
    let with = status(&o, Some(&d), Some(&conf_for(&o)));
    assert!(!has(&with, Severity::Lint, "mdadm.conf"));
    assert!(
        has(
            &with,
            Severity::Lint,
            "writecache on a non-redundant device"
        ),
        "{with:?}"
    );
    assert!(
        has(&with, Severity::Lint, "is not made persistent"),
        "the capture has no udev rule"
    );
    assert!(!with.iter().any(|x| x.severity >= Severity::Degraded));
}

#[test]
fn a_healthy_pair_is_clean_and_a_missing_disk_is_an_error() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let o = observe(&h, &d);
    let f = status(&o, Some(&d), Some(&conf_for(&o)));
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(exit_code(&f), 0);
    d.disks.get_mut("hdd").unwrap().id = Some("ata-GONE_1".into());
    let f = status(&o, Some(&d), Some(&conf_for(&o)));
    assert!(has(&f, Severity::Error, "not present"));
    assert_eq!(exit_code(&f), 1);
}

#[test]
fn status_cli_exit_codes_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("m.json");
    std::fs::copy("examples/snapshots/single-pair.json", &snap).unwrap();
    let bin = env!("CARGO_BIN_EXE_hyraid");
    let o = std::process::Command::new(bin)
        .args(["status", "--sim", snap.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "blank machine: nothing to report");
    std::process::Command::new(bin)
        .args([
            "apply",
            "examples/single-pair.yaml",
            "--sim",
            snap.to_str().unwrap(),
            "--yes",
            "--sim-write",
        ])
        .output()
        .unwrap();
    let o = std::process::Command::new(bin)
        .args([
            "status",
            "--sim",
            snap.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // apply wrote mdadm.conf; what is left is the initial resync, which is information.
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["exit"], 0);
    let f = v["findings"].as_array().unwrap();
    assert!(f.iter().all(|f| f["severity"] == "info"), "{v}");
    assert!(
        f.iter()
            .any(|f| f["message"].as_str().unwrap().starts_with("resync")),
        "{v}"
    );
}

#[test]
fn the_mdadm_conf_lint_names_this_machines_path_and_initramfs_tool() {
    let fix = |boot: hyraid::observe::Boot| {
        let mut o = vm("fresh-build-built");
        o.boot = boot;
        let f = status(&o, None, None);
        f.iter()
            .find(|x| x.message == "not listed in mdadm.conf")
            .map(|x| x.fix.clone())
            .unwrap()
    };
    let el = fix(hyraid::observe::Boot {
        initramfs_tool: Some("dracut".into()),
        ..Default::default()
    });
    assert!(
        el.contains("to /etc/mdadm.conf and run `dracut -f --mdadmconf`"),
        "{el}"
    );
    let debian = fix(hyraid::observe::Boot {
        initramfs_tool: Some("update-initramfs".into()),
        ..Default::default()
    });
    assert!(
        debian.contains("to /etc/mdadm/mdadm.conf and run `update-initramfs -u`"),
        "{debian}"
    );
    // The file mdadm reads wins: an EL box that already has /etc/mdadm.conf, or a Debian box
    // someone gave one.
    let given = fix(hyraid::observe::Boot {
        mdadm_conf_path: Some("/etc/mdadm.conf".into()),
        mdadm_conf: Some("HOMEHOST <system>\n".into()),
        initramfs_tool: Some("update-initramfs".into()),
        ..Default::default()
    });
    assert!(
        given.contains("to /etc/mdadm.conf and run `update-initramfs -u`"),
        "{given}"
    );
    let none = fix(Default::default());
    assert!(none.contains("rebuild the initramfs"), "{none}");
}
