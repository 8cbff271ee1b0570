//! The import graph of src/ runs one way: each room uses only rooms below it. A `crate::ROOM`
//! path in a file of another room is an arrow; an arrow to a room at the same level or above
//! fails this test, with the file and line.

use std::collections::BTreeMap;
use std::path::Path;

/// Rooms by level: a room may use rooms of lower levels only.
const LEVELS: &[(&str, u32)] = &[
    ("host", 0),
    ("timings", 0),
    ("observe", 1),
    ("config", 2),
    ("history", 2),
    ("sim", 3),
    ("plan", 4),
    ("render", 5),
    ("import", 5),
    ("status", 5),
    ("bench", 5),
    ("alert", 5),
    ("machine", 5),
    ("apply", 6),
    ("check", 6),
    ("tune", 7),
    ("error", 8),
    ("cli", 9),
];

fn level(room: &str) -> Option<u32> {
    LEVELS.iter().find(|(r, _)| *r == room).map(|(_, l)| *l)
}

/// The room of a file: its first component under src/ (`src/plan/step/md.rs` → plan).
fn room_of(path: &Path) -> String {
    let rel = path.strip_prefix("src").unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `crate::ROOM` arrows of one file, with line numbers (comments left out).
fn arrows(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if after.starts_with('{') {
                out.push((i + 1, "{".into()));
            } else if !name.is_empty() {
                out.push((i + 1, name));
            }
            rest = after;
        }
    }
    out
}

#[test]
fn every_room_has_a_level() {
    let mut all = Vec::new();
    files(Path::new("src"), &mut all);
    for f in &all {
        let room = room_of(f);
        if matches!(room.as_str(), "lib" | "main") {
            continue;
        }
        assert!(
            level(&room).is_some(),
            "{}: room `{room}` has no level in LEVELS",
            f.display()
        );
    }
}

#[test]
fn no_arrow_runs_back_up() {
    let mut all = Vec::new();
    files(Path::new("src"), &mut all);
    let mut back: Vec<String> = Vec::new();
    let mut graph: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for f in &all {
        let room = room_of(f);
        let Some(from) = level(&room) else { continue };
        for (line, to) in arrows(&std::fs::read_to_string(f).unwrap()) {
            assert_ne!(
                to,
                "{",
                "{}:{line}: write `use crate::ROOM::…` one room per line",
                f.display()
            );
            if to == room {
                continue;
            }
            graph.entry(room.clone()).or_default().insert(to.clone());
            match level(&to) {
                Some(l) if l < from => {}
                _ => back.push(format!("{}:{line}: {room} -> {to}", f.display())),
            }
        }
    }
    assert!(
        back.is_empty(),
        "arrows that run back up or sideways:\n{}\n(graph: {graph:?})",
        back.join("\n")
    );
}

#[test]
fn the_checker_sees_an_arrow() {
    // The scan itself: a path in code is an arrow, one in a comment is not.
    let a = arrows(
        "use crate::plan::Plan; // crate::cli\nlet x = crate::observe::names::norm_uuid(u);",
    );
    assert_eq!(a, vec![(1, "plan".to_string()), (2, "observe".to_string())]);
}
