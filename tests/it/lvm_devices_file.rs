//! LVM's devices file (EL 9 and later, `devices/use_devicesfile = 1`): LVM sees only the devices
//! /etc/lvm/devices/system.devices lists. On the simulated host: hyraid's PVs end up listed (by
//! pvcreate/vgcreate, as lvm2 does), and a PV the file hides is refused, never made a PV again
//! or wiped, whatever --allow-destroy says.

use crate::common;
use common::*;
use hyraid::observe::lvm_devices::{LvmDeviceEntry, LvmDevices, md_uuid_idname, parse};
use hyraid::plan::Policy;

/// An EL machine's devices file before hyraid: the root disk's PV only.
fn el_file() -> LvmDevices {
    LvmDevices {
        version: Some("1.1.4".into()),
        entries: vec![LvmDeviceEntry {
            idtype: "sys_wwid".into(),
            idname: "naa.5000c500aaaaaaaa".into(),
            devname: Some("/dev/sdz3".into()),
            pvid: Some("rootpv0000000000000000000000000".into()),
            part: Some(3),
        }],
    }
}

const ALLOW: Policy = Policy::destroying(true);

/// The plan neither wipes a device nor makes a PV (or, in `vgcreate`, one implicitly).
fn assert_no_pv_made(p: &hyraid::plan::Plan) {
    assert!(
        p.steps.iter().all(|s| !matches!(
            s.step,
            hyraid::plan::Step::CreatePv(_)
                | hyraid::plan::Step::WipeSignatures(_)
                | hyraid::plan::Step::CreateVg(_)
        )),
        "{:?}",
        ops(p)
    );
}

#[test]
fn the_pvs_hyraid_makes_are_listed_by_md_uuid_and_the_plan_converges() {
    let (d, h) = example("single-pair");
    let mut w = h.world();
    w.boot.lvm_devices = Some(el_file());
    let h = hyraid::sim::SimHost::new(w);
    apply(&h, &d, Policy::default()).unwrap();
    let obs = observe(&h, &d);
    let file = obs
        .boot
        .lvm_devices
        .clone()
        .expect("the devices file is observed");
    let array = obs
        .arrays
        .iter()
        .find(|a| a.name.as_deref() == Some("md-home"))
        .unwrap();
    let pv = obs
        .lvm
        .pvs
        .iter()
        .find(|p| p.kname == array.kname)
        .expect("LVM reports the PV");
    let e = file
        .entries
        .iter()
        .find(|e| e.idtype == "md_uuid")
        .unwrap_or_else(|| panic!("no md_uuid entry: {file:?}"));
    assert_eq!(e.idname, md_uuid_idname(array.uuid.as_deref().unwrap()));
    assert_eq!(e.pvid.as_deref(), Some(pv.uuid.replace('-', "").as_str()));
    assert_eq!(
        file.entries[0].idname, "naa.5000c500aaaaaaaa",
        "the root disk's entry is kept"
    );
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn a_pv_the_devices_file_does_not_list_is_refused_and_never_wiped() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    // The same disks on an EL machine whose devices file does not list the array (the VG was
    // made elsewhere): LVM reports neither the PV nor the VG.
    let mut w = h.world();
    w.boot.lvm_devices = Some(el_file());
    let h = hyraid::sim::SimHost::new(w);
    let obs = observe(&h, &d);
    assert!(
        obs.lvm.vgs.iter().all(|v| v.name != "home"),
        "LVM does not see the VG"
    );
    let before = h.world();
    let p = plan_for(&h, &d, ALLOW);
    assert_no_pv_made(&p);
    let r = p
        .refused
        .iter()
        .find(|r| r.reason.contains("/etc/lvm/devices/system.devices"))
        .unwrap_or_else(|| panic!("no refusal naming the devices file: {:?}", p.refused));
    assert!(r.reason.contains("does not list it"), "{}", r.reason);
    assert!(
        r.fix.contains("lvm lvmdevices --adddev /dev/md/md-home"),
        "{}",
        r.fix
    );
    assert!(apply(&h, &d, ALLOW).is_err(), "apply refuses too");
    assert_eq!(h.world().lvm, before.lvm, "nothing of LVM changed");
    // The operator lets LVM see it: the VG is back and nothing is left to do.
    let out = run(&h, &["lvm", "lvmdevices", "--adddev", "/dev/md/md-home"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    assert!(plan_for(&h, &d, Policy::default()).refused.is_empty());
}

#[test]
fn the_simulated_file_reads_back_as_lvm2_writes_it() {
    let (d, h) = example("single-pair");
    let mut w = h.world();
    w.boot.lvm_devices = Some(el_file());
    let h = hyraid::sim::SimHost::new(w);
    apply(&h, &d, Policy::default()).unwrap();
    let text = hyraid::host::Host::read_file(&h, "/etc/lvm/devices/system.devices").unwrap();
    assert!(
        text.starts_with("# LVM uses devices listed in this file.\n"),
        "{text}"
    );
    assert!(text.contains("\nIDTYPE=md_uuid IDNAME="), "{text}");
    assert_eq!(Some(parse(&text)), h.world().boot.lvm_devices);
}

#[test]
fn a_disk_carrying_a_hidden_pv_is_not_wiped_even_with_allow_destroy() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    // A disk moved from another EL machine: a PV of its VG `old`, which this machine's devices
    // file does not list.
    let mut w = h.world();
    plug_blank_disk(
        &mut w,
        "sdb",
        "sdc",
        32,
        "MOVED01",
        "ata-ST500DM009-2F110A_MOVED01",
    );
    let h = hyraid::sim::SimHost::new(w);
    for argv in [
        ["pvcreate", "/dev/sdc"].as_slice(),
        &["vgcreate", "old", "/dev/sdc"],
    ] {
        let o = run(&h, argv);
        assert_eq!(o.status, 0, "{}", o.stderr);
    }
    let mut w = h.world();
    let mut f = el_file();
    let md = w
        .arrays
        .iter()
        .find(|a| a.name.as_deref() == Some("md-home"))
        .unwrap();
    f.entries.push(LvmDeviceEntry {
        idtype: "md_uuid".into(),
        idname: md_uuid_idname(md.uuid.as_deref().unwrap()),
        devname: Some(format!("/dev/{}", md.kname)),
        pvid: None,
        part: None,
    });
    w.boot.lvm_devices = Some(f);
    let h = hyraid::sim::SimHost::new(w);
    // The file now makes that disk the PV of a new VG.
    let mut spec = d.disks["hdd"].clone();
    spec.name = "spare".into();
    spec.id = Some("ata-ST500DM009-2F110A_MOVED01".into());
    spec.serial = None;
    d.disks.insert("spare".into(), spec);
    let mut vg = d.volume_groups["home"].clone();
    vg.name = "fast".into();
    vg.pvs = vec![hyraid::config::DeviceRef::Disk("spare".into())];
    vg.lvs.clear();
    d.volume_groups.insert("fast".into(), vg);
    let p = plan_for(&h, &d, ALLOW);
    assert_no_pv_made(&p);
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "vg fast" && r.reason.contains("does not list it")),
        "{:?}",
        p.refused
    );
}
