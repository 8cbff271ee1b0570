//! Encrypted mirrors (md → LUKS2 → LVM) on the simulated machine: the steps and their order, the
//! key file made private before it holds a key, convergence, the refusals (a device that is not
//! blank, a header that is gone or not hyraid's, a missing key, another mapping name), the open
//! routine, the plaintext cache, and the import of a box built by hand.

use crate::common;
use common::luks::*;
use common::*;
use hyraid::config::load_str;
use hyraid::plan::{Policy, Step};
use hyraid::sim::SimHost;

#[test]
fn a_blank_box_is_encrypted_in_order_and_converges() {
    let (d, h) = encrypted();
    let p = plan_for(&h, &d, Policy::default());
    let o = ops(&p);
    let at = |op: &str, from: usize| {
        o.iter()
            .skip(from)
            .position(|x| x == op)
            .map(|i| i + from)
            .unwrap_or_else(|| panic!("{op} after {from}: {o:?}"))
    };
    // data0: key file, format, header backup, open; the PVs on the mappings after that.
    let key = at("create_key_file", 0);
    let format = at("format_luks", key);
    let backup = at("backup_luks_header", format);
    let open = at("open_luks", backup);
    let create = o.iter().position(|x| x == "create_array").unwrap();
    assert!(create < key, "{o:?}");
    let crypttab = p
        .steps
        .iter()
        .position(|s| matches!(&s.step, Step::WriteFile(w) if w.path == "/etc/crypttab"))
        .unwrap();
    // crypttab once every encrypted mirror and LV is planned (after the VG's steps).
    let pv = at("create_pv", 0);
    assert!(open < pv && pv < crypttab, "{o:?}");
    let lines: Vec<String> = p
        .steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::plan::step::command_line(&c))
        .collect();
    // The key file is made 0400 and root's while it is still empty, then filled.
    let install = lines
        .iter()
        .position(|l| {
            l.starts_with("install -m 0400 -o root -g root /dev/null /etc/hyraid/keys/data0.key")
        })
        .unwrap();
    let dd = lines
        .iter()
        .position(|l| l.starts_with("dd if=/dev/urandom of=/etc/hyraid/keys/data0.key"))
        .unwrap();
    assert!(install < dd);
    assert!(
        lines
            .iter()
            .any(|l| l == "pvcreate /dev/mapper/data0_crypt"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("--allow-discards /dev/md/data1 data1_crypt")),
        "data1 has discard: true"
    );
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    let k = &w.files["/etc/hyraid/keys/data0.key"];
    assert_eq!((k.mode, k.uid, k.size), (0o400, 0, 512));
    assert_eq!(w.files["/root/data0.luks-header"].mode, 0o400);
    let tab = w.boot.crypttab.clone().unwrap();
    let uuid = w
        .luks
        .iter()
        .find(|l| l.mapping.as_ref().is_some_and(|m| m.name == "data0_crypt"))
        .unwrap()
        .uuid
        .clone()
        .unwrap();
    assert!(
        tab.contains(&format!(
            "data0_crypt UUID={uuid} /etc/hyraid/keys/data0.key luks\n"
        )),
        "{tab}"
    );
    assert!(tab.contains("data1_crypt UUID="), "{tab}");
    assert!(
        tab.contains(" /etc/hyraid/keys/data1.key luks,discard\n"),
        "{tab}"
    );
    let pvs: Vec<&str> = w.lvm.pvs.iter().map(|p| p.name.as_str()).collect();
    assert!(pvs.contains(&"/dev/mapper/data0_crypt"), "{pvs:?}");
    let again = plan_for(&h, &d, Policy::default());
    assert!(
        again.steps.is_empty() && again.refused.is_empty(),
        "{:?}",
        ops(&again)
    );
}

#[test]
fn an_array_that_carries_anything_is_never_formatted() {
    let (d, h) = encrypted();
    // The arrays exist already: data0 holds an ext4, data1 is an unencrypted PV.
    let mut plain = d.clone();
    for m in plain.mirrors.values_mut() {
        m.encryption = None;
    }
    plain.volume_groups.clear();
    plain.accept.clear();
    apply(&h, &plain, Policy::default()).unwrap();
    for argv in ["mkfs.ext4 -q /dev/md/data0", "pvcreate /dev/md/data1"] {
        let o = run(&h, &argv.split(' ').collect::<Vec<_>>());
        assert_eq!(o.status, 0, "{argv}: {}", o.stderr);
    }
    let p = plan_for(
        &h,
        &d,
        Policy {
            allow_destroy: true,
            ..Policy::default()
        },
    );
    let r = refusals(&p);
    assert!(r.contains("mirror data0: /dev/md/data0 carries a ext4 signature: hyraid formats LUKS only on a blank array, and never encrypts data in place"), "{r}");
    assert!(
        r.contains("mirror data1: /dev/md/data1 carries") && r.contains("an LVM PV"),
        "{r}"
    );
    assert!(!ops(&p).contains(&"format_luks".to_string()));
}

#[test]
fn a_closed_mapping_is_opened_and_what_is_inside_planned_once_open() {
    let (d, h) = built();
    // Closed by hand (as a boot without crypttab leaves it): LVM no longer sees vg0.
    let mut w = h.world();
    let k = w
        .luks
        .iter()
        .find(|l| l.mapping.as_ref().is_some_and(|m| m.name == "data0_crypt"))
        .unwrap()
        .mapping
        .clone()
        .unwrap()
        .kname;
    for l in w.luks.iter_mut() {
        l.mapping = None;
    }
    w.other_devices.retain(|o| o.kind != "crypt");
    let vg_pvs: Vec<String> = w
        .lvm
        .pvs
        .iter()
        .filter(|p| p.kname.starts_with("dm-"))
        .map(|p| p.kname.clone())
        .collect();
    assert!(vg_pvs.contains(&k));
    let snap = serde_json::to_string(&w).unwrap();
    // Nothing else of vg0 is seen while both mappings are closed.
    let mut closed: hyraid::observe::Observed = serde_json::from_str(&snap).unwrap();
    closed.lvm = Default::default();
    closed.filesystems.clear();
    let h2 = SimHost::new(closed);
    let p = plan_for(&h2, &d, Policy::default());
    assert_eq!(
        ops(&p).iter().filter(|o| *o == "open_luks").count(),
        2,
        "{:?}",
        ops(&p)
    );
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("vg vg0: mirror data0, data1 is opened by this plan")),
        "{:?}",
        p.notes
    );
    assert_eq!(
        p.behind_open,
        vec!["mirror data0".to_string(), "mirror data1".to_string()]
    );
    assert!(
        !ops(&p).contains(&"create_pv".to_string()),
        "nothing is planned on what cannot be seen"
    );
}

#[test]
fn a_missing_key_a_foreign_header_and_another_name_are_refused() {
    let (d, h) = built();
    // The key file is gone: the header opens only with it.
    let mut w = h.world();
    w.files.remove("/etc/hyraid/keys/data0.key");
    for l in w.luks.iter_mut() {
        l.mapping = None;
    }
    w.other_devices.retain(|o| o.kind != "crypt");
    w.lvm = Default::default();
    let p = plan_for(&SimHost::new(w.clone()), &d, Policy::default());
    assert!(
        refusals(&p)
            .contains("mirror data0: the key file /etc/hyraid/keys/data0.key is missing or empty"),
        "{}",
        refusals(&p)
    );
    // The header was made again by someone else: its UUID is not hyraid's line's.
    let mut w2 = h.world();
    let i = w2
        .luks
        .iter()
        .position(|l| l.mapping.as_ref().is_some_and(|m| m.name == "data0_crypt"))
        .unwrap();
    w2.luks[i].uuid = Some("00000000-1111-4222-8333-444444444444".into());
    let p = plan_for(&SimHost::new(w2), &d, Policy::default());
    assert!(refusals(&p).contains("has UUID 00000000-1111-4222-8333-444444444444, but hyraid's line in /etc/crypttab opens UUID="), "{}", refusals(&p));
    // The header is gone while hyraid's crypttab line says it was there.
    let mut w3 = h.world();
    let dev = w3.luks[i].device.clone();
    w3.luks.remove(i);
    w3.other_devices.retain(|o| !o.parents.contains(&dev));
    w3.lvm = Default::default();
    w3.arrays
        .iter_mut()
        .find(|a| a.kname == dev)
        .unwrap()
        .fstype = None;
    let p = plan_for(&SimHost::new(w3), &d, Policy::default());
    assert!(
        refusals(&p)
            .contains("has no LUKS header, but hyraid's line in /etc/crypttab says it had one"),
        "{}",
        refusals(&p)
    );
    assert!(!ops(&p).contains(&"format_luks".to_string()));
    // Open under another name: hyraid never renames a mapping.
    let mut d2 = d.clone();
    d2.mirrors
        .get_mut("data0")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .name = "other".into();
    let p = plan_for(&h, &d2, Policy::default());
    assert!(
        refusals(&p).contains("is open as /dev/mapper/data0_crypt, but the file names it other"),
        "{}",
        refusals(&p)
    );
    // The box's own crypttab line opens the same header under another name: two units at boot.
    let mut w5 = h.world();
    let u = w5.luks[i].uuid.clone().unwrap();
    let tab = w5.boot.crypttab.clone().unwrap();
    w5.boot.crypttab = Some(format!(
        "{tab}mine UUID={u} /etc/hyraid/keys/data0.key luks\n"
    ));
    let p = plan_for(&SimHost::new(w5), &d, Policy::default());
    assert!(
        refusals(&p).contains(&format!("its own line for mine (outside hyraid's block) opens the same LUKS header (UUID={u}) that the file opens as data0_crypt")),
        "{}",
        refusals(&p)
    );
    // A key file others can read is refused before anything is opened with it.
    let mut w4 = h.world();
    w4.files.get_mut("/etc/hyraid/keys/data1.key").unwrap().mode = 0o644;
    let p = plan_for(&SimHost::new(w4), &d, Policy::default());
    assert!(
        refusals(&p).contains("chmod 0400 /etc/hyraid/keys/data1.key"),
        "{}",
        refusals(&p)
    );
}

#[test]
fn a_plaintext_cache_is_an_error_unless_accepted_and_the_plan_says_where_it_lies() {
    let text = std::fs::read_to_string(FILE).unwrap();
    let refused = text.replace(
        "[writecache-not-redundant, plaintext-cache]",
        "[writecache-not-redundant]",
    );
    let e = load_str("hyraid.yaml", &refused).unwrap_err().to_string();
    assert!(e.contains("volume_groups.vg0.lvs.nextcloud.writecache: the writecache of lv vg0/nextcloud is on cache0, which is not encrypted"), "{e}");
    assert!(
        e.contains("give it `encryption:`") && e.contains("plaintext-cache"),
        "{e}"
    );
    let (d, h) = encrypted();
    let p = plan_for(&h, &d, Policy::default());
    let attach = p
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::AttachWritecache(_)))
        .unwrap();
    assert!(
        attach
            .reason
            .contains("PLAINTEXT: the cache is on cache0, which is not encrypted"),
        "{}",
        attach.reason
    );
}

#[test]
fn the_file_is_checked_where_it_says_it() {
    let base = "version: 1\ndisks:\n  a: { id: ata-A }\n  b: { id: ata-B }\n  c: { id: ata-C }\n  e: { id: ata-E }\nmirrors:\n  m0:\n    members: [a, b]\n    encryption: { key_file: KEY NAME }\n  m1:\n    members: [c, e]\n    encryption: { key_file: /etc/k1, name: m0_crypt }\n";
    let e = load_str("f.yaml", &base.replace("KEY NAME", "keys/m0.key"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("f.yaml:10:") && e.contains("`keys/m0.key` is not an absolute path"),
        "{e}"
    );
    assert!(
        e.contains("mirror `m0` and mirror `m1` are both opened as /dev/mapper/m0_crypt"),
        "{e}"
    );
    let e = load_str("f.yaml", &base.replace("KEY NAME", "/run/k, name: a/b"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("under /run/") && e.contains("`a/b` has characters"),
        "{e}"
    );
    let fs = "version: 1\ndisks:\n  a: { id: ata-A }\n  b: { id: ata-B }\nmirrors:\n  m0:\n    members: [a, b]\n    filesystem: { type: ext4 }\n    encryption: { key_file: /etc/k }\n";
    let e = load_str("f.yaml", fs).unwrap_err().to_string();
    assert!(e.contains("has both `encryption` and `filesystem`"), "{e}");
}

#[test]
fn a_box_built_by_hand_is_imported_with_its_key_file_and_plans_empty() {
    let (_, h) = example("microserver-gen8");
    for argv in [
        "mdadm --create /dev/md0 --level=1 --raid-devices=2 /dev/sda /dev/sdc --run",
        "mdadm --wait /dev/md0",
        "install -m 0400 -o root -g root /dev/null /root/md0.key",
        "dd if=/dev/urandom of=/root/md0.key bs=256 count=1 iflag=fullblock",
        "cryptsetup luksFormat --batch-mode --type luks2 --uuid 6f1c0e3a-4b8e-4d7a-9d51-0b7f2c1e9a10 --key-file /root/md0.key /dev/md0",
        "cryptsetup open --type luks --key-file /root/md0.key /dev/md0 cryptdata",
        "pvcreate /dev/mapper/cryptdata",
        "vgcreate vg0 /dev/mapper/cryptdata",
        "lvcreate --yes -n data -L 107374182400b vg0",
    ] {
        let o = run(&h, &argv.split(' ').collect::<Vec<_>>());
        assert_eq!(o.status, 0, "{argv}: {}", o.stderr);
    }
    use hyraid::host::Host;
    let own = "# <target name> <source device> <key file> <options>\ncryptdata UUID=6f1c0e3a-4b8e-4d7a-9d51-0b7f2c1e9a10 /root/md0.key luks\n";
    h.replace_file("/etc/crypttab", own).unwrap();
    let obs = observe_bare(&h);
    let imp = hyraid::import::import(&obs);
    assert!(imp.skipped.is_empty(), "{:?}", imp.skipped);
    let yaml = hyraid::import::to_yaml(&imp);
    assert!(
        yaml.contains("    encryption:\n      key_file: /root/md0.key\n      name: cryptdata\n"),
        "{yaml}"
    );
    assert!(yaml.contains("    pvs:\n    - md0\n"), "{yaml}");
    let d = load_str("imported.yaml", &yaml).unwrap();
    let p = plan_for(&h, &d, Policy::default());
    // Only mdadm.conf's ARRAY line is missing (as for every array built by hand); crypttab's own
    // line opens it as the file says, so hyraid writes no line of its own.
    let files: Vec<String> = p
        .steps
        .iter()
        .filter_map(|s| match &s.step {
            Step::WriteFile(w) => Some(w.path.clone()),
            _ => None,
        })
        .collect();
    assert!(
        !files.contains(&"/etc/crypttab".to_string()),
        "{:?}",
        ops(&p)
    );
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    apply(&h, &d, Policy::default()).unwrap();
    assert_eq!(
        h.world().boot.crypttab.as_deref(),
        Some(own),
        "the box's own line is kept as it is"
    );
    let again = plan_for(&h, &d, Policy::default());
    assert!(again.steps.is_empty(), "{:?}", ops(&again));
}

#[test]
fn a_cipher_other_than_the_headers_and_a_backup_of_another_header_are_refused() {
    let (d, h) = built();
    let obs = observe(&h, &d);
    let data0 = obs
        .luks
        .iter()
        .find(|l| l.mapping.as_ref().is_some_and(|m| m.name == "data0_crypt"))
        .unwrap();
    // Read from `cryptsetup luksDump --dump-json-metadata` for the file's mirrors.
    let header = data0.header.clone().unwrap();
    assert_eq!(
        (
            header.cipher.as_str(),
            header.data_offset,
            header.keyslots.clone()
        ),
        ("aes-xts-plain64", 16 << 20, vec![0])
    );
    assert_eq!(
        obs.boot.secret_files["/root/data0.luks-header"].header_uuid,
        data0.uuid
    );
    let mut d2 = d.clone();
    d2.mirrors
        .get_mut("data0")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .cipher = Some("serpent-xts-plain64".into());
    let p = plan_for(&h, &d2, Policy::default());
    assert!(
        refusals(&p).contains(
            "encrypts with aes-xts-plain64, but the file says `cipher: serpent-xts-plain64`"
        ),
        "{}",
        refusals(&p)
    );
    // The backup file now holds another header: never silently replaced.
    let mut w = h.world();
    w.files
        .get_mut("/root/data0.luks-header")
        .unwrap()
        .header_uuid = Some("00000000-1111-4222-8333-444444444444".into());
    let p = plan_for(&SimHost::new(w), &d, Policy::default());
    assert!(refusals(&p).contains("the header backup /root/data0.luks-header holds the header with UUID 00000000-1111-4222-8333-444444444444"), "{}", refusals(&p));
    // A backup that went missing is taken again, the same way.
    let mut w = h.world();
    w.files.remove("/root/data1.luks-header");
    let h3 = SimHost::new(w);
    let p = plan_for(&h3, &d, Policy::default());
    assert_eq!(ops(&p), vec!["backup_luks_header"], "{:?}", p.steps);
    apply(&h3, &d, Policy::default()).unwrap();
    assert_eq!(h3.world().files["/root/data1.luks-header"].mode, 0o400);
}

#[test]
fn root_or_usr_on_an_encrypted_mirror_with_a_key_file_is_refused() {
    use hyraid::config::filesystem::{FilesystemSpec, FsType};
    let (mut d, h) = built();
    // Debian's initramfs skips a root device opened with a key file: the box would not boot.
    let vg = d.volume_groups.get_mut("vg0").unwrap();
    let mut usr = vg.lvs["nextcloud"].clone();
    usr.name = "usr".into();
    usr.writecache = None;
    usr.size = hyraid::config::size::LvSize::Bytes(20 << 30);
    usr.filesystem = Some(FilesystemSpec {
        fstype: FsType::Ext4,
        label: None,
        mount: Some("/usr".into()),
        options: vec![],
    });
    vg.lvs.insert("usr".into(), usr);
    let p = plan_for(&h, &d, Policy::default());
    assert!(refusals(&p).contains("lv vg0/usr: lv vg0/usr would be mounted by the initramfs (at / or /usr) from a LUKS device (an encrypted mirror or the LV itself): Debian's initramfs skips a root device opened with a key file"), "{}", refusals(&p));
}

/// A key file the plan makes (512 bytes from /dev/urandom) gets PBKDF2 at 1000 iterations in its
/// slot, as systemd-cryptenroll gives its random keys; a key file that was there before, which a
/// person may have typed, keeps cryptsetup's timed Argon2. A rotation's new key is covered in
/// encryption_keys.rs, a passphrase in encryption_passphrase.rs.
#[test]
fn only_a_key_the_plan_makes_gets_the_light_key_derivation() {
    let formats = |h: &SimHost, d: &hyraid::config::Desired| -> Vec<String> {
        let p = plan_for(h, d, Policy::default());
        assert!(p.refused.is_empty(), "{}", refusals(&p));
        p.steps
            .iter()
            .flat_map(|s| s.step.commands())
            .map(|c| hyraid::plan::step::command_line(&c))
            .filter(|l| l.contains("luksFormat"))
            .collect()
    };
    let (d, h) = encrypted();
    let made = formats(&h, &d);
    assert_eq!(made.len(), 2, "{made:?}");
    for (l, key) in made.iter().zip(["data0", "data1"]) {
        assert!(
            l.ends_with(&format!(
                " --key-file /etc/hyraid/keys/{key}.key --pbkdf pbkdf2 --pbkdf-force-iterations 1000 /dev/md/{key}"
            )),
            "{l}"
        );
    }
    let mut w = h.world();
    for key in ["data0", "data1"] {
        w.files.insert(
            format!("/etc/hyraid/keys/{key}.key"),
            hyraid::observe::luks::SecretFile {
                mode: 0o400,
                uid: 0,
                size: 64,
                header_uuid: None,
                header_slots: None,
            },
        );
    }
    let h = SimHost::new(w);
    let theirs = formats(&h, &d);
    assert_eq!(theirs.len(), 2, "{theirs:?}");
    for l in &theirs {
        assert!(!l.contains("--pbkdf"), "{l}");
    }
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

/// The plan's "after this plan" lints come from a simulated copy of the machine: the key files
/// and header backups observation found are on that copy too, so a plan of a built box never
/// notes a header backup as missing.
#[test]
fn the_plans_lints_never_call_a_header_backup_that_is_there_missing() {
    let (_, h) = built();
    // Any change: a new LV on the encrypted mirror.
    let text = std::fs::read_to_string(FILE).unwrap().replace(
        "    lvs:\n",
        "    lvs:\n      extra: { size: 1GiB, pvs: [data0] }\n",
    );
    let d = load_str("extra.yaml", &text).unwrap();
    let obs = observe(&h, &d);
    assert!(
        obs.files.is_empty(),
        "a real observation carries no simulated files"
    );
    let p = hyraid::apply::preview::review(&d, &obs, Policy::default()).unwrap();
    assert!(!p.steps.is_empty(), "{:?}", ops(&p));
    assert!(
        !p.notes.iter().any(|n| n.contains("header backup")),
        "{:#?}",
        p.notes
    );
}
