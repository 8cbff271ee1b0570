//! An array whose resync is frozen (`sync_action` = frozen) never resumes by itself: a change
//! that needs md to resync, recover or take a bitmap is refused at plan time, and a wait that
//! meets a frozen array during apply gives up with how to thaw it instead of waiting forever.
//! A degraded array keeps its bitmap: it is what a missing member's --re-add copies from.
//! An array assembled but not started takes its bitmap and write-mostly flags from its members'
//! superblocks: the plan that starts it makes the rest of its changes too, and apply converges.

use crate::common;
use common::*;
use hyraid::apply::{self, ApplyError};
use hyraid::host::Host;
use hyraid::plan::{Policy, Step};
use hyraid::sim::SimHost;

/// single-pair built and in sync.
fn built() -> (hyraid::config::Desired, SimHost, String) {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let md = h.world().array_named("md-home").unwrap().kname.clone();
    (d, h, md)
}

fn freeze(h: &SimHost, md: &str) {
    h.write_file(&format!("/sys/block/{md}/md/sync_action"), "frozen\n")
        .unwrap();
}

#[test]
fn a_change_on_a_frozen_array_is_refused_and_plan_returns() {
    let (mut d, h, md) = built();
    freeze(&h, &md);
    // Nothing to change: a frozen array in sync plans nothing, and status says it is frozen.
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
    let found = hyraid::status::status(&observe(&h, &d), Some(&d), None);
    assert!(
        found
            .iter()
            .any(|f| f.message.contains("frozen") && f.fix.contains("echo idle")),
        "{found:#?}"
    );
    // A new bitmap chunk needs md: refused, with how to thaw it; nothing runs.
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(128 << 20);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:#?}", p.steps);
    let r = p
        .refused
        .iter()
        .find(|r| r.reason.contains("frozen"))
        .unwrap();
    assert!(
        r.fix
            .contains(&format!("echo idle > /sys/block/{md}/md/sync_action")),
        "{r:?}"
    );
    assert!(matches!(
        apply(&h, &d, Policy::default()),
        Err(ApplyError::Refused { .. })
    ));
    // Thawed, the same file applies and converges.
    h.write_file(&format!("/sys/block/{md}/md/sync_action"), "idle\n")
        .unwrap();
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

#[test]
fn a_wait_on_an_array_frozen_during_apply_gives_up_with_the_fix() {
    // Built, its initial resync still running: a new chunk waits for the resync first.
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    let md = h.world().array_named("md-home").unwrap().kname.clone();
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(128 << 20);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    assert!(
        matches!(p.steps[0].step, Step::WaitIdle(_)),
        "{:#?}",
        p.steps
    );
    // Someone freezes the array once apply has planned.
    let mut confirm = |_: &hyraid::plan::Plan| {
        freeze(&h, &md);
        Ok(())
    };
    let e = apply::apply(
        apply::Source::Desired(Box::new(d.clone())),
        &h,
        &apply::Options::default(),
        &mut confirm,
        &mut std::io::sink(),
    )
    .unwrap_err();
    assert!(matches!(e, ApplyError::Frozen { index: 1, .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains(&format!("echo idle > /sys/block/{md}/md/sync_action")),
        "{text}"
    );
    let a = h.world().array_named("md-home").unwrap().clone();
    assert_eq!(a.sync_action, "frozen");
    assert!(a.bitmap.is_some(), "nothing after the wait ran");
}

#[test]
fn a_degraded_array_keeps_its_bitmap_until_its_member_returns() {
    let (mut d, h, md) = built();
    let o = run(&h, &["mdadm", &format!("/dev/{md}"), "--fail", "/dev/sdb"]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let mut w = h.world();
    w.block_devices
        .retain(|b| b.kname != "sdb" && b.parent.as_deref() != Some("sdb"));
    for a in w.arrays.iter_mut() {
        a.members.retain(|m| m.kname != "sdb");
    }
    let h = SimHost::new(w);
    assert_eq!(h.world().array_named("md-home").unwrap().degraded, 1);
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(128 << 20);
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(s.step, Step::RemoveBitmap(_))),
        "{:#?}",
        p.steps
    );
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("degraded") && r.reason.contains("--re-add")),
        "{:#?}",
        p.refused
    );
}

/// A member already recovering into its slot is coming back: the bitmap change waits for the
/// recovery instead of being refused (an apply stopped at that wait runs again).
#[test]
fn a_recovering_member_counts_as_back_for_the_bitmap() {
    let (mut d, h, _) = built();
    let hdd = "/dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001";
    for cmd in ["--fail", "--remove", "--add"] {
        let o = run(&h, &["mdadm", "/dev/md/md-home", cmd, hdd]);
        assert_eq!(o.status, 0, "{cmd}: {}", o.stderr);
    }
    let a = h.world().array_named("md-home").unwrap().clone();
    assert!(a.degraded > 0 && !a.is_idle(), "{a:?}");
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(128 << 20);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    let at = |f: fn(&Step) -> bool| p.steps.iter().position(|s| f(&s.step));
    let wait = at(|s| matches!(s, Step::WaitIdle(_))).expect("a wait");
    let remove = at(|s| matches!(s, Step::RemoveBitmap(_))).expect("the bitmap removed");
    assert!(wait < remove, "{:#?}", p.steps);
    assert!(at(|s| matches!(s, Step::AddBitmap(_))).is_some());
}

/// The HDD was pulled before a reboot and a blank disk is in its bay: md assembled the array
/// without starting it, and sysfs shows no bitmap. The file names the new disk and a larger
/// bitmap chunk. The members' superblocks (`mdadm --examine`, `mdadm -X`) say the bitmap the
/// array takes when it runs, so the plan that starts it also makes the new chunk (after the
/// recovery it starts), and the one apply converges: nothing is left for a second run.
#[test]
fn an_array_started_by_the_plan_gets_the_rest_of_its_changes_in_the_same_plan() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut w = h.world();
    plug_blank_disk(
        &mut w,
        "sdb",
        "sdc",
        32,
        "ZA4000009",
        "ata-ST500DM009-2F110A_ZA4000009",
    );
    let h = SimHost::new(w);
    h.reboot_without_disk("sdb");
    let o = observe(&h, &d);
    let a = o.array_named("md-home").unwrap();
    assert_eq!(a.array_state, "inactive");
    assert!(a.superblock_read, "{a:?}");
    assert_eq!(a.bitmap.as_ref().map(|b| b.chunk), Some(64 << 20), "{a:?}");
    d.disks.get_mut("hdd").unwrap().id = Some("ata-ST500DM009-2F110A_ZA4000009".into());
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(128 << 20);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    assert_eq!(
        ops(&p),
        [
            "start_array",
            "add_member",
            "wait_idle",
            "remove_bitmap",
            "add_bitmap"
        ]
    );
    assert!(
        !p.notes.iter().any(|n| n.contains("checked once it runs")),
        "{:?}",
        p.notes
    );
    apply(&h, &d, Policy::default()).expect("one apply converges");
    h.finish_syncs();
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
    let a = h.world().array_named("md-home").unwrap().clone();
    assert_eq!(a.bitmap.map(|b| b.chunk), Some(128 << 20));
}
