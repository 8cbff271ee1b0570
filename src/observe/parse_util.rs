//! Shared pieces of the tool-output parsers.

use serde::{Deserialize, Deserializer};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("{tool}: output is not the expected JSON: {detail}")]
    Json { tool: &'static str, detail: String },
    #[error("{tool}: line {line}: {detail}")]
    Line {
        tool: &'static str,
        line: usize,
        detail: String,
    },
    #[error("{tool}: {detail}")]
    Value { tool: &'static str, detail: String },
}

/// A report value that may be a string (lvm2 `json`, lsblk), a number (`json_std`, lsblk --bytes),
/// a boolean, an array of strings (`json_std` lists) or null.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Flex(pub Option<String>);

impl<'de> Deserialize<'de> for Flex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Ok(Flex(match v {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::Bool(b) => Some(if b { "1".into() } else { "0".into() }),
            serde_json::Value::Array(a) => Some(
                a.iter()
                    .map(|x| match x {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            serde_json::Value::Object(_) => None,
        }))
    }
}

impl Flex {
    /// The text, with empty treated as absent.
    pub fn text(&self) -> Option<&str> {
        self.0.as_deref().filter(|s| !s.is_empty())
    }
    pub fn string(&self) -> String {
        self.0.clone().unwrap_or_default()
    }
    /// An unsigned integer; `-1`, empty and null are absent.
    pub fn u64(&self) -> Option<u64> {
        self.text().and_then(|s| s.trim().parse().ok())
    }
    /// lsblk booleans: true/false since 2.33, "1"/"0" before.
    pub fn bool(&self) -> bool {
        matches!(self.text(), Some("1") | Some("true"))
    }
}

/// Split `KEY : value` lines (mdadm --detail/--examine style).
pub fn colon_fields(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(" : ")?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// A real capture from tests/fixtures, for the parsers' unit tests.
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
