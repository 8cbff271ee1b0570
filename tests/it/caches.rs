//! Caches on the simulated host: a writecache resized as real steps (a flushing detach that shows
//! the dirty amount, the old cache volume removed, a new one created and attached with the same
//! settings), refused at plan time when the new size does not fit (the old volume's space counts),
//! and converging when a run is killed half-way.

use crate::common;
use common::*;
use hyraid::config::Desired;
use hyraid::plan::{Policy, Risk, Step};
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

/// The microserver with dm-cache in place of its writecache, in `mode`.
fn with_dm_cache(d: &mut Desired, mode: hyraid::config::raw::CacheMode) {
    let lv = nextcloud(d);
    let wc = lv.writecache.take().unwrap();
    lv.cache = Some(hyraid::config::CacheSpec {
        mode,
        size: wc.size,
        pvs: wc.pvs,
    });
}

fn dm_cache_of(h: &SimHost) -> Option<hyraid::observe::LvCache> {
    h.world()
        .lvm
        .lvs
        .into_iter()
        .find(|l| l.name == "nextcloud" && !l.hidden)
        .and_then(|l| l.cache)
}

#[test]
fn a_dm_cache_is_built_on_its_own_cache_volume_and_converges() {
    use hyraid::config::raw::CacheMode;
    let (mut d, h) = example("microserver-gen8");
    with_dm_cache(&mut d, CacheMode::Writethrough);
    let p = plan_for(&h, &d, Policy::default());
    let n = p.steps.len();
    assert_eq!(ops(&p)[n - 2..], ["create_cachevol", "attach_cache"]);
    assert_eq!(p.steps[n - 1].risk, Risk::Safe);
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let tail: Vec<String> = changes(&h).into_iter().rev().take(2).rev().collect();
    assert_eq!(
        tail,
        [
            "lvcreate --yes -n nextcloud_cache -L 34359738368b --addtag hyraid_cachevol vg0 /dev/disk/by-id/ata-KINGSTON_SA400S37240G_50026B7782000001",
            "lvconvert --yes --type cache --cachevol nextcloud_cache --cachemode writethrough vg0/nextcloud",
        ]
    );
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    let c = dm_cache_of(&h).unwrap();
    assert_eq!(
        (c.cachevol.as_str(), c.origin.as_str(), c.mode.as_str()),
        ("nextcloud_cache_cvol", "nextcloud_corig", "writethrough")
    );
    // The LV keeps its stripes under the cache.
    let w = h.world();
    assert_eq!(w.lv("vg0", "nextcloud_corig").unwrap().stripes, 2);
}

#[test]
fn writeback_on_a_single_ssd_is_data_at_risk_and_a_mode_change_is_online() {
    use hyraid::config::raw::CacheMode;
    let (mut d, h) = example("microserver-gen8");
    with_dm_cache(&mut d, CacheMode::Writeback);
    let p = plan_for(&h, &d, Policy::default());
    let last = p.steps.last().unwrap();
    assert_eq!(last.risk, Risk::DataAtRisk);
    with_dm_cache_mode(&mut d, CacheMode::Writethrough);
    apply(&h, &d, Policy::default()).unwrap();
    with_dm_cache_mode(&mut d, CacheMode::Writeback);
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert_eq!(ops(&p), ["set_cache_mode"]);
    assert_eq!(p.steps[0].risk, Risk::DataAtRisk);
    let n = h.commands().len();
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        changes_since(&h, n),
        ["lvchange --yes --cachemode writeback vg0/nextcloud"]
    );
    assert_eq!(dm_cache_of(&h).unwrap().mode, "writeback");
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

fn with_dm_cache_mode(d: &mut Desired, mode: hyraid::config::raw::CacheMode) {
    nextcloud(d).cache.as_mut().unwrap().mode = mode;
}

#[test]
fn a_dirty_writeback_cache_is_flushed_and_detached_with_its_dirty_blocks_shown() {
    use hyraid::config::raw::CacheMode;
    let (mut d, h) = example("microserver-gen8");
    with_dm_cache(&mut d, CacheMode::Writeback);
    apply(&h, &d, Policy::default()).unwrap();
    let mut w = h.world();
    let c = w
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.name == "nextcloud")
        .unwrap()
        .cache
        .as_mut()
        .unwrap();
    c.dirty_blocks = Some(321);
    c.used_blocks = Some(4000);
    let h = SimHost::new(w);
    nextcloud(&mut d).cache = None;
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert_eq!(ops(&p), ["detach_cache"]);
    assert!(
        p.steps[0].reason.contains("321 of 524160 blocks dirty"),
        "{}",
        p.steps[0].reason
    );
    let n = h.commands().len();
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        changes_since(&h, n),
        [
            "lvconvert --yes --splitcache vg0/nextcloud",
            "lvremove --yes vg0/nextcloud_cache"
        ]
    );
    assert!(dm_cache_of(&h).is_none());
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn switching_a_writecache_to_a_dm_cache_detaches_first() {
    use hyraid::config::raw::CacheMode;
    let (mut d, h) = built(0);
    with_dm_cache(&mut d, CacheMode::Writethrough);
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&p),
        ["detach_writecache", "create_cachevol", "attach_cache"]
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert!(dm_cache_of(&h).is_some());
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    // And back.
    let (d2, _) = example("microserver-gen8");
    let p = plan_for(&h, &d2, Policy::default());
    assert_eq!(
        ops(&p),
        [
            "detach_cache",
            "create_cachevol",
            "deactivate_lv",
            "attach_writecache"
        ]
    );
    apply(&h, &d2, Policy::default()).unwrap();
    assert!(plan_for(&h, &d2, Policy::default()).steps.is_empty());
}

#[test]
fn a_dm_cache_resize_is_detach_recreate_attach() {
    use hyraid::config::raw::CacheMode;
    let (mut d, h) = example("microserver-gen8");
    with_dm_cache(&mut d, CacheMode::Writethrough);
    apply(&h, &d, Policy::default()).unwrap();
    nextcloud(&mut d).cache.as_mut().unwrap().size = 64 * GIB;
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p), ["detach_cache", "create_cachevol", "attach_cache"]);
    assert!(
        p.steps[0]
            .reason
            .starts_with("resize the dm-cache 32.00 GiB → 64.00 GiB"),
        "{}",
        p.steps[0].reason
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    assert_eq!(
        h.world().lv("vg0", "nextcloud_cache_cvol").unwrap().size,
        64 * GIB
    );
}

#[test]
fn a_dm_cache_without_cache_check_is_refused_with_the_package_named() {
    use hyraid::config::raw::CacheMode;
    let (mut d, h) = example("microserver-gen8");
    let mut w = h.world();
    w.boot.cache_check = Some(false);
    let h = SimHost::new(w);
    with_dm_cache(&mut d, CacheMode::Writethrough);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty() || !ops(&p).contains(&"attach_cache".to_string()));
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "lv vg0/nextcloud")
        .unwrap();
    assert!(
        r.reason.contains("cache_check, which is not installed"),
        "{}",
        r.reason
    );
    assert!(r.fix.contains("thin-provisioning-tools"), "{}", r.fix);
}

#[test]
fn import_writes_a_dm_cache_as_the_file_would() {
    use hyraid::config::raw::CacheMode;
    let (mut d, h) = example("microserver-gen8");
    with_dm_cache(&mut d, CacheMode::Writeback);
    apply(&h, &d, Policy::default()).unwrap();
    let yaml = hyraid::import::to_yaml(&hyraid::import::import(&observe(&h, &d)));
    assert!(
        yaml.contains("        cache:\n          mode: writeback\n          size: 32GiB\n"),
        "{yaml}"
    );
    let back = hyraid::config::load_str("x", &yaml).unwrap();
    let c = back.volume_groups["vg0"].lvs["nextcloud"]
        .cache
        .as_ref()
        .unwrap();
    assert_eq!((c.mode, c.size), (CacheMode::Writeback, 32 * GIB));
    let p = hyraid::plan::plan(&back, &observe(&h, &back), Policy::default()).unwrap();
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
}

#[test]
fn status_shows_a_dm_cache_with_its_mode_and_dirty_blocks() {
    use hyraid::config::raw::CacheMode;
    let (mut d, h) = example("microserver-gen8");
    with_dm_cache(&mut d, CacheMode::Writeback);
    apply(&h, &d, Policy::default()).unwrap();
    let mut w = h.world();
    let c = w
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.name == "nextcloud")
        .unwrap()
        .cache
        .as_mut()
        .unwrap();
    c.dirty_blocks = Some(12);
    c.used_blocks = Some(300);
    let f = hyraid::status::status(&w, Some(&d), None);
    let lines: Vec<String> = f
        .iter()
        .filter(|x| x.object == "lv vg0/nextcloud")
        .map(|x| x.message.clone())
        .collect();
    assert_eq!(
        lines,
        [
            "dm-cache writeback on a non-redundant device (disk cache0 (/dev/disk/by-id/wwn-0x50026b7782000001))",
            "dm-cache writeback: 12 dirty, 300 used of 524160 blocks"
        ]
    );
}

/// A writecache the file no longer has: hyraid's own cache volume (tagged) is removed after the
/// flush; one made by hand (a box hyraid adopted) stays as an LV, and the plan says so instead
/// of claiming it is removed.
#[test]
fn a_detached_writecache_removes_only_hyraids_cache_volume_and_says_which() {
    let (mut d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    nextcloud(&mut d).writecache = None;
    let detach = |p: &hyraid::plan::Plan| {
        p.steps
            .iter()
            .find(|s| matches!(s.step, Step::DetachWritecache(_)))
            .cloned()
            .unwrap()
    };
    let p = plan_for(&h, &d, Policy::default());
    let s = detach(&p);
    assert!(
        s.reason
            .contains("hyraid's cache volume nextcloud_wc is removed"),
        "{}",
        s.reason
    );
    assert!(s.step.commands().len() == 2, "splitcache, then lvremove");
    // The same cache made by hand: no hyraid tag on its cache volume.
    let mut w = h.world();
    let cv = w
        .lv("vg0", "nextcloud")
        .unwrap()
        .writecache
        .clone()
        .unwrap()
        .cachevol;
    for l in w.lvm.lvs.iter_mut().filter(|l| l.name == cv) {
        l.tags.clear();
    }
    let h = hyraid::sim::SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    let s = detach(&p);
    assert_eq!(s.step.commands().len(), 1, "only the flush and detach");
    assert!(
        s.reason.contains("was not made by hyraid") && s.reason.contains("stays"),
        "{}",
        s.reason
    );
    assert!(!s.reason.contains("is removed"), "{}", s.reason);
    // Split off, the cache volume takes back its name (attached, LVM hides it as NAME_cvol).
    let detached = cv.strip_suffix("_cvol").unwrap();
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains(&format!("lvremove vg0/{detached}"))),
        "{:?}",
        p.notes
    );
}
