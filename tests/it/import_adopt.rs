//! `hyraid import` on a box built by hand: arrays made as /dev/md0 are adopted by UUID (only
//! mdadm.conf is missing), the typical edit of an adopted box converges, an adopted mirror is
//! never guessed, and an ARRAY line written by `mdadm --detail --scan` counts as listed.

use crate::common;
use common::*;
use hyraid::config::load_str;
use hyraid::import;
use hyraid::plan::step::{StopArray, WriteFile};
use hyraid::plan::{Policy, Step, plan};

fn hand_built() -> hyraid::sim::SimHost {
    let (_, h) = example("microserver-gen8");
    for argv in [
        "mdadm --create /dev/md0 --level=1 --raid-devices=2 /dev/sda /dev/sdc --run",
        "mdadm --wait /dev/md0",
        "mdadm --create /dev/md1 --level=1 --raid-devices=2 /dev/sdb /dev/sdd --run",
        "pvcreate /dev/md0",
        "pvcreate /dev/md1",
        "vgcreate vg0 /dev/md0 /dev/md1",
        "lvcreate --yes -n data -L 107374182400b vg0",
    ] {
        let o = run(&h, &argv.split(' ').collect::<Vec<_>>());
        assert_eq!(o.status, 0, "{argv}: {}", o.stderr);
    }
    h
}

#[test]
fn arrays_made_as_dev_md0_are_adopted_by_uuid_and_only_mdadm_conf_is_missing() {
    let h = hand_built();
    let obs = observe_bare(&h);
    assert!(
        obs.arrays.iter().all(|a| a.name.is_none()),
        "no /dev/md/NAME"
    );
    assert_eq!(obs.array("md1").unwrap().sync_action, "resync");
    let imp = import::import(&obs);
    assert!(imp.skipped.is_empty(), "{:?}", imp.skipped);
    let yaml = import::to_yaml(&imp);
    for (md, uuid) in [("md0", uuid_of(&obs, "md0")), ("md1", uuid_of(&obs, "md1"))] {
        assert!(
            yaml.contains(&format!(
                "  {md}:\n    uuid: {uuid}\n    device: /dev/{md}\n"
            )),
            "{md}:\n{yaml}"
        );
    }
    assert!(
        yaml.contains("    - md0\n    - md1\n"),
        "vg0 over both:\n{yaml}"
    );
    // The file says what plan will show, and plan shows exactly that: the ARRAY lines, by UUID
    // and kernel device, and the initramfs that carries them.
    assert!(
        yaml.contains("# mdadm.conf (/etc/mdadm/mdadm.conf) has no ARRAY line for md0, md1: `hyraid plan` on this file shows only that"),
        "{yaml}"
    );
    let d = load_str("imported.yaml", &yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let p = plan(&d, &obs, Policy::default()).unwrap();
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    assert_eq!(p.steps.len(), 2, "{:?}", p.steps);
    let Step::WriteFile(WriteFile { path, content, .. }) = &p.steps[0].step else {
        panic!("{:?}", p.steps[0].step)
    };
    assert_eq!(path, "/etc/mdadm/mdadm.conf");
    for md in ["md0", "md1"] {
        let line = format!("ARRAY /dev/{md} metadata=1.2 UUID={}\n", uuid_of(&obs, md));
        assert!(content.contains(&line), "{content}");
    }
    assert!(!content.contains("/dev/md/"), "{content}");
    assert!(matches!(p.steps[1].step, Step::RegenerateInitramfs(_)));
    assert!(p.foreign.is_empty(), "{:?}", p.foreign);
}

#[test]
fn the_typical_edit_of_an_adopted_box_applies_and_converges() {
    use hyraid::config::raw::*;
    let h = hand_built();
    let obs = observe_bare(&h);
    let yaml = |text: &str| hyraid::config::yaml::parse(text).unwrap().0;
    let mut raw: RawConfig =
        serde_json::from_value(yaml(&import::to_yaml(&import::import(&obs)))).unwrap();
    // write-mostly auto, bitmap chunk 128MiB, drive cache on, a writecache on a third SSD.
    for m in raw.mirrors.values_mut() {
        m.write_mostly = Some(RawWriteMostly::Auto(AutoWord::Auto));
        m.bitmap = Some(RawBitmap::Internal(RawBitmapInternal {
            chunk: Some(RawSize::Text("128MiB".into())),
        }));
    }
    for d in raw.disks.values_mut().filter(|d| {
        d.id.as_deref()
            .is_some_and(|i| i.starts_with("ata-ST1000LM048"))
    }) {
        d.write_cache = Some(OnOff::Word(OnOffWord::On));
    }
    raw.disks.insert(
        "cache0".into(),
        serde_json::from_value(yaml("{ id: ata-KINGSTON_SA400S37240G_50026B7782000001 }")).unwrap(),
    );
    let vg = raw.volume_groups.get_mut("vg0").unwrap();
    vg.pvs.push("cache0".into());
    vg.lvs.get_mut("data").unwrap().writecache =
        Some(serde_json::from_value(yaml("{ size: 16GiB, pvs: [cache0] }")).unwrap());
    let d = load_str("edited.yaml", &import::emit(&raw)).unwrap();
    // Before and after per object (Ansible's diff mode) finds the adopted arrays too.
    let states = hyraid::apply::preview::object_states(
        &plan_for(&h, &d, Policy::default()),
        &observe(&h, &d),
    )
    .unwrap();
    let md0 = states.iter().find(|s| s.object == "mirror md0").unwrap();
    assert!(
        md0.before
            .as_deref()
            .unwrap()
            .starts_with("mirror md0: /dev/md0 (md0)"),
        "{md0:?}"
    );
    assert!(
        md0.after.as_deref().unwrap().contains("chunk 128.00 MiB"),
        "{md0:?}"
    );
    let pv = states.iter().find(|s| s.object.starts_with("pv ")).unwrap();
    assert!(pv.after.as_deref().unwrap().contains("in vg vg0"), "{pv:?}");
    h.clear_log();
    let p = apply(&h, &d, Policy::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(p.refused.is_empty());
    // The script form names the same devices, and waits for md1's resync by its device.
    let script = hyraid::render::render(&p, hyraid::render::Format::Shell, false);
    assert!(script.contains("readlink -f /dev/md1"), "{script}");
    assert!(!script.contains("/dev/md/"), "{script}");
    // Every mdadm command names the arrays by the kernel device; nothing makes /dev/md/NAME.
    let ran = changes(&h);
    assert!(
        ran.iter()
            .any(|c| c.starts_with("mdadm --grow /dev/md1 --bitmap=internal --bitmap-chunk=128M")),
        "{ran:#?}"
    );
    assert!(ran.iter().all(|c| !c.contains("/dev/md/")), "{ran:#?}");
    let w = h.world();
    for (md, hdd) in [("md0", "sdc"), ("md1", "sdd")] {
        let a = w.array(md).unwrap();
        assert_eq!(a.name, None, "{md} is not renamed");
        assert_eq!(a.bitmap.as_ref().map(|b| b.chunk), Some(128 << 20), "{md}");
        assert!(a.member(hdd).unwrap().write_mostly(), "{md}: {hdd}");
        assert_eq!(
            w.device(hdd).unwrap().write_cache.and_then(|c| c.enabled),
            Some(true)
        );
    }
    assert_eq!(w.lv("vg0", "data").unwrap().segtype, "writecache");
    let conf = w.boot.mdadm_conf.unwrap();
    assert!(
        conf.contains(&format!(
            "ARRAY /dev/md0 metadata=1.2 UUID={}\n",
            uuid_of(&obs, "md0")
        )),
        "{conf}"
    );
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn an_adopted_mirror_is_never_guessed() {
    let h = hand_built();
    let obs = observe_bare(&h);
    let yaml = import::to_yaml(&import::import(&obs));
    // The array is at another kernel name than the file says (renumbered after a reboot).
    let moved = yaml.replace("device: /dev/md0", "device: /dev/md5");
    let d = load_str("moved.yaml", &moved).unwrap();
    let p = plan(&d, &obs, Policy::default()).unwrap();
    assert!(
        p.refused.iter().any(|r| r.object == "mirror md0"
            && r.reason
                .contains("is /dev/md0 now, but the file says `device: /dev/md5`")),
        "{:?}",
        p.refused
    );
    // An adopted UUID that is not on the machine is not created.
    let gone = yaml.replace(&uuid_of(&obs, "md0"), "11111111:22222222:33333333:44444444");
    let d = load_str("gone.yaml", &gone).unwrap();
    let p = plan(&d, &obs, Policy::default()).unwrap();
    assert!(
        p.refused.iter().any(|r| r.object == "mirror md0"
            && r.reason
                .contains("no array with UUID 11111111:22222222:33333333:44444444")),
        "{:?}",
        p.refused
    );
    assert!(
        p.steps
            .iter()
            .all(|s| !matches!(s.step, Step::CreateArray(_)))
    );
    // Nor is an adopted array stopped by a device the machine does not show it at.
    let absent = moved
        .replace(
            "    device: /dev/md5\n",
            "    device: /dev/md5\n    state: absent\n",
        )
        .replace("    pvs:\n", "    state: absent\n    pvs:\n");
    let d = load_str("absent.yaml", &absent).unwrap_or_else(|e| panic!("{e}\n{absent}"));
    let p = plan(&d, &obs, Policy::destroying(true)).unwrap();
    assert!(
        p.steps.iter().all(
            |s| !matches!(&s.step, Step::StopArray(StopArray { array, .. }) if array == "md0")
        ),
        "{:?}",
        p.steps
    );
    assert!(
        p.refused.iter().any(|r| r.object == "mirror md0"),
        "{:?}",
        p.refused
    );
}

#[test]
fn an_array_line_mdadm_scan_wrote_by_hand_counts_as_listed() {
    // `mdadm --detail --scan >> mdadm.conf` before a reboot writes /dev/md0, after one /dev/md/0.
    let u = "299ac1e1:b48af26d:b272044d:c4cd2cc2";
    let ours = [("/dev/md0".to_string(), u.to_string())];
    for line in [
        format!("ARRAY /dev/md0 metadata=1.2 name=hyraid-vm:0 UUID={u}\n"),
        format!("ARRAY /dev/md/0  metadata=1.2 UUID={u} name=hyraid-vm:0\n"),
    ] {
        let conf = format!("HOMEHOST <system>\n{line}");
        let new = hyraid::plan::persist::managed_mdadm_conf(Some(&conf), &ours, &[]).unwrap();
        assert_eq!(new, conf);
    }
    let new =
        hyraid::plan::persist::managed_mdadm_conf(Some("HOMEHOST <system>\n"), &ours, &[]).unwrap();
    assert!(
        new.ends_with(&format!("ARRAY /dev/md0 metadata=1.2 UUID={u}\n")),
        "{new}"
    );
    // A line that would assemble it under another name is replaced by hyraid's.
    for other in ["/dev/md/data", "/dev/md127"] {
        let conf = format!("HOMEHOST <system>\nARRAY {other} metadata=1.2 UUID={u}\n");
        let new = hyraid::plan::persist::managed_mdadm_conf(Some(&conf), &ours, &[]).unwrap();
        assert!(!new.contains(other), "{new}");
        assert!(
            new.ends_with(&format!("ARRAY /dev/md0 metadata=1.2 UUID={u}\n")),
            "{new}"
        );
    }
}
