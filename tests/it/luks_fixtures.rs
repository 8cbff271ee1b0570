//! LUKS2 as Debian 12 (cryptsetup 2.6) and Debian 13 (cryptsetup 2.7) show it, captured by VM
//! 40-encrypted-mirror (made by hyraid), 41-encrypted-import (made by hand) and 42-encrypted-lv
//! (an encrypted LV, with the LVM report): lsblk's view of the header and the mapping on it, the
//! filesystem inside an LV's mapping, and `luksDump` in its JSON and text forms.

use hyraid::observe::lsblk;
use hyraid::observe::luks::from_lsblk;
use hyraid::observe::luks_dump::{parse_json, parse_text};

fn read(release: &str, name: &str) -> String {
    std::fs::read_to_string(format!("tests/fixtures/luks/{release}/{name}")).unwrap()
}

#[test]
fn lsblk_shows_the_header_and_the_mapping_on_both_releases() {
    for release in ["bookworm", "trixie"] {
        let nodes = lsblk::parse(&read(release, "lsblk-hand-built.json")).unwrap();
        let l = from_lsblk(&nodes);
        assert_eq!(l.len(), 1, "{release}: {l:?}");
        assert_eq!(l[0].device, "md0", "{release}");
        let m = l[0].mapping.as_ref().unwrap();
        assert_eq!(m.name, "cryptdata", "{release}");
        assert!(m.kname.starts_with("dm-"), "{release}: {}", m.kname);
        assert_eq!(l[0].uuid.as_ref().map(|u| u.len()), Some(36), "{release}");
        // hyraid's own: the array by its /dev/md/NAME, the mapping NAME_crypt.
        let nodes = lsblk::parse(&read(release, "lsblk-mirror.json")).unwrap();
        let l = from_lsblk(&nodes);
        assert_eq!(l.len(), 1, "{release}: {l:?}");
        assert_eq!(
            l[0].mapping.as_ref().unwrap().name,
            "data0_crypt",
            "{release}"
        );
    }
}

#[test]
fn luks_dump_json_and_text_say_the_same_on_both_releases() {
    for release in ["bookworm", "trixie"] {
        let j = parse_json(&read(release, "luksDump-json.txt")).unwrap();
        assert_eq!(j.cipher, "aes-xts-plain64", "{release}");
        assert_eq!(j.data_offset, 16 << 20, "{release}");
        assert_eq!(j.keyslots, vec![0], "{release}");
        assert_eq!(
            parse_text(&read(release, "luksDump.txt")),
            Some(j.clone()),
            "{release}"
        );
        assert_eq!(
            parse_json(&read(release, "luksDump-json-hand-built.txt")),
            Some(j),
            "{release}"
        );
        // Neither form is mistaken for the other.
        assert_eq!(parse_json(&read(release, "luksDump.txt")), None);
        assert_eq!(parse_text(&read(release, "luksDump-json.txt")), None);
    }
}

/// A header with a TPM2 enrolled by systemd-cryptenroll (swtpm), from VM 45 on each release:
/// the passphrase's slot, the TPM2's, and its `systemd-tpm2` token.
#[test]
fn a_tpm2_enrolment_is_read_from_the_header_on_both_releases() {
    for release in ["bookworm", "trixie"] {
        let j = parse_json(&read(release, "luksDump-json-tpm2.txt")).unwrap();
        assert_eq!(j.keyslots, vec![0, 1], "{release}");
        assert_eq!(j.tokens, vec!["systemd-tpm2".to_string()], "{release}");
        // A header without one has no token.
        let plain = parse_json(&read(release, "luksDump-json.txt")).unwrap();
        assert!(plain.tokens.is_empty(), "{release}");
    }
}

#[test]
fn an_encrypted_lvs_filesystem_is_seen_inside_its_mapping_on_both_releases() {
    use hyraid::observe::filesystems::{in_mappings, on_lvs};
    use hyraid::observe::lvm::parse_fullreport;
    for release in ["bookworm", "trixie"] {
        // Captured by VM 42-encrypted-lv: vg0/home -> LUKS2 -> ext4 mounted at /srv/home.
        let nodes = lsblk::parse(&read(release, "lsblk-lv.json")).unwrap();
        let lvm = parse_fullreport(&read(release, "lvm-fullreport-lv.json"), &|_, n| {
            n.rsplit('/').next().unwrap_or(n).to_string()
        })
        .unwrap();
        let inside = in_mappings(&nodes, &lvm);
        assert_eq!(inside.len(), 1, "{release}: {inside:?}");
        let f = &inside[0];
        assert_eq!(
            (f.vg.as_str(), f.lv.as_str(), f.fstype.as_str()),
            ("vg0", "home", "ext4"),
            "{release}"
        );
        assert_eq!(f.mapper.as_deref(), Some("vg0-home_crypt"), "{release}");
        assert_eq!(f.mountpoint.as_deref(), Some("/srv/home"), "{release}");
        assert_eq!(f.device_path(), "/dev/mapper/vg0-home_crypt");
        // The LV itself carries the header; the header's mapping is the one the filesystem is in.
        let all = on_lvs(&nodes, &lvm);
        let own = all
            .iter()
            .find(|x| x.lv == "home" && x.mapper.is_none())
            .unwrap();
        assert_eq!(own.fstype, "crypto_LUKS", "{release}");
        let l = from_lsblk(&nodes);
        let h = l.iter().find(|h| h.device == own.kname).unwrap();
        assert_eq!(
            h.mapping
                .as_ref()
                .map(|m| (m.name.as_str(), m.kname.as_str())),
            Some(("vg0-home_crypt", f.kname.as_str())),
            "{release}"
        );
    }
}
