//! Persistence across reboot: mdadm.conf ARRAY lines (with the UUIDs hyraid gives new arrays),
//! the initramfs, and the udev rule that re-applies drive write caches.

use crate::common;
use common::*;
use hyraid::plan::step::{CreateArray, SetWriteCache, WriteFile};
use hyraid::plan::{Policy, Step};

fn conf(h: &hyraid::sim::SimHost) -> String {
    h.world().boot.mdadm_conf.unwrap_or_default()
}

#[test]
fn new_arrays_are_listed_by_the_uuid_chosen_at_plan_time() {
    let (d, h) = example("microserver-gen8");
    let p = plan_for(&h, &d, Policy::default());
    let uuids: Vec<String> = p
        .steps
        .iter()
        .filter_map(|s| match &s.step {
            Step::CreateArray(CreateArray { uuid, .. }) => Some(uuid.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(uuids.len(), 2);
    let conf_step = p
        .steps
        .iter()
        .find(
            |s| matches!(&s.step, Step::WriteFile(WriteFile { path, .. }) if path == "/etc/mdadm/mdadm.conf"),
        )
        .unwrap();
    let Step::WriteFile(WriteFile { content, old, .. }) = &conf_step.step else {
        unreachable!()
    };
    for u in &uuids {
        assert!(content.contains(&format!("UUID={u}")), "{content}");
    }
    // Debian's own lines are kept, but for the monitor's (the file has `alerts:`): MAILADDR root
    // gives way to hyraid's PROGRAM, where it stood.
    let old = old.as_deref().unwrap();
    let kept: Vec<&str> = old.lines().filter(|l| !l.starts_with("MAILADDR")).collect();
    let new: Vec<&str> = content
        .lines()
        .filter(|l| !l.starts_with("PROGRAM") && !l.starts_with("# hyraid: md's monitor"))
        .collect();
    assert_eq!(&new[..kept.len()], &kept[..], "Debian's own lines are kept");
    assert!(content.contains("\n# hyraid: md's monitor reports to hyraid (hyraid.yaml `alerts:`); `hyraid apply` keeps these lines\nPROGRAM /usr/bin/hyraid\n"), "{content}");
    let i = |f: fn(&Step) -> bool| p.steps.iter().position(|s| f(&s.step)).unwrap();
    assert!(
        i(|s| matches!(s, Step::CreateArray(_)))
            < i(
                |s| matches!(s, Step::WriteFile(WriteFile { path, .. }) if path.ends_with("mdadm.conf"))
            )
    );
    assert!(
        i(|s| matches!(s, Step::RegenerateInitramfs(_))) < i(|s| matches!(s, Step::CreatePv(_))),
        "md → mdadm.conf → initramfs → PV"
    );
    apply(&h, &d, Policy::default()).unwrap();
    // The arrays really carry those UUIDs, and the file lists them.
    for a in h.world().arrays {
        let u = hyraid::observe::names::mdadm_uuid(a.uuid.as_deref().unwrap());
        assert!(uuids.contains(&u), "{u}");
        assert!(conf(&h).contains(&format!(
            "ARRAY /dev/md/{} metadata=1.2 UUID={u}",
            a.name.unwrap()
        )));
    }
    assert!(changes(&h).iter().any(|c| c == "update-initramfs -u"));
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn other_lines_of_mdadm_conf_are_kept() {
    let (d, h) = example("single-pair");
    let mut w = h.world();
    w.boot.mdadm_conf = Some("HOMEHOST <system>\nMAILADDR ops@example.org\nARRAY /dev/md/legacy metadata=1.2 UUID=22222222:22222222:22222222:22222222\n".into());
    let h = hyraid::sim::SimHost::new(w);
    apply(&h, &d, Policy::default()).unwrap();
    let c = conf(&h);
    assert!(c.starts_with("HOMEHOST <system>\nMAILADDR ops@example.org\nARRAY /dev/md/legacy metadata=1.2 UUID=22222222:22222222:22222222:22222222\n"), "{c}");
    assert!(c.contains("ARRAY /dev/md/md-home metadata=1.2 UUID="));
}

#[test]
fn dracut_hosts_use_etc_mdadm_conf_and_dracut() {
    let (d, h) = example("single-pair");
    let mut w = h.world();
    w.boot = hyraid::observe::Boot {
        initramfs_tool: Some("dracut".into()),
        ..Default::default()
    };
    let h = hyraid::sim::SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    let cmds: Vec<String> = p
        .steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::render::command_line(&c))
        .collect();
    assert!(
        cmds.iter()
            .any(|c| c.starts_with("cat > /etc/mdadm.conf.hyraid-new")),
        "{cmds:?}"
    );
    assert!(cmds.contains(&"dracut -f --mdadmconf".to_string()));
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        h.world().boot.mdadm_conf_path.as_deref(),
        Some("/etc/mdadm.conf")
    );
}

#[test]
fn without_an_initramfs_tool_the_plan_says_so() {
    let (d, h) = example("single-pair");
    let mut w = h.world();
    w.boot = Default::default();
    let p = plan_for(&hyraid::sim::SimHost::new(w), &d, Policy::default());
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(s.step, Step::RegenerateInitramfs(_)))
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("no update-initramfs or dracut"))
    );
}

#[test]
fn write_cache_rule_follows_the_file() {
    let (mut d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    let rule = h.world().boot.write_cache_rule.unwrap();
    assert!(
        rule.contains(r#"ENV{ID_SERIAL_SHORT}=="WDE00001", RUN+="/usr/sbin/hdparm -W1 $devnode""#),
        "{rule}"
    );
    // Turning a cache off changes the drive now and the rule for later.
    d.disks.get_mut("hdd1").unwrap().write_cache = Some(false);
    let p = apply(&h, &d, Policy::default()).unwrap();
    let ops: Vec<&Step> = p.steps.iter().map(|s| &s.step).collect();
    assert!(matches!(
        ops[0],
        Step::SetWriteCache(SetWriteCache { on: false, .. })
    ));
    assert!(matches!(ops[1], Step::WriteFile(_)) && matches!(ops[2], Step::ReloadUdev(_)));
    assert!(
        h.world()
            .boot
            .write_cache_rule
            .unwrap()
            .contains(r#"=="WDE00002", RUN+="/usr/sbin/hdparm -W0 $devnode""#)
    );
    // Asking for it on an SSD is refused.
    d.disks.get_mut("ssd0").unwrap().write_cache = Some(true);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "disk ssd0" && r.reason.contains("rotational disks only")),
        "{:?}",
        p.refused
    );
}

#[test]
fn sas_disks_switch_their_cache_with_sdparm() {
    // A SCSI/SAS HDD: no ATA transport, a scsi_disk cache_type.
    let (mut d, h) = example("single-pair");
    let mut w = h.world();
    let hdd = w
        .block_devices
        .iter_mut()
        .find(|b| b.kname == "sdb")
        .unwrap();
    hdd.tran = Some("sas".into());
    let h = hyraid::sim::SimHost::new(w);
    d.disks.get_mut("hdd").unwrap().write_cache = Some(false);
    let p = plan_for(&h, &d, Policy::default());
    let cmds: Vec<String> = p
        .steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::render::command_line(&c))
        .collect();
    assert!(
        cmds.contains(
            &"sdparm --clear=WCE /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001".to_string()
        ),
        "{cmds:?}"
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        h.world()
            .device("sdb")
            .unwrap()
            .write_cache
            .unwrap()
            .enabled,
        Some(false)
    );
    assert!(
        h.world()
            .boot
            .write_cache_rule
            .unwrap()
            .contains(r#"RUN+="/usr/bin/sdparm --clear=WCE $devnode""#)
    );
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    // A virtio disk (no ATA, no scsi_disk) is refused.
    let (mut d, h) = example("single-pair");
    let mut w = h.world();
    let hdd = w
        .block_devices
        .iter_mut()
        .find(|b| b.kname == "sdb")
        .unwrap();
    hdd.tran = None;
    hdd.write_cache = None;
    d.disks.get_mut("hdd").unwrap().write_cache = Some(false);
    let p = plan_for(&hyraid::sim::SimHost::new(w), &d, Policy::default());
    assert!(
        p.refused.iter().any(
            |r| r.object == "disk hdd" && r.reason.contains("no write cache hyraid can switch")
        ),
        "{:?}",
        p.refused
    );
}

#[test]
fn an_observed_uuid_that_would_inject_a_line_is_refused_not_written() {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    let mut o = observe(&h, &d);
    let a = o
        .arrays
        .iter_mut()
        .find(|a| a.name.as_deref() == Some("md-home"))
        .unwrap();
    a.uuid = Some("263e1fc9:5e52a71e:0141a8e8:fe8e251e\nARRAY /dev/md/evil UUID=1".into());
    let p = hyraid::plan::plan(&d, &o, Policy::default()).unwrap();
    assert!(
        !p.steps.iter().any(
            |s| matches!(&s.step, Step::WriteFile(WriteFile { path, .. }) if path.ends_with("mdadm.conf"))
                || matches!(s.step, Step::RegenerateInitramfs(_))
        ),
        "{:?}",
        p.steps
    );
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "file /etc/mdadm/mdadm.conf")
        .expect("refused");
    assert!(r.reason.contains("refusing to write array UUID"), "{r:?}");
}

#[test]
fn observed_serials_reach_the_udev_rule_only_when_udev_reads_them_as_written() {
    let (mut d, h) = example("single-pair");
    d.disks.get_mut("hdd").unwrap().write_cache = Some(false);
    let mut o = observe(&h, &d);
    let with_serial = |o: &mut hyraid::observe::Observed, s: &str| {
        o.block_devices
            .iter_mut()
            .find(|b| b.kname == "sdb")
            .unwrap()
            .serial = Some(s.into());
        hyraid::plan::plan(&d, o, Policy::default()).unwrap()
    };
    // A quote would end the match and start a RUN of its own: no rule, a refusal says why.
    let p = with_serial(&mut o, "ZA4\", RUN+=\"/bin/sh -c reboot");
    assert!(!p.steps.iter().any(|s| matches!(&s.step, Step::WriteFile(WriteFile { content, .. }) if content.contains("/bin/sh -c reboot"))));
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "disk hdd" && r.reason.contains("no serial a udev rule can match")),
        "{:?}",
        p.refused
    );
    // Characters udev keeps in ID_SERIAL_SHORT (`#+-.:=@_`) are written as they are.
    let p = with_serial(&mut o, "ZA4+0@01");
    assert!(
        p.steps.iter().any(|s| matches!(&s.step, Step::WriteFile(WriteFile { content, .. }) if content.contains(r#"ENV{ID_SERIAL_SHORT}=="ZA4+0@01", RUN+="/usr/sbin/hdparm -W0 $devnode""#))),
        "{:?}",
        p.steps
    );
}

#[test]
fn a_disk_missing_for_now_keeps_its_line_in_the_write_cache_rule() {
    let (mut d, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let rule = h.world().boot.write_cache_rule.clone().unwrap();
    assert!(rule.contains("# disk hdd0"), "{rule}");
    // hdd0 (sdc) is pulled; the file changes hdd1's cache, so the rule is rewritten.
    let mut w = h.world();
    w.block_devices.retain(|b| b.kname != "sdc");
    for a in w.arrays.iter_mut() {
        if a.members.iter().any(|m| m.kname == "sdc") {
            a.members.retain(|m| m.kname != "sdc");
            a.degraded = 1;
        }
    }
    let h = hyraid::sim::SimHost::new(w);
    d.disks.get_mut("hdd1").unwrap().write_cache = Some(false);
    let p = plan_for(&h, &d, Policy::default());
    let new = p
        .steps
        .iter()
        .find_map(|s| match &s.step {
            Step::WriteFile(WriteFile { path, content, .. })
                if path.ends_with("write-cache.rules") =>
            {
                Some(content.clone())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("{:#?}", p.steps));
    let old_line = rule
        .lines()
        .skip_while(|l| *l != "# disk hdd0")
        .nth(1)
        .unwrap();
    assert!(new.contains(&format!("# disk hdd0\n{old_line}\n")), "{new}");
    assert!(new.contains("# disk hdd1"), "{new}");
}

/// Field report 004: a hand-made ARRAY line with `bitmap=/path` (a file bitmap). Once hyraid
/// manages the array its bitmap is internal, and mdadm opens that file at assembly (the array
/// does not start when it is gone): the line is rewritten without it, on one line or continued.
#[test]
fn a_file_bitmap_on_an_array_line_of_ours_is_rewritten_without_it() {
    let u = "3281ab44:b8020856:cde55d96:154408ad";
    let ours = vec![("md1".to_string(), u.to_string())];
    let other = "ARRAY /dev/md3 metadata=1.2 UUID=d0d9e205:8af1844d:5cadff28:b5c04810 bitmap=/mnt/ssd/extra-bitmap\n";
    for line in [
        format!("ARRAY /dev/md1 metadata=1.2 UUID={u} bitmap=/mnt/ssd/root-bitmap\n"),
        format!("ARRAY /dev/md1 metadata=1.2 UUID={u}\n   bitmap=/mnt/ssd/root-bitmap\n"),
        format!("ARRAY /dev/md1 bitmap=/mnt/ssd/root-bitmap\n   metadata=1.2 UUID={u}\n"),
        format!("ARRAY /dev/md1 metadata=1.2 UUID={u} BITMAP=/mnt/ssd/root-bitmap\n"),
    ] {
        let cur = format!("MAILADDR root\n{line}{other}");
        let new = hyraid::plan::persist::managed_mdadm_conf(Some(&cur), &ours, &[]).unwrap();
        assert!(!new.contains("root-bitmap"), "{new}");
        assert!(new.contains(&format!(" metadata=1.2 UUID={u}\n")), "{new}");
        assert!(
            new.contains(other),
            "another array's line is not ours: {new}"
        );
        // Written once, it is left as it is.
        let again = hyraid::plan::persist::managed_mdadm_conf(Some(&new), &ours, &[]).unwrap();
        assert_eq!(again, new);
    }
    // Without `bitmap=` the hand-made line that lists the array already is kept as it is.
    let plain = format!("MAILADDR root\nARRAY /dev/md1 metadata=1.2 UUID={u}\n{other}");
    assert_eq!(
        hyraid::plan::persist::managed_mdadm_conf(Some(&plain), &ours, &[]).unwrap(),
        plain
    );
}
