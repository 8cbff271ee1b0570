//! Keys of encrypted mirrors on the simulated machine: rotated (add, prove, remove, backup again),
//! a key copied to a new path, a key file shared by two mirrors, and the paths and devices a
//! header or a backup must never be written over.

use crate::common;
use common::luks::*;
use common::*;
use hyraid::config::load_str;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

#[test]
fn a_key_is_rotated_add_prove_remove_and_the_backup_taken_again() {
    let (mut d, h) = built();
    let uuid = |h: &SimHost| {
        h.world()
            .luks
            .iter()
            .find(|l| l.mapping.as_ref().is_some_and(|m| m.name == "data0_crypt"))
            .unwrap()
            .uuid
            .clone()
            .unwrap()
    };
    let u = uuid(&h);
    d.mirrors
        .get_mut("data0")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .key_file = "/etc/hyraid/keys/data0-2027.key".into();
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&p),
        vec![
            "create_key_file",
            "add_luks_key",
            "test_luks_key",
            "write_file",
            "remove_luks_key",
            "backup_luks_header",
            "write_file"
        ],
        "{:?}",
        p.steps
    );
    let lines: Vec<String> = p
        .steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::plan::step::command_line(&c))
        .collect();
    assert!(lines.contains(&"cryptsetup luksAddKey --batch-mode --key-file /etc/hyraid/keys/data0.key --pbkdf pbkdf2 --pbkdf-force-iterations 1000 /dev/md/data0 /etc/hyraid/keys/data0-2027.key".to_string()), "{lines:?}");
    assert!(
        lines.contains(
            &"cryptsetup luksRemoveKey --batch-mode /dev/md/data0 /etc/hyraid/keys/data0.key"
                .to_string()
        ),
        "{lines:?}"
    );
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    assert_eq!(
        w.key_slots[&u].values().collect::<Vec<_>>(),
        vec!["/etc/hyraid/keys/data0-2027.key"]
    );
    assert!(w.boot.crypttab.unwrap().contains(&format!(
        "data0_crypt UUID={u} /etc/hyraid/keys/data0-2027.key luks\n"
    )));
    assert_eq!(
        w.files["/root/data0.luks-header"].header_slots,
        Some(vec![1]),
        "the backup holds only the new key's slot"
    );
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    // Neither key opens: refused, nothing is removed.
    let mut w = h.world();
    w.key_slots.get_mut(&u).unwrap().clear();
    let mut d2 = d.clone();
    d2.mirrors
        .get_mut("data0")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .key_file = "/etc/hyraid/keys/data0.key".into();
    let p = plan_for(&SimHost::new(w), &d2, Policy::default());
    assert!(refusals(&p).contains("neither the file's key file /etc/hyraid/keys/data0.key nor the one /etc/crypttab names (/etc/hyraid/keys/data0-2027.key) opens"), "{}", refusals(&p));
}

#[test]
fn what_the_review_found_is_refused_or_never_done() {
    // Two mirrors sharing one key file: it is made once, never written over by the second.
    let (mut d, h) = encrypted();
    d.mirrors
        .get_mut("data1")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .key_file = "/etc/hyraid/keys/data0.key".into();
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&p).iter().filter(|o| *o == "create_key_file").count(),
        1,
        "{:?}",
        ops(&p)
    );
    let lines: Vec<String> = p
        .steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::plan::step::command_line(&c))
        .collect();
    assert!(
        lines.contains(&"test '!' -s /etc/hyraid/keys/data0.key".to_string()),
        "a key file that holds anything stops the apply"
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    // A header backup at a key file's path, or shared by two mirrors: a validate error.
    let text = std::fs::read_to_string(FILE).unwrap();
    let e = load_str(
        "f.yaml",
        &text.replace("/root/data1.luks-header", "/etc/hyraid/keys/data0.key"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("/etc/hyraid/keys/data0.key is also a key file of the file"),
        "{e}"
    );
    let e = load_str(
        "f.yaml",
        &text.replace("/root/data1.luks-header", "/root/data0.luks-header"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("keep their header backups in the same file"),
        "{e}"
    );
    // A file already at the backup's path before the format: not a backup of this header.
    let (d, h) = encrypted();
    let mut w = h.world();
    w.files.insert(
        "/root/data0.luks-header".into(),
        hyraid::observe::luks::SecretFile {
            mode: 0o400,
            uid: 0,
            size: 1 << 24,
            header_uuid: None,
            header_slots: None,
        },
    );
    let p = plan_for(&SimHost::new(w), &d, Policy::default());
    assert!(refusals(&p).contains("/root/data0.luks-header, where the file keeps this array's header backup, exists already"), "{}", refusals(&p));
    // A partition table on the array counts as content.
    let (d, h) = built();
    let mut obs = observe(&h, &d);
    obs.luks.clear();
    obs.other_devices.retain(|o| o.kind != "crypt");
    obs.boot.crypttab = None;
    obs.lvm = Default::default();
    let md = obs.arrays[0].kname.clone();
    let mut part = obs.block_devices[0].clone();
    part.kname = format!("{md}p1");
    part.parent = Some(md.clone());
    obs.block_devices.push(part);
    for a in obs.arrays.iter_mut() {
        a.fstype = None;
    }
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    assert!(
        refusals(&p).contains(&format!("carries partition {md}p1")),
        "{}",
        refusals(&p)
    );
    // A header lsblk shows without a UUID is refused, never listed as `UUID=`.
    let mut obs = observe(&h, &d);
    obs.luks[0].uuid = None;
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    assert!(refusals(&p).contains("but no UUID"), "{}", refusals(&p));
}

#[test]
fn a_key_copied_to_a_new_path_keeps_its_one_slot() {
    let (mut d, h) = built();
    d.mirrors
        .get_mut("data0")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .key_file = "/etc/hyraid/keys/copy.key".into();
    let mut obs = observe(&h, &d);
    let i = obs
        .luks
        .iter()
        .position(|l| l.mapping.as_ref().is_some_and(|m| m.name == "data0_crypt"))
        .unwrap();
    let key = hyraid::observe::luks::SecretFile {
        mode: 0o400,
        uid: 0,
        size: 512,
        header_uuid: None,
        header_slots: None,
    };
    obs.boot
        .secret_files
        .insert("/etc/hyraid/keys/copy.key".into(), key);
    obs.luks[i].opens_with = [
        ("/etc/hyraid/keys/copy.key".to_string(), true),
        ("/etc/hyraid/keys/data0.key".to_string(), true),
    ]
    .into();
    // The same key: no slot is removed, crypttab names the new path.
    obs.luks[i].same_key = Some(true);
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    assert!(
        !ops(&p).contains(&"remove_luks_key".to_string()),
        "{:?}",
        ops(&p)
    );
    assert_eq!(ops(&p), vec!["write_file"], "{:?}", ops(&p));
    // Not known to differ: refused rather than guessed.
    obs.luks[i].same_key = None;
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    assert!(
        refusals(&p).contains("hyraid could not compare them"),
        "{}",
        refusals(&p)
    );
    // Known to differ: the old key's slot goes.
    obs.luks[i].same_key = Some(false);
    let p = hyraid::plan::plan(&d, &obs, Policy::default()).unwrap();
    assert!(
        ops(&p).contains(&"remove_luks_key".to_string()),
        "{:?}",
        ops(&p)
    );
}

#[test]
fn status_says_when_the_header_backup_or_the_key_file_is_not_what_keeps_the_data() {
    use hyraid::status::Severity;
    let (d, h) = built();
    let findings = |h: &SimHost| {
        let o = observe(h, &d);
        hyraid::status::status(&o, Some(&d), None)
            .into_iter()
            .filter(|f| f.object == "mirror data0")
            .filter(|f| f.message.contains("key file") || f.message.contains("header backup"))
            .map(|f| (f.severity, f.message))
            .collect::<Vec<_>>()
    };
    assert_eq!(findings(&h), vec![], "a built box is clean");
    // The backup gone: a lint, with how to take it again.
    let mut w = h.world();
    w.files.remove("/root/data0.luks-header");
    let f = findings(&SimHost::new(w));
    assert_eq!(
        f,
        vec![(
            Severity::Lint,
            "the header backup /root/data0.luks-header the file names is missing".to_string()
        )]
    );
    // A key added since the backup was taken: it no longer matches.
    let o = run(
        &h,
        &[
            "install",
            "-m",
            "0400",
            "-o",
            "root",
            "-g",
            "root",
            "/dev/null",
            "/root/extra.key",
        ],
    );
    assert_eq!(o.status, 0);
    run(
        &h,
        &[
            "dd",
            "if=/dev/urandom",
            "of=/root/extra.key",
            "bs=512",
            "count=1",
            "iflag=fullblock",
        ],
    );
    let o = run(
        &h,
        &[
            "cryptsetup",
            "luksAddKey",
            "--batch-mode",
            "--key-file",
            "/etc/hyraid/keys/data0.key",
            "/dev/md/data0",
            "/root/extra.key",
        ],
    );
    assert_eq!(o.status, 0, "{}", o.stderr);
    let f = findings(&h);
    assert!(
        f.iter().any(|(s, m)| *s == Severity::Lint
            && m.starts_with("the header backup /root/data0.luks-header no longer matches the header: its key slots are [0], the header's [0, 1]")),
        "{f:?}"
    );
    // The key file gone: the data cannot be opened after a reboot.
    let mut w = h.world();
    w.files.remove("/etc/hyraid/keys/data0.key");
    let f = findings(&SimHost::new(w));
    assert!(
        f.contains(&(
            Severity::Degraded,
            "its key file /etc/hyraid/keys/data0.key is missing or empty".to_string()
        )),
        "{f:?}"
    );
}
