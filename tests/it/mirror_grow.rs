//! A mirror of two partitions grown into the free space after them: growpart on each member,
//! `mdadm --grow --size=max`, a wait for the resync of the new region, `pvresize`; every stop
//! converges, and what md could not follow is refused at plan time.

use crate::common;
use common::luks::encrypted_partitions_file;
use common::*;
use hyraid::config::Desired;
use hyraid::host::Host;
use hyraid::plan::step::Command;
use hyraid::plan::{Policy, Risk};
use hyraid::sim::{Fault, SimHost};

const HDD0: &str = "/dev/disk/by-id/ata-ST1000LM048-2E7172_WDE00001";
const HDD1: &str = "/dev/disk/by-id/ata-ST1000LM048-2E7172_WDE00002";

fn file(size0: &str, size1: &str) -> Desired {
    mirrored_partitions_file(size0, size1)
}

/// The mirror built on 500 GiB partitions, in sync.
fn built() -> SimHost {
    let (_, h) = example("microserver-partitioned");
    apply(&h, &file("500GiB", "500GiB"), Policy::default()).unwrap();
    h.finish_syncs();
    assert!(
        plan_for(&h, &file("500GiB", "500GiB"), Policy::default())
            .steps
            .is_empty()
    );
    h
}

fn argvs(p: &hyraid::plan::Plan) -> Vec<String> {
    p.steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| match c {
            Command::Run { argv, .. } => argv.join(" "),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn both_members_grow_then_the_array_then_the_pv() {
    let h = built();
    let d = file("rest", "rest");
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    assert_eq!(
        ops(&p),
        [
            "grow_partition",
            "grow_partition",
            "grow_array_size",
            "wait_idle",
            "resize_pv"
        ]
    );
    assert_eq!(
        argvs(&p),
        vec![
            format!("growpart {HDD0} 1"),
            "udevadm settle".into(),
            format!("growpart {HDD1} 1"),
            "udevadm settle".into(),
            "mdadm --grow /dev/md/data --size=max".into(),
            "WaitIdle { array: \"data\" }".into(),
            "pvresize /dev/md/data".into(),
        ]
    );
    assert!(p.steps.iter().all(|s| s.risk == Risk::Safe));
    let before = h.world().array_named("data").unwrap().size_kib;
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    let a = w.array_named("data").unwrap();
    let part = w.by_id("ata-ST1000LM048-2E7172_WDE00001-part1").unwrap();
    let offset = a.members[0].data_offset.unwrap();
    assert_eq!(a.size_kib, (part.size / 512 - offset) / 2);
    assert!(a.size_kib > before + (400 << 20));
    assert_eq!(a.sync_action, "idle");
    assert_eq!(w.pv(&a.kname).unwrap().dev_size, a.size_kib * 1024);
    let again = plan_for(&h, &d, Policy::default());
    assert!(again.steps.is_empty(), "{:?}", again.steps);
    assert!(again.refused.is_empty(), "{:?}", again.refused);
}

#[test]
fn mdadm_grow_size_max_answers_like_mdadm_and_the_kernel() {
    let h = built();
    let k = h.world().array_named("data").unwrap().kname.clone();
    let comp = |h: &SimHost| {
        h.read_file(&format!("/sys/block/{k}/md/component_size"))
            .unwrap()
    };
    let before = h.world().array_named("data").unwrap().size_kib;
    let g = run(&h, &["mdadm", "--grow", "/dev/md/data", "--size=max"]);
    assert_eq!(
        (g.status, g.stderr.as_str()),
        (
            0,
            format!("mdadm: component size of /dev/md/data unchanged at {before}K\n").as_str()
        )
    );
    assert_eq!(run(&h, &["growpart", HDD0, "1"]).status, 0);
    assert_eq!(run(&h, &["growpart", HDD1, "1"]).status, 0);
    assert_eq!(comp(&h), format!("{before}\n"));
    let g = run(&h, &["mdadm", "--grow", "/dev/md/data", "--size=max"]);
    let after = h.world().array_named("data").unwrap().size_kib;
    assert_eq!(
        (g.status, g.stderr.as_str()),
        (
            0,
            format!("mdadm: component size of /dev/md/data has been set to {after}K\n").as_str()
        )
    );
    assert_eq!(comp(&h), format!("{after}\n"));
    // The new region is resynced from the old end.
    let a = h.world().array_named("data").unwrap().clone();
    assert_eq!(a.sync_action, "resync");
    let (from, to) = a.sync_completed.unwrap();
    assert_eq!((from, to / 2), (before * 2, after));
    let g = run(&h, &["mdadm", "--grow", "/dev/md/data", "--size=max"]);
    assert_eq!(
        (g.status, g.stderr.as_str()),
        (
            1,
            "mdadm: /dev/md/data is performing resync/recovery and cannot be reshaped\n"
        )
    );
}

#[test]
fn every_stop_converges() {
    for needle in [
        format!("growpart {HDD1}"),
        "mdadm --grow".into(),
        "pvresize".into(),
    ] {
        let h = built();
        let d = file("rest", "rest");
        h.inject_fault(Fault {
            needle: needle.clone(),
            status: 137,
            stderr: "Killed".into(),
        });
        assert!(apply(&h, &d, Policy::default()).is_err(), "{needle}");
        h.clear_faults();
        let p = plan_for(&h, &d, Policy::default());
        assert!(p.refused.is_empty(), "{needle}: {:?}", p.refused);
        assert!(
            ops(&p).contains(&"resize_pv".to_string()),
            "{needle}: {:?}",
            ops(&p)
        );
        apply(&h, &d, Policy::default()).unwrap();
        h.finish_syncs();
        let again = plan_for(&h, &d, Policy::default());
        assert!(again.steps.is_empty(), "{needle}: {:?}", again.steps);
        let w = h.world();
        let a = w.array_named("data").unwrap();
        assert_eq!(w.pv(&a.kname).unwrap().dev_size, a.size_kib * 1024);
    }
}

#[test]
fn stopped_during_the_resync_the_pv_waits_for_it() {
    let h = built();
    let d = file("rest", "rest");
    for c in [
        vec!["growpart", HDD0, "1"],
        vec!["growpart", HDD1, "1"],
        vec!["mdadm", "--grow", "/dev/md/data", "--size=max"],
    ] {
        assert_eq!(run(&h, &c).status, 0);
    }
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p), ["wait_idle", "resize_pv"]);
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn a_member_that_cannot_grow_the_same_is_refused_and_nothing_grows() {
    let h = built();
    let p = plan_for(&h, &file("rest", "500GiB"), Policy::default());
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    assert_eq!(p.refused.len(), 1, "{:?}", p.refused);
    let r = &p.refused[0];
    assert_eq!(r.object, "disk hdd0");
    assert!(
        r.reason
            .contains("member of /dev/md/data, which would not follow")
            && r.reason.contains("hdd1:raid (stays at "),
        "{}",
        r.reason
    );
}

#[test]
fn a_resyncing_array_is_refused() {
    let h = built();
    let mut w = h.world();
    let a = w
        .arrays
        .iter_mut()
        .find(|a| a.name.as_deref() == Some("data"))
        .unwrap();
    a.sync_action = "check".into();
    a.sync_completed = Some((0, a.size_kib * 2));
    let h = SimHost::new(w);
    let p = plan_for(&h, &file("rest", "rest"), Policy::default());
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "mirror data" && r.reason.contains("busy (check)")),
        "{:?}",
        p.refused
    );
}

#[test]
fn the_plan_reads_as_growpart_twice_mdadm_and_pvresize() {
    let h = built();
    let p = plan_for(&h, &file("rest", "rest"), Policy::default());
    let text = hyraid::render::text(&p, false);
    eprintln!("{text}");
    assert!(text.contains("grow the array from 499.87 GiB to"), "{text}");
    let p = plan_for(&h, &file("rest", "500GiB"), Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
}

/// The encrypted mirror built on 500 GiB partitions, in sync.
fn encrypted_built() -> SimHost {
    let (_, h) = example("microserver-partitioned");
    let d = encrypted_partitions_file("500GiB", "500GiB");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    h
}

#[test]
fn an_encrypted_mirror_grows_its_mapping_then_its_pv_and_every_stop_converges() {
    let built = encrypted_built;
    let d = encrypted_partitions_file("rest", "rest");
    let h = built();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    let o = ops(&p);
    assert_eq!(
        o[o.len() - 3..],
        ["wait_idle", "resize_luks", "resize_pv"],
        "{o:?}"
    );
    let a = argvs(&p);
    assert_eq!(
        a[a.len() - 2..],
        [
            "cryptsetup resize --key-file /etc/hyraid/keys/data.key data_crypt".to_string(),
            "pvresize /dev/mapper/data_crypt".to_string()
        ]
    );
    let grown = |h: &SimHost| {
        let w = h.world();
        let arr = w.array_named("data").unwrap().clone();
        let map = w
            .other_devices
            .iter()
            .find(|o| o.name.as_deref() == Some("data_crypt"))
            .unwrap()
            .clone();
        assert_eq!(map.size, arr.size_kib * 1024 - (16 << 20));
        assert_eq!(w.pv(&map.kname).unwrap().dev_size, map.size);
        assert!(arr.size_kib > 900 << 20, "{}", arr.size_kib);
    };
    apply(&h, &d, Policy::default()).unwrap();
    grown(&h);
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    // Stopped after the array grew, or after the mapping did: the next apply completes it.
    for needle in ["cryptsetup resize", "pvresize"] {
        let h = built();
        h.inject_fault(Fault {
            needle: needle.into(),
            status: 137,
            stderr: "Killed".into(),
        });
        assert!(apply(&h, &d, Policy::default()).is_err(), "{needle}");
        h.clear_faults();
        let p = plan_for(&h, &d, Policy::default());
        assert!(
            ops(&p).contains(&"resize_pv".to_string()),
            "{needle}: {:?}",
            ops(&p)
        );
        apply(&h, &d, Policy::default()).unwrap();
        h.finish_syncs();
        grown(&h);
        let again = plan_for(&h, &d, Policy::default());
        assert!(again.steps.is_empty(), "{needle}: {:?}", ops(&again));
    }
}

#[test]
fn an_encrypted_mirror_grown_while_its_key_changes_is_resized_with_the_key_that_opens_it() {
    let h = encrypted_built();
    let mut d = encrypted_partitions_file("rest", "rest");
    let e = d
        .mirrors
        .get_mut("data")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap();
    e.key_file = "/etc/hyraid/keys/data-new.key".into();
    let p = plan_for(&h, &d, Policy::default());
    let a = argvs(&p);
    assert!(
        a.contains(
            &"cryptsetup resize --key-file /etc/hyraid/keys/data.key data_crypt".to_string()
        ),
        "{a:?}"
    );
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let again = plan_for(&h, &d, Policy::default());
    assert!(again.steps.is_empty(), "{:?}", ops(&again));
    let w = h.world();
    let map = w
        .other_devices
        .iter()
        .find(|o| o.name.as_deref() == Some("data_crypt"))
        .unwrap();
    assert_eq!(
        map.size,
        w.array_named("data").unwrap().size_kib * 1024 - (16 << 20)
    );
}
