//! A PV the file drops from a VG's `pvs`: its extents moved off (`pvmove --background`, waited
//! for), then `vgreduce` and `pvremove`; a killed or stalled move resumed by the next apply; a
//! removal refused at plan time when the PVs that stay cannot take the extents, a writecache's
//! cache volume is on it, a stripe has nowhere to go, the file pins an LV, a PV of the VG is
//! missing, or LVs change in the same apply.

use crate::common;
use common::*;
use common::{two_pair_built as built, two_pair_file as file};
use hyraid::config::Desired;
use hyraid::plan::{Plan, Policy, Step};
use hyraid::sim::SimHost;

const WAIT: &str = "while lvs -a --noheadings -o lv_attr vg0 | grep -q '^ *p'; do sleep 1; done";

fn commands(p: &Plan) -> Vec<String> {
    p.steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::render::command_line(&c))
        .collect()
}

fn extents_on(h: &SimHost, lv: &str, pv_kname: &str) -> u64 {
    let w = h.world();
    w.lvm
        .lvs
        .iter()
        .find(|l| l.name == lv)
        .and_then(|l| l.extents.get(pv_kname).copied())
        .unwrap_or(0)
}

fn kname(h: &SimHost, mirror: &str) -> String {
    h.world().array_named(mirror).unwrap().kname.clone()
}

#[test]
fn a_pv_replaced_by_another_is_moved_off_reduced_and_wiped() {
    let h = built("data0", "{ data: { size: 100GiB } }");
    let (md0, md1) = (kname(&h, "data0"), kname(&h, "data1"));
    assert_eq!(extents_on(&h, "data", &md0), 25600);
    let d = file("data1", "{ data: { size: 100GiB } }");
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    assert_eq!(
        commands(&p),
        vec![
            "pvcreate /dev/md/data1",
            "vgextend vg0 /dev/md/data1",
            "pvmove --background /dev/md/data0 /dev/md/data1",
            WAIT,
            "vgreduce vg0 /dev/md/data0",
            "pvremove --yes /dev/md/data0",
        ]
    );
    assert!(p.steps.iter().all(|s| s.risk == hyraid::plan::Risk::Safe));
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(extents_on(&h, "data", &md0), 0);
    assert_eq!(extents_on(&h, "data", &md1), 25600);
    let w = h.world();
    assert!(w.pv(&md0).is_none(), "no PV left on data0");
    assert!(w.lvm.lvs.iter().all(|l| l.pvmove.is_none() && !l.locked));
    assert_eq!(w.lv("vg0", "data").unwrap().size, 100 << 30);
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn an_empty_pv_is_only_reduced_and_wiped() {
    let h = built("data0, data1", "{ data: { size: 10GiB, pvs: [data0] } }");
    let d = file("data0", "{ data: { size: 10GiB, pvs: [data0] } }");
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        commands(&p),
        vec!["vgreduce vg0 /dev/md/data1", "pvremove --yes /dev/md/data1"]
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn a_killed_move_is_resumed_and_never_started_twice() {
    let h = built("data0, data1", "{ data: { size: 100GiB } }");
    let d = file("data1", "{ data: { size: 100GiB } }");
    let md1 = kname(&h, "data1");
    // hyraid dies right after starting the move; the machine dies too: nothing polls it.
    run(
        &h,
        &["pvmove", "--background", "/dev/md/data0", "/dev/md/data1"],
    );
    h.stall_moves();
    let w = h.world();
    let mv = w.lvm.lvs.iter().find(|l| l.pvmove.is_some()).unwrap();
    assert_eq!((mv.name.as_str(), mv.hidden), ("pvmove0", true));
    assert!(w.lv("vg0", "data").unwrap().locked);
    // The observer reads it back exactly.
    let o = observe(&h, &d);
    let seen = o.lvm.lvs.iter().find(|l| l.name == "pvmove0").unwrap();
    let m = seen.pvmove.as_ref().unwrap();
    assert_eq!(m.source_kname, kname(&h, "data0"));
    assert_eq!(m.copy_percent, Some(0.0));
    assert!(o.lv("vg0", "data").unwrap().locked);
    let f = hyraid::status::status(&o, Some(&d), None);
    assert!(
        f.iter()
            .any(|f| f.object == "vg vg0"
                && f.message == "pvmove off /dev/md/data0 in progress (0.00%)"),
        "{f:#?}"
    );
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert_eq!(
        commands(&p),
        vec![
            "pvmove --background",
            WAIT,
            "vgreduce vg0 /dev/md/data0",
            "pvremove --yes /dev/md/data0",
        ]
    );
    assert!(matches!(p.steps[0].step, Step::ResumeMove(_)));
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(extents_on(&h, "data", &md1), 25600);
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    // The move was started once: the only pvmove with a PV is the first one.
    let starts = changes(&h)
        .iter()
        .filter(|c| c.starts_with("pvmove --background /dev/"))
        .count();
    assert_eq!(starts, 1);
}

#[test]
fn no_wait_stops_at_the_wait_and_the_next_apply_goes_on() {
    let h = built("data0, data1", "{ data: { size: 100GiB } }");
    let d = file("data1", "{ data: { size: 100GiB } }");
    let p = plan_for(&h, &d, Policy::default());
    let obs = observe(&h, &d);
    let mut out = Vec::new();
    let e = hyraid::apply::execute_with(
        &h,
        &p,
        &obs,
        &hyraid::apply::Journal { path: None },
        &mut out,
        &hyraid::apply::ExecOptions {
            no_wait: true,
            progress_bar: false,
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("a pvmove in vg vg0 is running (0.00%)"), "{e}");
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

fn refusal(h: &SimHost, d: &Desired) -> String {
    let p = plan_for(h, d, Policy::default());
    assert!(p.steps.is_empty() || p.refused.len() == 1, "{:#?}", p.steps);
    assert_eq!(p.refused.len(), 1, "{:#?}", p.refused);
    format!(
        "{}: {} — {}",
        p.refused[0].object, p.refused[0].reason, p.refused[0].fix
    )
}

#[test]
fn too_little_room_on_the_pvs_that_stay_is_refused() {
    let h = built(
        "data0, data1",
        "{ big: { size: 700GiB }, more: { size: 500GiB } }",
    );
    let d = file("data1", "{ big: { size: 700GiB }, more: { size: 500GiB } }");
    let r = refusal(&h, &d);
    assert!(r.contains("but the PVs that stay have"), "{r}");
    assert!(r.starts_with("vg vg0: "), "{r}");
}

#[test]
fn a_stripe_with_nowhere_to_go_is_refused() {
    let (d0, h) = example("microserver-gen8");
    apply(&h, &d0, Policy::default()).unwrap();
    h.finish_syncs();
    let mut d = d0.clone();
    d.volume_groups
        .get_mut("vg0")
        .unwrap()
        .pvs
        .retain(|r| r.name() != "data1");
    let r = refusal(&h, &d);
    // The file's own pin (nextcloud on data0, data1) is named first; without it the stripe is.
    assert!(
        r.contains("pins it") || r.contains("striped over 2 PVs"),
        "{r}"
    );
    let lv = d
        .volume_groups
        .get_mut("vg0")
        .unwrap()
        .lvs
        .get_mut("nextcloud")
        .unwrap();
    lv.pvs = None;
    let r = refusal(&h, &d);
    assert!(r.contains("striped over 2 PVs"), "{r}");
}

#[test]
fn a_writecache_cache_volume_is_not_moved() {
    let (d0, h) = example("microserver-gen8");
    apply(&h, &d0, Policy::default()).unwrap();
    h.finish_syncs();
    let mut d = d0.clone();
    d.volume_groups
        .get_mut("vg0")
        .unwrap()
        .pvs
        .retain(|r| r.name() != "cache0");
    let r = refusal(&h, &d);
    assert!(
        r.contains("Unable to pvmove device used for writecache"),
        "{r}"
    );
}

#[test]
fn lv_changes_in_the_same_apply_are_refused() {
    let h = built("data0, data1", "{ data: { size: 10GiB } }");
    let d = file("data1", "{ data: { size: 20GiB } }");
    let r = refusal(&h, &d);
    assert!(r.contains("changes LVs of the VG in the same apply"), "{r}");
}

#[test]
fn a_removal_stopped_between_vgreduce_and_pvremove_is_finished() {
    let h = built("data0, data1", "{ data: { size: 10GiB, pvs: [data0] } }");
    let d = file("data0", "{ data: { size: 10GiB, pvs: [data0] } }");
    run(&h, &["vgreduce", "vg0", "/dev/md/data1"]);
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(commands(&p), vec!["pvremove --yes /dev/md/data1"]);
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn the_simulated_tools_answer_as_lvm_does() {
    let h = built("data0, data1", "{ data: { size: 10GiB, pvs: [data0] } }");
    let o = run(&h, &["vgreduce", "vg0", "/dev/md/data0"]);
    assert_eq!(o.status, 5);
    assert!(o.stderr.contains("still in use"), "{}", o.stderr);
    let o = run(&h, &["pvmove", "--background", "/dev/md/data1"]);
    assert_eq!(
        (o.status, o.stderr.as_str()),
        (5, "  No data to move for vg0.\n")
    );
    let o = run(&h, &["vgreduce", "vg0", "/dev/md/data1"]);
    assert_eq!(o.status, 0);
    assert!(o.stdout.starts_with("  Removed \"/dev/md"), "{}", o.stdout);
}

#[test]
fn a_removal_from_a_vg_with_a_missing_pv_is_refused() {
    let h = built(
        "data0, data1, cache0",
        "{ data: { size: 10GiB, pvs: [data0] } }",
    );
    // A PV of vg0 is missing (LVM reports the VG partial).
    let mut w = h.world();
    w.lvm.vgs[0].partial = true;
    let h = SimHost::new(w);
    let d = file("data0, cache0", "{ data: { size: 10GiB, pvs: [data0] } }");
    let r = refusal(&h, &d);
    assert!(r.contains("a PV of the VG is missing"), "{r}");
}

#[test]
fn a_cache_pv_leaves_with_its_writecache() {
    let (d0, h) = example("microserver-gen8");
    apply(&h, &d0, Policy::default()).unwrap();
    h.finish_syncs();
    let mut d = d0.clone();
    let vg = d.volume_groups.get_mut("vg0").unwrap();
    vg.pvs.retain(|r| r.name() != "cache0");
    vg.lvs.get_mut("nextcloud").unwrap().writecache = None;
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    let c = commands(&p);
    let tail: Vec<&str> = c[c.len() - 2..].iter().map(String::as_str).collect();
    let cache = "/dev/disk/by-id/wwn-0x50026b7782000001";
    assert_eq!(
        tail,
        vec![
            format!("vgreduce vg0 {cache}"),
            format!("pvremove --yes {cache}")
        ]
    );
    assert!(!c.iter().any(|c| c.starts_with("pvmove")), "{c:#?}");
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn the_mirror_under_the_removed_pv_goes_only_when_the_file_removes_it() {
    let h = built("data0, data1", "{ data: { size: 10GiB } }");
    let mut d = file("data1", "{ data: { size: 10GiB } }");
    d.mirrors.get_mut("data0").unwrap().absent = true;
    let allow = Policy::destroying(true);
    let p = plan_for(&h, &d, allow.clone());
    eprintln!("{}", hyraid::render::text(&p, false));
    let c = commands(&p);
    let reduce = c.iter().position(|c| c == "pvremove --yes /dev/md/data0");
    let stop = c.iter().position(|c| c.starts_with("mdadm --stop"));
    assert!(
        reduce.is_some() && stop.is_some() && reduce < stop,
        "{c:#?}"
    );
    apply(&h, &d, allow.clone()).unwrap();
    assert!(plan_for(&h, &d, allow.clone()).steps.is_empty());
}

#[test]
fn after_a_power_loss_the_inactive_move_is_activated_then_resumed() {
    let h = built("data0, data1", "{ data: { size: 100GiB } }");
    let d = file("data1", "{ data: { size: 100GiB } }");
    let md1 = kname(&h, "data1");
    run(
        &h,
        &["pvmove", "--background", "/dev/md/data0", "/dev/md/data1"],
    );
    // The power is cut; the boot does not activate vg0: the move LV is there, inactive.
    h.power_loss_during_moves();
    let o = observe(&h, &d);
    let seen = o.lvm.lvs.iter().find(|l| l.name == "pvmove0").unwrap();
    assert!(!seen.active);
    assert_eq!(seen.pvmove.as_ref().unwrap().copy_percent, None);
    // Bare pvmove alone skips it, as lvm2's polldaemon does.
    let skip = run(&h, &["pvmove", "--background"]);
    assert_eq!(
        (skip.status, skip.stdout.as_str()),
        (
            0,
            format!(
                "  /dev/{}: Skipping inactive LV. Try lvchange or vgchange.\n",
                kname(&h, "data0")
            )
            .as_str()
        )
    );
    h.power_loss_during_moves();
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert_eq!(
        commands(&p),
        vec![
            "vgchange --activate y --poll n vg0",
            "pvmove --background",
            WAIT,
            "vgreduce vg0 /dev/md/data0",
            "pvremove --yes /dev/md/data0",
        ]
    );
    assert!(p.steps.iter().all(|s| s.risk == hyraid::plan::Risk::Safe));
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(extents_on(&h, "data", &md1), 25600);
    assert!(h.world().lv("vg0", "data").unwrap().active);
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    let starts = changes(&h)
        .iter()
        .filter(|c| c.starts_with("pvmove --background /dev/"))
        .count();
    assert_eq!(starts, 1);
}
