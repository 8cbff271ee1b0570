//! The documentation cannot go stale: README.md and docs/*.md are read as a newcomer reads them.
//!
//! - Every relative link `](path)` or `](path#anchor)` of README.md and docs/*.md names a file of
//!   the tree, and an anchor names a heading of that file (GitHub's slugs: lowercase, spaces to
//!   `-`, punctuation dropped, a repeated heading `-1`, `-2`, …). Web links are not fetched.
//! - The README's five-minute tour (the `sh` blocks under `## A five-minute tour`) runs as one
//!   `bash -e` script in an empty directory, with `hyraid` on the PATH.
//! - In docs/*.md, every line of an `sh` block that starts with `hyraid ` and works on the
//!   simulator (`--sim`, `hyraid sim`) or only on files (`hyraid validate`, `hyraid schema`,
//!   `hyraid show`) runs, block by block, in a directory holding a copy of `examples/` and
//!   `schemas/`, so a command may use a file an earlier line of its block wrote; a `cp` line
//!   (a snapshot copied before a command changes it) runs too, and no command may change a
//!   snapshot under `examples/` (a reader pastes these in a checkout). A trailing `# exits N` is
//!   the exit status expected (0 otherwise). Skipped, and listed with why: commands that need the
//!   real machine (no `--sim`), placeholders (`FILE`, `[...]`, `…`), and files that are neither
//!   in the tree nor written earlier in the block.
//!
//! `cargo test --test it docs:: -- --nocapture` prints every command run and every one skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// README.md, then docs/*.md in name order.
fn markdown_files() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir("docs")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    let mut all = vec![PathBuf::from("README.md")];
    all.extend(docs);
    all
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The lines outside fenced code blocks, with their line numbers (1-based).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fence = false;
    for (i, l) in text.lines().enumerate() {
        if l.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if !fence {
            out.push((i + 1, l));
        }
    }
    out
}

/// The fenced blocks of a language: (line number of the first line in the block, the lines).
fn code_blocks<'a>(text: &'a str, lang: &str) -> Vec<(usize, Vec<&'a str>)> {
    let mut out = Vec::new();
    let mut cur: Option<(usize, Vec<&str>)> = None;
    let mut other = false;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start();
        if let Some(info) = t.strip_prefix("```") {
            if let Some(block) = cur.take() {
                out.push(block);
            } else if other {
                other = false;
            } else if info.trim() == lang {
                cur = Some((i + 2, Vec::new()));
            } else {
                other = true;
            }
            continue;
        }
        if let Some((_, lines)) = cur.as_mut() {
            lines.push(l);
        }
    }
    assert!(cur.is_none() && !other, "an unclosed code block");
    out
}

/// GitHub's anchor for a heading's text.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor of a markdown file: its headings' slugs, a repeated one numbered as GitHub does.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (_, l) in prose_lines(text) {
        let hashes = l.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !l[hashes..].starts_with(' ') {
            continue;
        }
        // Link targets and code marks are not part of the anchor; their text is.
        let text: String = l[hashes..].replace('`', "");
        let s = slug(&text);
        let n = seen.entry(s.clone()).or_insert(0);
        out.push(if *n == 0 {
            s.clone()
        } else {
            format!("{s}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of `](target)` on a line, outside inline code.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (k, part) in line.split('`').enumerate() {
        if k % 2 == 1 {
            continue; // inside `code`
        }
        let mut rest = part;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            out.push(rest[..end].trim().to_string());
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug(" A five-minute tour"), "a-five-minute-tour");
    assert_eq!(
        slug(" Fleets: Ansible, cloud-init, pull requests, packages"),
        "fleets-ansible-cloud-init-pull-requests-packages"
    );
    assert_eq!(
        slug(" The schemas: tests/schema/ajv-strict.sh"),
        "the-schemas-testsschemaajv-strictsh"
    );
    assert_eq!(slug(" A /boot mirror"), "a-boot-mirror");
    assert_eq!(
        anchors("# a\n## B\n```\n# not a heading\n```\n## b\n"),
        ["a", "b", "b-1"]
    );
    assert_eq!(
        link_targets("see [x](a.md#b) and `[y](c.md)` [z](d)"),
        ["a.md#b", "d"]
    );
}

#[test]
fn every_relative_link_names_a_file_and_a_heading() {
    let mut checked = 0;
    let mut with_anchor = 0;
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = read(&file);
        let dir = file.parent().unwrap_or(Path::new(""));
        for (n, line) in prose_lines(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let resolved = if path.is_empty() {
                    file.clone()
                } else {
                    dir.join(path)
                };
                let at = format!("{}:{n}: ]({target})", file.display());
                if !resolved.exists() {
                    broken.push(format!("{at}: no such file {}", resolved.display()));
                    continue;
                }
                if let Some(anchor) = anchor {
                    with_anchor += 1;
                    if resolved.extension().is_none_or(|e| e != "md") {
                        broken.push(format!("{at}: an anchor into a file that is not markdown"));
                    } else if !anchors(&read(&resolved)).iter().any(|a| a == anchor) {
                        broken.push(format!(
                            "{at}: no heading of {} has the anchor #{anchor}; it has: {:?}",
                            resolved.display(),
                            anchors(&read(&resolved))
                        ));
                    }
                }
            }
        }
    }
    eprintln!("{checked} relative links checked, {with_anchor} of them with an anchor");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // The README links every page of docs/, and the pages link each other.
    assert!(checked >= 30, "only {checked} relative links found");
    let readme = read(Path::new("README.md"));
    for page in markdown_files().iter().skip(1) {
        let name = page.display().to_string();
        assert!(
            readme.contains(&format!("]({name}")),
            "the README does not link {name}"
        );
    }
}

/// A directory on the PATH holding `hyraid`, the binary under test.
fn bin_dir() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_hyraid"), bin.path().join("hyraid")).unwrap();
    bin
}

fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    )
}

/// The exit status a `# exits N` comment expects, and the command without its comment.
fn expected_exit(line: &str) -> (String, i32) {
    match line.find("# exits ") {
        Some(i) => {
            let n: String = line[i + 8..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            (
                line[..i].trim_end().to_string(),
                n.parse().expect("# exits N"),
            )
        }
        None => (line.to_string(), 0),
    }
}

#[test]
fn the_readme_tour_runs() {
    let readme = read(Path::new("README.md"));
    let tour = readme
        .split("\n## A five-minute tour\n")
        .nth(1)
        .expect("the README has a `## A five-minute tour` section")
        .split("\n## ")
        .next()
        .unwrap();
    let blocks = code_blocks(tour, "sh");
    assert!(blocks.len() >= 5, "the tour has {} sh blocks", blocks.len());
    // One script; a line with `# exits N` must exit N, every other one 0 (bash -e).
    let mut script = String::new();
    let mut heredoc: Option<String> = None;
    let mut commands = 0;
    for (_, lines) in &blocks {
        for line in lines {
            if let Some(end) = &heredoc {
                if line.trim() == end {
                    heredoc = None;
                }
                script.push_str(line);
                script.push('\n');
                continue;
            }
            if let Some(i) = line.find("<<'") {
                heredoc = Some(line[i + 3..].trim_end_matches('\'').to_string());
            }
            if line.starts_with("hyraid ") {
                commands += 1;
            }
            let (cmd, code) = expected_exit(line);
            if code == 0 {
                script.push_str(line);
            } else {
                let quoted = cmd.replace('\'', "'\\''");
                script.push_str(&format!(
                    "if {cmd}; then rc=0; else rc=$?; fi; [ \"$rc\" = {code} ] || {{ echo 'expected exit {code}, got '\"$rc\"': {quoted}' >&2; exit 1; }}"
                ));
            }
            script.push('\n');
        }
    }
    assert!(commands >= 15, "the tour runs {commands} hyraid commands");
    let bin = bin_dir();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tour.sh"), &script).unwrap();
    let out = Command::new("bash")
        .args(["-e", "tour.sh"])
        .current_dir(dir.path())
        .env("PATH", path_with(bin.path()))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the tour failed ({}):\n--- script\n{script}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "the tour: {} blocks, {commands} hyraid commands, all as shown",
        blocks.len()
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Why a docs command is not run, or None when it is.
fn why_skipped(cmd: &str, dir: &Path) -> Option<String> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    if cmd.contains('[') || cmd.contains('…') || cmd.contains('|') {
        return Some("a placeholder".into());
    }
    if let Some(w) = words.iter().find(|w| {
        let letters = w.chars().filter(char::is_ascii_alphabetic).count();
        letters >= 2
            && w.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c == ':')
    }) {
        return Some(format!("a placeholder ({w})"));
    }
    let verb = words.get(1).copied().unwrap_or("");
    let offline = matches!(verb, "validate" | "schema" | "show" | "sim");
    if !offline && !words.contains(&"--sim") {
        return Some("needs the real machine".into());
    }
    // Every file it reads must be there: in the tree's copy, or written earlier in the block.
    let mut k = 1;
    while k < words.len() {
        let w = words[k];
        if matches!(w, "-o" | "--output" | "--textfile" | "--journal" | ">") {
            k += 2;
            continue;
        }
        let w = w.trim_start_matches('<');
        let file_like = [".yaml", ".yml", ".json"].iter().any(|e| w.ends_with(e));
        if file_like && !dir.join(w).exists() {
            return Some(format!("needs {w}"));
        }
        k += 1;
    }
    None
}

#[test]
fn the_docs_commands_run_on_the_simulator() {
    let bin = bin_dir();
    let path = path_with(bin.path());
    let mut ran = Vec::new();
    let mut skipped = Vec::new();
    let mut failed = Vec::new();
    let mut copies = 0;
    for file in markdown_files().into_iter().skip(1) {
        let text = read(&file);
        for (first, lines) in code_blocks(&text, "sh") {
            // Each block in its own directory, with the tree's examples and schemas to change.
            let dir = tempfile::tempdir().unwrap();
            copy_dir(Path::new("examples"), &dir.path().join("examples"));
            copy_dir(Path::new("schemas"), &dir.path().join("schemas"));
            for (k, line) in lines.iter().enumerate() {
                let line = line.trim();
                let at = format!("{}:{}", file.display(), first + k);
                // A copy of a snapshot, made before a command changes it.
                if let Some(args) = line.strip_prefix("cp ") {
                    let words: Vec<&str> = args.split_whitespace().collect();
                    assert!(
                        words.len() == 2 && !words[1].starts_with("examples"),
                        "{at}: `cp FROM TO` of a file of the tree, to outside examples/"
                    );
                    std::fs::copy(dir.path().join(words[0]), dir.path().join(words[1]))
                        .unwrap_or_else(|e| panic!("{at}: {line}: {e}"));
                    copies += 1;
                    continue;
                }
                // An edit of a copied file (`sed -i 's/A/B/' FILE`), as a user makes it.
                if let Some(args) = line.strip_prefix("sed -i ") {
                    let file = args.rsplit(' ').next().unwrap_or_default();
                    assert!(
                        !file.starts_with("examples") && dir.path().join(file).exists(),
                        "{at}: `sed -i` of a copy outside examples/"
                    );
                    let out = Command::new("bash")
                        .args(["-c", line])
                        .current_dir(dir.path())
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{at}: {line}: {out:?}");
                    continue;
                }
                if !line.starts_with("hyraid ") {
                    continue;
                }
                let (with_comment, code) = expected_exit(line);
                let cmd = match with_comment.find(" #") {
                    Some(i) => with_comment[..i].trim_end().to_string(),
                    None => with_comment,
                };
                // Pasted in a checkout, a command must leave the tree's snapshots as they are.
                let words: Vec<&str> = cmd.split_whitespace().collect();
                let written = if cmd.starts_with("hyraid sim settle") {
                    words.get(3).copied()
                } else if cmd.contains("--sim-write") {
                    words
                        .iter()
                        .position(|w| *w == "--sim")
                        .and_then(|i| words.get(i + 1).copied())
                } else {
                    None
                };
                if written.is_some_and(|w| w.starts_with("examples/")) {
                    failed.push(format!(
                        "{at}: {cmd}\n  changes a snapshot of the tree: copy it first"
                    ));
                }
                if let Some(why) = why_skipped(&cmd, dir.path()) {
                    skipped.push(format!("{at}: {cmd}  ({why})"));
                    continue;
                }
                let out = Command::new("bash")
                    .args(["-c", &cmd])
                    .current_dir(dir.path())
                    .env("PATH", &path)
                    .env("NO_COLOR", "1")
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                if out.status.code() != Some(code) {
                    failed.push(format!(
                        "{at}: {cmd}\n  expected exit {code}, got {}\n  stdout: {}\n  stderr: {}",
                        out.status,
                        String::from_utf8_lossy(&out.stdout).trim_end(),
                        String::from_utf8_lossy(&out.stderr).trim_end()
                    ));
                }
                ran.push(format!("{at}: {cmd}  (exit {code})"));
            }
        }
    }
    eprintln!(
        "run ({}, after {copies} copies of snapshots):\n  {}",
        ran.len(),
        ran.join("\n  ")
    );
    eprintln!("skipped ({}):\n  {}", skipped.len(), skipped.join("\n  "));
    assert!(
        failed.is_empty(),
        "docs commands that do not do what the docs say:\n{}",
        failed.join("\n")
    );
    // The pages that say "a test runs these" have them: at least this many run.
    assert!(ran.len() >= 38, "only {} docs commands ran", ran.len());
}
