//! What apply and plan say: the tools' warnings under their steps, counted; refusals that name
//! what is there; removal steps by stable names.

use crate::common;
use common::*;
use hyraid::plan::{Policy, Step};

#[test]
fn apply_shows_every_warning_under_its_step_and_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("machine.json");
    std::fs::copy("examples/snapshots/microserver-gen8.json", &snap).unwrap();
    let journal = dir.path().join("journal.jsonl");
    let o = hyraid(&[
        "apply",
        "examples/microserver-gen8.yaml",
        "--yes",
        "--sim",
        snap.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let warning = "! WARNING: using a writecache block size larger than the file system block size may corrupt the file system.";
    let at = out.find(warning).unwrap_or_else(|| panic!("{out}"));
    let step = out[..at].rfind("\n[").unwrap();
    assert!(
        out[step..at].contains("attach writecache"),
        "under the step that printed it: {}",
        &out[step..at]
    );
    assert!(
        out.contains("The tools printed 1 warning(s), shown under their steps above (steps 22)"),
        "{out}"
    );
    let j = std::fs::read_to_string(&journal).unwrap();
    assert!(j.contains("WARNING: using a writecache block size"), "{j}");
}

#[test]
fn a_missing_disk_is_refused_with_the_disks_that_are_there() {
    let (mut d, h) = example("single-pair");
    d.disks.get_mut("hdd").unwrap().id = Some("ata-ST500DM009-2F110A_ZA4999999".into());
    let p = plan_for(&h, &d, Policy::default());
    let r = p
        .refused
        .iter()
        .find(|r| r.reason.contains("is not present on this machine"))
        .unwrap_or_else(|| panic!("{:#?}", p.refused));
    assert!(
        r.reason
            .contains("disks present that the file does not name: /dev/disk/by-id/")
            && r.reason.contains("(sdb, "),
        "{}",
        r.reason
    );
}

#[test]
fn removal_steps_name_stable_devices() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    d.volume_groups.get_mut("home").unwrap().absent = true;
    d.mirrors.get_mut("md-home").unwrap().absent = true;
    let p = plan_for(&h, &d, Policy::destroying(true));
    let lines: Vec<String> = p
        .steps
        .iter()
        .filter(|s| matches!(s.step, Step::RemoveVg(_) | Step::StopArray(_)))
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::render::command_line(&c))
        .collect();
    assert!(!lines.is_empty(), "{:#?}", p.steps);
    for l in &lines {
        assert!(
            !l.split_whitespace()
                .any(|w| w.starts_with("/dev/md1") || w.starts_with("/dev/sd")),
            "kernel name in `{l}`"
        );
    }
    assert!(
        lines.iter().any(|l| l == "pvremove --yes /dev/md/md-home"),
        "{lines:?}"
    );
    apply(&h, &d, Policy::destroying(true)).unwrap();
    assert!(h.world().arrays.is_empty());
}

#[test]
fn the_field_lints_appear_in_plan_too() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("machine.json");
    std::fs::copy("examples/snapshots/single-pair.json", &snap).unwrap();
    let yaml = dir.path().join("h.yaml");
    let text = std::fs::read_to_string("examples/single-pair.yaml")
        .unwrap()
        .replace(
            "md-home: { members: [ssd, hdd] }",
            "md-home: { members: [ssd, hdd], write_mostly: [], bitmap: none }",
        );
    assert!(text.contains("write_mostly: []"), "{text}");
    std::fs::write(&yaml, text).unwrap();
    let o = hyraid(&[
        "plan",
        yaml.to_str().unwrap(),
        "--sim",
        snap.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let lints: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("lint, after this plan: mirror md-home"))
        .collect();
    assert!(
        lints.len() >= 2,
        "no bitmap and the HDD not write-mostly: {out}"
    );
    assert!(lints.iter().any(|l| l.contains("bitmap")), "{lints:?}");
    assert!(
        lints.iter().any(|l| l.contains("write-mostly")),
        "{lints:?}"
    );
}

/// A refusal's fix fits its cause: a member's disk id mistyped points at the id, not at "free
/// the device"; a mirror on partitions that cannot be made points at that refusal.
#[test]
fn a_refusals_fix_fits_its_cause() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    d.disks.get_mut("hdd").unwrap().id = Some("ata-ST500DM009-2F110A_ZA400001".into());
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.fix.contains("`hdd`") && r.fix.contains("check its `id`")),
        "{:#?}",
        p.refused
    );
    // A new mirror of a disk that is not there: the id, again.
    let (mut d, h) = example("single-pair");
    d.disks.get_mut("hdd").unwrap().id = Some("ata-ST500DM009-2F110A_ZA400001".into());
    let p = plan_for(&h, &d, Policy::default());
    let r = p
        .refused
        .iter()
        .find(|r| r.reason.contains("cannot create"))
        .unwrap();
    assert!(r.fix.contains("check the disk's `id`"), "{r:?}");
}
