//! Drive health from `smartctl --json -a -n standby DEV` (smartmontools 7 and later): the
//! overall assessment, the ATA counters that tell of failing media (5 reallocated, 197 pending,
//! 198 offline uncorrectable), power-on hours and temperature; NVMe's critical warning, media
//! errors and percentage used; SAS's grown defect list. A drive that gives no SMART (a USB
//! bridge, a virtual disk) or sleeps (`-n standby`: it is not woken) says so.

use serde::{Deserialize, Serialize};

/// The command, for one device.
pub fn argv(dev: &str) -> Vec<String> {
    ["smartctl", "--json", "-a", "-n", "standby", dev]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

pub const SMARTCTL_PATHS: [&str; 2] = ["/usr/sbin/smartctl", "/sbin/smartctl"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Ata,
    Nvme,
    Scsi,
    Unknown,
}

/// What smartctl told of one drive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DriveHealth {
    pub protocol: Option<Protocol>,
    /// SMART is there and on; false: the drive (or its bridge) gives none.
    pub available: bool,
    /// The drive sleeps and was not woken to be read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub standby: bool,
    /// The drive's own overall assessment (`smart_status.passed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reallocated: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline_uncorrectable: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_on_hours: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme_critical_warning: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme_media_errors: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme_percentage_used: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scsi_grown_defects: Option<u64>,
    /// smartctl's own messages of severity error (why a drive gives nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// smartctl could not read the drive at all: it could not open it (gone, no permission) or
    /// the drive did not answer its commands; what smartctl said. Not a drive without SMART.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

#[derive(Deserialize, Default)]
struct Top {
    #[serde(default)]
    smartctl: Ctl,
    #[serde(default)]
    device: Device,
    #[serde(default)]
    smart_support: Option<Support>,
    #[serde(default)]
    smart_status: Option<Status>,
    #[serde(default)]
    ata_smart_attributes: Option<Attributes>,
    #[serde(default)]
    power_on_time: Option<PowerOn>,
    #[serde(default)]
    temperature: Option<Temperature>,
    #[serde(default)]
    nvme_smart_health_information_log: Option<NvmeLog>,
    #[serde(default)]
    scsi_grown_defect_list: Option<u64>,
}

#[derive(Deserialize, Default)]
struct Ctl {
    #[serde(default)]
    exit_status: u32,
    #[serde(default)]
    messages: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    string: String,
    #[serde(default)]
    severity: String,
}

#[derive(Deserialize, Default)]
struct Device {
    #[serde(default)]
    protocol: String,
}

#[derive(Deserialize)]
struct Support {
    #[serde(default)]
    available: bool,
    #[serde(default)]
    enabled: bool,
}

#[derive(Deserialize)]
struct Status {
    passed: Option<bool>,
}

#[derive(Deserialize)]
struct Attributes {
    #[serde(default)]
    table: Vec<Attribute>,
}

#[derive(Deserialize)]
struct Attribute {
    id: u32,
    raw: Raw,
}

#[derive(Deserialize)]
struct Raw {
    value: u64,
}

#[derive(Deserialize)]
struct PowerOn {
    hours: Option<u64>,
}

#[derive(Deserialize)]
struct Temperature {
    current: Option<i64>,
}

#[derive(Deserialize)]
struct NvmeLog {
    critical_warning: Option<u64>,
    media_errors: Option<u64>,
    percentage_used: Option<u64>,
}

/// Bit 1 of smartctl's exit status: the device could not be opened, or (with `-n standby`) it
/// sleeps (smartctl(8), EXIT STATUS).
const OPEN_FAILED: u32 = 1 << 1;
/// Bit 2: a SMART or other command to the drive failed, or a SMART structure's checksum.
const COMMAND_FAILED: u32 = 1 << 2;

/// Parse smartctl's JSON. Text that is not smartctl's JSON is an error; a drive without SMART
/// is not (it says so in the result).
pub fn parse(text: &str) -> Result<DriveHealth, String> {
    let t: Top =
        serde_json::from_str(text).map_err(|e| format!("smartctl: output is not its JSON: {e}"))?;
    let errors: Vec<String> = t
        .smartctl
        .messages
        .iter()
        .filter(|m| m.severity == "error")
        .map(|m| m.string.clone())
        .collect();
    let standby = t.smartctl.exit_status & OPEN_FAILED != 0
        && t.smartctl
            .messages
            .iter()
            .any(|m| m.string.contains("STANDBY") || m.string.contains("SLEEP"));
    let protocol = match t.device.protocol.as_str() {
        "ATA" => Some(Protocol::Ata),
        "NVMe" => Some(Protocol::Nvme),
        "SCSI" => Some(Protocol::Scsi),
        "" => None,
        _ => Some(Protocol::Unknown),
    };
    let attr = |id: u32| {
        t.ata_smart_attributes
            .as_ref()
            .and_then(|a| a.table.iter().find(|x| x.id == id))
            .map(|x| x.raw.value)
    };
    // NVMe has SMART always; `smart_support` is ATA's and SCSI's. For SCSI, "disabled" only
    // turns off the drive's exception reporting (the IEC mode page's DEXCPT): it still gives
    // its health, temperature and grown defect list, which smartctl then reports.
    let available = match (&t.smart_support, protocol) {
        (Some(s), Some(Protocol::Scsi)) => s.available || t.smart_status.is_some(),
        (Some(s), _) => s.available && s.enabled,
        (None, Some(Protocol::Nvme)) => t.nvme_smart_health_information_log.is_some(),
        (None, _) => t.smart_status.is_some(),
    };
    // Nothing read at all: smartctl could not open the drive, or the drive did not answer. (A
    // drive that says it lacks SMART fails smartctl's mandatory SMART command too, bit 2: that
    // one answered.)
    let read_nothing = t.smart_status.is_none()
        && t.ata_smart_attributes.is_none()
        && t.nvme_smart_health_information_log.is_none()
        && t.scsi_grown_defect_list.is_none();
    let lacks_smart = t.smart_support.as_ref().is_some_and(|s| !s.available);
    let status = t.smartctl.exit_status;
    let unreadable = (!standby
        && (status & OPEN_FAILED != 0
            || (status & COMMAND_FAILED != 0 && read_nothing && !lacks_smart)))
        .then(|| match errors.first() {
            Some(e) => e.trim().to_string(),
            None if status & OPEN_FAILED != 0 => {
                format!("the device could not be opened (exit status {status})")
            }
            None => format!("a command to the drive failed (exit status {status})"),
        });
    let nvme = t.nvme_smart_health_information_log.as_ref();
    Ok(DriveHealth {
        protocol,
        available: available && !standby,
        standby,
        passed: t.smart_status.and_then(|s| s.passed),
        reallocated: attr(5),
        pending: attr(197),
        offline_uncorrectable: attr(198),
        power_on_hours: t.power_on_time.and_then(|p| p.hours),
        temperature: t.temperature.and_then(|x| x.current),
        nvme_critical_warning: nvme.and_then(|n| n.critical_warning),
        nvme_media_errors: nvme.and_then(|n| n.media_errors),
        nvme_percentage_used: nvme.and_then(|n| n.percentage_used),
        scsi_grown_defects: t.scsi_grown_defect_list,
        errors,
        unreadable,
    })
}

impl DriveHealth {
    /// The counters whose growth tells of failing media, by name.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        [
            ("reallocated sectors", self.reallocated),
            ("pending sectors", self.pending),
            ("offline uncorrectable sectors", self.offline_uncorrectable),
            ("NVMe media errors", self.nvme_media_errors),
            ("grown defects", self.scsi_grown_defects),
        ]
        .into_iter()
        .filter_map(|(n, v)| Some((n, v?)))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::parse_util::fixture;

    /// smartctl 7.3 (Debian 12) and 7.4 (Debian 13) of QEMU's SATA and NVMe disks, captured by the
    /// VM scenario 38-mismatch-alert.
    #[test]
    fn the_guests_sata_and_nvme_disks_on_both_releases() {
        for release in ["bookworm", "trixie"] {
            for kind in ["sata-hdd", "sata-ssd"] {
                let h = parse(&fixture(&format!("smart/{release}-{kind}.json"))).unwrap();
                assert_eq!(h.protocol, Some(Protocol::Ata), "{release} {kind}");
                assert!(h.available && !h.standby, "{release} {kind}");
                assert_eq!(h.passed, Some(true));
                assert_eq!(h.reallocated, Some(0), "{release} {kind}: attribute 5");
                // QEMU's ATA SMART has no attributes 197 and 198: unknown, not zero.
                assert_eq!((h.pending, h.offline_uncorrectable), (None, None));
                assert_eq!(h.power_on_hours, Some(1));
                assert_eq!(h.temperature, Some(31));
            }
            let n = parse(&fixture(&format!("smart/{release}-nvme.json"))).unwrap();
            assert_eq!(n.protocol, Some(Protocol::Nvme), "{release}");
            assert_eq!(n.passed, Some(true));
            assert_eq!(
                (
                    n.nvme_critical_warning,
                    n.nvme_media_errors,
                    n.nvme_percentage_used
                ),
                (Some(0), Some(0), Some(0)),
                "{release}"
            );
            assert_eq!(n.temperature, Some(50));
        }
    }

    /// smartctl's own failures to open a drive, captured in the guests of both releases: another
    /// user than root, a drive the SCSI layer set offline (it stopped answering), a drive
    /// deleted. Each is unreadable with smartctl's words, never "no SMART" and never asleep.
    #[test]
    fn a_drive_smartctl_cannot_open_is_unreadable_with_its_words() {
        for release in ["bookworm", "trixie"] {
            for (kind, words) in [
                ("open-permission-denied", "failed: Permission denied"),
                ("open-offline", "failed: No such device or address"),
                ("open-deleted", "failed: No such device"),
            ] {
                let h = parse(&fixture(&format!("smart/{release}-{kind}.json"))).unwrap();
                let said = h.unreadable.as_deref().unwrap_or_default();
                assert!(
                    said.starts_with("Smartctl open device: /dev/") && said.ends_with(words),
                    "{release} {kind}: {said:?}"
                );
                assert!(!h.available && !h.standby, "{release} {kind}");
                assert_eq!((h.protocol, h.passed), (None, None), "{release} {kind}");
            }
        }
    }

    /// SAS drives whose SMART is "Disabled" (smart_support.enabled false: for SCSI only the
    /// exception reporting is off), from two other projects' test data: their health,
    /// temperature, power-on hours and grown defect list are read all the same.
    #[test]
    fn a_sas_drive_with_smart_disabled_still_reports_its_health() {
        for (file, temperature, hours) in [
            ("smart/outside-sas-wd4001fyyg-disabled.json", 29, 63318),
            ("smart/outside-sas-st373453lc-disabled.json", 34, 91691),
        ] {
            let h = parse(&fixture(file)).unwrap();
            assert_eq!(h.protocol, Some(Protocol::Scsi), "{file}");
            assert!(h.available && h.unreadable.is_none(), "{file}: {h:?}");
            assert_eq!(h.passed, Some(true), "{file}");
            assert_eq!(h.temperature, Some(temperature), "{file}");
            assert_eq!(h.power_on_hours, Some(hours), "{file}");
            assert_eq!(h.scsi_grown_defects, Some(0), "{file}");
            assert_eq!(h.counters(), vec![("grown defects", 0)], "{file}");
        }
    }

    /// A drive that says it lacks SMART fails smartctl's mandatory command (exit bit 2) but
    /// answered: no SMART, not unreadable. The same bit with nothing read and no word on SMART
    /// support is a drive that did not answer.
    #[test]
    fn lacking_smart_is_not_unreadable() {
        let lacks = r#"{"smartctl":{"exit_status":4,"messages":[{"string":"SMART support is: Unavailable - device lacks SMART capability.","severity":"error"}]},"device":{"protocol":"ATA"},"smart_support":{"available":false,"enabled":false}}"#;
        let h = parse(lacks).unwrap();
        assert!(!h.available && h.unreadable.is_none(), "{h:?}");
        let silent = r#"{"smartctl":{"exit_status":4,"messages":[{"string":"Read Device Identity failed: Input/output error","severity":"error"}]},"device":{"protocol":"ATA"}}"#;
        let h = parse(silent).unwrap();
        assert_eq!(
            h.unreadable.as_deref(),
            Some("Read Device Identity failed: Input/output error")
        );
    }
}
