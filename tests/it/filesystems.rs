//! Filesystems on LVs: mkfs on a blank LV (before its writecache is attached), the fstab line by
//! UUID in hyraid's block (other lines kept), the mount; adoption, a different signature only
//! with --allow-destroy, mount points taken by something else refused. Exact commands and an
//! empty second plan.

use crate::common;

use common::fs::*;
use common::*;
use hyraid::config::load_str;
use hyraid::observe::Observed;
use hyraid::plan::{Policy, Step};
use hyraid::sim::SimHost;

fn fs_commands(h: &SimHost) -> Vec<String> {
    changes(h)
        .into_iter()
        .filter(|c| {
            [
                "mkfs",
                "mkdir",
                "systemctl",
                "mount",
                "lvconvert",
                "(replace) /etc/fstab",
            ]
            .iter()
            .any(|p| c.starts_with(p))
        })
        .collect()
}

#[test]
fn ext4_is_made_listed_and_mounted_and_converges() {
    let d = file(
        "{ type: ext4, label: nextcloud, mount: /srv/nextcloud, options: [noatime] }",
        false,
    );
    let h = machine();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    let uuid = p
        .steps
        .iter()
        .find_map(|s| match &s.step {
            Step::MakeFilesystem(m) => Some(m.uuid.clone()),
            _ => None,
        })
        .unwrap();
    // The same observation gives the same UUID (a saved plan is re-derived).
    assert_eq!(plan_for(&h, &d, Policy::default()).steps, p.steps);
    println!(
        "{}",
        hyraid::render::render(&p, hyraid::render::Format::Text, false)
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        fs_commands(&h),
        vec![
            format!("mkfs.ext4 -b 4096 -U {uuid} -L nextcloud /dev/vg0/nextcloud"),
            "(replace) /etc/fstab".to_string(),
            "mkdir -p /srv/nextcloud".into(),
            "systemctl daemon-reload".into(),
            "mount /srv/nextcloud".into(),
        ]
    );
    let fstab = h.world().boot.fstab.unwrap();
    assert_eq!(
        fstab,
        format!(
            "{FSTAB}# hyraid: the filesystems of hyraid.yaml; `hyraid apply` keeps the lines up to the end mark\nUUID={uuid} /srv/nextcloud ext4 noatime 0 2\n# hyraid: end\n"
        )
    );
    let fs = &h.world().filesystems[0];
    assert_eq!(fs.mountpoint.as_deref(), Some("/srv/nextcloud"));
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
    // status reports it, with the size apply reads.
    let found = hyraid::status::status(&observe(&h, &d), Some(&d), None);
    assert!(
        found.iter().any(|f| f.object == "lv vg0/nextcloud"
            && f.message == "ext4 filesystem, 100.00 GiB, mounted at /srv/nextcloud"),
        "{found:#?}"
    );
}

#[test]
fn xfs_is_made_before_the_writecache_is_attached() {
    let d = file("{ type: xfs, mount: /srv/nextcloud }", true);
    let h = machine();
    apply(&h, &d, Policy::default()).unwrap();
    let c = fs_commands(&h);
    let mkfs = c
        .iter()
        .position(|c| c.starts_with("mkfs.xfs -b size=4096 -s size=4096 -m uuid="))
        .unwrap();
    let attach = c
        .iter()
        .position(|c| c.starts_with("lvconvert --yes --type writecache"))
        .unwrap();
    assert!(mkfs < attach, "{c:#?}");
    // The writecache block matches the filesystem's, given explicitly.
    assert!(
        c[attach].contains("--cachesettings block_size=4096 vg0/nextcloud"),
        "{c:#?}"
    );
    let wc = h
        .world()
        .lvm
        .lvs
        .iter()
        .find_map(|l| l.writecache.clone())
        .unwrap();
    assert_eq!(wc.block_size, Some(4096));
    assert!(
        !wc.settings.contains_key("block_size"),
        "not a setting: {wc:?}"
    );
    assert!(
        h.world()
            .boot
            .fstab
            .unwrap()
            .contains(" /srv/nextcloud xfs defaults 0 0\n")
    );
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

#[test]
fn a_filesystem_of_the_file_type_is_adopted_and_another_needs_allow_destroy() {
    let h = machine();
    apply(&h, &file("{ type: ext4 }", false), Policy::default()).unwrap();
    let before = h.commands().len();
    // Same type: adopted, only the fstab line and the mount.
    let d = file("{ type: ext4, mount: /srv/nc }", false);
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p), vec!["write_file", "mount_filesystem"]);
    // Another type: refused without the flag, `destroys` with it.
    let x = file("{ type: xfs }", false);
    let p = plan_for(&h, &x, Policy::default());
    assert!(p.steps.is_empty());
    assert!(
        p.refused[0]
            .reason
            .contains("the LV carries ext4, the file wants xfs"),
        "{:#?}",
        p.refused
    );
    assert!(p.refused[0].fix.contains("--allow-destroy"));
    let allow = Policy::destroying(true);
    let p = plan_for(&h, &x, allow.clone());
    assert_eq!(p.steps[0].risk, hyraid::plan::Risk::Destroys);
    apply(&h, &x, allow.clone()).unwrap();
    assert!(
        changes_since(&h, before)
            .iter()
            .any(|c| c.starts_with("mkfs.xfs") && c.contains(" -f /dev/vg0/nextcloud"))
    );
    assert!(plan_for(&h, &x, allow.clone()).is_empty());
}

#[test]
fn mount_points_in_use_are_refused() {
    let h = machine();
    // A line of the distribution's fstab owns /media/cdrom0.
    let d = file("{ type: ext4, mount: /media/cdrom0 }", false);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("cannot mount at /media/cdrom0")),
        "{:#?}",
        p.refused
    );
    // Mounted elsewhere: hyraid does not move it.
    apply(
        &h,
        &file("{ type: ext4, mount: /srv/a }", false),
        Policy::default(),
    )
    .unwrap();
    let p = plan_for(
        &h,
        &file("{ type: ext4, mount: /srv/b }", false),
        Policy::default(),
    );
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("mounted at /srv/a, the file says /srv/b")),
        "{:#?}",
        p.refused
    );
    // A mounted filesystem of another type is re-made only with --allow-destroy (tests/it/fs_remake.rs).
    let p = plan_for(
        &h,
        &file("{ type: xfs, mount: /srv/a }", false),
        Policy::default(),
    );
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("mounted at /srv/a; the file wants xfs")),
        "{:#?}",
        p.refused
    );
}

#[test]
fn without_systemd_no_daemon_reload() {
    let mut w: Observed = example("microserver-gen8").1.world();
    w.boot.fstab = None;
    let h = SimHost::new(w);
    let d = file("{ type: ext4, mount: /srv/nextcloud }", false);
    apply(&h, &d, Policy::default()).unwrap();
    assert!(!fs_commands(&h).iter().any(|c| c.starts_with("systemctl")));
    assert!(
        h.world()
            .boot
            .fstab
            .unwrap()
            .starts_with("# hyraid: the filesystems")
    );
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

#[test]
fn the_filesystem_grows_with_its_lv_online_and_after_an_interrupted_lvextend() {
    for (fs, tool) in [
        ("ext4", "resize2fs /dev/vg0/nextcloud"),
        ("xfs", "xfs_growfs /srv/nextcloud"),
    ] {
        let h = machine();
        apply(
            &h,
            &file(&format!("{{ type: {fs}, mount: /srv/nextcloud }}"), false),
            Policy::default(),
        )
        .unwrap();
        let before = h.commands().len();
        let grown = file(&format!("{{ type: {fs}, mount: /srv/nextcloud }}"), false);
        let mut grown = grown;
        nextcloud(&mut grown).size = hyraid::config::size::LvSize::Bytes(200 << 30);
        let p = plan_for(&h, &grown, Policy::default());
        assert_eq!(ops(&p), vec!["extend_lv", "grow_filesystem"], "{fs}");
        println!(
            "{}",
            hyraid::render::render(&p, hyraid::render::Format::Text, false)
        );
        apply(&h, &grown, Policy::default()).unwrap();
        assert_eq!(
            changes_since(&h, before)
                .into_iter()
                .filter(|c| !c.starts_with("dumpe2fs") && !c.starts_with("xfs_info"))
                .collect::<Vec<_>>(),
            vec![
                "lvextend -L 214748364800b vg0/nextcloud".to_string(),
                tool.into()
            ]
        );
        let f = &h.world().filesystems[0];
        assert_eq!(f.size, Some(200 << 30), "{fs}");
        assert_eq!(f.mountpoint.as_deref(), Some("/srv/nextcloud"));
        assert!(plan_for(&h, &grown, Policy::default()).is_empty());
        // Killed between the lvextend and the grow: the next plan grows the filesystem alone.
        let mut more = grown.clone();
        nextcloud(&mut more).size = hyraid::config::size::LvSize::Bytes(300 << 30);
        run(&h, &["lvextend", "-L", "322122547200b", "vg0/nextcloud"]);
        let p = plan_for(&h, &more, Policy::default());
        assert_eq!(ops(&p), vec!["grow_filesystem"], "{fs}");
        assert!(p.steps[0].reason.contains("smaller than its LV"));
        apply(&h, &more, Policy::default()).unwrap();
        assert!(plan_for(&h, &more, Policy::default()).is_empty());
    }
}

#[test]
fn an_unmounted_ext4_is_checked_first_and_an_unmounted_xfs_is_refused() {
    let h = machine();
    apply(&h, &file("{ type: ext4 }", false), Policy::default()).unwrap();
    let mut d = file("{ type: ext4 }", false);
    nextcloud(&mut d).size = hyraid::config::size::LvSize::Bytes(200 << 30);
    let cmds: Vec<String> = plan_for(&h, &d, Policy::default()).steps[1]
        .step
        .commands()
        .iter()
        .map(hyraid::render::command_line)
        .collect();
    assert_eq!(
        cmds,
        vec![
            "e2fsck -f -p /dev/vg0/nextcloud",
            "resize2fs /dev/vg0/nextcloud"
        ]
    );
    let h = machine();
    apply(&h, &file("{ type: xfs }", false), Policy::default()).unwrap();
    let mut d = file("{ type: xfs }", false);
    nextcloud(&mut d).size = hyraid::config::size::LvSize::Bytes(200 << 30);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused[0].reason.contains("xfs grows only while mounted"),
        "{:#?}",
        p.refused
    );
}

#[test]
fn the_example_with_filesystems_and_a_cache_builds_and_converges() {
    let d = hyraid::config::load_file(std::path::Path::new("examples/filesystems/nextcloud.yaml"))
        .unwrap();
    let h = machine();
    apply(&h, &d, Policy::default()).unwrap();
    let c = fs_commands(&h);
    let mkfs = c.iter().position(|c| c.starts_with("mkfs.ext4")).unwrap();
    let attach = c
        .iter()
        .position(|c| c.starts_with("lvconvert --yes --type writecache"))
        .unwrap();
    assert!(mkfs < attach, "{c:#?}");
    let mounted: Vec<Option<String>> = h
        .world()
        .filesystems
        .iter()
        .map(|f| f.mountpoint.clone())
        .collect();
    assert_eq!(
        mounted,
        vec![Some("/srv/media".into()), Some("/srv/nextcloud".into())]
    );
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

#[test]
fn lvconvert_warns_only_without_a_filesystem_and_a_512_byte_block() {
    // lvconvert.c `_set_writecache_block_size`, lvm2 2.03.16.
    let h = machine();
    apply(&h, &file("{ type: ext4 }", false), Policy::default()).unwrap();
    let cache = "/dev/disk/by-id/ata-KINGSTON_SA400S37240G_50026B7782000001";
    for (lv, pv) in [
        ("a", "/dev/md/data0"),
        ("a_c", cache),
        ("b", "/dev/md/data0"),
        ("b_c", cache),
    ] {
        let o = run(
            &h,
            &[
                "lvcreate",
                "--yes",
                "-n",
                lv,
                "-L",
                "1073741824b",
                "vg0",
                pv,
            ],
        );
        assert_eq!(o.status, 0, "{o:?}");
    }
    for cv in ["a_c", "b_c"] {
        run(&h, &["lvchange", "--activate", "n", &format!("vg0/{cv}")]);
    }
    let attach = |cv: &str, settings: &str, lv: &str| {
        run(
            &h,
            &[
                "lvconvert",
                "--yes",
                "--type",
                "writecache",
                "--cachevol",
                cv,
                "--cachesettings",
                settings,
                lv,
            ],
        )
    };
    let o = attach("a_c", "block_size=4096", "vg0/a");
    assert_eq!(o.status, 0, "{o:?}");
    assert!(
        o.stderr.contains("may corrupt the file system"),
        "no filesystem, 4096: {o:?}"
    );
    let o = attach("b_c", "block_size=512", "vg0/b");
    assert_eq!(o.status, 0, "{o:?}");
    assert!(o.stderr.is_empty(), "no filesystem, 512: {o:?}");
}

#[test]
fn import_writes_the_filesystem_of_an_lv_with_an_fstab_line_and_plans_nothing() {
    use hyraid::import;
    let h = machine();
    let d = file(
        "{ type: ext4, mount: /srv/nextcloud, options: [noatime] }",
        false,
    );
    apply(&h, &d, Policy::default()).unwrap();
    let uuid = h.world().filesystems[0].uuid.clone().unwrap();
    // hyraid's own block, and a line of the machine's own (written by hand before hyraid).
    let own = format!("{FSTAB}UUID={uuid} /srv/nextcloud ext4 noatime,nodev 0 2\n");
    // A hand-written line may name the LV by any of its names, as mount(8) reads them.
    let by_name = |source: &str| format!("{FSTAB}{source} /srv/nextcloud ext4 noatime,nodev 0 2\n");
    let mut variants = vec![h.world().boot.fstab.unwrap(), own];
    for source in [
        "/dev/mapper/vg0-nextcloud".to_string(),
        "/dev/vg0/nextcloud".to_string(),
        format!("/dev/disk/by-uuid/{uuid}"),
    ] {
        variants.push(by_name(&source));
    }
    for fstab in variants {
        let mut w = h.world();
        w.boot.fstab = Some(fstab.clone());
        let obs = observe(&SimHost::new(w), &d);
        let yaml = import::to_yaml(&import::import(&obs));
        assert!(
            yaml.contains("filesystem:")
                && yaml.contains("mount: /srv/nextcloud")
                && yaml.contains("noatime"),
            "{yaml}"
        );
        let back = load_str("imported.yaml", &yaml).unwrap();
        let p = hyraid::plan::plan(&back, &obs, Policy::default()).unwrap();
        let fs_steps: Vec<String> = ops(&p)
            .into_iter()
            .filter(|o| o.contains("filesystem") || o == "write_file" && !p.steps.is_empty())
            .collect();
        assert!(p.refused.is_empty(), "{:#?}\n{yaml}", p.refused);
        assert!(
            !p.steps.iter().any(
                |s| matches!(&s.step, Step::WriteFile(w) if w.path == "/etc/fstab")
                    || matches!(s.step, Step::MakeFilesystem(_) | Step::MountFilesystem(_))
            ),
            "{fs_steps:?}\n{yaml}"
        );
    }
}
