//! Desired state: load the YAML file, check it against the schema and the semantic rules,
//! and resolve it into [`Desired`]. Every error names file:line:col, the field path and a fix.

pub mod desired;
mod editor_rules;
pub mod filesystem;
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
    let text = std::fs::read_to_string(path).map_err(|e| one(format!("cannot read: {e}"), None))?;
    load_str(&name, &text)
}

/// Validate configuration text; `name` is used in error positions.
pub fn load_str(name: &str, text: &str) -> Result<Desired, ConfigErrors> {
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
        Err(yaml::YamlError::Syntax { pos, message }) => {
            return Err(ConfigErrors(vec![err_at(
                pos.line,
                pos.col,
                "(file)",
                format!("not valid YAML: {message}"),
                Some("fix the YAML syntax (indentation, quotes, `key: value`)".into()),
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
    // 2. Schema: shape, types and unknown keys, all errors at once.
    let schema_errors = validate::schema_errors(&value, &positions, name);
    if !schema_errors.is_empty() {
        return Err(ConfigErrors(schema_errors));
    }
    let raw: RawConfig = serde_json::from_value(value).map_err(|e| {
        ConfigErrors(vec![err_at(
            1,
            1,
            "(file)",
            format!("does not match the format: {e}"),
            None,
        )])
    })?;
    // 3. Semantics: references, uniqueness, ranges.
    validate::semantic(&raw, &positions, name)
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
