//! Where a key file or a header backup may live: only where it survives every later step and
//! reboot. Refused, at the field: a file hyraid writes itself (crypttab, fstab, mdadm.conf, its
//! settings, its udev rule, LVM's devices file) or a directory it writes in; a directory the
//! release empties (/var/tmp, and what does not outlive a boot); a path spelt with `//`, which
//! once passed the prefix checks; and a filesystem the same encryption carries.

use hyraid::config::load_str;

fn file(key: &str, backup: &str, lvs: &str) -> String {
    format!(
        "version: 1\ndisks:\n  a: {{ id: ata-A }}\n  b: {{ id: ata-B }}\nmirrors:\n  m0:\n    members: [a, b]\n    encryption: {{ key_file: {key}, header_backup: {backup} }}\nvolume_groups:\n  vg0:\n    pvs: [m0]\n    lvs: {lvs}\n"
    )
}

fn error(text: &str) -> String {
    load_str("f.yaml", text).unwrap_err().to_string()
}

#[test]
fn a_key_or_backup_where_hyraid_writes_is_refused() {
    for (path, says) in [
        (
            "/etc/crypttab",
            "a file hyraid writes itself (its crypttab block)",
        ),
        (
            "/etc/fstab",
            "a file hyraid writes itself (its fstab block)",
        ),
        (
            "/etc/mdadm/mdadm.conf",
            "a file hyraid writes itself (the mirrors' ARRAY lines)",
        ),
        (
            "/etc/hyraid/monitoring.json",
            "a file hyraid writes itself (its monitoring settings)",
        ),
        (
            "/etc/udev/rules.d/61-hyraid-write-cache.rules",
            "a file hyraid writes itself (its udev rule)",
        ),
        ("/etc/lvm/devices/system.devices", "(LVM's devices file)"),
        (
            "/var/lib/hyraid/k.key",
            "under /var/lib/hyraid/, where hyraid writes its records",
        ),
    ] {
        let e = error(&file(path, "/root/m0.luks-header", "{}"));
        assert!(e.contains("f.yaml:8:") && e.contains(says), "{path}: {e}");
        let e = error(&file("/etc/hyraid/keys/m0.key", path, "{}"));
        assert!(e.contains(says), "{path} as the backup: {e}");
    }
}

#[test]
fn a_directory_the_release_empties_and_a_double_slash_are_refused() {
    let e = error(&file("/var/tmp/m0.key", "/root/h", "{}"));
    assert!(
        e.contains("under /var/tmp/, which the release empties"),
        "{e}"
    );
    for (path, one) in [("//tmp/x", "/tmp/x"), ("/etc//hyraid/k", "/etc/hyraid/k")] {
        let e = error(&file(path, "/root/h", "{}"));
        assert!(
            e.contains(&format!("has an empty part (`//`): write it as {one}")),
            "{path}: {e}"
        );
    }
}

#[test]
fn a_key_or_backup_inside_what_it_opens_is_refused() {
    let lvs = "{ data: { size: 10GiB, filesystem: { type: ext4, mount: /srv/data } } }";
    let e = error(&file("/srv/data/keys/m0.key", "/root/h", lvs));
    assert!(
        e.contains("/srv/data/keys/m0.key is on lv vg0/data (mounted at /srv/data), which mirror `m0`'s encryption carries: the key would be locked inside what it opens"),
        "{e}"
    );
    let e = error(&file(
        "/etc/hyraid/keys/m0.key",
        "/srv/data/m0.luks-header",
        lvs,
    ));
    assert!(
        e.contains("the backup would be lost with the header it restores"),
        "{e}"
    );
    // An encrypted LV's own filesystem.
    let own = "version: 1\ndisks:\n  a: { id: ata-A }\n  b: { id: ata-B }\nmirrors:\n  m0: { members: [a, b] }\nvolume_groups:\n  vg0:\n    pvs: [m0]\n    lvs:\n      home: { size: 10GiB, filesystem: { type: ext4, mount: /home }, encryption: { key_file: /home/.k } }\n";
    assert!(
        error(own).contains("which lv `vg0/home`'s encryption carries"),
        "{}",
        error(own)
    );
    // Beside it, on the system disk, is where they belong.
    assert!(
        load_str(
            "f.yaml",
            &file("/etc/hyraid/keys/m0.key", "/root/m0.luks-header", lvs)
        )
        .is_ok()
    );
    // A mount whose name only begins like the path is not the path's filesystem.
    let lvs = "{ data: { size: 10GiB, filesystem: { type: ext4, mount: /srv/d } } }";
    assert!(load_str("f.yaml", &file("/srv/data/m0.key", "/root/h", lvs)).is_ok());
}
