//! A label of the file the filesystem does not carry is set in place, never by re-creating it:
//! e2label on an ext4 (mounted or not), xfs_admin -L on an xfs (a mounted one unmounted for it
//! and mounted again), on an LV and on a mirror used without LVM. Exact commands, the label in
//! the world, an empty second plan.

use crate::common;

use common::fs::*;
use common::*;
use hyraid::config::Desired;
use hyraid::plan::{Policy, Risk, Step};
use hyraid::sim::SimHost;

/// The machine after apply of `first`, then the commands the relabel to `second` ran.
fn relabel(first: &str, second: &str) -> (SimHost, Vec<String>) {
    relabel_in(|fs| file(fs, false), first, second)
}

fn relabel_in(mk: impl Fn(&str) -> Desired, first: &str, second: &str) -> (SimHost, Vec<String>) {
    let h = machine();
    apply(&h, &mk(first), Policy::default()).unwrap();
    let n = h.commands().len();
    let d = mk(second);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    println!(
        "{}",
        hyraid::render::render(&p, hyraid::render::Format::Text, false)
    );
    apply(&h, &d, Policy::default()).unwrap();
    let reads = ["dumpe2fs -h ", "xfs_info ", "xfs_admin -l "];
    let ran: Vec<String> = changes_since(&h, n)
        .into_iter()
        .filter(|c| !reads.iter().any(|r| c.starts_with(r)))
        .collect();
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
    (h, ran)
}

fn label(h: &SimHost) -> Option<String> {
    h.world().filesystems[0].label.clone()
}

#[test]
fn ext4_is_relabelled_mounted_with_e2label() {
    let (h, ran) = relabel(
        "{ type: ext4, label: nextcloud, mount: /srv/nextcloud }",
        "{ type: ext4, label: cloud, mount: /srv/nextcloud }",
    );
    assert_eq!(ran, vec!["e2label /dev/vg0/nextcloud cloud".to_string()]);
    assert_eq!(label(&h).as_deref(), Some("cloud"));
    assert_eq!(
        h.world().filesystems[0].mountpoint.as_deref(),
        Some("/srv/nextcloud")
    );
}

#[test]
fn an_unlabelled_ext4_gets_the_label() {
    let (h, ran) = relabel("{ type: ext4 }", "{ type: ext4, label: photos }");
    assert_eq!(ran, vec!["e2label /dev/vg0/nextcloud photos".to_string()]);
    assert_eq!(label(&h).as_deref(), Some("photos"));
}

#[test]
fn a_mounted_xfs_is_unmounted_relabelled_and_mounted_again() {
    let (h, ran) = relabel(
        "{ type: xfs, label: media, mount: /srv/nextcloud }",
        "{ type: xfs, label: films, mount: /srv/nextcloud }",
    );
    assert_eq!(
        ran,
        vec![
            "umount /srv/nextcloud".to_string(),
            "xfs_admin -L films /dev/vg0/nextcloud".into(),
            "mount /srv/nextcloud".into(),
        ]
    );
    assert_eq!(label(&h).as_deref(), Some("films"));
    assert_eq!(
        h.world().filesystems[0].mountpoint.as_deref(),
        Some("/srv/nextcloud")
    );
}

#[test]
fn an_unmounted_xfs_is_relabelled_with_xfs_admin() {
    let (h, ran) = relabel("{ type: xfs, label: media }", "{ type: xfs, label: films }");
    assert_eq!(
        ran,
        vec!["xfs_admin -L films /dev/vg0/nextcloud".to_string()]
    );
    assert_eq!(label(&h).as_deref(), Some("films"));
}

#[test]
fn a_label_the_file_leaves_out_is_kept() {
    let h = machine();
    apply(
        &h,
        &file("{ type: xfs, label: media }", false),
        Policy::default(),
    )
    .unwrap();
    assert!(plan_for(&h, &file("{ type: xfs }", false), Policy::default()).is_empty());
    assert_eq!(label(&h).as_deref(), Some("media"));
}

#[test]
fn the_simulator_refuses_xfs_admin_on_a_mounted_xfs() {
    let h = machine();
    apply(
        &h,
        &file("{ type: xfs, label: media, mount: /srv/nextcloud }", false),
        Policy::default(),
    )
    .unwrap();
    let o = run(&h, &["xfs_admin", "-L", "films", "/dev/vg0/nextcloud"]);
    assert_eq!(o.status, 1);
    assert!(
        o.stderr.contains("contains a mounted filesystem"),
        "{}",
        o.stderr
    );
    assert_eq!(
        run(&h, &["xfs_admin", "-l", "/dev/vg0/nextcloud"]).stdout,
        "label = \"media\"\n"
    );
}

#[test]
fn a_mirrors_mounted_ext4_is_relabelled_online() {
    let (h, ran) = relabel_in(
        mirror_file,
        "{ type: ext4, label: backup, mount: /srv/backup }",
        "{ type: ext4, label: archive, mount: /srv/backup }",
    );
    assert_eq!(ran, vec!["e2label /dev/md/backup archive".to_string()]);
    assert_eq!(label(&h).as_deref(), Some("archive"));
    assert_eq!(
        h.world().filesystems[0].mountpoint.as_deref(),
        Some("/srv/backup")
    );
}

#[test]
fn a_mirrors_mounted_xfs_is_unmounted_relabelled_and_mounted_again() {
    let h = machine();
    let first = mirror_file("{ type: xfs, label: backup, mount: /srv/backup }");
    apply(&h, &first, Policy::default()).unwrap();
    let p = plan_for(
        &h,
        &mirror_file("{ type: xfs, label: archive, mount: /srv/backup }"),
        Policy::default(),
    );
    let s = p
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::RelabelFilesystem(_)))
        .expect("a relabel step");
    assert_eq!(s.risk, Risk::Degrades);
    assert_eq!(s.step.object().to_string(), "mirror backup");
    let (h, ran) = relabel_in(
        mirror_file,
        "{ type: xfs, label: backup, mount: /srv/backup }",
        "{ type: xfs, label: archive, mount: /srv/backup }",
    );
    assert_eq!(
        ran,
        vec![
            "umount /srv/backup".to_string(),
            "xfs_admin -L archive /dev/md/backup".into(),
            "mount /srv/backup".into(),
        ]
    );
    assert_eq!(label(&h).as_deref(), Some("archive"));
}
