//! `hyraid status` on real VM captures and simulated machines.

use crate::common;
use common::*;
use hyraid::host::record::Replay;
use hyraid::observe::capture::Capture;
use hyraid::plan::Policy;
use hyraid::status::{Finding, Severity, exit_code, status};

fn vm(f: &str) -> hyraid::observe::Observed {
    let cap: Capture = serde_json::from_str(
        &std::fs::read_to_string(format!("tests/fixtures/vm/{f}.json")).unwrap(),
    )
    .unwrap();
    hyraid::observe::observe(&Replay::from(cap)).unwrap()
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
    let o = hyraid(&["status", "--sim", snap.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "blank machine: nothing to report");
    hyraid(&[
        "apply",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--yes",
        "--sim-write",
    ]);
    let o = hyraid(&[
        "status",
        "--sim",
        snap.to_str().unwrap(),
        "--format",
        "json",
    ]);
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

/// The drift unit's run: `--textfile` writes the same textfile `--format prometheus` prints,
/// from the same observation and whatever the health, while the text status and its exit code
/// are the command's.
#[test]
fn status_writes_the_textfile_beside_the_text_and_keeps_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    std::fs::copy("examples/snapshots/single-pair.json", p("m.json")).unwrap();
    let (snap, prom) = (p("m.json"), p("hyraid.prom"));
    hyraid(&[
        "apply",
        "examples/single-pair.yaml",
        "--sim",
        &snap,
        "--yes",
        "--sim-write",
    ]);
    let gone = std::fs::read_to_string("examples/single-pair.yaml")
        .unwrap()
        .replace("ata-ST500DM009-2F110A_ZA4000001", "ata-GONE_1");
    std::fs::write(p("gone.yaml"), gone).unwrap();
    for (file, code) in [
        ("examples/single-pair.yaml".to_string(), 0),
        (p("gone.yaml"), 1),
    ] {
        let _ = std::fs::remove_file(&prom);
        let both = hyraid(&["status", &file, "--sim", &snap, "--textfile", &prom]);
        let text = hyraid(&["status", &file, "--sim", &snap]);
        let metrics = hyraid(&["status", &file, "--sim", &snap, "--format", "prometheus"]);
        assert_eq!(both.status.code(), Some(code), "{file}: {both:?}");
        assert_eq!(text.status.code(), Some(code), "{file}");
        assert_eq!(
            both.stdout, text.stdout,
            "{file}: the text status is unchanged"
        );
        let written = std::fs::read_to_string(&prom).expect("the textfile is written");
        assert_eq!(written.as_bytes(), metrics.stdout, "{file}");
        assert!(
            written.contains(&format!("\nhyraid_status_exit_code {code}\n")),
            "{written}"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["gone.yaml", "hyraid.prom", "m.json"],
        "no temporary file is left beside the textfile"
    );
    let same = hyraid(&["status", "--sim", &snap, "--textfile", &prom, "-o", &prom]);
    assert_eq!(same.status.code(), Some(1));
    let err = String::from_utf8_lossy(&same.stderr);
    assert!(err.contains("--textfile and --output are both"), "{err}");
    let nowhere = hyraid(&[
        "status",
        "--sim",
        &snap,
        "--textfile",
        &p("no/such/dir/x.prom"),
    ]);
    assert_eq!(nowhere.status.code(), Some(1));
    assert_eq!(
        nowhere.stdout,
        hyraid(&["status", "--sim", &snap]).stdout,
        "the text status is printed though the textfile cannot be written"
    );
    assert!(!nowhere.stdout.is_empty());
    assert!(String::from_utf8_lossy(&nowhere.stderr).contains("cannot write"));
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

/// Issue §6: a foreign array is named by its level, never called a mirror, and gets only the
/// advice that fits its level; a file bitmap is reported as foreign.
#[test]
fn foreign_arrays_are_named_and_advised_by_their_level() {
    let mut o =
        hyraid::observe::observe(&common::foreign::machine(common::foreign::OBJECTS)).unwrap();
    let f = status(&o, None, Some(&mdadm_conf_of(&o)));
    let about =
        |object: &str| -> Vec<&Finding> { f.iter().filter(|x| x.object == object).collect() };
    // Only RAID1 arrays are mirrors.
    for x in f.iter().filter(|x| x.object.starts_with("mirror ")) {
        let name = &x.object["mirror ".len()..];
        assert_eq!(o.array_named(name).unwrap().level, "raid1", "{x:?}");
    }
    // RAID0 and linear: no bitmap advice, nothing at all here.
    assert!(about("array /dev/md/stripe (raid0)").is_empty(), "{f:#?}");
    assert!(about("array /dev/md/concat (linear)").is_empty(), "{f:#?}");
    // RAID10 of an SSD and an HDD: write-mostly is RAID1's; its file bitmap is foreign.
    let far = about("array /dev/md/far (raid10)");
    assert_eq!(far.len(), 1, "{far:#?}");
    assert_eq!(far[0].severity, Severity::Info);
    assert_eq!(
        far[0].message,
        "write-intent bitmap in the file /mnt/ssd-junk/extra-bitmap: foreign, not touched"
    );
    assert!(far[0].fix.contains("mdadm --grow /dev/md121 --bitmap=none"));
    let legacy = about("mirror legacy");
    assert_eq!(legacy.len(), 1, "{legacy:#?}");
    assert!(legacy[0].message.contains("/mnt/ssd-junk/legacy.bitmap"));
    // The reshape is progress, not a fault; the container is not an inactive array.
    let parity = about("array /dev/md/parity (raid5)");
    assert_eq!(parity.len(), 1, "{parity:#?}");
    assert_eq!(parity[0].message, "reshape 6.3% in progress");
    let imsm = about("array /dev/md/imsm0 (container)");
    assert_eq!(imsm.len(), 1);
    assert_eq!(imsm[0].severity, Severity::Info);
    assert!(
        about("mirror vol0").is_empty(),
        "firmware RAID keeps its own rules"
    );
    assert!(has(&f, Severity::Info, "/dev/md/stale is not a symlink"));
    assert!(has(&f, Severity::Info, "/dev/md/gone is a link to ../md3"));
    assert!(has(&f, Severity::Lint, "content unknown: probing failed"));
    assert!(!f.iter().any(|x| x.severity == Severity::Error), "{f:#?}");
    assert_eq!(exit_code(&f), 2);

    // Bitmap advice fits RAID5 (by mdadm: hyraid does not manage it), never RAID0 or linear.
    for k in ["md122", "md123", "md124"] {
        o.arrays.iter_mut().find(|a| a.kname == k).unwrap().bitmap = None;
    }
    let f = status(&o, None, Some(&mdadm_conf_of(&o)));
    let no_bitmap: Vec<&Finding> = f
        .iter()
        .filter(|x| x.message == "no write-intent bitmap")
        .collect();
    assert_eq!(no_bitmap.len(), 1, "{no_bitmap:#?}");
    assert_eq!(no_bitmap[0].object, "array /dev/md/parity (raid5)");
    assert!(
        no_bitmap[0]
            .fix
            .contains("mdadm --grow /dev/md122 --bitmap=internal")
    );
}

/// ARRAY lines for every array with a UUID, so that only the findings under test remain.
fn mdadm_conf_of(o: &hyraid::observe::Observed) -> String {
    o.arrays
        .iter()
        .filter_map(|a| a.uuid.as_ref())
        .map(|u| format!("ARRAY UUID={u}\n"))
        .collect()
}
