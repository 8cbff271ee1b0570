//! The published schema carries the rules of `hyraid validate` a schema can express (so an
//! editor flags them while the file is written), and is never stricter than validate: every
//! file hyraid accepts passes it, and the bad files below, which only validate rejected
//! before, are rejected by the schema too.

use std::path::Path;

fn value(path: &Path) -> serde_json::Value {
    hyraid::config::yaml::parse(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .0
}

fn validator() -> jsonschema::Validator {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/hyraid.schema.json").unwrap())
            .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Every configuration in the tree that hyraid accepts (examples, the Ansible example's host files,
/// the VM suite's files) passes
/// the published schema.
#[test]
fn every_file_hyraid_accepts_passes_the_schema() {
    let v = validator();
    let mut n = 0;
    let mut dirs = vec![
        Path::new("examples").to_path_buf(),
        Path::new("contrib/ansible/examples").to_path_buf(),
    ];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if !p.ends_with("cloud-init") && !p.ends_with("ci") {
                    dirs.push(p);
                }
                continue;
            }
            if p.extension().is_some_and(|x| x == "yaml") {
                hyraid::config::load_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                let errors: Vec<String> =
                    v.iter_errors(&value(&p)).map(|e| e.to_string()).collect();
                assert!(errors.is_empty(), "{}: {errors:?}", p.display());
                n += 1;
            }
        }
    }
    for e in std::fs::read_dir("tests/vm/configs").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") && hyraid::config::load_file(&p).is_ok() {
            let errors: Vec<String> = v.iter_errors(&value(&p)).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", p.display());
            n += 1;
        }
    }
    assert!(n >= 30, "{n} files");
}

/// Values at the edges of each rule that hyraid accepts: the schema accepts them too.
#[test]
fn the_rules_are_no_stricter_than_validate() {
    let v = validator();
    let good = r#"
version: 1
disks:
  ssd.0_a-b: { id: "wwn-0x5000c500a1b2c3d4", serial: "S5VW#N+G0N:12=3@4_5-6.7" }
  h: { serial: Z1 }
  x: { id: ata-X_1 }
  y: { id: ata-Y_1 }
mirrors:
  a234567890123456789012345678901: { members: [ssd.0_a-b, h], bitmap: { chunk: 64MiB } }
  old: { uuid: "299ac1e1:b48af26d:b272044d:c4cd2cc2", device: /dev/md127, members: [x, y] }
volume_groups:
  vg0:
    pvs: [a234567890123456789012345678901]
    lvs:
      a: { size: 1.5TiB }
      b: { size: " 100 %FREE" }
      c: { size: 4096 }
      d: { size: 10%VG, filesystem: { type: xfs, label: abcdefghijkl, mount: /srv/a-b_c, options: [noatime, "x-systemd.requires=a"] } }
      e: { size: 1GiB, writecache: { size: 1GiB, pvs: [a234567890123456789012345678901], settings: { block_size: 512, high_watermark: "100", low_watermark: 0, fua: "1", writeback_jobs: 1024 } } }
"#;
    let cfg = hyraid::config::load_str("edges.yaml", good);
    assert!(cfg.is_ok(), "{}", cfg.err().unwrap());
    let (j, _) = hyraid::config::yaml::parse(good).unwrap();
    let errors: Vec<String> = v.iter_errors(&j).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// Bad files the schema now rejects as well as validate (before, only validate did).
#[test]
fn the_schema_rejects_what_it_can_express() {
    let v = validator();
    let rejected = [
        "adopt-device-md-name",
        "adopt-device-without-uuid",
        "adopt-uuid-not-an-md-uuid",
        "adopt-uuid-without-device",
        "block-size-1024",
        "disk-no-id",
        "fs-label-too-long",
        "fs-mount-relative",
        "fs-option-comma",
        "host-with-space",
        "id-dev-path",
        "id-shell-metachar",
        "lv-name-leading-dash",
        "lv-name-space",
        "md-name-too-long",
        "name-shell",
        "name-slash",
        "one-member",
        "serial-newline",
        "serial-udev-injection",
        "size-parsecs",
        "size-percent-over",
        "size-zero",
        "vg-name-subshell",
        "vg-no-pvs",
        "writecache-pause",
        "writecache-unknown-setting",
    ];
    for name in rejected {
        let p = Path::new("tests/bad").join(format!("{name}.yaml"));
        assert!(!v.is_valid(&value(&p)), "{name} passes the schema");
        assert!(hyraid::config::load_file(&p).is_err(), "{name}");
    }
}
