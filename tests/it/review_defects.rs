//! What a review that used hyraid as a new user found on the simulator, each kept from
//! coming back: mkfs on an LV nobody looked at, an LV above its `N%VG` said to match, removals
//! of mounted LVs planned, a bitmap chunk md cannot take, an LV gone said healthy, a mistyped id
//! described as a degraded array, an array with every member started "degraded", fixes the file
//! cannot take, and a `--re-add` that did nothing silently.

use crate::common;
use common::*;
use hyraid::config::load_str;
use hyraid::plan::{Policy, Risk, Step};
use hyraid::sim::SimHost;

/// single-pair with an ext4 LV mounted at /srv/data.
fn mounted_box() -> (hyraid::config::Desired, SimHost) {
    let text = "version: 1
disks:
  ssd: { id: ata-CT500MX500SSD1_2204E6000001 }
  hdd: { id: ata-ST500DM009-2F110A_ZA4000001 }
mirrors:
  md-home: { members: [ssd, hdd] }
volume_groups:
  home:
    pvs: [md-home]
    lvs:
      data: { size: 100GiB, filesystem: { type: ext4, mount: /srv/data } }
";
    let d = load_str("box.yaml", text).unwrap();
    let (_, h) = example("single-pair");
    let mut w = h.world();
    w.boot.fstab = Some("# /etc/fstab\n".into());
    let h = SimHost::new(w);
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}

#[test]
fn mkfs_is_never_planned_on_an_lv_whose_content_nobody_saw() {
    let (d, h) = mounted_box();
    let mut w = h.world();
    for l in w.lvm.lvs.iter_mut() {
        l.active = false;
    }
    let h = SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(s.step, Step::MakeFilesystem(_))),
        "{}",
        hyraid::render::text(&p, false)
    );
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "lv home/data")
        .unwrap();
    assert!(
        r.reason.contains("it is not active") && r.fix.contains("lvchange -ay home/data"),
        "{r:?}"
    );
    // Nor with --allow-destroy: nobody knows what it would destroy.
    let p = plan_for(&h, &d, Policy::destroying(true));
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(s.step, Step::MakeFilesystem(_)))
    );
}

#[test]
fn an_lv_larger_than_its_share_of_the_vg_is_a_shrink_not_a_match() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    let lv = d
        .volume_groups
        .get_mut("home")
        .unwrap()
        .lvs
        .get_mut("home")
        .unwrap();
    lv.size = hyraid::config::size::LvSize::PercentVg(50);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused.iter().any(|r| r
            .reason
            .contains("hyraid never shrinks an LV without --allow-destroy")),
        "{:?}",
        p.refused
    );
    // Its own share again: nothing to do (LVM's rounding is not a difference).
    lv_share(&mut d, 90);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.steps.is_empty() && p.refused.is_empty(),
        "{}",
        hyraid::render::text(&p, false)
    );
}

fn lv_share(d: &mut hyraid::config::Desired, p: u8) {
    d.volume_groups
        .get_mut("home")
        .unwrap()
        .lvs
        .get_mut("home")
        .unwrap()
        .size = hyraid::config::size::LvSize::PercentVg(p);
}

#[test]
fn removing_a_mounted_lv_or_its_vg_is_refused_and_its_lvs_are_not_left_alone() {
    let (mut d, h) = mounted_box();
    d.volume_groups
        .get_mut("home")
        .unwrap()
        .lvs
        .get_mut("data")
        .unwrap()
        .absent = true;
    let p = plan_for(&h, &d, Policy::destroying(true));
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "lv home/data")
        .expect("refused");
    assert!(r.reason.contains("home/data at /srv/data mounted"), "{r:?}");
    assert!(!p.steps.iter().any(|s| matches!(s.step, Step::RemoveLv(_))));
    // The VG removed with the mirror: refused for the mounted LV; and its LV is not listed as
    // left alone by a plan that would remove it.
    let (mut d, h) = mounted_box();
    d.volume_groups.get_mut("home").unwrap().absent = true;
    d.mirrors.get_mut("md-home").unwrap().absent = true;
    let p = plan_for(&h, &d, Policy::destroying(true));
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "vg home" && r.reason.contains("mounted")),
        "{:?}",
        p.refused
    );
    assert!(
        !p.foreign.iter().any(|f| f.object == "lv home/data"),
        "{:?}",
        p.foreign
    );
    // And the simulated lvm refuses it as the real one does.
    let o = run(&h, &["vgremove", "--yes", "home"]);
    assert_eq!(o.status, 5, "{o:?}");
    assert!(o.stderr.contains("contains a filesystem in use"));
}

#[test]
fn a_bitmap_chunk_md_cannot_take_is_an_error() {
    let base = std::fs::read_to_string("examples/single-pair.yaml").unwrap();
    for (chunk, ok) in [("1GiB", true), ("2GiB", false), ("1TiB", false)] {
        let text = base.replace(
            "md-home: { members: [ssd, hdd] }",
            &format!("md-home: {{ members: [ssd, hdd], bitmap: {{ chunk: {chunk} }} }}"),
        );
        assert_ne!(text, base);
        assert_eq!(load_str("f.yaml", &text).is_ok(), ok, "{chunk}");
    }
}

#[test]
fn an_lv_the_file_declares_that_is_gone_is_degraded_in_status() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(run(&h, &["lvremove", "--yes", "home/home"]).status, 0);
    let o = observe(&h, &d);
    let (f, _) = hyraid::status::check(&o, Some(&d), None);
    let x = f
        .iter()
        .find(|f| f.object == "lv home/home")
        .expect("reported");
    assert_eq!(x.severity, hyraid::status::Severity::Degraded);
    assert!(
        x.message
            .contains("the file declares this LV and its VG has none")
    );
}

#[test]
fn a_mistyped_id_of_a_complete_mirror_is_not_called_degraded() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    d.disks.get_mut("hdd").unwrap().id = Some("ata-ST500DM009-2F110A_ZA400001".into());
    let p = plan_for(&h, &d, Policy::default());
    let r = p.refused.iter().find(|r| r.object == "disk hdd").unwrap();
    assert!(
        r.reason
            .contains("its array runs complete all the same: is the id mistyped?"),
        "{r:?}"
    );
    assert!(!r.reason.contains("one copy fewer"));
}

#[test]
fn an_inactive_array_with_every_member_is_started_whole() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut w = h.world();
    w.arrays[0].array_state = "inactive".into();
    let h = SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    let s = p
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::StartArray(_)))
        .expect("started");
    assert_eq!(s.risk, Risk::Safe);
    assert_eq!(s.step.summary(), "start it (every member is present)");
}

#[test]
fn fixes_name_what_the_file_takes() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    let cur = h.world().lvm.lvs[0].size;
    d.volume_groups
        .get_mut("home")
        .unwrap()
        .lvs
        .get_mut("home")
        .unwrap()
        .size = hyraid::config::size::LvSize::Bytes(100 << 30);
    let p = plan_for(&h, &d, Policy::default());
    let fix = &p.refused[0].fix;
    let said = fix
        .split("set its size to ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert_eq!(
        hyraid::config::size::parse_bytes(said).unwrap(),
        cur,
        "{fix}"
    );
}

#[test]
fn a_re_add_with_nothing_to_put_back_is_said() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let p = plan_for(&h, &d, re_add("hdd"));
    assert!(
        p.notes
            .iter()
            .any(|n| n.starts_with("--re-add hdd: nothing to put back")),
        "{:?}",
        p.notes
    );
}
