//! Command-line hygiene: a flag that means something only with another is a usage error (exit 1,
//! nothing observed: `--sim-write` without `--sim`, bench's run options beside `--compare`); a file that is not UTF-8 is reported where its bad byte is; YAML merge
//! keys are read as YAML defines them, and a wrong one is reported at its place.

use crate::common;
use common::{hyraid, text};
use hyraid::config::{load_bytes, load_str};
use std::io::Write;

/// Each of these names a flag that needs another (or is meaningless beside another): clap's
/// usage error, exit 1, before anything is read.
#[test]
fn a_flag_without_the_flag_it_needs_is_a_usage_error() {
    let f = "examples/single-pair.yaml";
    let snap = "examples/snapshots/single-pair.json";
    let cases: &[(&[&str], &str)] = &[
        (&["apply", f, "--sim-write"], "needs '--sim <SNAPSHOT>'"),
        (
            &["apply", f, "--sim-write", "--yes"],
            "needs '--sim <SNAPSHOT>'",
        ),
        (
            &["bench", "--compare", "a.json", "b.json", "--size", "1GiB"],
            "cannot be used with",
        ),
        (
            &[
                "bench",
                "--compare",
                "a.json",
                "b.json",
                "--job",
                "seq-read-1m",
            ],
            "cannot be used with",
        ),
        (
            &["bench", "--compare", "a.json", "b.json", "-o", "c.json"],
            "cannot be used with",
        ),
        (
            &["bench", "--compare", "a.json", "b.json", "--allow-destroy"],
            "cannot be used with",
        ),
    ];
    for (args, says) in cases {
        let o = hyraid(args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(err.contains("Usage: hyraid"), "{args:?}: {err}");
        // Nothing was observed or planned: no plan on stdout.
        assert!(out.is_empty(), "{args:?}: {out}");
    }
    // A --sim-write beside --dry-run writes nothing: the dry run changes no machine.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("snap.json");
    std::fs::copy(snap, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let o = hyraid(&[
        "apply",
        f,
        "--sim",
        copy.to_str().unwrap(),
        "--dry-run",
        "--sim-write",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

#[test]
fn text_that_is_not_utf8_is_reported_at_its_line_and_column() {
    let bytes = b"version: 1\ndisks:\n  ssd0: { id: ata-X }\n  hdd0: { id: \"ata-\xff\xfeY\" }\n";
    let e = load_bytes("f.yaml", bytes).unwrap_err();
    assert_eq!(e.0.len(), 1);
    let e = &e.0[0];
    assert_eq!((e.line, e.col), (4, 20), "{e}");
    assert!(
        e.message.contains("not UTF-8") && e.message.contains("0xff"),
        "{e}"
    );
    // Columns count characters: a multi-byte character before the bad byte is one column.
    let e = load_bytes(
        "f.yaml",
        "version: 1\n# é\u{e9}\n"
            .as_bytes()
            .iter()
            .copied()
            .chain([0x80])
            .collect::<Vec<_>>()
            .as_slice(),
    )
    .unwrap_err();
    assert_eq!((e.0[0].line, e.0[0].col), (3, 1), "{}", e.0[0]);
    let e = load_bytes("f.yaml", b"version: 1 # \xc3\xa9\xc3\n").unwrap_err();
    assert_eq!((e.0[0].line, e.0[0].col), (1, 15), "{}", e.0[0]);
    // The command line says the same of a file and of standard input.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.yaml");
    std::fs::write(&path, bytes).unwrap();
    let o = hyraid(&["validate", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("latin1.yaml:4:20: (file): not UTF-8 text"),
        "{}",
        text(&o).1
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hyraid"))
        .args(["validate", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("<stdin>:4:20: (file): not UTF-8 text"),
        "{}",
        text(&o).1
    );
}

const EXPLICIT: &str = "version: 1
disks:
  ssd0: { id: ata-S1 }
  ssd1: { id: ata-S2 }
  hdd0: { id: ata-H1, write_cache: on }
  hdd1: { id: ata-H2, write_cache: on }
  hdd2: { id: ata-H3, write_cache: off }
mirrors:
  data0: { members: [ssd0, hdd0], write_mostly: auto, bitmap: { chunk: 64MiB } }
  data1: { members: [ssd1, hdd1], write_mostly: auto, bitmap: { chunk: 64MiB } }
";

#[test]
fn merge_keys_merge_as_yaml_defines_them() {
    let merged = "version: 1
disks:
  ssd0: { id: ata-S1 }
  ssd1: { id: ata-S2 }
  hdd0: &hdd
    id: ata-H1
    write_cache: on
  hdd1:
    <<: *hdd
    id: ata-H2
  hdd2:
    <<: [{ write_cache: off }, *hdd]
    id: ata-H3
mirrors:
  data0: &mirror { members: [ssd0, hdd0], write_mostly: auto, bitmap: { chunk: 64MiB } }
  data1: { <<: *mirror, members: [ssd1, hdd1] }
";
    let explicit = load_str("explicit.yaml", EXPLICIT).unwrap();
    assert_eq!(load_str("merged.yaml", merged).unwrap(), explicit);
}

#[test]
fn a_mistake_in_a_merged_key_is_reported_where_it_is_merged() {
    // The unknown key comes from the anchor: it is reported at the `<<` that brought it here
    // (and at the anchor itself, where it is written).
    let f = "version: 1
disks:
  ssd0: { id: ata-S1 }
  hdd0: &hdd
    id: ata-H1
    write_cahce: on
  hdd1:
    <<: *hdd
    id: ata-H2
";
    let e = load_str("f.yaml", f).unwrap_err();
    let at: Vec<(usize, String)> = e.0.iter().map(|e| (e.line, e.path.clone())).collect();
    assert!(at.contains(&(6, "disks.hdd0.write_cahce".into())), "{e}");
    assert!(at.contains(&(8, "disks.hdd1.write_cahce".into())), "{e}");
    // A merge key that is not a mapping is an error at its value, not an unknown key `<<`.
    let e = load_str("f.yaml", "version: 1\ndisks:\n  ssd0:\n    <<: 5\n").unwrap_err();
    assert_eq!((e.0[0].line, e.0[0].col), (4, 9), "{e}");
    assert!(
        e.0[0].message.contains("merge key (`<<`) takes a mapping"),
        "{e}"
    );
    assert!(!e.to_string().contains("unknown key `<<`"), "{e}");
    // A block of shared settings at the top has no place of its own: the help says what works.
    let e = load_str(
        "f.yaml",
        "version: 1\ndefaults: &d { write_cache: on }\ndisks:\n  ssd0: { <<: *d, id: ata-S1 }\n",
    )
    .unwrap_err();
    assert_eq!(e.0.len(), 1, "{e}");
    assert!(e.to_string().contains("unknown key `defaults`"), "{e}");
    assert!(e.to_string().contains("merge it into the others"), "{e}");
}
