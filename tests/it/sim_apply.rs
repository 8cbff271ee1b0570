//! The core loop on the simulated host: plan → apply → plan is empty, through the real parsers.

use crate::common;
use common::*;
use hyraid::host::Host;
use hyraid::observe::observe;
use hyraid::plan::step::{
    DetachWritecache, SetWriteBehind, SetWriteCache, SetWriteMostly, SetWritecacheSettings,
};
use hyraid::plan::{Policy, Risk, Step};

#[test]
fn snapshot_round_trips_through_the_real_parsers() {
    for name in EXAMPLES {
        let (d, h) = example(name);
        assert_eq!(
            observe(&h).unwrap(),
            h.world().normalized(),
            "{name}: blank snapshot"
        );
        apply(&h, &d, Policy::default()).unwrap();
        // After the simulated tools changed it, the model still reads back exactly (but for the
        // simulated machine's key files, which the observer only stats when the file names them.
        let mut world = h.world().normalized();
        world.files.clear();
        world.key_slots.clear();
        // Nor are headers dumped (`luksDump`) but those of the file's encrypted mirrors.
        for l in world.luks.iter_mut() {
            l.header = None;
        }
        assert_eq!(observe(&h).unwrap(), world, "{name}: after apply");
    }
}

#[test]
fn every_example_converges_and_a_second_apply_runs_nothing() {
    for name in EXAMPLES {
        let (d, h) = example(name);
        let p = apply(&h, &d, Policy::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!p.steps.is_empty(), "{name}: a blank machine needs work");
        let again = plan_for(&h, &d, Policy::default());
        assert!(again.steps.is_empty(), "{name}: residue {:?}", again.steps);
        h.clear_log();
        let second = apply(&h, &d, Policy::default()).unwrap();
        assert!(second.steps.is_empty());
        assert!(
            changes(&h).is_empty(),
            "{name}: second apply ran {:?}",
            changes(&h)
        );
    }
}

#[test]
fn microserver_result_is_the_hybrid_layout() {
    let (d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    let data0 = w.array_named("data0").unwrap();
    let hdd0 = w.by_id("ata-ST1000LM048-2E7172_WDE00001").unwrap();
    let ssd0 = w
        .by_id("ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A")
        .unwrap();
    assert!(data0.member(&hdd0.kname).unwrap().write_mostly());
    assert!(!data0.member(&ssd0.kname).unwrap().write_mostly());
    assert_eq!(data0.bitmap.as_ref().unwrap().chunk, 64 << 20);
    assert_eq!(hdd0.write_cache.unwrap().enabled, Some(true));
    let lv = w.lv("vg0", "nextcloud").unwrap();
    let wc = lv.writecache.as_ref().unwrap();
    assert_eq!(wc.cachevol, "nextcloud_wc_cvol");
    assert_eq!(
        wc.settings.get("writeback_jobs").map(String::as_str),
        Some("1024")
    );
    let origin = w.lv("vg0", "nextcloud_wcorig").unwrap();
    assert_eq!(origin.stripes, 2);
    assert_eq!(origin.extents.len(), 2, "striped over both mirrors");
    assert_eq!(lv.size, 800 << 30);
}

#[test]
fn nvme_example_three_way_mirror_with_write_behind() {
    let (d, h) = example("nvme-plus-two-hdd");
    let p = apply(&h, &d, Policy::default()).unwrap();
    let create = p
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::CreateArray(_)))
        .unwrap();
    assert_eq!(create.risk, Risk::DataAtRisk, "write-behind is marked");
    let a = h.world().array_named("tank").cloned().unwrap();
    assert_eq!(a.members.len(), 3);
    assert_eq!(a.members.iter().filter(|m| m.write_mostly()).count(), 2);
    assert_eq!(
        a.bitmap.unwrap(),
        hyraid::observe::MdBitmap::internal(512 << 20, 16383)
    );
}

#[test]
fn drift_write_mostly_and_write_cache_gives_exactly_two_steps() {
    let (d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let w = h.world();
    let md = w.array_named("data0").unwrap().kname.clone();
    let hdd = w
        .by_id("ata-ST1000LM048-2E7172_WDE00001")
        .unwrap()
        .kname
        .clone();
    h.write_file(
        &format!("/sys/block/{md}/md/dev-{hdd}/state"),
        "-writemostly",
    )
    .unwrap();
    assert_eq!(
        run(
            &h,
            &[
                "hdparm",
                "-W0",
                "/dev/disk/by-id/ata-ST1000LM048-2E7172_WDE00001"
            ]
        )
        .status,
        0
    );
    let p = plan_for(&h, &d, Policy::default());
    let steps: Vec<&Step> = p.steps.iter().map(|s| &s.step).collect();
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert!(steps.contains(&&Step::SetWriteCache(SetWriteCache {
        disk: "hdd0".into(),
        device: "/dev/disk/by-id/ata-ST1000LM048-2E7172_WDE00001".into(),
        on: true,
        tool: hyraid::plan::CacheTool::Hdparm,
        kname: None,
    })));
    assert!(steps.contains(&&Step::SetWriteMostly(SetWriteMostly {
        array: "data0".into(),
        md: md.clone(),
        member: hdd.clone(),
        disk: "hdd0".into(),
        on: true
    })));
    apply(&h, &d, Policy::default()).unwrap();
    assert!(
        h.world()
            .array_named("data0")
            .unwrap()
            .member(&hdd)
            .unwrap()
            .write_mostly()
    );
}

#[test]
fn bitmap_rechunk_and_write_behind_on_a_live_array() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    // The array is still in its initial resync: a bitmap change must wait for it.
    let m = d.mirrors.get_mut("md-home").unwrap();
    m.bitmap_chunk = Some(128 << 20);
    m.write_behind = 2048;
    let p = plan_for(&h, &d, Policy::default());
    let ops: Vec<String> = p
        .steps
        .iter()
        .map(|s| {
            serde_json::to_value(&s.step).unwrap()["op"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ops, vec!["wait_idle", "remove_bitmap", "add_bitmap"]);
    assert_eq!(p.steps[1].risk, Risk::Degrades);
    apply(&h, &d, Policy::default()).unwrap();
    let a = h.world().array_named("md-home").cloned().unwrap();
    assert_eq!(
        a.bitmap.unwrap(),
        hyraid::observe::MdBitmap::internal(128 << 20, 2048)
    );
    // Lowering write-behind on a live array is one sysfs write.
    d.mirrors.get_mut("md-home").unwrap().write_behind = 256;
    let p = apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(p.steps.len(), 1);
    assert!(matches!(
        p.steps[0].step,
        Step::SetWriteBehind(SetWriteBehind { value: 256, .. })
    ));
}

#[test]
fn writecache_detach_and_settings_change() {
    let (mut d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    let lv = nextcloud(&mut d);
    lv.writecache
        .as_mut()
        .unwrap()
        .settings
        .insert("high_watermark".into(), "60".into());
    let p = apply(&h, &d, Policy::default()).unwrap();
    assert!(
        matches!(&p.steps[0].step, Step::SetWritecacheSettings(SetWritecacheSettings { settings, .. }) if settings == "high_watermark=60 writeback_jobs=1024")
    );
    let lv = nextcloud(&mut d);
    lv.writecache = None;
    let p = apply(&h, &d, Policy::default()).unwrap();
    assert!(
        matches!(&p.steps[0].step, Step::DetachWritecache(DetachWritecache { remove_cachevol: Some(cv), .. }) if cv == "nextcloud_wc")
    );
    let w = h.world();
    assert!(w.lv("vg0", "nextcloud").unwrap().writecache.is_none());
    assert!(w.lv("vg0", "nextcloud_wc").is_none());
    assert_eq!(w.lv("vg0", "nextcloud").unwrap().size, 800 << 30);
}

#[test]
fn lv_grows_never_shrinks() {
    let (mut d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    let lv = nextcloud(&mut d);
    lv.size = hyraid::config::size::LvSize::Bytes(900 << 30);
    let p = apply(&h, &d, Policy::default()).unwrap();
    assert!(matches!(p.steps[0].step, Step::ExtendLv(_)));
    assert_eq!(h.world().lv("vg0", "nextcloud").unwrap().size, 900 << 30);
    let lv = nextcloud(&mut d);
    lv.size = hyraid::config::size::LvSize::Bytes(100 << 30);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty());
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "lv vg0/nextcloud" && r.reason.contains("never shrinks")),
        "{:?}",
        p.refused
    );
    let before = h.commands().len();
    assert!(matches!(
        apply(&h, &d, Policy::default()),
        Err(hyraid::apply::ApplyError::Refused { count: 1 })
    ));
    assert!(
        changes_since(&h, before).is_empty(),
        "a refused plan runs nothing"
    );
}

#[test]
fn interrupted_apply_is_completed_by_the_next_one() {
    let (d, h0) = example("microserver-gen8");
    let full = plan_for(&h0, &d, Policy::default());
    for k in 0..full.steps.len() {
        let (d, h) = example("microserver-gen8");
        let obs = common::observe(&h, &d);
        let mut p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
        p.steps.truncate(k);
        hyraid::apply::execute(
            &h,
            &p,
            &obs,
            &hyraid::apply::Journal { path: None },
            &mut std::io::sink(),
        )
        .unwrap();
        apply(&h, &d, Policy::default()).unwrap_or_else(|e| panic!("stopped after {k} steps: {e}"));
        assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    }
}

#[test]
fn failing_command_stops_apply_and_a_rerun_converges() {
    let (d, h) = example("microserver-gen8");
    h.inject_fault(hyraid::sim::Fault {
        needle: "vgcreate".into(),
        status: 5,
        stderr: "  Device /dev/md/data1 excluded by a filter.\n".into(),
    });
    let e = apply(&h, &d, Policy::default()).unwrap_err().to_string();
    assert!(
        e.contains("vgcreate vg0") && e.contains("exited 5") && e.contains("excluded by a filter"),
        "{e}"
    );
    assert!(h.world().vg("vg0").is_none());
    assert!(
        h.world().array_named("data0").is_some(),
        "steps before the failure ran"
    );
    apply(&h, &d, Policy::default()).unwrap();
}
