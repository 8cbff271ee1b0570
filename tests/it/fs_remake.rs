//! A mounted filesystem of another type than the file's: refused without --allow-destroy; with
//! it, unmounted, wiped, made with the file's type and a new UUID, its fstab line replaced and
//! mounted again. Exact commands and an empty second plan.

use crate::common;

use common::fs::*;
use common::*;
use hyraid::plan::{Policy, Risk, Step};

const DESTROY: Policy = Policy::destroying(true);

#[test]
fn a_mounted_ext4_is_made_again_as_xfs_only_with_allow_destroy() {
    let h = machine();
    apply(
        &h,
        &file("{ type: ext4, label: cloud, mount: /srv/nextcloud }", false),
        Policy::default(),
    )
    .unwrap();
    let old_uuid = h.world().filesystems[0].uuid.clone().unwrap();
    let d = file("{ type: xfs, label: cloud, mount: /srv/nextcloud }", false);
    let refused = plan_for(&h, &d, Policy::default());
    assert!(refused.steps.is_empty(), "{:#?}", refused.steps);
    assert!(
        refused.refused.iter().any(|r| r
            .reason
            .contains("mounted at /srv/nextcloud; the file wants xfs")
            && r.fix.contains("--allow-destroy")),
        "{:#?}",
        refused.refused
    );
    let p = plan_for(&h, &d, DESTROY.clone());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    println!(
        "{}",
        hyraid::render::render(&p, hyraid::render::Format::Text, false)
    );
    let mk = p
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::MakeFilesystem(_)))
        .unwrap();
    assert_eq!(mk.risk, Risk::Destroys);
    let Step::MakeFilesystem(m) = &mk.step else {
        unreachable!()
    };
    let uuid = m.uuid.clone();
    assert_ne!(uuid, old_uuid);
    let n = h.commands().len();
    apply(&h, &d, DESTROY.clone()).unwrap();
    let reads = ["dumpe2fs -h ", "xfs_info ", "xfs_admin -l "];
    let ran: Vec<String> = changes_since(&h, n)
        .into_iter()
        .filter(|c| !reads.iter().any(|r| c.starts_with(r)))
        .collect();
    assert_eq!(
        ran,
        vec![
            "umount /srv/nextcloud".to_string(),
            "wipefs --all /dev/vg0/nextcloud".into(),
            format!(
                "mkfs.xfs -b size=4096 -s size=4096 -m uuid={uuid} -L cloud -f /dev/vg0/nextcloud"
            ),
            "udevadm trigger --action=change --settle /dev/vg0/nextcloud".into(),
            "(replace) /etc/fstab".into(),
            "mkdir -p /srv/nextcloud".into(),
            "systemctl daemon-reload".into(),
            "mount /srv/nextcloud".into(),
        ]
    );
    let w = h.world();
    let f = &w.filesystems[0];
    assert_eq!(f.fstype, "xfs");
    assert_eq!(f.uuid.as_deref(), Some(uuid.as_str()));
    assert_eq!(f.mountpoint.as_deref(), Some("/srv/nextcloud"));
    let fstab = w.boot.fstab.unwrap();
    assert!(fstab.contains(&format!("UUID={uuid} /srv/nextcloud xfs defaults 0 0\n")));
    assert!(!fstab.contains(&old_uuid));
    assert!(plan_for(&h, &d, DESTROY.clone()).is_empty());
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
}
