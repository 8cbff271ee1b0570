//! Member replacement on a hybrid mirror: a failed disk swapped for a new one, a failed disk
//! gone from the machine, a member coming back (re-add), and a hot replace of a working member.

use crate::common;
use common::*;
use hyraid::plan::step::AddMember;
use hyraid::plan::{Policy, Risk, Step};
use hyraid::sim::SimHost;

const OLD: &str = "/dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001";
const NEW_ID: &str = "ata-ST500DM009-2F110A_ZA4000099";

/// The single-pair box, built, idle; `prep` damages it; a blank disk `sdc` is plugged in.
fn pair_with_new_disk(prep: &[&str], unplug_old: bool) -> (hyraid::config::Desired, SimHost) {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    for c in prep {
        let out = run(&h, &c.split(' ').collect::<Vec<_>>());
        assert_eq!(out.status, 0, "{c}: {}", out.stderr);
    }
    let mut w = h.world();
    plug_blank_disk(&mut w, "sdb", "sdc", 32, "ZA4000099", NEW_ID);
    if unplug_old {
        w.block_devices.retain(|b| b.kname != "sdb");
    }
    (d, SimHost::new(w))
}

fn assert_hybrid_again(h: &SimHost, kname: &str) {
    h.finish_syncs(); // the rebuild runs after apply; let it end
    let w = h.world();
    let a = w.array_named("md-home").unwrap();
    let m = a.member(kname).unwrap();
    assert!(m.has("in_sync") && m.write_mostly(), "{m:?}");
    assert_eq!(a.degraded, 0);
    assert_eq!(a.members.len(), 2, "{:?}", a.members);
}

#[test]
fn failed_hdd_swapped_for_a_new_disk() {
    let (mut d, h) = pair_with_new_disk(&[&format!("mdadm /dev/md/md-home --fail {OLD}")], false);
    d.disks.get_mut("hdd").unwrap().id = Some(NEW_ID.into());
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p), vec!["remove_failed", "add_member"]);
    assert_eq!(p.steps[1].risk, Risk::Degrades);
    assert!(
        matches!(&p.steps[1].step, Step::AddMember(AddMember { device, .. }) if device.write_mostly)
    );
    eprintln!("{}", hyraid::render::text(&p, false));
    apply(&h, &d, Policy::default()).unwrap();
    assert_hybrid_again(&h, "sdc");
}

#[test]
fn failed_disk_gone_from_the_machine() {
    let (mut d, h) = pair_with_new_disk(
        &[
            &format!("mdadm /dev/md/md-home --fail {OLD}"),
            &format!("mdadm /dev/md/md-home --remove {OLD}"),
        ],
        true,
    );
    d.disks.get_mut("hdd").unwrap().id = Some(NEW_ID.into());
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p), vec!["add_member"]);
    apply(&h, &d, Policy::default()).unwrap();
    assert_hybrid_again(&h, "sdc");
}

#[test]
fn the_same_member_coming_back_is_re_added_not_wiped() {
    let (d, h) = pair_with_new_disk(
        &[
            &format!("mdadm /dev/md/md-home --fail {OLD}"),
            &format!("mdadm /dev/md/md-home --remove {OLD}"),
        ],
        false,
    );
    // Without the ask, it stays out: the plan says it left, and how to choose.
    let p = plan_for(&h, &d, Policy::destroying(true));
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
    assert!(
        p.refused.len() == 1
            && p.refused[0].reason.contains("left the array")
            && p.refused[0].fix.contains("--re-add hdd"),
        "{:?}",
        p.refused
    );
    let p = plan_for(&h, &d, re_add("hdd"));
    assert_eq!(ops(&p), vec!["re_add_member"], "{:?}", p.refused);
    assert_eq!(p.steps[0].risk, Risk::DataAtRisk);
    assert!(
        p.steps[0].reason.contains("transient"),
        "{}",
        p.steps[0].reason
    );
    apply(&h, &d, re_add("hdd")).unwrap();
    assert_hybrid_again(&h, "sdb");
}

#[test]
fn a_disk_from_another_array_is_not_re_added() {
    // Same shape, but the returning disk's superblock belongs to another array: that is content.
    let (d, h) = pair_with_new_disk(
        &[
            &format!("mdadm /dev/md/md-home --fail {OLD}"),
            &format!("mdadm /dev/md/md-home --remove {OLD}"),
        ],
        false,
    );
    let mut w = h.world();
    w.block_devices
        .iter_mut()
        .find(|b| b.kname == "sdb")
        .unwrap()
        .signatures
        .as_mut()
        .unwrap()[0]
        .uuid = Some("deadbeef-0000-0000-0000-000000000000".into());
    let h = SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty());
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("linux_raid_member")),
        "{:?}",
        p.refused
    );
}

#[test]
fn hot_replace_of_a_working_member_keeps_redundancy() {
    let (mut d, h) = pair_with_new_disk(&[], false);
    d.disks.get_mut("hdd").unwrap().id = Some(NEW_ID.into());
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&p),
        vec!["replace_member", "wait_idle", "remove_failed"]
    );
    assert!(p.steps.iter().all(|s| s.risk == Risk::Safe));
    let cmds: Vec<String> = p.steps[0]
        .step
        .commands()
        .iter()
        .map(hyraid::render::command_line)
        .collect();
    assert_eq!(
        cmds,
        vec![
            format!("mdadm /dev/md/md-home --add --write-mostly /dev/disk/by-id/{NEW_ID}"),
            "mdadm /dev/md/md-home --replace /dev/disk/by-id/wwn-0x5000c500c0000001 --with /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000099".to_string(),
        ]
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert_hybrid_again(&h, "sdc");
    assert!(
        h.world()
            .array_named("md-home")
            .unwrap()
            .member("sdb")
            .is_none(),
        "old member left the array"
    );
}

#[test]
fn after_a_reboot_without_the_failed_disk_the_array_is_started_and_rebuilt() {
    // The HDD died; the box rebooted without it and got a blank disk in its bay. udev assembled
    // the mirror but did not start it. The file names the new disk.
    let (mut d, h) = pair_with_new_disk(&[], false);
    h.reboot_without_disk("sdb");
    let obs = observe(&h, &d);
    let a = obs.arrays.iter().find(|a| a.kname == "md127").unwrap();
    assert_eq!(
        (a.array_state.as_str(), a.name.as_deref(), a.raid_disks),
        ("inactive", Some("md-home"), 2),
        "name and size from the superblock"
    );
    d.disks.get_mut("hdd").unwrap().id = Some(NEW_ID.into());
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p)[..2], ["start_array", "add_member"]);
    let truth = h.world().arrays[0].uuid.clone().unwrap();
    let norm = hyraid::observe::names::norm_uuid;
    assert_eq!(
        norm(a.uuid.as_deref().unwrap()),
        norm(&truth),
        "the real UUID from the superblock, not the zeros sysfs shows"
    );
    assert!(
        !ops(&p)
            .iter()
            .any(|o| o == "create_pv" || o == "extend_vg" || o == "write_file"),
        "nothing planned on an unread array or from a zero UUID: {:?}",
        ops(&p)
    );
    // LVM reads no PV on an array that is not running, so it knows no VG there: what stands
    // on it is planned once it runs, never guessed blank.
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("assembled but not running") && n.contains("vg home")),
        "{:?}",
        p.notes
    );
    assert_eq!(p.steps[0].risk, Risk::Degrades);
    assert_eq!(
        hyraid::render::command_line(&p.steps[0].step.commands()[0]),
        "mdadm --run /dev/md127"
    );
    // Debian starts it auto-read-only (start_ro=1), which would hold the rebuild: made
    // read-write in the same step.
    assert!(
        hyraid::render::command_line(&p.steps[0].step.commands()[1])
            .contains("active > /sys/block/md127/md/array_state"),
        "{:?}",
        p.steps[0].step.commands()
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert_hybrid_again(&h, "sdc");
}

#[test]
fn a_new_member_of_an_auto_read_only_array_is_rebuilt_not_left_waiting() {
    // Started by hand after the reboot (`mdadm --run`): running, auto-read-only until its first
    // write, and md holds a rebuild onto a member added meanwhile.
    let (mut d, h) = pair_with_new_disk(&[], false);
    h.reboot_without_disk("sdb");
    assert_eq!(run(&h, &["mdadm", "--run", "/dev/md127"]).status, 0);
    assert_eq!(h.world().arrays[0].array_state, "read-auto");
    d.disks.get_mut("hdd").unwrap().id = Some(NEW_ID.into());
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p)[..2], ["read_write", "add_member"], "{:?}", ops(&p));
    apply(&h, &d, Policy::default()).unwrap();
    assert_ne!(h.world().arrays[0].array_state, "read-auto");
    assert_hybrid_again(&h, "sdc");
}

/// A disk md failed stays declared in the file beside its replacement: while the mirror is short
/// of members its copy is not stale for sure, so erasing its superblock needs --allow-destroy;
/// once the new member is in sync the mirror is complete without it, and the erase is a safe
/// step that the next apply makes.
#[test]
fn a_former_member_is_erased_freely_only_beside_a_complete_mirror() {
    let (mut d, h) = pair_with_new_disk(
        &[
            &format!("mdadm /dev/md/md-home --fail {OLD}"),
            &format!("mdadm /dev/md/md-home --remove {OLD}"),
        ],
        false,
    );
    let mut new = d.disks["hdd"].clone();
    new.name = "hdd2".into();
    new.id = Some(NEW_ID.into());
    new.serial = None;
    d.disks.insert("hdd2".into(), new);
    d.mirrors.get_mut("md-home").unwrap().members = vec!["ssd".into(), "hdd2".into()];
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("still carries the md superblock")
                && r.fix.contains("--allow-destroy")),
        "{:#?}",
        p.refused
    );
    // The rebuild onto the new disk first (the refusal holds only the erase back).
    d.disks.remove("hdd");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut declared = d.clone();
    let (full, _) = example("single-pair");
    declared
        .disks
        .insert("hdd".into(), full.disks["hdd"].clone());
    let p = plan_for(&h, &declared, Policy::default());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    assert_eq!(ops(&p), vec!["zero_superblock"]);
    assert_eq!(p.steps[0].risk, Risk::Safe);
    apply(&h, &declared, Policy::default()).unwrap();
    let p = plan_for(&h, &declared, Policy::default());
    assert!(p.steps.is_empty() && p.refused.is_empty(), "{:#?}", p);
}

/// The SSD gone (pulled, then a reboot): its media is not known any more (no `media:`, no
/// `write_cache`), and the HDD left stays write-mostly, in the plan and in "with the refusals
/// fixed" alike: a missing member keeps the media it was last seen with (docs/safety.md).
#[test]
fn the_ssd_gone_leaves_the_hdds_write_mostly_flag_alone() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let ssd = h
        .world()
        .block_devices
        .iter()
        .find(|b| !b.rotational && b.parent.is_none())
        .unwrap()
        .kname
        .clone();
    h.pull_disk(&ssd);
    let p = plan_for(&h, &d, Policy::default());
    assert!(!p.refused.is_empty(), "a missing disk is refused");
    let cleared: Vec<_> = p
        .steps
        .iter()
        .filter(|s| matches!(&s.step, Step::SetWriteMostly(w) if !w.on))
        .collect();
    assert!(cleared.is_empty(), "{cleared:?}");
    h.reboot_without_disk(&ssd);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(&s.step, Step::SetWriteMostly(w) if !w.on)),
        "{:?}",
        ops(&p)
    );
}
