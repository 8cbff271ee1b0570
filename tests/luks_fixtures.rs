//! LUKS2 as Debian 12 (cryptsetup 2.6) and Debian 13 (cryptsetup 2.7) show it, captured by VM
//! 40-encrypted-mirror (made by hyraid) and 41-encrypted-import (made by hand): lsblk's view of
//! the header and the mapping on it, and `luksDump` in its JSON and text forms.

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
