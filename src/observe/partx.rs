//! `partx --pairs --output NR,START,SECTORS,NAME DISK` (the show action in key="value" form;
//! util-linux refuses `--show` beside `--pairs`, the two are exclusive actions): the partition table as it is on
//! the disk (libblkid reads the GPT itself), which the kernel's view (lsblk, sysfs) may lag: a
//! partition added while other partitions of the disk were open (the kernel's re-read failed with
//! EBUSY) is in the table and not in the kernel until `partx --add`; a grown one keeps its old
//! size in the kernel until `partx --update`.

use super::model::Observed;
use crate::host::Host;
use serde::{Deserialize, Serialize};

/// One entry of a disk's partition table, in 512-byte sectors (libblkid's unit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TableEntry {
    pub number: u32,
    pub start: u64,
    pub sectors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The GPT type GUID (lowercase), where the model knows it (a simulated sgdisk's
    /// `--typecode`); partx's answer does not carry it (lsblk's PARTTYPE does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parttype: Option<String>,
}

impl TableEntry {
    /// The last sector it covers.
    pub fn end(&self) -> u64 {
        self.start + self.sectors.max(1) - 1
    }
}

pub fn argv(dev: &str) -> Vec<String> {
    ["partx", "--pairs", "--output", "NR,START,SECTORS,NAME", dev]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Lines of `KEY="value"` pairs; a line without a number or a start is skipped.
pub fn parse(text: &str) -> Vec<TableEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<TableEntry> {
    let mut number = None;
    let mut start = None;
    let mut sectors = None;
    let mut name = None;
    let mut rest = line.trim();
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].trim();
        let after = &rest[eq + 2..];
        let close = after.find('"')?;
        let value = unescape(&after[..close]);
        match key {
            "NR" => number = value.parse().ok(),
            "START" => start = value.parse().ok(),
            "SECTORS" => sectors = value.parse().ok(),
            "NAME" if !value.is_empty() => name = Some(value),
            _ => {}
        }
        rest = &after[close + 1..];
    }
    Some(TableEntry {
        number: number?,
        start: start?,
        sectors: sectors?,
        name,
        parttype: None,
    })
}

/// libsmartcols escapes unsafe bytes in `--pairs` output as `\xHH`.
fn unescape(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && b.get(i + 1) == Some(&b'x')
            && let Some(v) = s
                .get(i + 2..i + 4)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Read the on-disk tables of these disks into `obs.partition_tables`. A disk whose table cannot
/// be read (no partx, no table) is left out: its table is then taken to be what the kernel shows.
pub fn probe_partition_tables(host: &dyn Host, obs: &mut Observed, knames: &[String]) {
    for k in knames {
        let Ok(out) = host.run(&argv(&format!("/dev/{k}"))) else {
            continue;
        };
        if out.status == 0 {
            obs.partition_tables.insert(k.clone(), parse(&out.stdout));
        }
    }
}

/// The tools hyraid runs on a partition table in use, and where a distribution installs them.
pub const PARTITION_TOOLS: &[(&str, &[&str])] = &[
    (
        "growpart",
        &["/usr/bin/growpart", "/usr/sbin/growpart", "/bin/growpart"],
    ),
    (
        "partx",
        &[
            "/usr/bin/partx",
            "/usr/sbin/partx",
            "/bin/partx",
            "/sbin/partx",
        ],
    ),
];

/// Note in `obs.missing_tools` the partition tools this host lacks.
pub fn probe_partition_tools(host: &dyn Host, obs: &mut Observed) {
    for (tool, paths) in PARTITION_TOOLS {
        if !paths.iter().any(|p| host.exists(p)) {
            obs.missing_tools.push(tool.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs() {
        let t = parse(
            "NR=\"1\" START=\"2048\" SECTORS=\"2097152\" NAME=\"raid\"\nNR=\"2\" START=\"2099200\" SECTORS=\"1048576\" NAME=\"my\\x20pv\"\nNR=\"3\" START=\"3147776\" SECTORS=\"2048\" NAME=\"\"\n",
        );
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].end(), 2048 + 2097152 - 1);
        assert_eq!(t[1].name.as_deref(), Some("my pv"));
        assert_eq!(t[2].name, None);
    }
}
