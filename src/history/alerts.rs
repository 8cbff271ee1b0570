//! What alerts were sent: each problem by its key, when it was first and last said. A problem is
//! said when it is new, again when the reminder is due, and once more when it is gone.

use super::DIR;
use crate::host::Host;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Said {
    pub object: String,
    pub message: String,
    pub severity: String,
    /// Seconds since the epoch.
    pub first: u64,
    pub last: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Problems said and standing, by key.
    #[serde(default)]
    pub standing: BTreeMap<String, Said>,
}

pub fn path() -> String {
    format!("{DIR}/alerts.json")
}

pub fn read(host: &dyn Host) -> Result<Ledger, String> {
    Ok(super::read(host, &path())?.unwrap_or_default())
}

pub fn write(host: &dyn Host, l: &Ledger) -> Result<(), String> {
    super::write(host, &path(), l)
}
