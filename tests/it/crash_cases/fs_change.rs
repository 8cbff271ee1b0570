//! Crash cases of a filesystem changed in place: its label (a mounted xfs unmounted, relabelled
//! with xfs_admin and mounted again; a mounted ext4 relabelled with e2label), and its type (a
//! mounted ext4 unmounted, wiped, made again as xfs, its fstab line replaced, mounted).

use super::Case;
use crate::common::*;
use hyraid::config::filesystem::{FilesystemSpec, FsType};
use hyraid::plan::Policy;

fn labelled(fstype: FsType, label: &str) -> FilesystemSpec {
    FilesystemSpec {
        fstype,
        label: Some(label.into()),
        mount: Some("/srv/nextcloud".into()),
        options: vec![],
    }
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for fstype in [FsType::Xfs, FsType::Ext4] {
        let (mut d, h) = example("microserver-gen8");
        nextcloud(&mut d).filesystem = Some(labelled(fstype, "media"));
        apply(&h, &d, Policy::default()).unwrap();
        h.finish_syncs();
        nextcloud(&mut d).filesystem = Some(labelled(fstype, "films"));
        v.push(Case {
            name: format!("relabel a mounted {}", fstype.as_str()),
            desired: d,
            before: h.world(),
            allowed_removals: vec![],
            finally: Some(|w| {
                w.filesystems.iter().any(|f| {
                    f.label.as_deref() == Some("films")
                        && f.mountpoint.as_deref() == Some("/srv/nextcloud")
                })
            }),
            policy: Policy::default(),
        });
    }
    let (mut d, h) = example("microserver-gen8");
    nextcloud(&mut d).filesystem = Some(labelled(FsType::Ext4, "media"));
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    nextcloud(&mut d).filesystem = Some(labelled(FsType::Xfs, "media"));
    v.push(Case {
        name: "a mounted ext4 made again as xfs".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec!["wipefs --all /dev/vg0/nextcloud".into()],
        finally: Some(|w| {
            w.filesystems
                .iter()
                .any(|f| f.fstype == "xfs" && f.mountpoint.as_deref() == Some("/srv/nextcloud"))
        }),
        policy: Policy::destroying(true),
    });
    v
}
