//! An LV the file makes smaller: a mounted ext4 is shrunk offline (checked, resized to the LV's
//! new size) with --allow-destroy, never below what it holds (resize2fs -P); an xfs never; an LV
//! without a filesystem only as `destroys`.

use crate::common;

use common::fs::*;
use common::*;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

#[test]
fn a_mounted_ext4_shrinks_offline_with_allow_destroy_and_is_mounted_again() {
    let h = machine();
    let fs = "{ type: ext4, mount: /srv/nextcloud }";
    apply(&h, &sized(fs, 100 << 30), Policy::default()).unwrap();
    let small = sized(fs, 60 << 30);
    let p = plan_for(&h, &small, Policy::default());
    assert!(p.steps.is_empty());
    assert!(
        p.refused[0]
            .reason
            .contains("shrink the ext4 and the LV to 64424509440 bytes"),
        "{:#?}",
        p.refused
    );
    assert!(p.refused[0].fix.contains("--allow-destroy"));
    let allow = Policy::destroying(true);
    let p = plan_for(&h, &small, allow.clone());
    assert_eq!(ops(&p), vec!["shrink_lv", "mount_filesystem"]);
    assert_eq!(p.steps[0].risk, hyraid::plan::Risk::DataAtRisk);
    println!(
        "{}",
        hyraid::render::render(&p, hyraid::render::Format::Text, false)
    );
    let before = h.commands().len();
    apply(&h, &small, allow.clone()).unwrap();
    let ran: Vec<String> = changes_since(&h, before)
        .into_iter()
        .filter(|c| !c.starts_with("dumpe2fs"))
        .collect();
    assert_eq!(
        ran,
        vec![
            "umount /srv/nextcloud",
            "e2fsck -f -p /dev/vg0/nextcloud",
            "resize2fs /dev/vg0/nextcloud 62914560K",
            "lvreduce --yes -L 64424509440b vg0/nextcloud",
            "mkdir -p /srv/nextcloud",
            "systemctl daemon-reload",
            "mount /srv/nextcloud",
        ]
    );
    let w = h.world();
    assert_eq!(w.filesystems[0].size, Some(60 << 30));
    assert_eq!(
        w.lvm
            .lvs
            .iter()
            .find(|l| l.name == "nextcloud")
            .unwrap()
            .size,
        60 << 30
    );
    assert!(plan_for(&h, &small, allow.clone()).is_empty());
}

#[test]
fn an_ext4_shrink_below_what_it_holds_is_refused_before_it_is_unmounted() {
    let h = machine();
    let fs = "{ type: ext4, mount: /srv/nextcloud }";
    apply(&h, &sized(fs, 100 << 30), Policy::default()).unwrap();
    // The filesystem holds 70 GiB that resize2fs cannot move out of the way.
    let mut w = h.world();
    w.filesystems[0].min_size = Some(70 << 30);
    let h = SimHost::new(w);
    let allow = Policy::destroying(true);
    let p = plan_for(&h, &sized(fs, 60 << 30), allow.clone());
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    assert!(
        p.refused[0]
            .reason
            .contains("smaller than its ext4 can shrink to (70.00 GiB, resize2fs -P)"),
        "{:#?}",
        p.refused
    );
    assert!(p.refused[0].fix.contains("set its size to 70GiB or more"));
    // Above that size the shrink is planned; the filesystem stays mounted until apply.
    let p = plan_for(&h, &sized(fs, 80 << 30), allow.clone());
    assert_eq!(ops(&p), vec!["shrink_lv", "mount_filesystem"]);
    assert!(h.world().filesystems[0].mountpoint.is_some());
    // The simulated resize2fs refuses below the minimum as e2fsprogs does.
    use hyraid::host::Host;
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let out = h
        .run(&argv(&["resize2fs", "-P", "/dev/vg0/nextcloud"]))
        .unwrap();
    assert_eq!(
        out.stdout,
        "Estimated minimum size of the filesystem: 18350080\n"
    );
    let small = h
        .run(&argv(&["resize2fs", "/dev/vg0/nextcloud", "62914560K"]))
        .unwrap();
    assert_eq!(small.status, 1);
    assert!(
        small
            .stderr
            .contains("New size smaller than minimum (18350080)"),
        "{}",
        small.stderr
    );
}

#[test]
fn xfs_never_shrinks_and_a_raw_lv_shrinks_as_destroys() {
    let h = machine();
    apply(
        &h,
        &sized("{ type: xfs, mount: /srv/m }", 100 << 30),
        Policy::default(),
    )
    .unwrap();
    let p = plan_for(
        &h,
        &sized("{ type: xfs, mount: /srv/m }", 60 << 30),
        Policy::destroying(true),
    );
    assert!(p.steps.is_empty());
    assert!(
        p.refused[0]
            .reason
            .contains("carries xfs, which cannot shrink"),
        "{:#?}",
        p.refused
    );
    let h = machine();
    apply(&h, &sized("none", 100 << 30), Policy::default()).unwrap();
    let p = plan_for(&h, &sized("none", 60 << 30), Policy::default());
    assert!(
        p.refused[0]
            .reason
            .contains("the data past the new end is lost"),
        "{:#?}",
        p.refused
    );
    let allow = Policy::destroying(true);
    let p = plan_for(&h, &sized("none", 60 << 30), allow.clone());
    assert_eq!(p.steps[0].risk, hyraid::plan::Risk::Destroys);
    let before = h.commands().len();
    apply(&h, &sized("none", 60 << 30), allow.clone()).unwrap();
    assert_eq!(
        changes_since(&h, before),
        vec!["lvreduce --yes -L 64424509440b vg0/nextcloud"]
    );
    assert!(plan_for(&h, &sized("none", 60 << 30), allow.clone()).is_empty());
}
