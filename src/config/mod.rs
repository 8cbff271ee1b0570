//! Desired state: load the YAML file, check it against the schema and the semantic rules,
//! and resolve it into [`Desired`]. Every error names file:line:col, the field path and a fix.

pub mod boot;
pub mod desired;
mod editor_rules;
pub mod encryption;
pub mod filesystem;
pub mod monitoring;
pub mod position;
pub mod raw;
pub mod scalar;
pub mod size;
mod validate;
pub mod yaml;

pub use desired::*;
use position::display_path;
use raw::RawConfig;
use serde::Serialize;
use std::fmt;
use std::path::Path;

/// Largest file hyraid reads as a configuration.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    /// Field path, e.g. `mirrors.data0.write_behind`.
    pub path: String,
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file, self.line, self.col, self.path, self.message
        )?;
        if let Some(h) = &self.hint {
            write!(f, "\n    help: {h}")?;
        }
        Ok(())
    }
}

/// All errors found in one file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// Read and validate a configuration file.
pub fn load_file(path: &Path) -> Result<Desired, ConfigErrors> {
    let name = path.display().to_string();
    let one = |message: String, hint: Option<String>| {
        ConfigErrors(vec![ConfigError {
            file: name.clone(),
            line: 1,
            col: 1,
            path: "(file)".into(),
            message,
            hint,
        }])
    };
    let meta = std::fs::metadata(path).map_err(|e| one(format!("cannot read: {e}"), None))?;
    if meta.len() > MAX_CONFIG_BYTES as u64 {
        return Err(one(
            format!(
                "file is {} bytes; a hyraid configuration is at most {MAX_CONFIG_BYTES} bytes",
                meta.len()
            ),
            Some("check that this is the right file".into()),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| one(format!("cannot read: {e}"), None))?;
    load_bytes(&name, &bytes)
}

/// Validate a configuration's bytes: text that is not UTF-8 is reported where its first bad
/// byte is (line, column in characters), as every other error is.
pub fn load_bytes(name: &str, bytes: &[u8]) -> Result<Desired, ConfigErrors> {
    match std::str::from_utf8(bytes) {
        Ok(text) => load_str(name, text),
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let col = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
            let bad: Vec<String> = bytes[e.valid_up_to()..]
                .iter()
                .take(e.error_len().unwrap_or(1).max(1))
                .map(|b| format!("0x{b:02x}"))
                .collect();
            Err(ConfigErrors(vec![ConfigError {
                file: name.to_string(),
                line: good.iter().filter(|b| **b == b'\n').count() + 1,
                col,
                path: "(file)".into(),
                message: format!(
                    "not UTF-8 text: byte {} cannot start or continue a character",
                    bad.join(" ")
                ),
                hint: Some("save the file as UTF-8 (an editor's encoding setting; `iconv -f latin1 -t utf-8` converts Latin-1)".into()),
            }]))
        }
    }
}

/// Validate configuration text; `name` is used in error positions.
pub fn load_str(name: &str, text: &str) -> Result<Desired, ConfigErrors> {
    // A byte order mark (as Notepad saves UTF-8) is not part of the document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let err_at =
        |line: usize, col: usize, path: &str, message: String, hint: Option<String>| ConfigError {
            file: name.to_string(),
            line,
            col,
            path: path.to_string(),
            message,
            hint,
        };
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ConfigErrors(vec![err_at(
            1,
            1,
            "(file)",
            format!(
                "file is {} bytes; a hyraid configuration is at most {MAX_CONFIG_BYTES} bytes",
                text.len()
            ),
            None,
        )]));
    }
    // 1. YAML syntax: one parser gives the value and every node's position.
    let (value, positions) = match yaml::parse(text) {
        Ok(parsed) => parsed,
        Err(yaml::YamlError::OutOfRange { pos, pointer }) => {
            return Err(ConfigErrors(vec![err_at(
                pos.line,
                pos.col,
                &path_of(&pointer),
                "number is too large (more than 2^64-1)".into(),
                Some("sizes are bytes up to 16 EiB; write a size with a unit, e.g. `2TiB`".into()),
            )]));
        }
        Err(yaml::YamlError::NotFinite { pos, pointer, text }) => {
            return Err(ConfigErrors(vec![err_at(
                pos.line,
                pos.col,
                &path_of(&pointer),
                format!("`{text}` is infinity or not-a-number, which no setting takes"),
                Some("write a whole number or a size with its unit; quote it (`\".inf\"`) where a name is meant".into()),
            )]));
        }
        Err(yaml::YamlError::Syntax { pos, message }) => {
            // A tab is the most common cause, and the parser's words do not name it.
            let tab = text
                .lines()
                .nth(pos.line.saturating_sub(1))
                .is_some_and(|l| l.contains('\t'));
            let hint = if tab {
                "this line has a tab: YAML indents with spaces only, and hyraid reads a tab after `key:` as an error too; replace the tabs with spaces"
            } else {
                "fix the YAML syntax (indentation, quotes, `key: value`)"
            };
            return Err(ConfigErrors(vec![err_at(
                pos.line,
                pos.col,
                "(file)",
                format!("not valid YAML: {message}"),
                Some(hint.into()),
            )]));
        }
    };
    if value.is_null() {
        return Err(ConfigErrors(vec![err_at(
            1,
            1,
            "(file)",
            "file is empty".into(),
            Some("start with `version: 1`".into()),
        )]));
    }
    if !positions.duplicates.is_empty() {
        return Err(ConfigErrors(
            positions
                .duplicates
                .iter()
                .map(|(ptr, pos)| {
                    let key = ptr.rsplit('/').next().unwrap_or("").replace("~1", "/").replace("~0", "~");
                    err_at(
                        pos.line,
                        pos.col,
                        &path_of(ptr),
                        format!("key `{key}` appears twice in the same mapping"),
                        Some("YAML would silently keep only the last one; remove or rename one of them".into()),
                    )
                })
                .collect(),
        ));
    }
    // 2. Schema: shape, types and unknown keys, all errors at once. The schema is generated
    // from the types serde reads, so a file serde reads is one it accepts (pinned by
    // `a_file_serde_reads_passes_the_schema`); making and compiling it costs more than the rest
    // of the load (a third of a converged plan's time before its first spawn, in a TCG guest),
    // so it runs only to explain a file that does not read.
    let raw: RawConfig = match serde_json::from_value(value.clone()) {
        Ok(raw) => raw,
        Err(e) => {
            let schema_errors = validate::schema_errors(&value, &positions, name);
            if !schema_errors.is_empty() {
                return Err(ConfigErrors(schema_errors));
            }
            // Where serde stopped, read again with the path kept (only on this error path).
            let at = serde_path_to_error::deserialize::<_, RawConfig>(value.clone())
                .err()
                .map(|e| {
                    use serde_path_to_error::Segment;
                    let pointer: String = e
                        .path()
                        .iter()
                        .filter_map(|s| match s {
                            Segment::Seq { index } => Some(format!("/{index}")),
                            Segment::Map { key } => {
                                Some(format!("/{}", position::escape_segment(key)))
                            }
                            Segment::Enum { .. } | Segment::Unknown => None,
                        })
                        .collect();
                    pointer
                })
                .filter(|p| !p.is_empty());
            let float = at
                .as_deref()
                .and_then(|p| value.pointer(p))
                .filter(|v| v.is_f64());
            let (message, hint) = match float {
                Some(f) => (
                    format!("`{f}` is a decimal number; this setting takes a whole number"),
                    Some(
                        "write it without a decimal point or exponent (`2`, not `2.0`)".to_string(),
                    ),
                ),
                None => (format!("does not match the format: {e}"), None),
            };
            let (pos, path) = match &at {
                Some(p) => (positions.value(p), path_of(p)),
                None => (position::Pos { line: 1, col: 1 }, "(file)".to_string()),
            };
            return Err(ConfigErrors(vec![err_at(
                pos.line, pos.col, &path, message, hint,
            )]));
        }
    };
    // 3. Semantics: references, uniqueness, ranges.
    validate::semantic(&raw, &positions, name)
}

/// Whether `name` may name a disk in the file.
pub fn valid_name(name: &str) -> bool {
    validate::disk_name_ok(name)
}

/// The JSON Schema of the file format hyraid publishes (`hyraid schema`): generated from the
/// same types serde reads, with the rules of `hyraid validate` a schema can express added for
/// editors (editor_rules.rs).
pub fn json_schema() -> serde_json::Value {
    let mut s = structural_schema();
    editor_rules::add(&mut s, validate::writecache_settings_schema());
    s
}

/// The schema of the types alone: what `hyraid validate` checks first, before its own rules
/// (which report each error with its own message and fix).
pub(crate) fn structural_schema() -> serde_json::Value {
    crate::observe::json_schema::published(schemars::schema_for!(RawConfig), "hyraid.schema.json")
}

pub(crate) fn path_of(pointer: &str) -> String {
    display_path(pointer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                yaml_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                out.push(p);
            }
        }
    }

    /// Every leaf and every mapping of `v` changed in the ways a user gets wrong: another type,
    /// a negative or fractional number, an empty value, an unknown key.
    fn variants(v: &serde_json::Value) -> Vec<serde_json::Value> {
        use serde_json::{Value, json};
        let odd = [
            Value::Null,
            json!(true),
            json!(-1),
            json!(1.5),
            json!(4294967296u64),
            json!("x"),
            json!([]),
            json!({}),
        ];
        let mut out = Vec::new();
        match v {
            Value::Object(m) => {
                let mut extra = m.clone();
                extra.insert("unknown_key".into(), json!(1));
                out.push(Value::Object(extra));
                for (k, child) in m {
                    let mut drop = m.clone();
                    drop.remove(k);
                    out.push(Value::Object(drop));
                    for c in variants(child) {
                        let mut m2 = m.clone();
                        m2.insert(k.clone(), c);
                        out.push(Value::Object(m2));
                    }
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    for c in variants(child) {
                        let mut a2 = a.clone();
                        a2[i] = c;
                        out.push(Value::Array(a2));
                    }
                }
            }
            _ => out.extend(odd.iter().filter(|o| *o != v).cloned()),
        }
        out
    }

    /// `load_str` runs the schema only for a file serde cannot read: that loses no error only if
    /// every value serde reads as the format is one the schema accepts. Checked on every YAML file
    /// in the tree (the examples, the VM suite's, the 111 bad files) and on each example changed
    /// at every node in the ways a user gets wrong.
    #[test]
    fn a_file_serde_reads_passes_the_schema() {
        let validator = jsonschema::validator_for(&structural_schema()).unwrap();
        let mut files = Vec::new();
        for d in [
            "examples",
            "tests/bad",
            "tests/vm/configs",
            "contrib/ansible/examples",
        ] {
            yaml_files(Path::new(d), &mut files);
        }
        let (mut read, mut tried) = (0, 0);
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let Ok((value, _)) = yaml::parse(&text) else {
                continue;
            };
            let mut values = vec![value.clone()];
            if !f.starts_with("tests/bad")
                && serde_json::from_value::<RawConfig>(value.clone()).is_ok()
            {
                values.extend(variants(&value));
            }
            for v in values {
                tried += 1;
                if serde_json::from_value::<RawConfig>(v.clone()).is_ok() {
                    read += 1;
                    let errors: Vec<String> =
                        validator.iter_errors(&v).map(|e| e.to_string()).collect();
                    assert!(
                        errors.is_empty(),
                        "{}: serde reads {v} but the schema says {errors:?}",
                        f.display()
                    );
                }
            }
        }
        assert!(
            files.len() > 140 && read > 100 && tried > 5000,
            "{} files, {read} of {tried} read",
            files.len()
        );
    }
}
