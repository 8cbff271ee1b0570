//! The conventions of the terminal and the editor: the manual page and completions come from
//! the CLI's definitions, colour follows the terminal's conventions, `validate` speaks JSON and
//! reads standard input, and an imported file names the installed schema.

use crate::common;
use common::{hyraid, text};

use std::process::{Command, Stdio};

#[test]
fn completions_and_man_page_come_from_the_cli_definitions() {
    for shell in ["bash", "zsh", "fish"] {
        let o = hyraid(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let (out, _) = text(&o);
        // fish writes long options without the dashes (`-l allow-destroy`).
        for word in [
            "plan",
            "apply",
            "bench",
            "allow-destroy",
            "detailed-exitcode",
        ] {
            assert!(out.contains(word), "{shell} completion lacks {word}");
        }
    }
    let o = hyraid(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    let (man, _) = text(&o);
    assert!(man.contains(".TH hyraid 1"), "{man}");
    // Every visible subcommand has its section, with its own options.
    for sub in [
        "VALIDATE", "PLAN", "APPLY", "SHOW", "OBSERVE", "STATUS", "SCHEMA", "BENCH", "IMPORT",
    ] {
        assert!(
            man.contains(&format!(".SH \"HYRAID {sub}\"")),
            "no section for {sub}"
        );
    }
    assert!(
        man.contains("detailed\\-exitcode"),
        "plan's options are in the page"
    );
    assert!(man.contains(".SH SAFETY") && man.contains(".SH \"EXIT STATUS\""));
    // What a manual page has beyond the options (man-pages(7)): a dated title, examples, the
    // environment, the files as a list, the related pages.
    assert!(man.contains(".TH hyraid 1 2026-12-01 \"hyraid "), "{man}");
    for section in [
        ".SH EXAMPLES",
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH \"SEE ALSO\"",
    ] {
        assert!(man.contains(section), "no {section}");
    }
    for word in [
        "NO_COLOR",
        "CLICOLOR_FORCE",
        "/var/log/hyraid/journal.jsonl",
        "mdadm(8)",
    ] {
        assert!(man.contains(&word.replace('-', "\\-")), "{word} missing");
    }
    assert!(man.is_ascii(), "non-ASCII is written as groff escapes");
    assert!(man.contains("\\[u2026]"), "the ellipsis of bench's help");
    let files = &man[man.find(".SH FILES").unwrap()..];
    let files = &files[..files[1..].find(".SH").unwrap()];
    assert_eq!(
        files.matches(".TP").count(),
        5,
        "one tagged paragraph per file: {files}"
    );
    // No references to per-subcommand pages that are not shipped.
    assert!(!man.contains("hyraid\\-plan(1)"));
}

/// The text plan's colours follow `--color` and the terminal conventions clap's own help
/// follows (anstream): off on a pipe, forced by CLICOLOR_FORCE, never with NO_COLOR or
/// CLICOLOR=0 unless forced by `--color always`.
#[test]
fn colour_follows_the_terminal_conventions() {
    let run = |env: &[(&str, &str)], extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hyraid"));
        c.args([
            "plan",
            "examples/microserver-gen8.yaml",
            "--sim",
            "examples/snapshots/microserver-gen8.json",
        ])
        .args(extra)
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        let out = text(&o).0;
        assert!(out.contains("hyraid will make these changes"), "{out}");
        out.contains('\x1b')
    };
    assert!(!run(&[], &[]), "a pipe gets no colour");
    assert!(
        run(&[("CLICOLOR_FORCE", "1")], &[]),
        "CLICOLOR_FORCE colours"
    );
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], &[]));
    assert!(!run(&[("CLICOLOR_FORCE", "1")], &["--color", "never"]));
    assert!(run(&[("NO_COLOR", "1")], &["--color", "always"]));
    assert!(run(&[], &["--color", "always"]));
    // Coloured, the plan reads the same once the escapes are taken out.
    let args = [
        "plan",
        "examples/microserver-gen8.yaml",
        "--sim",
        "examples/snapshots/microserver-gen8.json",
    ];
    let plain = text(&hyraid(&args)).0;
    let mut coloured = args.to_vec();
    coloured.extend(["--color", "always"]);
    let coloured = text(&hyraid(&coloured)).0;
    assert_ne!(coloured, plain);
    assert_eq!(anstream::adapter::strip_str(&coloured).to_string(), plain);
}

/// `validate --format json` carries exactly the errors the text form prints (position, field,
/// message, fix), for every bad file in tests/bad; `-` reads the file from standard input.
#[test]
fn validate_as_json_and_from_stdin() {
    let mut n = 0;
    for e in std::fs::read_dir("tests/bad").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let f = p.to_str().unwrap();
        let o = hyraid(&["validate", f, "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{f}");
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["valid"], false, "{f}");
        let errors = r["errors"].as_array().unwrap();
        assert!(!errors.is_empty(), "{f}");
        let text_err = text(&hyraid(&["validate", f])).1;
        for e in errors {
            let line = format!(
                "{}:{}:{}: {}: {}",
                e["file"].as_str().unwrap(),
                e["line"],
                e["col"],
                e["path"].as_str().unwrap(),
                e["message"].as_str().unwrap()
            );
            assert!(text_err.contains(&line), "{f}: {line} not in\n{text_err}");
            if let Some(h) = e["hint"].as_str() {
                assert!(text_err.contains(h), "{f}: {h}");
            }
        }
        n += 1;
    }
    assert!(n > 100, "{n} bad files");
    let o = hyraid(&["validate", "examples/single-pair.yaml", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["valid"], true);
    assert_eq!(r["counts"]["mirrors"], 1);
    let run_stdin = |input: &str, args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hyraid"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        c.wait_with_output().unwrap()
    };
    let good = std::fs::read_to_string("examples/single-pair.yaml").unwrap();
    let o = run_stdin(&good, &["validate", "-"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o).0.starts_with("<stdin>: valid (2 disks"),
        "{:?}",
        text(&o)
    );
    let o = run_stdin(
        "version: 1\nmirrors: { m: { members: [a] } }\n",
        &["validate", "-"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("<stdin>:2:26: mirrors.m.members: mirror `m` has 1 member(s)"),
        "{:?}",
        text(&o)
    );
}

/// An imported file opens in an editor with the installed schema, like the examples do.
#[test]
fn import_writes_the_schema_modeline() {
    let o = hyraid(&[
        "import",
        "--sim",
        "examples/snapshots/microserver-gen8.json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let out = text(&o).0;
    assert_eq!(
        out.lines().next(),
        Some("# yaml-language-server: $schema=/usr/share/hyraid/hyraid.schema.json")
    );
    let schema = std::fs::read_to_string("schemas/hyraid.schema.json").unwrap();
    assert!(schema.contains("\"$id\": \"file:///usr/share/hyraid/hyraid.schema.json\""));
}
