//! A filesystem on a mirror used without LVM: mkfs on /dev/md/NAME right after the array is
//! created (during its initial resync), its fstab line by UUID in hyraid's block, the mount;
//! adoption of a filesystem of the file's type, another signature (an orphan PV's label) only
//! with --allow-destroy, a grow when the array is larger. Exact commands and an empty second
//! plan.

use crate::common;

use common::fs::FSTAB;
use common::*;
use hyraid::config::{Desired, load_str};
use hyraid::plan::{Policy, Risk, Step};
use hyraid::sim::SimHost;

fn file(fs: &str) -> Desired {
    common::fs::mirror_file(fs)
}

fn uuid_of_mkfs(p: &hyraid::plan::Plan) -> String {
    p.steps
        .iter()
        .find_map(|s| match &s.step {
            Step::MakeFilesystem(m) => Some(m.uuid.clone()),
            _ => None,
        })
        .expect("a mkfs step")
}

fn fs_commands(h: &SimHost) -> Vec<String> {
    changes(h)
        .into_iter()
        .filter(|c| {
            [
                "mdadm --create",
                "mkfs",
                "mkdir",
                "systemctl",
                "mount",
                "(replace) /etc/fstab",
            ]
            .iter()
            .any(|p| c.starts_with(p))
        })
        .collect()
}

#[test]
fn ext4_on_a_new_mirror_is_made_listed_and_mounted_and_converges() {
    let d = file("{ type: ext4, label: backup, mount: /srv/backup, options: [noatime] }");
    let h = common::fs::machine();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    println!(
        "{}",
        hyraid::render::render(&p, hyraid::render::Format::Text, false)
    );
    // mkfs follows the array's creation, before mdadm.conf and the initramfs.
    let o = ops(&p);
    let create = o.iter().position(|s| s == "create_array").unwrap();
    assert_eq!(o[create + 1], "make_filesystem", "{o:?}");
    let uuid = uuid_of_mkfs(&p);
    // The same observation gives the same UUID (a saved plan is re-derived).
    assert_eq!(plan_for(&h, &d, Policy::default()).steps, p.steps);
    apply(&h, &d, Policy::default()).unwrap();
    let c = fs_commands(&h);
    assert!(c[0].starts_with("mdadm --create /dev/md/backup"), "{c:#?}");
    assert_eq!(
        c[1..],
        [
            format!("mkfs.ext4 -b 4096 -U {uuid} -L backup /dev/md/backup"),
            "(replace) /etc/fstab".to_string(),
            "mkdir -p /srv/backup".into(),
            "systemctl daemon-reload".into(),
            "mount /srv/backup".into(),
        ]
    );
    assert_eq!(
        h.world().boot.fstab.unwrap(),
        format!(
            "{FSTAB}# hyraid: the filesystems of hyraid.yaml; `hyraid apply` keeps the lines up to the end mark\nUUID={uuid} /srv/backup ext4 noatime 0 2\n# hyraid: end\n"
        )
    );
    let obs = observe(&h, &d);
    let fs = obs.filesystems.iter().find(|f| f.md).unwrap();
    assert_eq!(fs.fstype, "ext4");
    assert_eq!(fs.uuid.as_deref(), Some(uuid.as_str()));
    assert_eq!(fs.mountpoint.as_deref(), Some("/srv/backup"));
    let second = plan_for(&h, &d, Policy::default());
    assert!(second.is_empty(), "{:#?}", second.steps);
}

#[test]
fn a_saved_plan_is_re_derived_and_applied_as_saved() {
    let fs = "{ type: xfs, mount: /srv/backup }";
    let d = file(fs);
    let h = common::fs::machine();
    let text = common::fs::mirror_file_text(fs);
    let p = saved_plan("mfs.yaml", &text, &observe(&h, &d), Policy::default());
    let json = serde_json::to_string(&p).unwrap();
    // The mirror's filesystem steps name the mirror, not an LV.
    assert!(
        json.contains(r#""op":"make_filesystem","mirror":"backup","fstype":"xfs""#),
        "{json}"
    );
    let saved: hyraid::plan::Plan = serde_json::from_str(&json).unwrap();
    assert_eq!(saved.steps, p.steps);
    apply_saved(&h, saved, Policy::default()).unwrap();
    let uuid = uuid_of_mkfs(&p);
    assert!(
        changes(&h).contains(&format!(
            "mkfs.xfs -b size=4096 -s size=4096 -m uuid={uuid} /dev/md/backup"
        )),
        "{:#?}",
        changes(&h)
    );
    assert!(
        h.world()
            .boot
            .fstab
            .unwrap()
            .contains(&format!("UUID={uuid} /srv/backup xfs defaults 0 0\n"))
    );
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

/// The mirror made without a filesystem, then given an orphan PV label by hand.
fn mirror_with_a_pv_label() -> SimHost {
    let h = common::fs::machine();
    apply(&h, &file("{ type: ext4 }").tap_no_fs(), Policy::default()).unwrap();
    let out = run(&h, &["pvcreate", "/dev/md/backup"]);
    assert_eq!(out.status, 0, "{out:?}");
    h
}

trait NoFs {
    fn tap_no_fs(self) -> Self;
}

impl NoFs for Desired {
    fn tap_no_fs(mut self) -> Self {
        self.mirrors.get_mut("backup").unwrap().filesystem = None;
        self
    }
}

#[test]
fn another_signature_is_overwritten_only_with_allow_destroy() {
    let h = mirror_with_a_pv_label();
    let d = file("{ type: ext4, mount: /srv/backup }");
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(s.step, Step::MakeFilesystem(_))),
        "{:#?}",
        p.steps
    );
    let r = &p.refused[0];
    assert_eq!(r.object, "mirror backup");
    assert!(
        r.reason.contains("over the LVM2_member on it: the array carries LVM2_member, the file wants ext4: everything on the array is lost"),
        "{r:#?}"
    );
    assert!(r.fix.contains("--allow-destroy"), "{r:#?}");
    let allow = Policy::destroying(true);
    let p = plan_for(&h, &d, allow.clone());
    let mk = p
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::MakeFilesystem(_)))
        .unwrap();
    assert_eq!(mk.risk, Risk::Destroys);
    let before = h.commands().len();
    apply(&h, &d, allow.clone()).unwrap();
    let uuid = uuid_of_mkfs(&p);
    assert_eq!(
        changes_since(&h, before)[0],
        format!("mkfs.ext4 -b 4096 -U {uuid} -F /dev/md/backup")
    );
    assert!(
        h.world()
            .lvm
            .pvs
            .iter()
            .all(|p| p.kname != "md127" || p.vg.is_some())
    );
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
    // A mounted filesystem of another type is made again only with the flag: unmounted,
    // wiped, made with the new type, its fstab line replaced and mounted again.
    let x = file("{ type: xfs, mount: /srv/backup }");
    let p = plan_for(&h, &x, Policy::default());
    assert!(
        p.refused.iter().any(|r| r.object == "mirror backup"
            && r.reason
                .contains("the array carries ext4 mounted at /srv/backup; the file wants xfs")
            && r.fix.contains("--allow-destroy")),
        "{:#?}",
        p.refused
    );
    let p = plan_for(&h, &x, allow.clone());
    let mk = p
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::MakeFilesystem(_)))
        .unwrap();
    assert_eq!(mk.risk, Risk::Destroys);
    let before = h.commands().len();
    apply(&h, &x, allow.clone()).unwrap();
    let ran: Vec<String> = changes_since(&h, before)
        .into_iter()
        .skip_while(|c| c.starts_with("dumpe2fs"))
        .collect();
    assert_eq!(ran[0], "umount /srv/backup", "{ran:#?}");
    assert_eq!(ran[1], "wipefs --all /dev/md/backup", "{ran:#?}");
    assert!(ran[2].starts_with("mkfs.xfs "), "{ran:#?}");
    assert!(ran.iter().any(|c| c == "mount /srv/backup"), "{ran:#?}");
    assert!(plan_for(&h, &x, Policy::default()).is_empty());
}

#[test]
fn an_existing_filesystem_is_adopted_and_grown_to_its_array() {
    let h = common::fs::machine();
    apply(&h, &file("{ type: ext4 }"), Policy::default()).unwrap();
    // Same type: adopted, only the fstab line and the mount.
    let d = file("{ type: ext4, mount: /srv/backup }");
    assert_eq!(
        ops(&plan_for(&h, &d, Policy::default())),
        vec!["write_file", "mount_filesystem"]
    );
    apply(&h, &d, Policy::default()).unwrap();
    // A filesystem smaller than its array (made before the array was larger) grows online.
    let mut w = h.world();
    let fs = w.filesystems.iter_mut().find(|f| f.md).unwrap();
    let full = fs.size.unwrap();
    fs.size = Some(full - (64 << 20));
    let h = SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p), vec!["grow_filesystem"]);
    assert_eq!(
        p.steps[0].reason,
        "the filesystem is smaller than its array; resize2fs grows a mounted ext4 online"
    );
    let before = h.commands().len();
    apply(&h, &d, Policy::default()).unwrap();
    let c: Vec<String> = changes_since(&h, before)
        .into_iter()
        .filter(|c| !c.starts_with("dumpe2fs -h"))
        .collect();
    assert_eq!(c, vec!["resize2fs /dev/md/backup"]);
    let fs = h.world().filesystems.into_iter().find(|f| f.md).unwrap();
    assert_eq!(fs.size, Some(full));
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

#[test]
fn the_backup_example_builds_and_converges() {
    let path = std::path::Path::new("examples/filesystems/backup.yaml");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/hyraid.schema.json").unwrap())
            .unwrap();
    let v: serde_json::Value = hyraid::config::yaml::parse(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .0;
    assert!(jsonschema::validator_for(&schema).unwrap().is_valid(&v));
    let d = hyraid::config::load_file(path).unwrap();
    let h = common::fs::machine();
    apply(&h, &d, Policy::default()).unwrap();
    let c = fs_commands(&h);
    let made: Vec<&String> = c.iter().filter(|c| c.starts_with("mkfs")).collect();
    assert!(made[0].ends_with(" -L backup /dev/md/backup"), "{c:#?}");
    assert!(made[1].ends_with(" -L live /dev/vg0/live"), "{c:#?}");
    let mut mounted: Vec<String> = h
        .world()
        .filesystems
        .iter()
        .filter_map(|f| f.mountpoint.clone())
        .collect();
    mounted.sort();
    assert_eq!(mounted, vec!["/srv/backup", "/srv/live"]);
    assert!(
        h.world()
            .boot
            .fstab
            .unwrap()
            .contains(" /srv/backup ext4 noatime,nodev 0 2\n")
    );
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}

#[test]
fn import_writes_the_mirror_filesystem_and_status_lists_it() {
    let d = file("{ type: ext4, mount: /srv/backup, options: [noatime] }");
    let h = common::fs::machine();
    apply(&h, &d, Policy::default()).unwrap();
    let obs = observe(&h, &d);
    let found = hyraid::status::status(&obs, Some(&d), None);
    assert!(
        found.iter().any(|f| f.object == "mirror backup"
            && f.message.starts_with("ext4 filesystem, ")
            && f.message.ends_with(", mounted at /srv/backup")),
        "{found:#?}"
    );
    let yaml = &hyraid::import::to_yaml(&hyraid::import::import(&obs));
    assert!(
        yaml.contains("filesystem:") && yaml.contains("mount: /srv/backup"),
        "{yaml}"
    );
    let back = load_str("imported.yaml", yaml).unwrap();
    assert_eq!(
        back.mirrors["backup"].filesystem,
        d.mirrors["backup"].filesystem
    );
    assert!(plan_for(&h, &back, Policy::default()).is_empty());
}

#[test]
fn a_mirror_with_a_mounted_filesystem_is_never_stopped() {
    let d = file("{ type: ext4, mount: /srv/backup }");
    let h = common::fs::machine();
    apply(&h, &d, Policy::default()).unwrap();
    let mut gone = d.clone();
    gone.mirrors.get_mut("backup").unwrap().absent = true;
    let p = plan_for(&h, &gone, Policy::destroying(true));
    assert!(
        p.steps
            .iter()
            .all(|s| !matches!(s.step, Step::StopArray(_))),
        "{:#?}",
        p.steps
    );
    assert_eq!(
        p.refused[0].reason,
        "carries ext4 mounted at /srv/backup; mdadm --stop cannot take a mounted array"
    );
}
