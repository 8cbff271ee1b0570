//! The Debian package's inputs agree with the binary and the tree: the synopsis fits one
//! control line, the logrotate policy names the journal apply writes, and every example host
//! file opens with the schema modeline that contrib/deb/build.sh rewrites to the installed schema.

use std::path::{Path, PathBuf};
use std::process::Command;

const MODELINE: &str = "# yaml-language-server: $schema=";

#[test]
fn synopsis_fits_one_control_line() {
    // cargo-deb wraps the Description's first line at 79 characters: a longer one is cut.
    let d = env!("CARGO_PKG_DESCRIPTION");
    assert!(d.len() <= 79, "{} characters: {d}", d.len());
    assert!(!d.ends_with('.'), "a synopsis is not a sentence: {d}");
}

#[test]
fn logrotate_rotates_the_journal_apply_writes() {
    let help = Command::new(env!("CARGO_BIN_EXE_hyraid"))
        .args(["apply", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let journal = "/var/log/hyraid/journal.jsonl";
    assert!(help.contains(journal), "apply --help: {help}");
    let policy = std::fs::read_to_string("contrib/deb/logrotate").unwrap();
    assert!(policy.contains(&format!("\n{journal} {{\n")), "{policy}");
    // apply reopens the journal per entry and creates it: a plain rotation, never copytruncate.
    let mut directives = policy.lines().filter(|l| !l.starts_with('#'));
    assert!(!directives.any(|l| l.contains("copytruncate")), "{policy}");
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
}

#[test]
fn every_example_host_file_names_the_schema_on_its_first_line() {
    let mut files = Vec::new();
    yaml_files(Path::new("examples"), &mut files);
    yaml_files(Path::new("contrib/ansible/examples/files"), &mut files);
    assert!(files.len() >= 7, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let first = text.lines().next().unwrap_or_default();
        if first == "#cloud-config" {
            continue; // cloud-init user-data, not a host file
        }
        let rel = first
            .strip_prefix(MODELINE)
            .unwrap_or_else(|| panic!("{}: first line {first:?}", f.display()));
        let schema = f.parent().unwrap().join(rel);
        assert!(
            schema.ends_with("schemas/hyraid.schema.json"),
            "{}",
            f.display()
        );
        assert!(
            schema.is_file(),
            "{}: {} is missing",
            f.display(),
            schema.display()
        );
    }
}

/// The one error-level lintian override is a false match (libyaml's error text, which yaml-rust2
/// carries): it holds only while no libyaml code is linked, so Cargo.lock must have no crate that
/// embeds or binds libyaml.
#[test]
fn the_libyaml_override_holds_only_without_libyaml() {
    let lock = std::fs::read_to_string("Cargo.lock").unwrap();
    for name in ["unsafe-libyaml", "libyaml", "libyaml-sys", "serde_yaml"] {
        assert!(
            !lock.contains(&format!("name = \"{name}\"\n")),
            "{name} is linked: remove the embedded-library override from contrib/deb/lintian-overrides"
        );
    }
    let overrides = std::fs::read_to_string("contrib/deb/lintian-overrides").unwrap();
    assert!(overrides.contains("hyraid: embedded-library libyaml [usr/bin/hyraid]"));
}

#[test]
fn the_copyright_file_carries_every_linked_licence() {
    // contrib/deb/copyright.py stops when a licence of a linked crate has no text it can find: a
    // new dependency must not be found out only when the package is built.
    let out = Command::new("python3")
        .arg("contrib/deb/copyright.py")
        .output()
        .expect("python3 runs contrib/deb/copyright.py");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for licence in ["Apache-2.0", "MIT", "ISC", "CDLA-Permissive-2.0"] {
        assert!(
            text.contains(&format!("\nLicense: {licence}\n ")),
            "no text of {licence}"
        );
    }
}
