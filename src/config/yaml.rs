//! The one YAML parser: yaml-rust2's event stream builds both the value that the schema and
//! serde read and the position of every node, so that the two can never disagree about a file.
//! Syntax errors keep libyaml's wording and positions (what hyraid printed when it read YAML
//! through serde_yaml), so `tests/bad/` reads the same.

use super::position::{Pos, Positions, escape_segment};
use super::scalar::{OutOfRange, is_non_finite, resolve_plain};
use serde_json::{Map, Value};
use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Deeper nesting than this is refused (serde_yaml's limit).
const MAX_DEPTH: usize = 128;

/// Why a file is not a YAML document hyraid can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlError {
    /// Not valid YAML: libyaml's wording of the problem, where it is.
    Syntax { pos: Pos, message: String },
    /// An integer beyond 64 bits, at `pointer`.
    OutOfRange { pos: Pos, pointer: String },
    /// `.inf`, `.nan`: no setting takes them (they would read as "not set").
    NotFinite {
        pos: Pos,
        pointer: String,
        text: String,
    },
}

/// Parse one YAML document into its value and the positions of its nodes.
pub fn parse(text: &str) -> Result<(Value, Positions), YamlError> {
    let mut b = Builder::default();
    let loaded = Parser::new_from_str(text).load(&mut b, true);
    if let Err(e) = loaded {
        return Err(syntax_error(text, e.marker(), e.info()));
    }
    if b.documents > 1 {
        return Err(YamlError::Syntax {
            pos: Pos { line: 1, col: 1 },
            message: "deserializing from YAML containing more than one document is not supported"
                .into(),
        });
    }
    if let Some(e) = b.error {
        return Err(e);
    }
    Ok((b.root.unwrap_or(Value::Null), b.positions))
}

/// yaml-rust2 words a few errors differently from libyaml and marks the context rather than
/// the problem; give them as libyaml did.
fn syntax_error(text: &str, mark: &Marker, info: &str) -> YamlError {
    let problem = match info.strip_prefix("while ") {
        Some(rest) => rest.split_once(", ").map_or(info, |(_, p)| p),
        None => info,
    };
    let mut pos = Pos {
        line: mark.line(),
        col: mark.col() + 1,
    };
    let message = if problem.starts_with("tabs disallowed") {
        // libyaml points at the tab itself.
        let line = text.lines().nth(pos.line.saturating_sub(1)).unwrap_or("");
        if let Some(i) = line.chars().position(|c| c == '\t') {
            pos.col = i + 1;
        }
        "found character that cannot start any token".to_string()
    } else if problem == "found unexpected end of stream" {
        // libyaml marks the end of the stream, not the start of the unclosed scalar.
        let last = text.rsplit('\n').next().unwrap_or("");
        pos = Pos {
            line: text.matches('\n').count() + 1,
            col: last.chars().count() + 1,
        };
        problem.to_string()
    } else {
        problem.to_string()
    };
    YamlError::Syntax { pos, message }
}

enum Frame {
    Map {
        path: String,
        anchor: usize,
        map: Map<String, Value>,
        key: Option<String>,
    },
    Seq {
        path: String,
        anchor: usize,
        items: Vec<Value>,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Value>,
    positions: Positions,
    root: Option<Value>,
    documents: usize,
    events: usize,
    /// Nodes copied in by aliases, bounded like serde_yaml's repetition limit.
    repeated: usize,
    error: Option<YamlError>,
}

fn pos(mark: Marker) -> Pos {
    Pos {
        line: mark.line(),
        col: mark.col() + 1,
    }
}

fn nodes(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(nodes).sum::<usize>(),
        Value::Object(m) => 1 + m.values().map(nodes).sum::<usize>(),
        _ => 1,
    }
}

fn is_str_tag(tag: &Option<Tag>) -> bool {
    tag.as_ref()
        .is_some_and(|t| t.handle == "tag:yaml.org,2002:" && t.suffix == "str")
}

impl Builder {
    fn fail(&mut self, e: YamlError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Path of the node that starts now, or None if it is a mapping key (recorded here).
    fn node_path(&mut self, ev: &Event, mark: Marker) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Seq { path, items, .. }) => Some(format!("{path}/{}", items.len())),
            Some(Frame::Map { path, key, .. }) => match key {
                Some(k) => Some(format!("{path}/{}", escape_segment(k))),
                None => {
                    let name = match ev {
                        Event::Scalar(s, ..) => s.clone(),
                        _ => String::from("?"),
                    };
                    let p = format!("{path}/{}", escape_segment(&name));
                    // A key inside a repeated key's value repeats only because its parent does:
                    // the parent's is the one error.
                    if self.positions.keys.insert(p.clone(), pos(mark)).is_some()
                        && !self.positions.duplicates.iter().any(|(d, _)| {
                            p.strip_prefix(d.as_str())
                                .is_some_and(|r| r.starts_with('/'))
                        })
                    {
                        self.positions.duplicates.push((p, pos(mark)));
                    }
                    *key = Some(name);
                    None
                }
            },
        }
    }

    /// A finished node goes into its parent (or becomes the document).
    fn finish(&mut self, anchor: usize, value: Value) {
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map { map, key, .. }) => {
                if let Some(k) = key.take() {
                    map.insert(k, value);
                }
            }
        }
    }

    fn scalar(&mut self, ev: &Event, mark: Marker) {
        let Event::Scalar(text, style, anchor, tag) = ev else {
            return;
        };
        let Some(path) = self.node_path(ev, mark) else {
            return; // a mapping key: its text is the key
        };
        // An empty value (`ssd1:` and nothing) is marked where the parser met the next token,
        // often lines further down: it is where its key is.
        let at = match self.positions.keys.get(&path) {
            Some(k) if text.is_empty() && *style == TScalarStyle::Plain => *k,
            _ => pos(mark),
        };
        self.positions.values.insert(path.clone(), at);
        let value = if *style != TScalarStyle::Plain || is_str_tag(tag) {
            Value::String(text.clone())
        } else if is_non_finite(text) {
            self.fail(YamlError::NotFinite {
                pos: pos(mark),
                pointer: path,
                text: text.clone(),
            });
            Value::Null
        } else {
            match resolve_plain(text) {
                Ok(v) => v,
                Err(OutOfRange) => {
                    let e = YamlError::OutOfRange {
                        pos: pos(mark),
                        pointer: path,
                    };
                    self.fail(e);
                    Value::Null
                }
            }
        };
        self.finish(*anchor, value);
    }

    fn alias(&mut self, ev: &Event, id: usize, mark: Marker) {
        let value = self.anchors.get(&id).cloned().unwrap_or(Value::Null);
        self.repeated += nodes(&value);
        if self.repeated > self.events.max(10) * 100 {
            self.fail(YamlError::Syntax {
                pos: pos(mark),
                message: "repetition limit exceeded".into(),
            });
        }
        match self.node_path(ev, mark) {
            Some(path) => {
                self.positions.values.insert(path, pos(mark));
                self.finish(0, value);
            }
            None => self.fail(YamlError::Syntax {
                pos: pos(mark),
                message: "an alias cannot be a mapping key".into(),
            }),
        }
    }

    fn start(&mut self, ev: &Event, mark: Marker) {
        if self.stack.len() >= MAX_DEPTH {
            self.fail(YamlError::Syntax {
                pos: pos(mark),
                message: "recursion limit exceeded".into(),
            });
        }
        let Some(path) = self.node_path(ev, mark) else {
            self.fail(YamlError::Syntax {
                pos: pos(mark),
                message: "a mapping key must be a scalar, not a mapping or a list".into(),
            });
            return;
        };
        self.positions.values.insert(path.clone(), pos(mark));
        self.stack.push(match *ev {
            Event::MappingStart(anchor, _) => Frame::Map {
                path,
                anchor,
                map: Map::new(),
                key: None,
            },
            Event::SequenceStart(anchor, _) => Frame::Seq {
                path,
                anchor,
                items: Vec::new(),
            },
            _ => return,
        });
    }

    fn end(&mut self) {
        match self.stack.pop() {
            Some(Frame::Map {
                anchor,
                mut map,
                path,
                ..
            }) => {
                if let Some(merged) = map.remove(MERGE_KEY) {
                    self.merge(&path, &mut map, merged);
                }
                self.finish(anchor, Value::Object(map))
            }
            Some(Frame::Seq { anchor, items, .. }) => self.finish(anchor, Value::Array(items)),
            None => {}
        }
    }
}

/// YAML's merge key (`<<: *defaults`, yaml.org/type/merge.html): the keys of the mapping (or
/// of each mapping of the list, the first one first) that the mapping does not set itself.
const MERGE_KEY: &str = "<<";

impl Builder {
    /// Merge `merged` (the value of `<<` in the mapping at `path`) into `map`. A merged key is
    /// placed, for errors, where its `<<` is: that is the line that brought it in.
    fn merge(&mut self, path: &str, map: &mut Map<String, Value>, merged: Value) {
        let here = format!("{path}/{}", escape_segment(MERGE_KEY));
        let key_pos = self.positions.keys.get(&here).copied();
        let value_pos = self.positions.values.get(&here).copied();
        let at = value_pos.or(key_pos).unwrap_or(Pos { line: 1, col: 1 });
        let sources = match merged {
            Value::Object(m) => vec![m],
            Value::Array(items) if items.iter().all(Value::is_object) => items
                .into_iter()
                .filter_map(|v| match v {
                    Value::Object(m) => Some(m),
                    _ => None,
                })
                .collect(),
            _ => {
                self.fail(YamlError::Syntax {
                    pos: at,
                    message: "a merge key (`<<`) takes a mapping or a list of mappings, e.g. `<<: *defaults`".into(),
                });
                return;
            }
        };
        self.positions.keys.remove(&here);
        self.positions.values.remove(&here);
        for source in sources {
            for (k, v) in source {
                if map.contains_key(&k) {
                    continue;
                }
                let p = format!("{path}/{}", escape_segment(&k));
                if let Some(kp) = key_pos {
                    self.positions.keys.insert(p.clone(), kp);
                }
                self.positions.values.insert(p, at);
                map.insert(k, v);
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        self.events += 1;
        if self.error.is_some() {
            return;
        }
        match ev {
            Event::DocumentStart => self.documents += 1,
            Event::Scalar(..) => self.scalar(&ev, mark),
            Event::Alias(id) => self.alias(&ev, id, mark),
            Event::MappingStart(..) | Event::SequenceStart(..) => self.start(&ev, mark),
            Event::MappingEnd | Event::SequenceEnd => self.end(),
            _ => {}
        }
    }
}
