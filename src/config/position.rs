//! Where each node of the YAML file is: JSON-pointer paths mapped to line and column, so that
//! schema and semantic errors can name `file:line:col`. Filled by the parser (`config::yaml`)
//! in the same pass that builds the value.

use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// Positions of the nodes of one YAML document, keyed by JSON pointer (`/mirrors/data0/members/1`).
#[derive(Debug, Default, Clone)]
pub struct Positions {
    /// Where the value at a path starts.
    pub(super) values: HashMap<String, Pos>,
    /// Where the key that introduces a path starts (mapping entries only).
    pub(super) keys: HashMap<String, Pos>,
    /// Keys that appear twice in one mapping: (pointer, position of the second).
    pub duplicates: Vec<(String, Pos)>,
}

impl Positions {
    /// Position of the value at `pointer`, or of its nearest ancestor that has one.
    pub fn value(&self, pointer: &str) -> Pos {
        self.lookup(pointer, false)
    }

    /// Position of the key that introduces `pointer` (falls back to the value, then ancestors).
    pub fn key(&self, pointer: &str) -> Pos {
        self.lookup(pointer, true)
    }

    /// Where the key that introduces exactly `pointer` is (no ancestor's).
    pub fn key_exact(&self, pointer: &str) -> Option<Pos> {
        self.keys.get(pointer).copied()
    }

    /// Where the value at exactly `pointer` starts (no ancestor's).
    pub fn value_exact(&self, pointer: &str) -> Option<Pos> {
        self.values.get(pointer).copied()
    }

    /// The keys of the mapping at `pointer`, with where each starts.
    pub fn child_keys(&self, pointer: &str) -> Vec<Pos> {
        let prefix = format!("{pointer}/");
        self.keys
            .iter()
            .filter(|(k, _)| k.strip_prefix(&prefix).is_some_and(|r| !r.contains('/')))
            .map(|(_, p)| *p)
            .collect()
    }

    fn lookup(&self, pointer: &str, key_first: bool) -> Pos {
        let mut p = pointer.to_string();
        loop {
            if key_first && let Some(pos) = self.keys.get(&p) {
                return *pos;
            }
            if let Some(pos) = self.values.get(&p) {
                return *pos;
            }
            match p.rfind('/') {
                Some(i) => p.truncate(i),
                None => return Pos { line: 1, col: 1 },
            }
        }
    }
}

/// Escape one JSON-pointer segment (RFC 6901).
pub fn escape_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// `/mirrors/data0/members/1` → `mirrors.data0.members[1]`.
pub fn display_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.chars().all(|c| c.is_ascii_digit()) && !out.is_empty() {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    if out.is_empty() {
        "(top level)".to_string()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keys_and_values() {
        let src =
            "version: 1\nmirrors:\n  data0:\n    members: [ssd0, hdd0]\n    write_mosty: auto\n";
        let (_, p) = super::super::yaml::parse(src).unwrap();
        assert_eq!(p.key("/mirrors/data0/write_mosty"), Pos { line: 5, col: 5 });
        assert_eq!(
            p.value("/mirrors/data0/members/1"),
            Pos { line: 4, col: 21 }
        );
        assert_eq!(
            p.value("/mirrors/data0/members/9"),
            Pos { line: 4, col: 14 }
        );
        assert_eq!(
            display_path("/mirrors/data0/members/1"),
            "mirrors.data0.members[1]"
        );
    }
}
