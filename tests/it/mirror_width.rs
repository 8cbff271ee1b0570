//! A mirror's width follows the file: a disk beyond the array's slots joins as a spare and the
//! array grows (seed 002: an NVMe added to a 2-HDD mirror, the HDDs then write-mostly); a member
//! the file no longer names leaves a 3-way mirror (fail, remove, shrink) only with
//! --allow-destroy; a mirror is never taken below two members.

use crate::common;
use common::*;
use hyraid::config::{Desired, WriteMostly};
use hyraid::host::Host;
use hyraid::plan::{Plan, Policy, Risk, Step};
use hyraid::sim::SimHost;

const ALLOW: Policy = Policy::destroying(true);
const NVME: &str = "/dev/disk/by-id/nvme-Samsung_SSD_980_PRO_2TB_S6B0NL0T900001X";
/// hdd1 as hyraid names it in commands: its stable WWN link.
const HDD1: &str = "/dev/disk/by-id/wwn-0x50014ee2b0000002";
const WAIT: &str = r#"md=/sys/block/$(basename "$(readlink -f /dev/md/tank)")/md; while [ "$(cat $md/sync_action)" != idle ] || { [ "$(cat $md/resync_start)" != none ] && ! grep -qx -e read-auto -e readonly $md/array_state; }; do sleep 1; done"#;

/// The commands of a plan, as the shell script prints them.
fn commands(p: &Plan) -> Vec<String> {
    p.steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::render::command_line(&c))
        .collect()
}

/// The nvme-plus-two-hdd box with the mirror built of the two HDDs only (no write-mostly
/// member, so no write-behind), idle: the situation of seed 002 before the NVMe.
fn two_hdd_mirror() -> (Desired, SimHost) {
    let (mut d, h) = example("nvme-plus-two-hdd");
    let m = d.mirrors.get_mut("tank").unwrap();
    m.members = vec!["hdd0".into(), "hdd1".into()];
    m.write_mostly = WriteMostly::Auto;
    m.write_behind = 0;
    d.disks.remove("nvme0");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}

#[test]
fn an_nvme_joins_a_two_hdd_mirror_and_the_hdds_become_write_mostly() {
    let (_, h) = two_hdd_mirror();
    let (mut d, _) = example("nvme-plus-two-hdd");
    let m = d.mirrors.get_mut("tank").unwrap();
    m.write_mostly = WriteMostly::Auto;
    m.write_behind = 0;
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    let md = h.world().array_named("tank").unwrap().kname.clone();
    assert_eq!(
        commands(&p),
        vec![
            format!("mdadm /dev/md/tank --add {NVME}"),
            "mdadm --grow /dev/md/tank --raid-devices=3".into(),
            WAIT.into(),
            format!("printf '%s\\n' writemostly > /sys/block/{md}/md/dev-sda/state"),
            format!("printf '%s\\n' writemostly > /sys/block/{md}/md/dev-sdb/state"),
        ]
    );
    assert!(
        p.steps.iter().all(|s| s.risk == Risk::Safe),
        "{:#?}",
        p.steps
    );
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let w = h.world();
    let a = w.array_named("tank").unwrap();
    assert_eq!((a.raid_disks, a.degraded, a.members.len()), (3, 0, 3));
    assert!(a.members.iter().all(|x| x.has("in_sync")));
    assert_eq!(a.members.iter().filter(|x| x.write_mostly()).count(), 2);
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    let mdstat = h.read_file("/proc/mdstat").unwrap();
    assert!(mdstat.contains("[3/3] [UUU]"), "{mdstat}");
    let rd = h
        .read_file(&format!("/sys/block/{md}/md/raid_disks"))
        .unwrap();
    assert_eq!(rd.trim(), "3");
}

/// hdd1 failed, removed, its superblock erased and tank shrunk to 2: the commands, in order.
fn hdd1_leaves() -> Vec<String> {
    vec![
        format!("mdadm /dev/md/tank --fail {HDD1}"),
        format!("mdadm /dev/md/tank --remove {HDD1}"),
        format!("mdadm --zero-superblock {HDD1}"),
        "mdadm --grow /dev/md/tank --raid-devices=2".into(),
    ]
}

/// The 3-way nvme-plus-two-hdd mirror built; the file then names only nvme0 and hdd0.
fn three_way_without_hdd1() -> (Desired, SimHost) {
    let (mut d, h) = example("nvme-plus-two-hdd");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let m = d.mirrors.get_mut("tank").unwrap();
    m.members = vec!["nvme0".into(), "hdd0".into()];
    m.write_mostly = WriteMostly::List(vec!["hdd0".into()]);
    d.disks.remove("hdd1");
    (d, h)
}

#[test]
fn a_member_leaves_a_three_way_mirror_only_with_allow_destroy() {
    let (d, h) = three_way_without_hdd1();
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.steps.is_empty(), "{:#?}", p.steps);
    assert_eq!(p.refused.len(), 1, "{:#?}", p.refused);
    assert!(p.refused[0].reason.contains("permanent loss of redundancy"));
    assert!(p.refused[0].fix.contains("--allow-destroy"));
    assert!(matches!(
        apply(&h, &d, Policy::default()),
        Err(hyraid::apply::ApplyError::Refused { .. })
    ));

    let p = plan_for(&h, &d, ALLOW);
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    assert_eq!(commands(&p), hdd1_leaves());
    assert!(p.steps.iter().all(|s| s.risk == Risk::Degrades));
    assert!(matches!(p.steps[0].step, Step::RemoveMember(_)));
    apply(&h, &d, ALLOW).unwrap();
    let w = h.world();
    let a = w.array_named("tank").unwrap();
    assert_eq!((a.raid_disks, a.degraded, a.members.len()), (2, 0, 2));
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    assert!(plan_for(&h, &d, ALLOW).steps.is_empty());
    let mdstat = h.read_file("/proc/mdstat").unwrap();
    assert!(mdstat.contains("[2/2] [UU]"), "{mdstat}");
}

#[test]
fn a_two_way_mirror_is_never_taken_to_one_member() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    // The file cannot say it (validation wants two members); the planner refuses it anyway.
    d.mirrors.get_mut("md-home").unwrap().members = vec!["ssd".into()];
    d.disks.remove("hdd");
    for policy in [Policy::default(), ALLOW] {
        let p = plan_for(&h, &d, policy.clone());
        assert!(
            p.refused
                .iter()
                .any(|r| r.reason.contains("never takes a mirror below 2")),
            "{:#?}",
            p.refused
        );
        assert!(
            !p.steps
                .iter()
                .any(|s| matches!(s.step, Step::RemoveMember(_) | Step::GrowArray(_)))
        );
    }
}

#[test]
fn mdadm_refuses_to_shrink_below_the_members_it_holds() {
    let (_, h) = three_way_without_hdd1();
    let o = run(&h, &["mdadm", "--grow", "/dev/md/tank", "--raid-devices=2"]);
    assert_eq!(o.status, 1);
    assert_eq!(
        o.stderr,
        "mdadm: Cannot set raid-devices for /dev/md/tank: Device or resource busy\n"
    );
}

/// single-pair built; two blank disks `sdc` and `sdd` like the HDD are plugged in.
fn pair_with_two_new_disks() -> (Desired, SimHost) {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut w = h.world();
    for (k, minor, serial) in [("sdc", 32, "ZA4000098"), ("sdd", 48, "ZA4000099")] {
        plug_blank_disk(
            &mut w,
            "sdb",
            k,
            minor,
            serial,
            &format!("ata-ST500DM009-2F110A_{serial}"),
        );
    }
    (d, SimHost::new(w))
}

/// `d` applied and the copies made: md-home has `width` slots, none missing, sdb is out of it,
/// and the plan is empty.
fn applied_without_sdb(h: &SimHost, d: &Desired, width: u32) {
    apply(h, d, Policy::default()).unwrap();
    h.finish_syncs();
    let w = h.world();
    let a = w.array_named("md-home").unwrap();
    assert_eq!((a.raid_disks, a.degraded), (width, 0));
    assert!(a.member("sdb").is_none());
    let p = plan_for(h, d, Policy::default());
    assert!(
        p.steps.is_empty() && p.refused.is_empty(),
        "{}",
        hyraid::render::text(&p, false)
    );
}

fn disk(d: &mut Desired, name: &str, serial: &str) {
    let mut spec = d.disks["hdd"].clone();
    spec.name = name.into();
    spec.id = Some(format!("ata-ST500DM009-2F110A_{serial}"));
    spec.serial = None;
    d.disks.insert(name.into(), spec);
}

#[test]
fn one_leaves_two_join_a_hot_replace_then_a_grow() {
    let (mut d, h) = pair_with_two_new_disks();
    disk(&mut d, "hdd2", "ZA4000098");
    disk(&mut d, "hdd3", "ZA4000099");
    d.disks.remove("hdd");
    d.mirrors.get_mut("md-home").unwrap().members =
        vec!["ssd".into(), "hdd2".into(), "hdd3".into()];
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    let wait = WAIT.replace("/dev/md/tank", "/dev/md/md-home");
    assert_eq!(
        commands(&p),
        vec![
            "mdadm /dev/md/md-home --add --write-mostly /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000098".to_string(),
            "mdadm /dev/md/md-home --replace /dev/disk/by-id/wwn-0x5000c500c0000001 --with /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000098".into(),
            "mdadm /dev/md/md-home --add --write-mostly /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000099".into(),
            wait.clone(),
            "mdadm /dev/md/md-home --remove failed".into(),
            "mdadm --grow /dev/md/md-home --raid-devices=3".into(),
            wait,
        ]
    );
    // Redundancy never drops: no step degrades.
    assert!(
        p.steps.iter().all(|s| s.risk == Risk::Safe),
        "{:#?}",
        p.steps
    );
    applied_without_sdb(&h, &d, 3);
}

#[test]
fn a_disk_smaller_than_the_array_is_refused_at_plan_time() {
    let (mut d, h) = pair_with_two_new_disks();
    let mut w = h.world();
    w.block_devices
        .iter_mut()
        .find(|b| b.kname == "sdc")
        .unwrap()
        .size /= 2;
    let h = SimHost::new(w);
    disk(&mut d, "hdd2", "ZA4000098");
    d.mirrors
        .get_mut("md-home")
        .unwrap()
        .members
        .push("hdd2".into());
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:#?}", p.steps);
    assert!(
        p.refused[0]
            .reason
            .contains("is smaller than the array's members")
            && p.refused[0].reason.contains("cannot shrink"),
        "{:#?}",
        p.refused
    );
}

/// The removed member's superblock is erased with it; a removal killed before that leaves a
/// former member, erased next time when the file still names the disk, noted when it does not.
#[test]
fn a_removed_member_loses_its_superblock_and_an_interrupted_erase_is_finished() {
    let (d, h) = three_way_without_hdd1();
    let hdd1 = |h: &SimHost| {
        h.world()
            .by_id("wwn-0x50014ee2b0000002")
            .unwrap()
            .signatures
            .clone()
            .unwrap_or_default()
    };
    assert!(hdd1(&h).iter().any(|s| s.kind == "linux_raid_member"));
    apply(&h, &d, ALLOW).unwrap();
    assert!(
        !hdd1(&h).iter().any(|s| s.kind == "linux_raid_member"),
        "{:?}",
        hdd1(&h)
    );

    // Killed after --remove: the disk keeps the superblock of an array it left.
    let (d, h) = three_way_without_hdd1();
    h.inject_fault(hyraid::sim::Fault {
        needle: "--zero-superblock".into(),
        status: 137,
        stderr: "Killed".into(),
    });
    assert!(apply(&h, &d, ALLOW).is_err());
    h.clear_faults();
    // The file no longer names hdd1: the rest of the removal is finished, the erase said.
    apply(&h, &d, ALLOW).unwrap();
    let p = plan_for(&h, &d, ALLOW);
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains(&format!("mdadm --zero-superblock {HDD1}"))),
        "{:?}",
        p.notes
    );
    // The file still names hdd1 (not as a member): the mirror runs complete without it, so its
    // copy is stale and the erase finishes the removal, with or without --allow-destroy (the
    // removal was the destroying step, and it is done).
    let (full, _) = example("nvme-plus-two-hdd");
    let mut named = d.clone();
    named
        .disks
        .insert("hdd1".into(), full.disks["hdd1"].clone());
    let p = plan_for(&h, &named, Policy::default());
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    assert_eq!(
        commands(&p),
        vec![format!("mdadm --zero-superblock {HDD1}")]
    );
    assert_eq!(p.steps[0].risk, Risk::Safe);
    assert!(
        p.steps[0].reason.contains("runs complete without it"),
        "{}",
        p.steps[0].reason
    );
    apply(&h, &named, Policy::default()).unwrap();
    assert!(plan_for(&h, &named, ALLOW).steps.is_empty());
    assert!(!hdd1(&h).iter().any(|s| s.kind == "linux_raid_member"));
}

/// A joining disk must hold the array's size after the members' data offset (mdadm 4.2 checks
/// its room past that offset, not its raw size): one that is larger than the array but not by
/// the offset is refused at plan time; one with exactly the room joins.
#[test]
fn a_joining_disk_needs_room_for_the_data_offset() {
    for (extra_sectors, fits) in [(2048u64, false), (0, true)] {
        let (mut d, h) = two_hdd_mirror();
        let a = h.world().array_named("tank").unwrap().clone();
        let offset = a.members[0].data_offset.expect("sysfs dev-*/offset");
        assert!(offset > 2048, "mdadm's default data offset: {offset}");
        let mut w = h.world();
        plug_blank_disk(&mut w, "sdb", "sdd", 48, "JOIN01", "ata-JOIN_DISK_JOIN01");
        let sectors = a.size_kib * 2 + offset - extra_sectors;
        w.block_devices.last_mut().unwrap().size = sectors * 512;
        assert!(sectors * 512 > a.size_kib * 1024, "larger than the array");
        let h = SimHost::new(w);
        let mut disk = d.disks["hdd1"].clone();
        disk.name = "join".into();
        disk.id = Some("ata-JOIN_DISK_JOIN01".into());
        disk.serial = None;
        d.disks.insert("join".into(), disk);
        d.mirrors
            .get_mut("tank")
            .unwrap()
            .members
            .push("join".into());
        let p = plan_for(&h, &d, Policy::default());
        let refused = p
            .refused
            .iter()
            .any(|r| r.object == "mirror tank" && r.reason.contains("data offset"));
        assert_eq!(refused, !fits, "{:?}", p.refused);
        if !fits {
            // mdadm itself refuses it so.
            let o = run(
                &h,
                &[
                    "mdadm",
                    "/dev/md/tank",
                    "--add",
                    "/dev/disk/by-id/ata-JOIN_DISK_JOIN01",
                ],
            );
            assert_eq!(
                (o.status, o.stderr.as_str()),
                (
                    1,
                    "mdadm: /dev/disk/by-id/ata-JOIN_DISK_JOIN01 not large enough to join array\n"
                )
            );
        }
        if fits {
            apply(&h, &d, Policy::default()).unwrap();
            h.finish_syncs();
            apply(&h, &d, Policy::default()).unwrap();
            assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
        }
    }
}

/// Field case: the user takes a disk out of the mirror's `members` but leaves it declared under
/// `disks:`. The array's membership follows `members`, not the list of disks: the member
/// leaves (only with --allow-destroy), and a plan never reports "no changes" for it.
#[test]
fn a_member_dropped_from_members_leaves_though_its_disk_is_still_declared() {
    let (mut d, h) = three_way_without_hdd1();
    let (full, _) = example("nvme-plus-two-hdd");
    d.disks.insert("hdd1".into(), full.disks["hdd1"].clone());
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.steps.is_empty(), "{:#?}", p.steps);
    assert_eq!(p.refused.len(), 1, "{:#?}", p.refused);
    assert!(p.refused[0].reason.contains("permanent loss of redundancy"));
    assert!(
        p.refused[0]
            .fix
            .contains("list `hdd1` in the mirror's `members`"),
        "the fix names the file's disk, not a /dev path: {}",
        p.refused[0].fix
    );
    let p = plan_for(&h, &d, ALLOW);
    assert_eq!(commands(&p), hdd1_leaves());
    apply(&h, &d, ALLOW).unwrap();
    assert_eq!(h.world().array_named("tank").unwrap().raid_disks, 2);
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

/// The same edit with a new disk in the dropped one's place: a hot replace (redundancy never
/// drops), not a third member beside the old one.
#[test]
fn a_new_member_in_place_of_a_still_declared_disk_is_a_hot_replace() {
    let (mut d, h) = pair_with_two_new_disks();
    disk(&mut d, "hdd2", "ZA4000098");
    d.mirrors.get_mut("md-home").unwrap().members = vec!["ssd".into(), "hdd2".into()];
    assert!(d.disks.contains_key("hdd"), "the old disk stays declared");
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    assert_eq!(
        commands(&p)[..2],
        [
            "mdadm /dev/md/md-home --add --write-mostly /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000098".to_string(),
            "mdadm /dev/md/md-home --replace /dev/disk/by-id/wwn-0x5000c500c0000001 --with /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000098".into(),
        ]
    );
    assert!(!commands(&p).iter().any(|c| c.contains("--raid-devices")));
    // The replaced disk is still in the file: its stale superblock goes, so that neither a
    // reboot nor the next plan meets it.
    assert_eq!(
        commands(&p).last().unwrap(),
        "mdadm --zero-superblock /dev/disk/by-id/wwn-0x5000c500c0000001"
    );
    applied_without_sdb(&h, &d, 2);
}

/// The 3-way mirror with hdd1 gone from the machine (pulled, or dead): it runs with 2 of 3.
/// A file (say, written by `hyraid import`) that lists the two that run does not silently make
/// 2 the array's full width: the empty slot goes only with --allow-destroy.
#[test]
fn the_slot_of_a_missing_member_is_dropped_only_with_allow_destroy() {
    let (d, h) = three_way_without_hdd1();
    let mut w = h.world();
    let k = w.array_named("tank").unwrap().kname.clone();
    let gone = w
        .block_devices
        .iter()
        .find(|b| b.by_id.iter().any(|i| HDD1.ends_with(i.as_str())))
        .map(|b| b.kname.clone())
        .unwrap();
    w.block_devices
        .retain(|b| b.kname != gone && b.parent.as_deref() != Some(gone.as_str()));
    let a = w.arrays.iter_mut().find(|a| a.kname == k).unwrap();
    a.members.retain(|m| !m.kname.starts_with(gone.as_str()));
    a.degraded = 1;
    let h = SimHost::new(w);
    // `hyraid import` of this machine says so in the file it writes, right above the mirror,
    // and the plan of that file is the refusal it announces.
    let imp = hyraid::import::import(&observe(&h, &d));
    let yaml = hyraid::import::to_yaml(&imp);
    let above: Vec<&str> = yaml
        .lines()
        .skip_while(|l| *l != "mirrors:")
        .take_while(|l| !l.starts_with("  tank:"))
        .collect();
    assert!(
        above.iter().any(|l| l.starts_with(
            "  # mirror tank: md gives the array 3 slots and 2 of its disks are here"
        ) && l.contains("--allow-destroy")),
        "{yaml}"
    );
    assert!(!yaml.contains("shows no changes"), "{yaml}");
    let imported = hyraid::config::load_str("imported.yaml", &yaml).unwrap();
    let p = plan_for(&h, &imported, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("runs with 2 (1 missing)")),
        "{:#?}",
        p.refused
    );
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.steps.is_empty(), "{:#?}", p.steps);
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("runs with 2 (1 missing)")
                && r.fix.contains("--allow-destroy")),
        "{:#?}",
        p.refused
    );
    let p = plan_for(&h, &d, ALLOW);
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    assert_eq!(
        commands(&p),
        vec!["mdadm --grow /dev/md/tank --raid-devices=2".to_string()]
    );
    assert_eq!(p.steps[0].risk, Risk::Degrades);
    apply(&h, &d, ALLOW).unwrap();
    let a = h.world().array_named("tank").unwrap().clone();
    assert_eq!((a.raid_disks, a.degraded), (2, 0));
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}
