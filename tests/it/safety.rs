//! Never lose data: foreign objects untouched, content on a device makes creation a refused
//! `destroys` step, stale or foreign plans refused, identity checked, one apply at a time.

use crate::common;
use common::*;
use hyraid::apply::{self, ApplyError, Journal};
use hyraid::config::WriteMostly;
use hyraid::host::Host;
use hyraid::machine::Lock;
use hyraid::observe::{BlockDevice, DevKind, WriteCacheSource, WriteCacheState};
use hyraid::plan::step::{CreateArray, RemoveLv, WipeSignatures};
use hyraid::plan::{PlanError, Policy, Risk, Step, plan};
use hyraid::sim::SimHost;

fn extra_disk(kname: &str, minor: u32, serial: &str, rota: bool) -> BlockDevice {
    BlockDevice {
        kname: kname.into(),
        kind: DevKind::Disk,
        maj_min: format!("8:{minor}"),
        size: 500107862016,
        rotational: rota,
        serial: Some(serial.into()),
        wwn: None,
        model: Some("OLD DISK".into()),
        tran: Some("sata".into()),
        by_id: vec![format!("ata-OLD_DISK_{serial}")],
        parent: None,
        partlabel: None,
        parttype: None,
        pttype: None,
        fstype: None,
        holders: vec![],
        mountpoint: None,
        signatures: Some(vec![]),
        write_cache: Some(WriteCacheState {
            enabled: Some(true),
            source: WriteCacheSource::ScsiCacheType,
        }),
        probe_error: None,
    }
}

/// The microserver with two more disks carrying a hand-built array and VG with an LV.
fn with_foreign() -> (hyraid::config::Desired, SimHost) {
    let (d, h) = example("microserver-gen8");
    let mut w = h.world();
    w.block_devices.push(extra_disk("sdg", 96, "OLD1", true));
    w.block_devices.push(extra_disk("sdh", 112, "OLD2", true));
    let h = SimHost::new(w);
    for cmd in [
        "mdadm --create /dev/md/legacy --level=1 --raid-devices=2 --bitmap=internal --run /dev/disk/by-id/ata-OLD_DISK_OLD1 /dev/disk/by-id/ata-OLD_DISK_OLD2",
        "mdadm --wait /dev/md/legacy",
        "vgcreate backupvg /dev/md/legacy",
        "lvcreate --yes -n photos -L 104857600b backupvg",
    ] {
        let out = run(&h, &cmd.split(' ').collect::<Vec<_>>());
        assert_eq!(out.status, 0, "{cmd}: {}", out.stderr);
    }
    (d, h)
}

#[test]
fn foreign_array_and_vg_are_reported_and_untouched() {
    let (d, h) = with_foreign();
    let before = h.world();
    let p = plan_for(&h, &d, Policy::default());
    let foreign: Vec<&str> = p.foreign.iter().map(|f| f.object.as_str()).collect();
    assert_eq!(foreign, vec!["array /dev/md/legacy", "vg backupvg"]);
    h.clear_log();
    apply(&h, &d, Policy::destroying(true)).unwrap();
    let after = h.world();
    assert_eq!(after.array_named("legacy"), before.array_named("legacy"));
    assert_eq!(after.vg("backupvg"), before.vg("backupvg"));
    assert_eq!(
        after.lv("backupvg", "photos"),
        before.lv("backupvg", "photos")
    );
    assert!(
        changes(&h)
            .iter()
            .all(|c| !c.contains("legacy") && !c.contains("backupvg") && !c.contains("OLD_DISK")),
        "{:?}",
        changes(&h)
    );
}

#[test]
fn a_member_in_a_foreign_array_is_refused_even_with_allow_destroy() {
    let (mut d, h) = with_foreign();
    let hdd0 = d.disks.get_mut("hdd0").unwrap();
    hdd0.id = Some("ata-OLD_DISK_OLD1".into());
    let p = plan_for(&h, &d, Policy::destroying(true));
    assert!(p.steps.iter().all(
        |s| !matches!(&s.step, Step::CreateArray(CreateArray { array, .. }) if array == "data0")
    ));
    assert!(
        p.refused.iter().any(|r| r.object == "mirror data0"
            && r.reason.contains("already a member of /dev/md/legacy")),
        "{:?}",
        p.refused
    );
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "vg vg0" && r.reason.contains("waits for mirror data0"))
    );
}

#[test]
fn ext4_or_lvm_signature_makes_create_destroying_and_refused() {
    for (kind, offset) in [("ext4", "0x438"), ("LVM2_member", "0x218"), ("xfs", "0x0")] {
        let (d, h) = with_content(kind, offset);
        let p = plan_for(&h, &d, Policy::default());
        assert!(p.steps.iter().all(|s| s.risk != Risk::Destroys), "{kind}");
        assert!(
            !p.steps
                .iter()
                .any(|s| matches!(s.step, Step::CreateArray(_))),
            "{kind}: no create without --allow-destroy"
        );
        let r = p.refused.iter().find(|r| r.object == "disk hdd").unwrap();
        assert!(
            r.reason.contains(&format!("{kind} at {offset}")) && r.fix.contains("--allow-destroy"),
            "{r:?}"
        );
        // Applying it is refused as a whole and changes nothing.
        h.clear_log();
        assert!(matches!(
            apply(&h, &d, Policy::default()),
            Err(ApplyError::Refused { .. })
        ));
        assert!(changes(&h).is_empty(), "{kind}: {:?}", changes(&h));
        assert!(h.world().arrays.is_empty());
        // With --allow-destroy: an explicit wipe step, marked, before the create; converges.
        let p = plan_for(&h, &d, Policy::destroying(true));
        assert!(
            matches!(&p.steps[0].step, Step::WipeSignatures(WipeSignatures { disk, .. }) if disk == "hdd")
        );
        assert_eq!(p.steps[0].risk, Risk::Destroys);
        assert!(matches!(p.steps[1].step, Step::CreateArray(_)));
        apply(&h, &d, Policy::destroying(true)).unwrap();
        assert!(h.world().array_named("md-home").is_some());
    }
}

#[test]
fn mdadm_itself_would_not_notice_lvm_or_xfs_but_hyraid_does() {
    // The simulated mdadm behaves like 4.2: it only prompts for ext2/3/4, md and partition
    // tables; with --run it would overwrite an LVM PV silently. hyraid's own probe catches it.
    let create = [
        "mdadm",
        "--create",
        "/dev/md/x",
        "--level=1",
        "--raid-devices=2",
        "/dev/sda",
        "/dev/sdb",
    ];
    for (kind, offset, status, says) in [
        ("LVM2_member", "0x218", 0, ""),
        ("xfs", "0x0", 0, ""),
        (
            "ext4",
            "0x438",
            1,
            "appears to contain an ext2fs file system",
        ),
    ] {
        let (_, h) = with_content(kind, offset);
        let out = run(&h, &create);
        assert_eq!(out.status, status, "{kind}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{kind}: {}", out.stderr);
        if status != 0 {
            assert!(
                out.stderr.contains("create aborted"),
                "{kind}: {}",
                out.stderr
            );
        }
        // Whatever mdadm would do, hyraid's plan refuses to create over it.
        let (d, h) = with_content(kind, offset);
        let p = plan_for(&h, &d, Policy::default());
        assert!(
            !p.steps
                .iter()
                .any(|s| matches!(s.step, Step::CreateArray(_))),
            "{kind}"
        );
    }
}

#[test]
fn stale_or_foreign_saved_plans_are_refused() {
    let (d, h) = example("microserver-gen8");
    let obs = observe(&h, &d);
    let p = saved_example_plan("microserver-gen8", &obs, Policy::default());
    apply::check_saved(&p, &h, &obs, &hyraid::plan::Policy::destroying(false)).unwrap();
    // The machine changes after planning.
    assert_eq!(
        run(
            &h,
            &[
                "hdparm",
                "-W0",
                "/dev/disk/by-id/ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A"
            ]
        )
        .status,
        0
    );
    let now = observe(&h, &d);
    let e = apply::check_saved(&p, &h, &now, &hyraid::plan::Policy::destroying(false)).unwrap_err();
    assert!(matches!(e, ApplyError::Stale { .. }));
    assert!(e.to_string().starts_with("plan is stale"));
    let mut other = p.clone();
    other.basis =
        hyraid::plan::fingerprint::Basis::known(hyraid::plan::fingerprint::fingerprint(&now));
    other.host = "elsewhere".into();
    assert!(matches!(
        apply::check_saved(&other, &h, &now, &hyraid::plan::Policy::destroying(false)),
        Err(ApplyError::WrongHost { .. })
    ));
    other.host = p.host.clone();
    other.format = 99;
    assert!(matches!(
        apply::check_saved(&other, &h, &now, &hyraid::plan::Policy::destroying(false)),
        Err(ApplyError::Format { found: 99 })
    ));
}

#[test]
fn resync_progress_does_not_make_a_plan_stale() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    let obs = observe(&h, &d);
    let p = saved_example_plan("single-pair", &obs, Policy::default());
    h.finish_syncs();
    let now = observe(&h, &d);
    apply::check_saved(&p, &h, &now, &hyraid::plan::Policy::destroying(false)).unwrap();
}

#[test]
fn destroying_plan_needs_allow_destroy_at_apply_time_too() {
    let (d, h) = with_content("ext4", "0x438");
    let p = plan_for(&h, &d, Policy::destroying(true));
    assert!(matches!(
        apply::check_destroy(&p, false),
        Err(ApplyError::DestroyNotAllowed { count: 1 })
    ));
}

#[test]
fn host_guard_and_identity() {
    let (mut d, h) = example("microserver-gen8");
    d.host = Some("other-box".into());
    let obs = observe(&h, &d);
    assert!(matches!(
        plan(&d, &obs, Policy::default()),
        Err(PlanError::HostMismatch { .. })
    ));
    d.host = None;
    // A serial that no longer matches the by-id name: swapped cable or wrong file.
    d.disks.get_mut("hdd0").unwrap().serial = Some("WDE00002".into());
    let e = plan(&d, &obs, Policy::default()).unwrap_err().to_string();
    assert!(
        e.contains("disk `hdd0`") && e.contains("serial WDE00001") && e.contains("swapped"),
        "{e}"
    );
    // Two names for one disk.
    let (mut d, _) = example("microserver-gen8");
    d.disks.get_mut("hdd1").unwrap().id = None;
    d.disks.get_mut("hdd1").unwrap().serial = Some("WDE00001".into());
    let e = plan(&d, &obs, Policy::default()).unwrap_err().to_string();
    assert!(e.contains("is also disk"), "{e}");
}

#[test]
fn missing_disk_is_refused_not_guessed() {
    let (mut d, h) = example("single-pair");
    d.disks.get_mut("hdd").unwrap().id = Some("ata-NOT_THERE_123".into());
    let p = plan_for(&h, &d, Policy::destroying(true));
    assert!(p.steps.is_empty());
    assert!(
        p.refused[0].reason.contains("not present on this machine"),
        "{:?}",
        p.refused
    );
}

#[test]
fn identity_is_rechecked_before_each_step() {
    let (d, h) = example("single-pair");
    let obs = observe(&h, &d);
    let p = plan(&d, &obs, Policy::default()).unwrap();
    // Between plan and execution the by-id link moves to another disk.
    let mut w = h.world();
    let [a, b] = [0, 1].map(|i| w.block_devices[i].by_id.clone());
    w.block_devices[0].by_id = b;
    w.block_devices[1].by_id = a;
    let swapped = SimHost::new(w);
    let e = apply::execute(
        &swapped,
        &p,
        &obs,
        &Journal { path: None },
        &mut std::io::sink(),
    )
    .unwrap_err();
    assert!(matches!(e, ApplyError::Identity { index: 1, .. }), "{e}");
    assert!(changes(&swapped).is_empty());
}

#[test]
fn one_apply_at_a_time() {
    let dir = std::env::temp_dir().join(format!("hyraid-lock-{}", std::process::id()));
    let path = dir.join("apply.lock");
    let held = Lock::acquire(&path).unwrap();
    let e = Lock::acquire(&path).err().unwrap().to_string();
    assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
    drop(held);
    Lock::acquire(&path).unwrap();
}

#[test]
fn simulated_tools_refuse_what_the_real_ones_refuse() {
    let (d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    // Bitmap change while the initial resync runs: EBUSY in the kernel.
    let out = run(&h, &["mdadm", "--grow", "/dev/md/data0", "--bitmap=none"]);
    assert_eq!(
        (out.status, out.stderr.as_str()),
        (1, "mdadm: failed to remove internal bitmap.\n")
    );
    // writecache onto an active cachevol (lvm2 2.03.16, exit 5).
    assert_eq!(
        run(
            &h,
            &[
                "lvcreate",
                "--yes",
                "-n",
                "c2",
                "-L",
                "1073741824b",
                "vg0",
                "/dev/disk/by-id/ata-KINGSTON_SA400S37240G_50026B7782000001"
            ]
        )
        .status,
        0
    );
    assert_eq!(
        run(
            &h,
            &[
                "lvcreate",
                "--yes",
                "-n",
                "d2",
                "-L",
                "1073741824b",
                "vg0",
                "/dev/md/data0"
            ]
        )
        .status,
        0
    );
    let out = run(
        &h,
        &[
            "lvconvert",
            "--yes",
            "--type",
            "writecache",
            "--cachevol",
            "c2",
            "vg0/d2",
        ],
    );
    assert_eq!(
        (out.status, out.stderr.as_str()),
        (5, "  LV vg0/c2 must be inactive to attach.\n")
    );
    // write-behind without a write-mostly member: EINVAL from the kernel.
    let md = h.world().array_named("data0").unwrap().kname.clone();
    let hdd = h
        .world()
        .by_id("ata-ST1000LM048-2E7172_WDE00001")
        .unwrap()
        .kname
        .clone();
    h.write_file(
        &format!("/sys/block/{md}/md/dev-{hdd}/state"),
        "-writemostly",
    )
    .unwrap();
    assert!(
        h.write_file(&format!("/sys/block/{md}/md/bitmap/backlog"), "256")
            .unwrap_err()
            .to_string()
            .contains("no write mostly device")
    );
    // pvcreate does not wipe a signature when nobody answers its prompt.
    let (_, h2) = with_content("ext4", "0x438");
    let out = run(&h2, &["pvcreate", "/dev/sdb"]);
    assert_eq!(out.status, 5);
    assert!(out.stderr.contains("Aborted wiping of ext4"));
    // Unknown commands are errors, not silent successes.
    assert!(
        h.run(&["mkfs.ext4".to_string(), "/dev/sda".to_string()])
            .is_err()
    );
}

#[test]
fn only_tagged_leftover_cache_volumes_are_cleaned_up() {
    // A detach interrupted between --splitcache and lvremove: hyraid's tagged volume goes.
    let (mut d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        run(&h, &["lvconvert", "--yes", "--splitcache", "vg0/nextcloud"]).status,
        0
    );
    nextcloud(&mut d).writecache = None;
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(p.steps.len(), 1);
    assert_eq!(
        p.steps[0].step,
        Step::RemoveLv(RemoveLv {
            vg: "vg0".into(),
            lv: "nextcloud_wc".into()
        })
    );
    assert!(p.foreign.is_empty());
    // A user's own LV of the same name, without hyraid's tag, is foreign and left alone.
    let (mut d, h) = example("microserver-gen8");
    nextcloud(&mut d).writecache = None;
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        run(
            &h,
            &[
                "lvcreate",
                "--yes",
                "-n",
                "nextcloud_wc",
                "-L",
                "1073741824b",
                "vg0"
            ]
        )
        .status,
        0
    );
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    assert_eq!(p.foreign[0].object, "lv vg0/nextcloud_wc");
}

#[test]
fn one_disk_under_its_ata_and_wwn_names_is_refused_with_the_fix() {
    let (mut d, h) = example("single-pair");
    // sda's wwn- name, while `ssd` names it by its ata- name.
    d.disks.get_mut("hdd").unwrap().id = Some("wwn-0x500a0751e6000001".into());
    let obs = observe(&h, &d);
    let e = plan(&d, &obs, Policy::default()).unwrap_err();
    assert!(matches!(e, PlanError::Identity { .. }), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("/dev/sda is also disk `") && e.contains("declare each disk once"),
        "{e}"
    );
}

#[test]
fn write_mostly_on_the_only_ssd_is_refused_by_the_observed_media() {
    let (mut d, h) = example("single-pair");
    let obs = observe(&h, &d);
    d.mirrors.get_mut("md-home").unwrap().write_mostly = WriteMostly::List(vec!["ssd".into()]);
    let e = plan(&d, &obs, Policy::default()).unwrap_err().to_string();
    assert!(
        e.contains("mirror `md-home`") && e.contains("every non-rotational member (ssd)"),
        "{e}"
    );
    // The HDD write-mostly is the point; and where every disk reports rotational (virtio),
    // nothing is fast, so nothing is inverted.
    d.mirrors.get_mut("md-home").unwrap().write_mostly = WriteMostly::List(vec!["hdd".into()]);
    assert!(plan(&d, &obs, Policy::default()).is_ok());
    let mut o = obs.clone();
    o.block_devices.iter_mut().for_each(|b| b.rotational = true);
    d.mirrors.get_mut("md-home").unwrap().write_mostly = WriteMostly::List(vec!["ssd".into()]);
    assert!(plan(&d, &o, Policy::default()).is_ok());
    // `media: ssd` in the file decides over the kernel's flag.
    d.disks.get_mut("ssd").unwrap().rotational_override = Some(false);
    assert!(plan(&d, &o, Policy::default()).is_err());
}
