//! Where each node of the YAML file is: JSON-pointer paths mapped to line and column, so that
//! schema and semantic errors can name `file:line:col`.

use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// Positions of the nodes of one YAML document, keyed by JSON pointer (`/mirrors/data0/members/1`).
#[derive(Debug, Default, Clone)]
pub struct Positions {
    /// Where the value at a path starts.
    values: HashMap<String, Pos>,
    /// Where the key that introduces a path starts (mapping entries only).
    keys: HashMap<String, Pos>,
    /// Keys that appear twice in one mapping: (pointer, position of the second).
    pub duplicates: Vec<(String, Pos)>,
}

impl Positions {
    /// Build from the source. Syntax errors are reported by the deserializer, so a scan error
    /// here just leaves the map partial.
    pub fn index(source: &str) -> Positions {
        let mut rec = Recorder::default();
        let mut parser = Parser::new_from_str(source);
        let _ = parser.load(&mut rec, false);
        rec.out
    }

    /// Position of the value at `pointer`, or of its nearest ancestor that has one.
    pub fn value(&self, pointer: &str) -> Pos {
        self.lookup(pointer, false)
    }

    /// Position of the key that introduces `pointer` (falls back to the value, then ancestors).
    pub fn key(&self, pointer: &str) -> Pos {
        self.lookup(pointer, true)
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

enum Frame {
    Map { path: String, key: Option<String> },
    Seq { path: String, index: usize },
}

#[derive(Default)]
struct Recorder {
    stack: Vec<Frame>,
    out: Positions,
}

impl Recorder {
    fn pos(mark: Marker) -> Pos {
        Pos {
            line: mark.line(),
            col: mark.col() + 1,
        }
    }

    /// Path of the node that starts now, or None if it is a mapping key (recorded here).
    fn node_path(&mut self, ev: &Event, mark: Marker) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Seq { path, index }) => {
                let p = format!("{path}/{index}");
                *index += 1;
                Some(p)
            }
            Some(Frame::Map { path, key }) => match key.take() {
                Some(k) => Some(format!("{path}/{}", escape_segment(&k))),
                None => {
                    let name = match ev {
                        Event::Scalar(s, ..) => s.clone(),
                        _ => String::from("?"),
                    };
                    let p = format!("{path}/{}", escape_segment(&name));
                    if self.out.keys.insert(p.clone(), Self::pos(mark)).is_some() {
                        self.out.duplicates.push((p, Self::pos(mark)));
                    }
                    *key = Some(name);
                    None
                }
            },
        }
    }
}

impl MarkedEventReceiver for Recorder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        match ev {
            Event::Scalar(..) | Event::Alias(_) => {
                if let Some(p) = self.node_path(&ev, mark) {
                    self.out.values.insert(p, Self::pos(mark));
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let path = self.node_path(&ev, mark).unwrap_or_else(|| "/?".into());
                self.out.values.insert(path.clone(), Self::pos(mark));
                self.stack.push(match ev {
                    Event::MappingStart(..) => Frame::Map { path, key: None },
                    _ => Frame::Seq { path, index: 0 },
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keys_and_values() {
        let src =
            "version: 1\nmirrors:\n  data0:\n    members: [ssd0, hdd0]\n    write_mosty: auto\n";
        let p = Positions::index(src);
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
