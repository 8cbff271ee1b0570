//! The simulated machine as a user's tool: `hyraid sim new` makes a blank machine from a list
//! of disks, `hyraid sim settle` lets its resyncs finish, and the snapshot format has a
//! checked-in JSON Schema that every snapshot validates against.

use crate::common;
use common::{hyraid, text};

#[test]
fn checked_in_snapshot_schema_is_current() {
    let generated =
        serde_json::to_string_pretty(&hyraid::observe::snapshot_schema()).unwrap() + "\n";
    let on_disk = std::fs::read_to_string("schemas/hyraid-snapshot.schema.json").unwrap();
    assert!(
        generated == on_disk,
        "schemas/hyraid-snapshot.schema.json is stale: run `cargo run -- schema --snapshot > schemas/hyraid-snapshot.schema.json`"
    );
}

/// The examples' snapshots and the real kernel's observations captured in the VM suite all
/// validate; so does what `sim new` writes.
#[test]
fn snapshots_validate_against_the_snapshot_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("schemas/hyraid-snapshot.schema.json").unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut n = 0;
    for dir in [
        "examples/snapshots",
        "tests/fixtures/vm",
        "tests/fixtures/saved-plans/v1",
    ] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            // A VM capture holds the real kernel's observation beside the tools' exchanges.
            if let Some(o) = v.get("observed") {
                v = o.clone();
            }
            let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", p.display());
            n += 1;
        }
    }
    assert!(n >= 15, "{n} snapshots");
    let mut bad: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("examples/snapshots/single-pair.json").unwrap(),
    )
    .unwrap();
    bad["block_devices"][0]["size"] = "big".into();
    assert!(!validator.is_valid(&bad));
}

/// A user without the disks: a blank machine from models and sizes, a file using the ids it
/// prints, plan and apply on it, status showing the resync, `sim settle`, status healthy.
#[test]
fn sim_new_then_plan_apply_settle() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("nas.json");
    let s = snap.to_str().unwrap();
    let o = hyraid(&[
        "sim",
        "new",
        "-o",
        s,
        "--host",
        "nas",
        "--disk",
        "ssd:500GB:Samsung SSD 870 EVO 500GB:S62ANJ0R100001",
        "--disk",
        "hdd:4TB:WDC WD40EFRX-68N32N0:WD-WCC7K0000001",
        "--disk",
        "nvme:1TB",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert_eq!(
        out,
        "host: nas\ndisks:\n  nvme1: { id: nvme-HYRAID_NVMe_HYNVME00003 }\n  ssd1: { id: ata-Samsung_SSD_870_EVO_500GB_S62ANJ0R100001 }\n  hdd1: { id: ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001 }\n"
    );
    let m: hyraid::observe::Observed =
        serde_json::from_str(&std::fs::read_to_string(&snap).unwrap()).unwrap();
    let names: Vec<(&str, u64, bool)> = m
        .block_devices
        .iter()
        .map(|d| (d.kname.as_str(), d.size, d.rotational))
        .collect();
    assert_eq!(
        names,
        [
            ("nvme0n1", 1_000_000_000_000, false),
            ("sda", 500_000_000_000, false),
            ("sdb", 4_000_000_000_000, true)
        ]
    );
    // Never over an existing file.
    let o = hyraid(&["sim", "new", "-o", s, "--disk", "hdd:4TB"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("never overwrites"), "{:?}", text(&o));
    let o = hyraid(&["sim", "new", "-o", "x.json", "--disk", "tape:4TB"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("write ssd, hdd or nvme"),
        "{:?}",
        text(&o)
    );

    let file = dir.path().join("hyraid.yaml");
    std::fs::write(
        &file,
        format!(
            "version: 1\n{out}mirrors:\n  data0: {{ members: [ssd1, hdd1], bitmap: {{ chunk: 64MiB }} }}\nvolume_groups:\n  vg0:\n    pvs: [data0]\n    lvs:\n      files: {{ size: 100GiB }}\n"
        ),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let o = hyraid(&["apply", f, "--sim", s, "--yes", "--sim-write", "--no-wait"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = hyraid(&["status", f, "--sim", s]);
    assert!(
        text(&o).0.contains("resync 0.0% in progress"),
        "{:?}",
        text(&o)
    );
    let o = hyraid(&["sim", "settle", s]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(
        text(&o)
            .0
            .contains("1 array(s) were resyncing or recovering, 0 are now"),
        "{:?}",
        text(&o)
    );
    let o = hyraid(&["status", f, "--sim", s]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).0.contains("Healthy"), "{:?}", text(&o));
    let o = hyraid(&["plan", f, "--sim", s, "--detailed-exitcode"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    // Nothing but the snapshot and the file in the directory.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["hyraid.yaml", "nas.json"]);
}

/// The degraded day on the simulator, as the kernel plays it: `sim fail` (md fails the HDD:
/// faulty, the mirror degraded), `sim insert` (a blank disk, its by-id name printed), the file
/// naming it, apply and settle: the new disk is an in-sync write-mostly member and the plan is
/// empty. `sim pull` while running: the disk gone, md's member removed; with `--reboot` the
/// mirror is assembled and not running. A disk not on the machine is an error naming the disks.
#[test]
fn sim_fail_pull_insert_play_the_degraded_day() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("box.json");
    let file = dir.path().join("box.yaml");
    let (s, f) = (snap.to_str().unwrap(), file.to_str().unwrap());
    let hdd = "ata-ST500DM009-2F110A_ZA4000001";
    let build = || {
        std::fs::copy("examples/snapshots/single-pair.json", &snap).unwrap();
        std::fs::copy("examples/single-pair.yaml", &file).unwrap();
        let o = hyraid(&["apply", f, "--sim", s, "--yes", "--sim-write"]);
        assert!(o.status.success(), "{:?}", text(&o));
        assert!(hyraid(&["sim", "settle", s]).status.success());
    };
    let world = || {
        hyraid::sim::SimHost::from_json(&std::fs::read_to_string(&snap).unwrap())
            .unwrap()
            .world()
    };
    build();
    let o = hyraid(&["sim", "fail", s, hdd]);
    assert_eq!(
        text(&o).0,
        "md failed /dev/sdb in /dev/md127.\n",
        "{:?}",
        text(&o)
    );
    let a = world().arrays[0].clone();
    assert!(
        a.member("sdb").unwrap().faulty() && a.degraded == 1,
        "{a:?}"
    );
    let o = hyraid(&[
        "sim",
        "insert",
        s,
        "--disk",
        "hdd:1TB:ST1000DM010-2EP102:Z9A00009",
    ]);
    assert_eq!(
        text(&o).0,
        "sdc plugged in, blank: /dev/disk/by-id/ata-ST1000DM010-2EP102_Z9A00009\n"
    );
    let yaml = std::fs::read_to_string(&file)
        .unwrap()
        .replace(hdd, "ata-ST1000DM010-2EP102_Z9A00009");
    std::fs::write(&file, yaml).unwrap();
    assert!(
        hyraid(&["apply", f, "--sim", s, "--yes", "--sim-write"])
            .status
            .success()
    );
    assert!(hyraid(&["sim", "settle", s]).status.success());
    let a = world().arrays[0].clone();
    let new = a.member("sdc").expect("the new disk is a member");
    assert!(new.write_mostly() && new.has("in_sync"), "{new:?}");
    assert!(a.member("sdb").is_none() && a.degraded == 0, "{a:?}");
    assert_eq!(
        hyraid(&["plan", f, "--sim", s, "--detailed-exitcode"])
            .status
            .code(),
        Some(0)
    );

    build();
    let o = hyraid(&["sim", "pull", s, "sdb"]);
    assert!(
        text(&o)
            .0
            .starts_with("sdb is gone; md failed and removed /dev/sdb"),
        "{:?}",
        text(&o)
    );
    let w = world();
    assert!(
        w.device("sdb").is_none()
            && w.arrays[0].member("sdb").is_none()
            && w.arrays[0].degraded == 1
    );
    build();
    let o = hyraid(&["sim", "pull", s, "ZA4000001", "--reboot"]);
    assert!(
        text(&o).0.contains("assembled but not running: /dev/md127"),
        "{:?}",
        text(&o)
    );
    assert_eq!(world().arrays[0].array_state, "inactive");
    let o = hyraid(&["sim", "fail", s, "sdq"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("no disk `sdq` on the simulated machine; its disks: sda ("),
        "{:?}",
        text(&o)
    );
}
