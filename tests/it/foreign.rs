//! Issue §6: observation never aborts on something foreign. Each foreign object (fixtures in
//! tests/fixtures/foreign, edits of real captures) is added to a real VM capture: observing the
//! machine succeeds and reports the object, the simulator loaded from that observation answers
//! so that it reads back the same, and the plan for a file that does not name the object is the
//! plan without it.

use crate::common;
use common::foreign::{OBJECTS, machine};
use hyraid::host::record::{Recorder, Replay};
use hyraid::observe::capture::Capture;
use hyraid::observe::{BitmapKind, DevMdStray, MdBitmap, Observed, observe};
use hyraid::plan::{Policy, Step, plan};
use hyraid::sim::SimHost;

fn obs(objects: &[&str]) -> Observed {
    observe(&machine(objects)).unwrap_or_else(|e| panic!("{objects:?}: {e}"))
}

fn microserver() -> hyraid::config::Desired {
    hyraid::config::load_file(std::path::Path::new("tests/vm/configs/microserver.yaml")).unwrap()
}

/// The steps and refusals for the microserver file: the same with or without the objects.
fn plan_is_unaffected(objects: &[&str]) -> hyraid::plan::Plan {
    let d = microserver();
    let p = plan(&d, &obs(objects), Policy::default()).unwrap();
    let base = plan(&d, &obs(&[]), Policy::default()).unwrap();
    assert_eq!(
        serde_json::to_string(&p.steps).unwrap(),
        serde_json::to_string(&base.steps).unwrap(),
        "{objects:?}"
    );
    assert_eq!(p.refused, base.refused, "{objects:?}");
    p
}

/// The simulated host loaded from the observation answers in the real formats so that the same
/// parsers read the same state back.
fn sim_reads_back(o: &Observed) {
    let seen = observe(&SimHost::new(o.clone())).unwrap();
    if seen != *o {
        let (a, b) = (
            serde_json::to_string_pretty(o).unwrap(),
            serde_json::to_string_pretty(&seen).unwrap(),
        );
        let diff = similar::TextDiff::from_lines(&a, &b);
        panic!(
            "the simulator's answers parse differently:\n{}",
            diff.unified_diff().context_radius(3)
        );
    }
}

#[test]
fn raid1_with_a_file_bitmap() {
    let o = obs(&["file-bitmap"]);
    let a = o.array("md120").unwrap();
    assert_eq!(
        (a.level.as_str(), a.name.as_deref()),
        ("raid1", Some("legacy"))
    );
    assert_eq!(
        a.bitmap,
        Some(MdBitmap {
            chunk: 4096,
            backlog: 0,
            kind: BitmapKind::File,
            file: Some("/mnt/ssd-junk/legacy.bitmap".into()),
        })
    );
    assert!(a.member("sdf").unwrap().write_mostly());
    let p = plan_is_unaffected(&["file-bitmap"]);
    let f = p
        .foreign
        .iter()
        .find(|f| f.object == "array /dev/md/legacy");
    assert_eq!(
        f.unwrap().detail,
        "raid1 of sdg, sdf, bitmap in the file /mnt/ssd-junk/legacy.bitmap"
    );
    sim_reads_back(&o);
}

#[test]
fn raid10_far_layout_with_a_file_bitmap() {
    let o = obs(&["raid10-far"]);
    let a = o.array("md121").unwrap();
    assert_eq!((a.level.as_str(), a.raid_disks), ("raid10", 2));
    let b = a.bitmap.as_ref().unwrap();
    assert_eq!((b.kind, b.chunk), (BitmapKind::File, 512 << 10));
    assert_eq!(b.file.as_deref(), Some("/mnt/ssd-junk/extra-bitmap"));
    plan_is_unaffected(&["raid10-far"]);
    sim_reads_back(&o);
}

#[test]
fn raid5_mid_reshape_raid0_and_linear() {
    let o = obs(&["partitioned-levels"]);
    let r5 = o.array("md122").unwrap();
    assert_eq!(
        (r5.level.as_str(), r5.raid_disks),
        ("raid5", 4),
        "`4 (3)` while reshaping"
    );
    assert_eq!(r5.sync_action, "reshape");
    assert_eq!(r5.sync_completed, Some((65536, 1042432)));
    assert_eq!(r5.bitmap, Some(MdBitmap::internal(64 << 20, 0)));
    assert_eq!(r5.members.len(), 4);
    // RAID0 and linear have no sync_action or degraded; linear has no bitmap group at all.
    for (k, level) in [("md123", "raid0"), ("md124", "linear")] {
        let a = o.array(k).unwrap();
        assert_eq!(a.level, level);
        assert_eq!(
            (a.sync_action.as_str(), a.degraded, &a.bitmap),
            ("idle", 0, &None)
        );
        assert_eq!(a.raid_disks, 2);
    }
    assert_eq!(o.array("md124").unwrap().name.as_deref(), Some("concat"));
    plan_is_unaffected(&["partitioned-levels"]);
    sim_reads_back(&o);
}

#[test]
fn imsm_container_and_its_volume() {
    let o = obs(&["imsm"]);
    let c = o.array("md119").unwrap();
    assert!(c.is_container());
    assert_eq!(c.level, "container");
    assert_eq!(c.metadata.as_deref(), Some("external:imsm"));
    assert_eq!(c.name.as_deref(), Some("imsm0"));
    assert_eq!(c.array_state, "inactive");
    assert_eq!(
        c.uuid.as_deref(),
        Some("0f5c3a7e:8b2d4e91:a6c4d3b8:e7f1a2c5"),
        "from the container's superblock: sysfs shows zeros"
    );
    let v = o.array("md118").unwrap();
    assert_eq!(
        (v.level.as_str(), v.name.as_deref()),
        ("raid1", Some("vol0"))
    );
    assert_eq!(v.metadata.as_deref(), Some("external:/md119/0"));
    assert!(!v.is_container());
    plan_is_unaffected(&["imsm"]);
    sim_reads_back(&o);
}

#[test]
fn device_nodes_files_and_dangling_links_under_dev_md() {
    let o = obs(&["dev-md-strays"]);
    let einval = Some("Invalid argument (os error 22)".to_string());
    assert_eq!(
        o.dev_md_strays,
        vec![
            DevMdStray {
                name: "gone".into(),
                target: Some("../md3".into()),
                error: None
            },
            DevMdStray {
                name: "lost".into(),
                target: None,
                error: einval.clone()
            },
            DevMdStray {
                name: "stale".into(),
                target: None,
                error: einval
            },
        ]
    );
    assert_eq!(o.array_named("data0").unwrap().kname, "md127");
    plan_is_unaffected(&["dev-md-strays"]);
    sim_reads_back(&o);
    // What `hyraid observe --capture` records replays the same.
    let m = machine(&["dev-md-strays"]);
    let rec = Recorder::new(&m);
    let seen = observe(&rec).unwrap();
    let cap = Capture {
        hostname: m.hostname.clone(),
        exchanges: rec.take_exchanges(),
        observed: seen.clone(),
    };
    let cap: Capture = serde_json::from_str(&serde_json::to_string(&cap).unwrap()).unwrap();
    assert_eq!(observe(&Replay::from(cap)).unwrap(), seen);
}

#[test]
fn dm_crypt_loop_and_rom_devices() {
    let o = obs(&["dm-and-loop"]);
    let sdo = o.device("sdo").unwrap();
    assert_eq!(sdo.holders, vec!["dm-9"]);
    assert_eq!(sdo.signatures, None, "a device in use is not probed");
    let kinds: Vec<(&str, &str)> = o
        .other_devices
        .iter()
        .map(|d| (d.kname.as_str(), d.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![("dm-9", "crypt"), ("loop0", "loop"), ("sr0", "rom")]
    );
    let crypt = &o.other_devices[0];
    assert_eq!(crypt.parents, vec!["sdo"]);
    assert_eq!(crypt.mountpoint.as_deref(), Some("/srv/secret"));
    assert!(o.device("loop0").is_none() && o.device("sr0").is_none());
    plan_is_unaffected(&["dm-and-loop"]);
    sim_reads_back(&o);
}

#[test]
fn unknown_signatures_and_a_probe_that_fails() {
    let o = obs(&["signatures"]);
    let sdq = o.device("sdq").unwrap();
    let sigs = sdq.signatures.as_ref().unwrap();
    assert_eq!(sigs.len(), 6);
    assert!(sigs.iter().all(|s| s.kind == "zfs_member"));
    let sdr = o.device("sdr").unwrap();
    assert_eq!(sdr.signatures, None);
    assert!(
        sdr.probe_error
            .as_deref()
            .unwrap()
            .contains("Input/output error")
    );
    // Unknown content is content: hyraid will not build on it without --allow-destroy.
    assert!(sdr.signature_summary()[0].starts_with("unknown content (probing failed"));
    plan_is_unaffected(&["signatures"]);
    sim_reads_back(&o);
}

#[test]
fn lvm_segment_types_hyraid_does_not_manage() {
    let o = obs(&["lvm-segtypes"]);
    for (lv, segtype, hidden) in [
        ("pool0", "thin-pool", false),
        ("pool0_tdata", "linear", true),
        ("thin1", "thin", false),
        ("snap1", "snapshot", false),
        ("mirr", "raid1", false),
        ("mirr_rimage_1", "linear", true),
        ("cpool", "cache-pool", false),
    ] {
        let l = o.lv("vgf", lv).unwrap_or_else(|| panic!("{lv}"));
        assert_eq!((l.segtype.as_str(), l.hidden), (segtype, hidden), "{lv}");
        assert!(l.writecache.is_none());
    }
    assert_eq!(o.lv("vgf", "thin1").unwrap().extents.len(), 0);
    assert_eq!(o.lv("vgf", "mirr_rimage_1").unwrap().extents["sdt"], 16);
    plan_is_unaffected(&["lvm-segtypes"]);
    sim_reads_back(&o);
}

#[test]
fn every_foreign_object_at_once() {
    let o = obs(OBJECTS);
    assert_eq!(o.arrays.len(), 9);
    let p = plan_is_unaffected(OBJECTS);
    let foreign: Vec<&str> = p.foreign.iter().map(|f| f.object.as_str()).collect();
    for f in ["array /dev/md/parity", "array /dev/md/imsm0", "vg vgf"] {
        assert!(foreign.contains(&f), "{foreign:?}");
    }
    sim_reads_back(&o);
}

/// Only what the file names can stop a plan: naming a foreign object refuses that object, with
/// the reason, and nothing else.
#[test]
fn naming_a_foreign_object_refuses_that_object_only() {
    let o = obs(OBJECTS);
    let mut yaml = std::fs::read_to_string("tests/vm/configs/microserver.yaml").unwrap();
    let disks = [
        ("f1", "HDD_HYFOR01"),
        ("f2", "SSD_HYFOR02"),
        ("r1", "RST_HYFOR09"),
        ("r2", "RST_HYFOR10"),
        ("z1", "HDD_HYFOR12"),
        ("z2", "HDD_HYFOR13"),
        ("v1", "HDD_HYFOR14"),
        ("v2", "SSD_HYFOR15"),
    ];
    let mut more: String = disks
        .iter()
        .map(|(n, id)| format!("  {n}: {{ id: ata-HYRAID_{id} }}\n"))
        .collect();
    more.push_str("mirrors:\n  legacy: { members: [f2, f1] }\n  vol0: { members: [r1, r2] }\n");
    more.push_str("  stale: { members: [z1, z2] }\n");
    yaml = yaml.replace("mirrors:\n", &more);
    yaml.push_str("  vgf:\n    pvs: [v1, v2]\n    lvs:\n      thin1: { size: 1GiB }\n      mirr: { size: 64MiB }\n");
    let d = hyraid::config::load_str("foreign.yaml", &yaml).unwrap();
    let p = plan(&d, &o, Policy::default()).unwrap();
    let refused: Vec<(&str, &str)> = p
        .refused
        .iter()
        .map(|r| (r.object.as_str(), r.reason.as_str()))
        .collect();
    let expect = [
        ("mirror vol0", "/dev/md/vol0 has external:/md119/0 metadata"),
        (
            "mirror stale",
            "/dev/md/stale is not a symlink (Invalid argument (os error 22))",
        ),
        ("lv vgf/thin1", "is a thin LV"),
        ("lv vgf/mirr", "is a raid1 LV"),
    ];
    assert_eq!(refused.len(), expect.len(), "{refused:#?}");
    for (object, reason) in expect {
        assert!(
            refused
                .iter()
                .any(|(o, r)| *o == object && r.contains(reason)),
            "{object}: {reason}\n{refused:#?}"
        );
    }
    // No step touches a foreign object; legacy, named with its file bitmap, is converted.
    let legacy: Vec<String> = p
        .steps
        .iter()
        .filter(|s| serde_json::to_string(&s.step).unwrap().contains("legacy"))
        .map(|s| s.step.summary())
        .collect();
    assert_eq!(
        legacy,
        [
            "wait for resync/recovery to finish",
            "remove write-intent bitmap in the file /mnt/ssd-junk/legacy.bitmap (the file stays)",
            "add internal bitmap, chunk 64.00 MiB, write-behind 0",
            "create (ARRAY lines of the mirrors in the file)",
        ],
        "{legacy:?}"
    );
    let text = serde_json::to_string(
        &p.steps
            .iter()
            .filter(|s| {
                !matches!(
                    s.step,
                    Step::WaitIdle(_) | Step::RemoveBitmap(_) | Step::AddBitmap(_)
                )
            })
            .collect::<Vec<_>>(),
    )
    .unwrap();
    for k in ["md118", "md119", "md120", "vol0", "stale", "HYFOR", "vgf"] {
        assert!(!text.contains(k), "{k}: {text}");
    }
}

/// The CLI on a simulated copy of the foreign machine: status, plan and import all work.
#[test]
fn status_plan_and_import_on_the_foreign_machine() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("foreign.json");
    std::fs::write(&snap, serde_json::to_string_pretty(&obs(OBJECTS)).unwrap()).unwrap();
    let hyraid = |args: &[&str]| {
        let mut a: Vec<&str> = args.to_vec();
        a.extend(["--sim", snap.to_str().unwrap()]);
        common::hyraid(&a)
    };
    let o = hyraid(&["status"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "lints, no errors:\n{text}");
    for line in [
        "array /dev/md/parity (raid5): reshape 6.3% in progress",
        "mirror legacy: write-intent bitmap in the file /mnt/ssd-junk/legacy.bitmap: deprecated",
        "array /dev/md/far (raid10): write-intent bitmap in the file /mnt/ssd-junk/extra-bitmap: foreign, not touched",
        "array /dev/md/imsm0 (container): container of 2 disk(s) with imsm metadata: foreign, not touched",
        "/dev/md/stale: /dev/md/stale is not a symlink",
        "device /dev/sdr: content unknown: probing failed",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    for wrong in [
        "mirror parity",
        "mirror far",
        "mirror stripe",
        "mirror concat",
        "mirror imsm0",
    ] {
        assert!(!text.contains(wrong), "{wrong}\n{text}");
    }
    let o = hyraid(&["plan", "tests/vm/configs/microserver.yaml"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("array /dev/md/legacy"), "{text}");
    let o = hyraid(&["import"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "note: /dev/md/legacy: its bitmap is in the file /mnt/ssd-junk/legacy.bitmap (deprecated by the kernel"
        ),
        "{err}"
    );
}
