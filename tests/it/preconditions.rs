//! Every step's preconditions hold when it runs: bitmap changes on an auto-read-only array
//! (after boot or assembly) turn it read-write first and wait for the resync that then starts;
//! an explicitly read-only array is refused; a missing write-mostly member never aborts the plan.

use crate::common;
use common::*;
use hyraid::plan::step::AddBitmap;
use hyraid::plan::{Policy, Step};
use hyraid::sim::SimHost;

/// single-pair built and idle, then `edit` applied to its array (as a reboot leaves it).
fn built_pair(
    edit: impl FnOnce(&mut hyraid::observe::MdArray),
) -> (hyraid::config::Desired, SimHost) {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut w = h.world();
    let a = w
        .arrays
        .iter_mut()
        .find(|a| a.name.as_deref() == Some("md-home"))
        .unwrap();
    edit(a);
    (d, SimHost::new(w))
}

#[test]
fn adding_a_bitmap_to_an_auto_read_only_array_with_a_pending_resync() {
    let (mut d, h) = built_pair(|a| {
        a.array_state = "read-auto".into();
        a.resync_pending = true;
        a.bitmap = None;
    });
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(128 << 20);
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&p),
        ["read_write", "wait_idle", "add_bitmap"],
        "{:#?}",
        p.steps
    );
    let cmds: Vec<String> = p.steps[0]
        .step
        .commands()
        .iter()
        .map(hyraid::render::command_line)
        .collect();
    assert_eq!(cmds, ["mdadm --readwrite /dev/md/md-home"]);
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    let a = w.array_named("md-home").unwrap();
    assert_eq!(a.bitmap.as_ref().map(|b| b.chunk), Some(128 << 20));
    assert_ne!(a.array_state, "read-auto");
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

#[test]
fn re_chunking_the_bitmap_of_an_auto_read_only_array() {
    let (mut d, h) = built_pair(|a| a.array_state = "read-auto".into());
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(256 << 20);
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&p),
        ["read_write", "wait_idle", "remove_bitmap", "add_bitmap"],
        "{:#?}",
        p.steps
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

#[test]
fn the_simulated_kernel_refuses_bitmap_changes_on_a_read_only_array() {
    // What the steps above guard against, as the real kernel does it.
    let (_, h) = built_pair(|a| a.array_state = "read-auto".into());
    let o = run(&h, &["mdadm", "--grow", "/dev/md/md-home", "--bitmap=none"]);
    assert_eq!(o.status, 1);
    assert!(o.stderr.contains("failed to remove internal bitmap"));
    // --readwrite on an array that is already writable fails (RESTART_ARRAY_RW: EBUSY).
    let o = run(&h, &["mdadm", "--readwrite", "/dev/md/md-home"]);
    assert_eq!(o.status, 0);
    let o = run(&h, &["mdadm", "--readwrite", "/dev/md/md-home"]);
    assert_eq!(o.status, 1);
}

#[test]
fn an_explicitly_read_only_array_is_refused_not_switched() {
    let (mut d, h) = built_pair(|a| a.array_state = "readonly".into());
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(256 << 20);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        !p.steps.iter().any(|s| matches!(s.step, Step::ReadWrite(_))),
        "{:#?}",
        p.steps
    );
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "mirror md-home" && r.reason.contains("read-only")),
        "{:#?}",
        p.refused
    );
}

#[test]
fn a_saved_plan_goes_stale_when_the_array_turns_auto_read_only() {
    let (mut d, h) = built_pair(|_| {});
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(256 << 20);
    let obs = observe(&h, &d);
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    let mut w = h.world();
    w.arrays[0].array_state = "read-auto".into();
    let h = SimHost::new(w);
    let now = observe(&h, &d);
    assert!(matches!(
        hyraid::apply::check_saved(&p, &h, &now, &hyraid::plan::Policy::destroying(false)),
        Err(hyraid::apply::ApplyError::Stale { .. })
    ));
}

#[test]
fn a_missing_write_mostly_hdd_never_aborts_the_plan() {
    // data0 with write-behind; its HDD (hdd0, sdc) is gone; the file changes data1.
    let (mut d, h) = example("microserver-gen8");
    d.mirrors.get_mut("data0").unwrap().write_behind = 256;
    d.disks.get_mut("hdd0").unwrap().write_cache = None; // nothing in the file says "HDD"
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut w = h.world();
    w.block_devices.retain(|b| b.kname != "sdc");
    let a = w
        .arrays
        .iter_mut()
        .find(|a| a.name.as_deref() == Some("data0"))
        .unwrap();
    a.members.retain(|m| m.kname != "sdc");
    a.degraded = 1;
    let h = SimHost::new(w);
    d.mirrors.get_mut("data1").unwrap().bitmap_chunk = Some(128 << 20);
    let p = plan_for(&h, &d, Policy::default());
    // The missing disk is the one refusal (never "matches the file"); the rest is planned.
    assert!(
        p.refused.len() == 1 && p.refused[0].object == "disk hdd0",
        "{:#?}",
        p.refused
    );
    assert!(
        p.steps.iter().any(
            |s| matches!(&s.step, Step::AddBitmap(AddBitmap { array, .. }) if array == "data1")
        ),
        "the other mirror is planned: {:#?}",
        p.steps
    );
    assert!(
        !p.steps
            .iter()
            .any(|s| s.step.object().to_string() == "mirror data0"),
        "nothing is changed on data0 for want of its HDD: {:#?}",
        p.steps
    );
}
