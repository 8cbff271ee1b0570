//! The drives' SMART counters as hyraid first saw them (by serial), and as it saw them last: a
//! count that has grown since is a drive getting worse, even when it was not zero to begin with.

use super::{DIR, file_name};
use crate::host::Host;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drive {
    /// Seconds since the epoch.
    pub first_seen: u64,
    pub last_seen: u64,
    /// The counters when first seen, by name (`pending sectors`, …).
    pub baseline: BTreeMap<String, u64>,
    pub last: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drives {
    /// By serial number.
    #[serde(default)]
    pub drives: BTreeMap<String, Drive>,
}

impl Drives {
    /// Note `counters` of the drive `serial` seen at `now`: its baseline when first seen (a
    /// counter it did not report before starts from what it reports now).
    pub fn saw(&mut self, serial: &str, counters: &[(&str, u64)], now: u64) {
        let d = self
            .drives
            .entry(serial.to_string())
            .or_insert_with(|| Drive {
                first_seen: now,
                ..Default::default()
            });
        d.last_seen = now;
        for (k, v) in counters {
            d.baseline.entry(k.to_string()).or_insert(*v);
            d.last.insert(k.to_string(), *v);
        }
    }
}

pub fn path() -> String {
    format!("{DIR}/drives.json")
}

pub fn read(host: &dyn Host) -> Result<Drives, String> {
    Ok(super::read(host, &path())?.unwrap_or_default())
}

pub fn write(host: &dyn Host, d: &Drives) -> Result<(), String> {
    super::write(host, &path(), d)
}

/// A serial as a key (never empty).
pub fn key(serial: Option<&str>, kname: &str) -> String {
    file_name(serial.filter(|s| !s.is_empty()).unwrap_or(kname))
}
