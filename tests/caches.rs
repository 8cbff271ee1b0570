//! Caches on the simulated host: a writecache resized as real steps (a flushing detach that shows
//! the dirty amount, the old cache volume removed, a new one created and attached with the same
//! settings), refused at plan time when the new size does not fit (the old volume's space counts),
//! and converging when a run is killed half-way.

mod common;
use common::*;
use hyraid::config::Desired;
use hyraid::plan::{Policy, Risk};
use hyraid::sim::SimHost;

const GIB: u64 = 1 << 30;

/// The microserver built, its writecache holding `dirty` blocks not yet written back.
fn built(dirty: u64) -> (Desired, SimHost) {
    let (d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut w = h.world();
    let wc = w
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.name == "nextcloud")
        .and_then(|l| l.writecache.as_mut())
        .unwrap();
    assert_eq!(wc.total_blocks, Some(32 * GIB / 4096));
    wc.free_blocks = wc.total_blocks.map(|t| t - dirty);
    (d, SimHost::new(w))
}

fn cachevol(h: &SimHost) -> hyraid::observe::Lv {
    h.world()
        .lvm
        .lvs
        .into_iter()
        .find(|l| l.name == "nextcloud_wc_cvol")
        .unwrap()
}

#[test]
fn a_writecache_grows_by_detach_recreate_attach_with_its_dirty_amount_shown() {
    let (mut d, h) = built(5000);
    nextcloud(&mut d).writecache.as_mut().unwrap().size = 64 * GIB;
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    assert_eq!(
        ops(&p),
        [
            "detach_writecache",
            "create_cachevol",
            "deactivate_lv",
            "attach_writecache"
        ]
    );
    assert_eq!(
        p.steps[0].reason,
        "resize the writecache 32.00 GiB → 64.00 GiB: 19.53 MiB dirty (5000 of 8388608 blocks of 4096 B) are written back to the LV's PVs first (lvconvert --splitcache; may take long); the old cache volume is then removed, a new one created and attached"
    );
    assert_eq!(p.steps[0].risk, Risk::Safe);
    // Back on a single SSD: the new cache is as much at risk as the old one.
    assert_eq!(p.steps[3].risk, Risk::DataAtRisk);
    let n = h.commands().len();
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        changes_since(&h, n),
        [
            "lvconvert --yes --splitcache vg0/nextcloud",
            "lvremove --yes vg0/nextcloud_wc",
            "lvcreate --yes -n nextcloud_wc -L 68719476736b --addtag hyraid_cachevol vg0 /dev/disk/by-id/ata-KINGSTON_SA400S37240G_50026B7782000001",
            "lvchange --activate n vg0/nextcloud_wc",
            "lvconvert --yes --type writecache --cachevol nextcloud_wc --cachesettings high_watermark=50 writeback_jobs=1024 vg0/nextcloud",
        ]
    );
    let out = run(&h, &["lvconvert", "--yes", "--splitcache", "vg0/nextcloud"]);
    assert_eq!(
        out.stdout,
        "  Detaching writecache already clean.\n  Logical volume vg0/nextcloud writecache has been detached.\n"
    );
}

#[test]
fn the_sim_cleans_a_dirty_writecache_as_lvm2_prints_it() {
    let (_, h) = built(23442);
    let out = run(&h, &["lvconvert", "--yes", "--splitcache", "vg0/nextcloud"]);
    assert_eq!(
        out.stdout,
        std::fs::read_to_string("tests/fixtures/lvconvert-splitcache.txt")
            .unwrap()
            .replace("vg0/data", "vg0/nextcloud")
    );
}

#[test]
fn after_a_resize_the_plan_is_empty_and_the_settings_are_kept() {
    let (mut d, h) = built(0);
    nextcloud(&mut d).writecache.as_mut().unwrap().size = 16 * GIB;
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.steps[0].reason.contains("the cache is clean"),
        "{}",
        p.steps[0].reason
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    assert_eq!(cachevol(&h).size, 16 * GIB);
    let w = h.world();
    let lv = w.lvm.lvs.iter().find(|l| l.name == "nextcloud").unwrap();
    let wc = lv.writecache.as_ref().unwrap();
    assert_eq!(wc.settings["high_watermark"], "50");
    assert_eq!(wc.settings["writeback_jobs"], "1024");
}

#[test]
fn a_resize_may_use_the_space_the_old_cache_volume_frees() {
    // cache0 is 240 GB (223.57 GiB): 200 GiB fits only once the 32 GiB volume is gone.
    let (mut d, h) = built(0);
    nextcloud(&mut d).writecache.as_mut().unwrap().size = 200 * GIB;
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(cachevol(&h).size, 200 * GIB);
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn a_resize_that_does_not_fit_is_refused_at_plan_time() {
    let (mut d, h) = built(0);
    nextcloud(&mut d).writecache.as_mut().unwrap().size = 230 * GIB;
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty());
    assert_eq!(p.refused.len(), 1, "{:?}", p.refused);
    assert_eq!(p.refused[0].object, "lv vg0/nextcloud");
    assert!(
        p.refused[0]
            .reason
            .starts_with("its writecache asks 230.00 GiB"),
        "{}",
        p.refused[0].reason
    );
    assert!(
        p.refused[0].reason.contains("223.57 GiB free"),
        "{}",
        p.refused[0].reason
    );
}

#[test]
fn a_cache_volume_hyraid_did_not_make_is_not_resized() {
    let (mut d, h) = built(0);
    let mut w = h.world();
    w.lvm
        .lvs
        .iter_mut()
        .find(|l| l.name == "nextcloud_wc_cvol")
        .unwrap()
        .tags
        .clear();
    let h = SimHost::new(w);
    nextcloud(&mut d).writecache.as_mut().unwrap().size = 64 * GIB;
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty());
    assert_eq!(
        p.refused[0].reason,
        "writecache is 32.00 GiB, the file says 64.00 GiB; its cache volume nextcloud_wc_cvol was not made by hyraid (no tag hyraid_cachevol), and hyraid removes only its own"
    );
}

#[test]
fn a_resize_killed_after_the_detach_removes_the_flushed_volume_and_converges() {
    let (mut d, h) = built(100);
    nextcloud(&mut d).writecache.as_mut().unwrap().size = 16 * GIB;
    assert_eq!(
        run(&h, &["lvconvert", "--yes", "--splitcache", "vg0/nextcloud"]).status,
        0
    );
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert_eq!(
        ops(&p),
        [
            "remove_lv",
            "create_cachevol",
            "deactivate_lv",
            "attach_writecache"
        ]
    );
    assert_eq!(p.steps[0].risk, Risk::Safe);
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    assert_eq!(cachevol(&h).size, 16 * GIB);
}
