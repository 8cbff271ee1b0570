//! Crash cases of encryption: an encrypted mirror's key changed in the file (the new key added,
//! proven, the old removed, the header backup taken again and crypttab rewritten), and an
//! encrypted LV built from blank disks (LV, key file, format, backup, open, mkfs, mount), grown,
//! an encrypted mirror grown, and a TPM2 enrolled in an LV opened with a passphrase.

use super::{Case, converged};
use crate::common::{example, two_pair_file};
use hyraid::plan::Policy;

pub fn cases() -> Vec<Case> {
    // A key rotated: interrupted between adding the new key and removing the old, at every
    // command, the next apply completes it and only the new key opens the header.
    let (mut d, h) = converged("microserver-gen8-encrypted");
    d.mirrors
        .get_mut("data0")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .key_file = "/etc/hyraid/keys/data0-new.key".into();
    let lv = Case {
        name: "build an encrypted LV with its filesystem".into(),
        desired: two_pair_file(
            "data0, data1",
            "{ home: { size: 20GiB, pvs: [data0], filesystem: { type: ext4, mount: /home }, encryption: { key_file: /etc/hyraid/keys/home.key, header_backup: /root/home.luks-header } } }",
        ),
        before: example("microserver-gen8").1.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            w.filesystems.iter().any(|f| {
                f.mapper.as_deref() == Some("vg0-home_crypt")
                    && f.mountpoint.as_deref() == Some("/home")
            }) && w
                .files
                .get("/root/home.luks-header")
                .is_some_and(|f| f.mode == 0o400)
                && w.boot
                    .crypttab
                    .as_deref()
                    .is_some_and(|t| t.contains(" /etc/hyraid/keys/home.key luks\n"))
        }),
        policy: Policy::default(),
    };
    // The encrypted LV grows: lvextend, cryptsetup resize, resize2fs, interrupted at each.
    let home = |size: &str| {
        two_pair_file(
            "data0, data1",
            &format!(
                "{{ home: {{ size: {size}, pvs: [data0], filesystem: {{ type: ext4, mount: /home }}, encryption: {{ key_file: /etc/hyraid/keys/home.key }} }} }}"
            ),
        )
    };
    let (_, built) = example("microserver-gen8");
    crate::common::apply(&built, &home("20GiB"), Policy::default()).unwrap();
    built.finish_syncs();
    let grow = Case {
        name: "grow an encrypted LV, its mapping and its filesystem".into(),
        desired: home("30GiB"),
        before: built.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            w.filesystems
                .iter()
                .any(|f| f.mapper.is_some() && f.size == Some((30u64 << 30) - (16 << 20)))
        }),
        policy: Policy::default(),
    };
    // An encrypted mirror of partitions grows: growpart, mdadm --grow, cryptsetup resize, pvresize.
    let (_, parts) = example("microserver-partitioned");
    let small = crate::common::luks::encrypted_partitions_file("500GiB", "500GiB");
    crate::common::apply(&parts, &small, Policy::default()).unwrap();
    parts.finish_syncs();
    let mirror = Case {
        name: "grow an encrypted mirror of partitions, its mapping and its PV".into(),
        desired: crate::common::luks::encrypted_partitions_file("rest", "rest"),
        before: parts.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            let Some(m) = w
                .other_devices
                .iter()
                .find(|o| o.name.as_deref() == Some("data_crypt"))
            else {
                return false;
            };
            w.array_named("data")
                .is_some_and(|a| m.size == a.size_kib * 1024 - (16 << 20))
                && w.pv(&m.kname).is_some_and(|p| p.dev_size == m.size)
        }),
        policy: Policy::default(),
    };
    // A TPM2 enrolled in an LV whose key is a passphrase: the enrolment, the backup taken
    // again (it must keep the TPM2's slot) and crypttab's tpm2-device=auto, interrupted at each.
    let tpm_lv = |tpm2: bool| {
        two_pair_file(
            "data0, data1",
            &format!(
                "{{ home: {{ size: 20GiB, pvs: [data0], filesystem: {{ type: ext4, mount: /home }}, encryption: {{ passphrase: true, tpm2: {tpm2}, header_backup: /root/home.luks-header }} }} }}"
            ),
        )
    };
    let (_, with_tpm) = example("microserver-gen8");
    let mut w = with_tpm.world();
    w.boot.tpm2 = Some(hyraid::observe::tpm2::Tpm2 {
        devices: vec!["/dev/tpmrm0".into()],
        error: None,
    });
    let with_tpm = hyraid::sim::SimHost::new(w);
    crate::common::apply(&with_tpm, &tpm_lv(false), Policy::default()).unwrap();
    with_tpm.finish_syncs();
    let tpm2 = Case {
        name: "enrol a TPM2 in an encrypted LV opened with a passphrase".into(),
        desired: tpm_lv(true),
        before: with_tpm.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            w.luks.iter().any(|l| {
                l.header
                    .as_ref()
                    .is_some_and(|h| h.tokens == ["systemd-tpm2"] && h.keyslots == [0, 1])
            }) && w
                .files
                .get("/root/home.luks-header")
                .is_some_and(|f| f.header_slots.as_deref() == Some(&[0, 1][..]))
                && w.boot
                    .crypttab
                    .as_deref()
                    .is_some_and(|t| t.contains(" none luks,tpm2-device=auto\n"))
        }),
        policy: Policy::default(),
    };
    vec![
        lv,
        grow,
        mirror,
        tpm2,
        Case {
            name: "rotate the key of an encrypted mirror".into(),
            desired: d,
            before: h.world(),
            allowed_removals: vec![
                "cryptsetup luksRemoveKey --batch-mode /dev/md/data0 /etc/hyraid/keys/data0.key"
                    .into(),
            ],
            finally: Some(|w| {
                w.key_slots.values().any(|s| {
                    s.values().collect::<Vec<_>>() == vec!["/etc/hyraid/keys/data0-new.key"]
                }) && w.boot.crypttab.as_deref().is_some_and(|t| {
                    t.contains(" /etc/hyraid/keys/data0-new.key luks\n")
                        && !t.contains(hyraid::plan::crypttab::OLD_KEY_MARK)
                })
            }),
            policy: Policy::default(),
        },
    ]
}
