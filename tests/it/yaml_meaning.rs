//! What the YAML 1.1 / 1.2 differences mean in a hyraid file: the parser (yaml-rust2 events,
//! `config::yaml`) resolves scalars as serde_yaml 0.9 did, so no file changes meaning.

use hyraid::config::load_str;
use hyraid::config::size::LvSize;

fn file(disk: &str, mirror: &str, lv: &str) -> String {
    format!(
        "version: 1\nhost: 0755\ndisks:\n  ssd0: {{ id: ata-SSD_1, {disk} }}\n  hdd0: {{ id: ata-HDD_1 }}\nmirrors:\n  m: {{ members: [ssd0, hdd0], {mirror} }}\nvolume_groups:\n  vg0:\n    pvs: [m]\n    lvs:\n      data: {{ {lv} }}\n"
    )
}

#[test]
fn on_off_true_false_are_the_drive_cache_and_yes_no_are_not_booleans() {
    for (word, cache) in [
        ("on", true),
        ("off", false),
        ("true", true),
        ("false", false),
    ] {
        let d = load_str(
            "f.yaml",
            &file(&format!("write_cache: {word}"), "", "size: 1TiB"),
        )
        .unwrap();
        assert_eq!(d.disks["ssd0"].write_cache, Some(cache), "{word}");
    }
    for word in ["yes", "no", "y", "ON"] {
        let e = load_str(
            "f.yaml",
            &file(&format!("write_cache: {word}"), "", "size: 1TiB"),
        )
        .unwrap_err()
        .0;
        assert_eq!(
            e[0].message,
            format!("invalid value \"{word}\": expected `on` or `off`"),
            "{word}"
        );
        assert_eq!((e[0].line, e[0].col), (4, 39), "{word}");
    }
    // `write_mostly: yes` is the word yes, not true (tests/bad/write-mostly-yes.yaml).
    let e = load_str("f.yaml", &file("", "write_mostly: yes", "size: 1TiB")).unwrap_err();
    assert!(e.0[0].message.contains("invalid value \"yes\""), "{e}");
}

#[test]
fn numbers_keep_their_yaml_1_2_meaning() {
    // 0o and 0x are integers, a leading zero is text, `~` is absent.
    for (text, wb) in [("0o17", 15), ("0x10", 16), ("017", 0), ("~", 0)] {
        let r = load_str(
            "f.yaml",
            &file(
                "",
                &format!("write_behind: {text}, write_mostly: [hdd0]"),
                "size: 1TiB",
            ),
        );
        if text == "017" {
            let e = r.unwrap_err().0;
            assert_eq!(
                e[0].message,
                "invalid value \"017\": expected a whole number from 0 to 16383"
            );
            continue;
        }
        assert_eq!(r.unwrap().mirrors["m"].write_behind, wb, "{text}");
    }
    let d = load_str(
        "f.yaml",
        &file("serial: 2204E6000001", "", "size: 1073741824, stripes: 0x1"),
    )
    .unwrap();
    assert_eq!(d.host.as_deref(), Some("0755"));
    assert_eq!(d.disks["ssd0"].serial.as_deref(), Some("2204E6000001"));
    let lv = &d.volume_groups["vg0"].lvs["data"];
    assert_eq!(lv.size, LvSize::Bytes(1 << 30));
    assert_eq!(lv.stripes, Some(1));
    // `1T` is not a size (no unit T), and 2^64 is refused at its position, not rounded.
    let e = load_str("f.yaml", &file("", "", "size: 1T")).unwrap_err().0;
    assert!(
        e[0].message.starts_with("unknown unit `T` in size `1T`"),
        "{}",
        e[0]
    );
    let e = load_str("f.yaml", &file("", "", "size: 18446744073709551616"))
        .unwrap_err()
        .0;
    assert_eq!(
        (
            e[0].line,
            e[0].col,
            e[0].path.as_str(),
            e[0].message.as_str()
        ),
        (
            12,
            21,
            "volume_groups.vg0.lvs.data.size",
            "number is too large (more than 2^64-1)"
        )
    );
}

#[test]
fn quoted_and_anchored_values_read_as_written() {
    let text = "version: 1\ndisks:\n  ssd0: &disk { id: ata-SSD_1, write_cache: 'on' }\n  hdd0: { id: ata-HDD_1, serial: \"0755\" }\nmirrors:\n  boot: { members: [ssd0, hdd0], metadata: \"1.0\" }\n";
    let d = load_str("f.yaml", text).unwrap();
    assert_eq!(d.disks["ssd0"].write_cache, Some(true));
    assert_eq!(d.disks["hdd0"].serial.as_deref(), Some("0755"));
    assert_eq!(format!("{:?}", d.mirrors["boot"].metadata), "V1_0");
    let e = load_str("f.yaml", &text.replace("\"1.0\"", "1.0"))
        .unwrap_err()
        .0;
    assert_eq!(
        e[0].message,
        "invalid value 1.0: expected `\"1.0\"` or `\"1.2\"`, quoted"
    );
}
