//! `hyraid import` describes the machine as it is: plan on the imported file shows no changes.

mod common;
use common::*;
use hyraid::config::{import, load_str};
use hyraid::host::record::{Capture, Replay};
use hyraid::plan::{Policy, Step, plan};

fn imported_plan_is_empty(obs: &hyraid::observe::Observed, what: &str) -> String {
    let imp = import::import(obs);
    let yaml = import::to_yaml(&imp);
    let d = load_str(what, &yaml)
        .unwrap_or_else(|e| panic!("{what}: imported file does not validate:\n{e}\n{yaml}"));
    let p = plan(&d, obs, Policy::default()).unwrap();
    // A box whose mdadm.conf does not list its arrays yet gets their ARRAY lines, nothing else.
    let lacks_conf =
        obs.arrays.iter().any(|a| {
            !obs.boot.mdadm_conf.as_deref().unwrap_or("").contains(
                &hyraid::plan::persist::mdadm_uuid(a.uuid.as_deref().unwrap_or("")),
            )
        });
    let storage: Vec<_> = p
        .steps
        .iter()
        .filter(|s| {
            let persistence = matches!(&s.step, Step::WriteFile { path, .. } if path.ends_with("mdadm.conf")) || matches!(s.step, Step::RegenerateInitramfs { .. });
            !(lacks_conf && persistence)
        })
        .collect();
    assert!(storage.is_empty(), "{what}: {:?}\n{yaml}", storage);
    assert!(p.refused.is_empty(), "{what}: {:?}", p.refused);
    yaml
}

#[test]
fn every_converged_example_imports_to_an_empty_plan() {
    for name in EXAMPLES {
        let (d, h) = example(name);
        apply(&h, &d, Policy::default()).unwrap();
        let obs = observe(&h, &d);
        let yaml = imported_plan_is_empty(&obs, name);
        let back = load_str(name, &yaml).unwrap();
        assert_eq!(back.mirrors.len(), d.mirrors.len(), "{name}");
        assert_eq!(back.volume_groups.len(), d.volume_groups.len(), "{name}");
        for (m, spec) in &d.mirrors {
            assert_eq!(back.mirrors[m].bitmap_chunk, spec.bitmap_chunk);
            assert_eq!(back.mirrors[m].write_behind, spec.write_behind);
        }
    }
}

#[test]
fn imported_microserver_keeps_writecache_stripes_and_write_mostly() {
    let (d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    let back = load_str("x", &import::to_yaml(&import::import(&observe(&h, &d)))).unwrap();
    let lv = &back.volume_groups["vg0"].lvs["nextcloud"];
    assert_eq!(lv.stripes, Some(2));
    let wc = lv.writecache.as_ref().unwrap();
    assert_eq!(wc.size, 32 << 30);
    assert_eq!(wc.settings_arg(), "high_watermark=50 writeback_jobs=1024");
    let data0 = &back.mirrors["data0"];
    assert_eq!(
        data0.write_mostly,
        hyraid::config::WriteMostly::List(vec!["hdd0".into()])
    );
    assert_eq!(
        back.disks["hdd0"].id.as_deref(),
        Some("ata-ST1000LM048-2E7172_WDE00001")
    );
}

#[test]
fn real_machines_from_the_vm_import_to_an_empty_plan() {
    for f in [
        "fresh-build-built",
        "data-survives-degraded",
        "data-survives-recovering",
        "fresh-build-blank",
        "partitions-built",
    ] {
        imported_plan_is_empty(&vm(f), f);
    }
}

fn vm(f: &str) -> hyraid::observe::Observed {
    let cap: Capture = serde_json::from_str(
        &std::fs::read_to_string(format!("tests/fixtures/vm/{f}.json")).unwrap(),
    )
    .unwrap();
    hyraid::observe::observe(&Replay::new(cap)).unwrap()
}

#[test]
fn an_inconsistent_machine_imports_to_the_nearest_valid_file() {
    // Drifted on the real kernel: backlog 512 left behind after write-mostly was cleared. No valid
    // file describes that; import says so and the plan resets the backlog, nothing else.
    let obs = vm("drift-drifted");
    let imp = import::import(&obs);
    assert!(
        imp.skipped
            .iter()
            .any(|s| s.contains("write-behind 512 is set but no member is write-mostly")),
        "{:?}",
        imp.skipped
    );
    let d = load_str("drifted", &import::to_yaml(&imp)).unwrap();
    let p = plan(&d, &obs, Policy::default()).unwrap();
    let storage: Vec<_> = p
        .steps
        .iter()
        .filter(|s| {
            !matches!(
                s.step,
                Step::WriteFile { .. } | Step::RegenerateInitramfs { .. }
            )
        })
        .collect();
    assert_eq!(storage.len(), 1);
    assert!(matches!(
        storage[0].step,
        Step::SetWriteBehind { value: 0, .. }
    ));
}

#[test]
fn partitions_are_imported_in_disk_order() {
    let (d, h) = example("microserver-partitioned");
    apply(&h, &d, Policy::default()).unwrap();
    let back = load_str("x", &import::to_yaml(&import::import(&observe(&h, &d)))).unwrap();
    let ssd = back
        .disks
        .values()
        .find(|s| s.id.as_deref() == Some("ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A"))
        .unwrap();
    let names: Vec<&str> = ssd.partitions.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["raid", "cache"]);
    assert_eq!(ssd.partitions[0].size, Some(900 << 30));
    assert!(
        back.mirrors["cache"]
            .members
            .iter()
            .all(|m| m.ends_with(":cache"))
    );
}

#[test]
fn a_serial_the_file_could_not_hold_is_left_to_the_id() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    let mut obs = observe(&h, &d);
    obs.block_devices
        .iter_mut()
        .find(|b| b.kname == "sdb")
        .unwrap()
        .serial = Some("ZA4 000\"1".into());
    let yaml = import::to_yaml(&import::import(&obs));
    let back = load_str("imported.yaml", &yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let hdd = back
        .disks
        .values()
        .find(|s| s.id.as_deref() == Some("ata-ST500DM009-2F110A_ZA4000001"))
        .unwrap();
    assert_eq!(hdd.serial, None);
}

/// Issue §6: what hyraid does not manage is left out of the import, saying why, and the rest
/// imports to a file whose plan is empty.
#[test]
fn foreign_objects_are_left_out_of_the_import() {
    let obs =
        hyraid::observe::observe(&common::foreign::machine(common::foreign::OBJECTS)).unwrap();
    imported_plan_is_empty(&obs, "foreign");
    let skipped = import::import(&obs).skipped;
    for s in [
        "/dev/md/legacy: its bitmap is in the file /mnt/ssd-junk/legacy.bitmap (hyraid manages internal bitmaps)",
        "/dev/md/far: raid10 (hyraid manages RAID1)",
        "/dev/md/parity: raid5 (hyraid manages RAID1)",
        "/dev/md/stripe: raid0 (hyraid manages RAID1)",
        "/dev/md/concat: linear (hyraid manages RAID1)",
        "/dev/md/imsm0: container (hyraid manages RAID1)",
        "/dev/md/vol0: RAID1 with external:/md119/0 metadata (hyraid manages md's own superblocks)",
        "vg vgf: lv cpool is a cache-pool LV (hyraid manages linear, striped and writecache LVs)",
    ] {
        assert!(skipped.iter().any(|x| x == s), "{s}\n{skipped:#?}");
    }
}
