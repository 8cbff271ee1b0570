//! Bad configurations: each gives a specific message at an exact file:line:col.

use hyraid::config::{load_file, load_str};
use std::path::Path;

#[path = "../bad/expected.rs"]
mod expected;
use expected::EXPECTED;

#[test]
fn every_bad_config_gives_its_exact_error() {
    let mut listed: Vec<&str> = EXPECTED.iter().map(|(f, _)| *f).collect();
    listed.sort();
    let mut on_disk: Vec<String> = std::fs::read_dir("tests/bad")
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    on_disk.sort();
    assert_eq!(
        listed, on_disk,
        "every file in tests/bad has an expected error here"
    );
    assert!(EXPECTED.len() >= 25);
    for (file, expected) in EXPECTED {
        let path = format!("tests/bad/{file}");
        let errs = load_file(Path::new(&path)).expect_err(file).0;
        let first = errs[0].to_string();
        let first_line = first.lines().next().unwrap();
        assert_eq!(first_line, format!("{path}:{expected}"), "{file}");
    }
}

#[test]
fn did_you_mean_hints() {
    let hint = |file: &str| {
        load_file(Path::new(&format!("tests/bad/{file}")))
            .unwrap_err()
            .0[0]
            .hint
            .clone()
            .unwrap_or_default()
    };
    assert_eq!(
        hint("unknown-key-mirror.yaml"),
        "did you mean `write_mostly`?"
    );
    assert_eq!(hint("undefined-member.yaml"), "did you mean `hdd0`?");
    assert_eq!(hint("unknown-top-key.yaml"), "did you mean `disks`?");
    assert_eq!(
        hint("writecache-unknown-setting.yaml"),
        "did you mean `high_watermark`?"
    );
    assert!(hint("disk-in-two-mirrors.yaml").contains("one mirror or volume group"));
}

#[test]
fn all_errors_are_reported_at_once() {
    let e = load_file(Path::new("tests/bad/many-errors.yaml"))
        .unwrap_err()
        .0;
    let paths: Vec<&str> = e.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "disks.hdd0.write_cach",
            "mirrors.data0.bitmapp",
            "volume_groups.vg0.lvz"
        ]
    );
    let e = load_file(Path::new("tests/bad/many-semantic-errors.yaml"))
        .unwrap_err()
        .0;
    let lines: Vec<usize> = e.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![6, 11, 12]);
}

#[test]
fn oversized_and_hostile_yaml_is_refused_cleanly() {
    let big = format!("version: 1\n# {}\n", "x".repeat(10 << 20));
    let e = load_str("big.yaml", &big).unwrap_err();
    assert!(e.0[0].message.contains("at most 1048576 bytes"), "{e}");
    // An alias bomb: the parser bounds expansion; whatever happens, no panic and an error.
    let bomb = "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n";
    assert!(load_str("bomb.yaml", bomb).is_err());
    let deep = format!("version: 1\nx: {}{}\n", "[".repeat(5000), "]".repeat(5000));
    assert!(load_str("deep.yaml", &deep).is_err());
}

#[test]
fn good_config_resolves_references_and_sizes() {
    let d = load_file(Path::new("examples/microserver-gen8.yaml")).unwrap();
    assert_eq!(d.host.as_deref(), Some("microserver8"));
    assert_eq!(d.disks["hdd0"].write_cache, Some(true));
    assert_eq!(d.mirrors["data0"].bitmap_chunk, Some(64 << 20));
    let lv = &d.volume_groups["vg0"].lvs["nextcloud"];
    assert_eq!(lv.size, hyraid::config::size::LvSize::Bytes(800 << 30));
    assert_eq!(lv.stripes, Some(2));
    let wc = lv.writecache.as_ref().unwrap();
    assert_eq!(wc.size, 32 << 30);
    assert_eq!(wc.settings_arg(), "high_watermark=50 writeback_jobs=1024");
}

#[test]
fn commands_are_argv_never_a_shell() {
    // Everything hyraid runs goes through Host::run(argv); nothing builds a shell command line.
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out)
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p)
            }
        }
    }
    let mut files = vec![];
    walk(Path::new("src"), &mut files);
    assert!(files.len() > 20);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for bad in ["Command::new(\"sh\")", "Command::new(\"bash\")", "\"-c\""] {
            assert!(!text.contains(bad), "{} contains {bad}", f.display());
        }
        if !f.ends_with("host/real.rs") {
            assert!(
                !text.contains("std::process::Command"),
                "{}: only the real host spawns processes",
                f.display()
            );
        }
    }
}

#[test]
fn write_mostly_is_refused_only_the_wrong_way_round() {
    let file = |hdd_media: &str, wm: &str| {
        format!(
            "version: 1\ndisks:\n  ssd0: {{ id: ata-SSD_1, media: ssd }}\n  ssd1: {{ id: ata-SSD_2, media: ssd }}\n  hdd0: {{ id: ata-HDD_1{hdd_media} }}\nmirrors:\n  m: {{ members: [ssd0, ssd1, hdd0], write_mostly: {wm} }}\n"
        )
    };
    for ok in ["[hdd0]", "[ssd0]", "[ssd0, hdd0]", "[]", "auto"] {
        let r = load_str("f.yaml", &file(", media: hdd", ok));
        assert!(r.is_ok(), "{ok}: {r:?}");
    }
    for bad in ["[ssd0, ssd1]", "[ssd0, ssd1, hdd0]"] {
        let e = load_str("f.yaml", &file(", media: hdd", bad))
            .unwrap_err()
            .0;
        assert_eq!(e[0].path, "mirrors.m.write_mostly", "{bad}");
        assert!(e[0].message.contains("every SSD member"), "{}", e[0]);
    }
    // Without `media:` the file does not say which disk is slow: the plan decides.
    assert!(load_str("f.yaml", &file("", "[ssd0, ssd1]")).is_ok());
}

#[test]
fn a_repeated_key_is_one_error_not_one_per_key_inside_it() {
    let text = "version: 1\ndisks:\n  ssd1: { id: ata-A_1 }\n  hdd1: { id: ata-B_1 }\n  ssd1: { id: ata-C_1 }\n";
    let errs = load_str("dup.yaml", text).unwrap_err().0;
    let all: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
    assert_eq!(errs.len(), 1, "{all:#?}");
    assert!(
        all[0].starts_with("dup.yaml:5:3: disks.ssd1: key `ssd1` appears twice"),
        "{all:#?}"
    );
}

#[test]
fn a_byte_order_mark_is_read_past_and_a_tab_is_named() {
    let text = "version: 1\ndisks:\n  d: { id: ata-D_1 }\n";
    assert!(load_str("bom.yaml", &format!("\u{feff}{text}")).is_ok());
    let errs = load_str("tab.yaml", "version: 1\ndisks:\n\td: { id: ata-D_1 }\n")
        .unwrap_err()
        .0;
    let first = errs[0].to_string();
    assert!(first.starts_with("tab.yaml:3:"), "{first}");
    assert!(first.contains("this line has a tab"), "{first}");
}

#[test]
fn an_empty_value_is_reported_at_its_key_not_at_the_next_token() {
    let text = "version: 1\ndisks:\n  ssd1:\n\n\n# comment\n\n";
    let errs = load_str("null.yaml", text).unwrap_err().0;
    let first = errs[0].to_string();
    assert!(
        first.starts_with("null.yaml:3:3: disks.ssd1: invalid value null"),
        "{first}"
    );
}
