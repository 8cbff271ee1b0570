//! hyraid's block of /etc/fstab and the filesystems the file leaves alone. An LV the file no
//! longer names, or names without a `filesystem:`, is left as it is: so is the line that mounts
//! it at boot. A line goes when the file says so: a `filesystem:` without `mount:`, or the LV
//! removed with `state: absent`. A renamed LV is a new one: its mount point is the old
//! filesystem's, so it is refused whether the old one is mounted or not.

use crate::common;

use common::fs::*;
use common::*;
use hyraid::config::Desired;
use hyraid::plan::{Plan, Policy, Step};
use hyraid::sim::SimHost;

/// The microserver with the nextcloud LV and its ext4 at /srv/nextcloud built and converged.
fn built() -> (Desired, SimHost, String) {
    let d = file("{ type: ext4, mount: /srv/nextcloud }", false);
    let h = machine();
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
    let fstab = h.world().boot.fstab.unwrap();
    assert!(fstab.contains(" /srv/nextcloud ext4 "), "{fstab}");
    (d, h, fstab)
}

fn writes_fstab(p: &Plan) -> bool {
    p.steps
        .iter()
        .any(|s| matches!(&s.step, Step::WriteFile(w) if w.path == "/etc/fstab"))
}

/// The world with the nextcloud filesystem unmounted.
fn unmounted(h: &SimHost) -> SimHost {
    let mut w = h.world();
    for f in w.filesystems.iter_mut() {
        f.mountpoint = None;
    }
    for b in w.other_devices.iter_mut() {
        b.mountpoint = None;
    }
    SimHost::new(w)
}

#[test]
fn an_lv_the_file_no_longer_names_keeps_its_fstab_line() {
    let (mut d, h, fstab) = built();
    d.volume_groups
        .get_mut("vg0")
        .unwrap()
        .lvs
        .remove("nextcloud");
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(!writes_fstab(&p), "{:#?}", p.steps);
    assert!(p.is_empty() && p.refused.is_empty(), "{:#?}", p);
    assert!(p.foreign.iter().any(|f| f.object == "lv vg0/nextcloud"));
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(h.world().boot.fstab.unwrap(), fstab);
}

#[test]
fn an_lv_without_its_filesystem_key_keeps_its_fstab_line() {
    let (mut d, h, fstab) = built();
    nextcloud(&mut d).filesystem = None;
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.is_empty() && p.refused.is_empty(), "{:#?}", p);
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(h.world().boot.fstab.unwrap(), fstab);
}

#[test]
fn a_filesystem_without_a_mount_loses_its_line() {
    let (mut d, h, _) = built();
    nextcloud(&mut d).filesystem.as_mut().unwrap().mount = None;
    let p = plan_for(&h, &d, Policy::default());
    assert!(writes_fstab(&p), "{:#?}", p.steps);
    apply(&h, &d, Policy::default()).unwrap();
    let fstab = h.world().boot.fstab.unwrap();
    assert_eq!(fstab, FSTAB, "no line, and no block: {fstab}");
}

#[test]
fn a_removed_lv_loses_its_line() {
    let (mut d, h, _) = built();
    let h = unmounted(&h);
    nextcloud(&mut d).absent = true;
    let allow = Policy::destroying(true);
    let p = plan_for(&h, &d, allow.clone());
    eprintln!("{}", hyraid::render::text(&p, false));
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    assert!(writes_fstab(&p), "{:#?}", p.steps);
    apply(&h, &d, allow.clone()).unwrap();
    assert_eq!(h.world().boot.fstab.unwrap(), FSTAB);
}

#[test]
fn a_renamed_lv_does_not_take_the_old_filesystems_mount_point() {
    let (d, h, fstab) = built();
    let mut renamed = d.clone();
    let vg = renamed.volume_groups.get_mut("vg0").unwrap();
    let mut lv = vg.lvs.remove("nextcloud").unwrap();
    lv.name = "cloud".into();
    vg.lvs.insert("cloud".into(), lv);
    for h in [SimHost::new(h.world()), unmounted(&h)] {
        let p = plan_for(&h, &renamed, Policy::default());
        eprintln!("{}", hyraid::render::text(&p, false));
        assert!(
            p.refused
                .iter()
                .any(|r| r.reason.contains("cannot mount at /srv/nextcloud")),
            "{:#?}",
            p.refused
        );
        assert!(!writes_fstab(&p), "{:#?}", p.steps);
        assert!(
            !p.steps
                .iter()
                .any(|s| matches!(s.step, Step::MountFilesystem(_))),
            "{:#?}",
            p.steps
        );
    }
    let h = unmounted(&h);
    let p = plan_for(&h, &renamed, Policy::default());
    let r = p
        .refused
        .iter()
        .find(|r| r.reason.contains("cannot mount"))
        .unwrap();
    assert!(r.reason.contains("LV vg0/nextcloud"), "{r:?}");
    assert!(r.fix.contains("lvrename"), "{r:?}");
    assert!(apply(&h, &renamed, Policy::default()).is_err());
    assert_eq!(h.world().boot.fstab.unwrap(), fstab);
}

/// Two filesystems; the first one's LV taken out of the file: both lines stay, in their order
/// (a rewrite that only moved them would make the plan never empty).
#[test]
fn kept_lines_keep_their_place_in_the_block() {
    let text = hyraid::config::load_str(
        "two.yaml",
        r#"version: 1
disks:
  ssd0: { id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A }
  hdd0: { id: ata-ST1000LM048-2E7172_WDE00001 }
mirrors:
  data0: { members: [ssd0, hdd0] }
volume_groups:
  vg0:
    pvs: [data0]
    lvs:
      files: { size: 10GiB, filesystem: { type: ext4, mount: /srv/files } }
      media: { size: 10GiB, filesystem: { type: ext4, mount: /srv/media } }
"#,
    )
    .unwrap();
    let h = machine();
    apply(&h, &text, Policy::default()).unwrap();
    let fstab = h.world().boot.fstab.unwrap();
    let mut d = text.clone();
    d.volume_groups.get_mut("vg0").unwrap().lvs.remove("files");
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.is_empty() && p.refused.is_empty(),
        "{}",
        hyraid::render::text(&p, false)
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(h.world().boot.fstab.unwrap(), fstab);
}

/// An apply stopped between lvremove and the fstab write: the line of a filesystem that is on
/// nothing any more goes on the next run (it would hold the next boot).
#[test]
fn the_line_of_a_filesystem_on_nothing_goes() {
    let (d, h, _) = built();
    let h = unmounted(&h);
    assert_eq!(run(&h, &["lvremove", "--yes", "vg0/nextcloud"]).status, 0);
    let mut gone = d.clone();
    nextcloud(&mut gone).absent = true;
    let allow = Policy::destroying(true);
    let p = plan_for(&h, &gone, allow.clone());
    assert!(writes_fstab(&p), "{}", hyraid::render::text(&p, false));
    apply(&h, &gone, allow.clone()).unwrap();
    assert_eq!(h.world().boot.fstab.unwrap(), FSTAB);
    assert!(plan_for(&h, &gone, allow.clone()).is_empty());
}

/// The LV of a filesystem the file mounts is inactive (its VG not activated at boot): hyraid
/// cannot read what it holds, so nothing of it is planned, and its line of hyraid's block stays
/// (the plan, even past its refusal, never drops the line that mounts it once it is back).
#[test]
fn the_line_of_a_filesystem_on_an_inactive_lv_is_kept() {
    let (d, h, _) = built();
    let before = h.world().boot.fstab.unwrap();
    let mut w = h.world();
    for l in w.lvm.lvs.iter_mut() {
        l.active = false;
    }
    w.lvm.nodes.clear();
    w.filesystems.retain(|f| f.md);
    w.other_devices.retain(|b| !b.kname.starts_with("dm-"));
    let h = SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "lv vg0/nextcloud")
        .expect("the unreadable LV is refused");
    assert!(r.reason.contains("it is not active"), "{}", r.reason);
    assert!(r.fix.contains("lvchange -ay vg0/nextcloud"), "{}", r.fix);
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(&s.step, Step::WriteFile(w) if w.path == "/etc/fstab")),
        "the fstab line would be dropped:\n{}",
        hyraid::render::text(&p, false)
    );
    assert!(before.contains(" /srv/nextcloud ext4 "), "{before}");
}
