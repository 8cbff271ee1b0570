//! The journal of what ran: one JSON line per command (time, host, step, object, command line,
//! exit status and output), appended.

use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Serialize)]
pub(super) struct JournalEntry<'a> {
    pub time: u64,
    pub host: &'a str,
    pub step: usize,
    pub object: String,
    pub command: String,
    pub status: i32,
    pub stdout: &'a str,
    pub stderr: &'a str,
}

pub(super) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Where the record of what ran goes (JSON lines, appended; nowhere when `path` is `None`).
#[derive(Debug, Default)]
pub struct Journal {
    pub path: Option<PathBuf>,
}

impl Journal {
    pub(super) fn record(&self, e: &JournalEntry) {
        let Some(p) = &self.path else { return };
        if let Some(d) = p.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
        {
            let _ = writeln!(f, "{}", serde_json::to_string(e).unwrap_or_default());
        }
    }
}
