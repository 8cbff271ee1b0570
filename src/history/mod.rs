//! What hyraid keeps between runs, under /var/lib/hyraid: each mirror's checks (where a paused
//! one resumes, the result of every run), what alerts were sent (so a problem is said once, a
//! reminder at most daily, and once more when it is resolved), and the drives' SMART counters
//! (so that a count that grows is seen). Written whole and atomically (a temporary file renamed
//! over the old one), through the host.

pub mod alerts;
pub mod checks;
pub mod drives;

use crate::host::{Host, HostError};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Where hyraid keeps its records.
pub const DIR: &str = crate::observe::monitoring::RECORDS_DIR;

/// Seconds since the epoch, now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A record read back; `None` when there is none yet. A record that does not parse is an error
/// (never silently replaced: it says where it is).
pub fn read<T: DeserializeOwned>(host: &dyn Host, path: &str) -> Result<Option<T>, String> {
    match host.read_file(path) {
        Ok(t) => serde_json::from_str(&t).map(Some).map_err(|e| {
            format!("{path}: not a record of this hyraid ({e}); move it away to start afresh")
        }),
        Err(HostError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Write a record whole and atomically.
pub fn write<T: Serialize>(host: &dyn Host, path: &str, value: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).expect("records serialize") + "\n";
    host.replace_file(path, &text).map_err(|e| e.to_string())
}

/// A name safe in a file name (a UUID, a serial): what is not a letter, digit, `-`, `_` or `.`
/// becomes `_`.
pub fn file_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
