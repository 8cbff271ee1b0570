//! `smartctl --json -a -n standby DEV` as smartmontools 7.3 prints it, from the drive health
//! the simulated machine keeps (`Observed::smart`), or a healthy drive of the disk's kind when it
//! keeps none.

use crate::observe::smart::{DriveHealth, Protocol};
use crate::observe::{BlockDevice, Observed};
use serde_json::json;

/// The health of disk `d`: what the machine keeps, else a healthy drive of its kind.
fn health(w: &Observed, d: &BlockDevice) -> DriveHealth {
    w.smart
        .get(&d.kname)
        .cloned()
        .unwrap_or_else(|| DriveHealth {
            protocol: Some(match d.tran.as_deref() {
                Some("nvme") => Protocol::Nvme,
                Some("sas") | Some("fc") => Protocol::Scsi,
                _ => Protocol::Ata,
            }),
            available: true,
            passed: Some(true),
            reallocated: Some(0),
            pending: Some(0),
            offline_uncorrectable: Some(0),
            power_on_hours: Some(1000),
            temperature: Some(35),
            ..Default::default()
        })
}

/// smartctl's JSON for disk `d` (its exit status in `smartctl.exit_status`, as the real one).
pub fn smartctl(w: &Observed, d: &BlockDevice, dev: &str) -> (i32, String) {
    let h = health(w, d);
    let version =
        json!({ "version": [7, 3], "argv": ["smartctl", "--json", "-a", "-n", "standby", dev] });
    if h.standby {
        let v = json!({
            "json_format_version": [1, 0],
            "smartctl": { "version": [7, 3], "messages": [{ "string": "Device is in STANDBY mode, exit(2)", "severity": "information" }], "exit_status": 2 },
            "device": { "name": dev, "info_name": dev, "type": "sat", "protocol": "ATA" }
        });
        return (2, v.to_string());
    }
    if let Some(said) = &h.unreadable {
        // smartctl 7.3 when open(2) fails (the drive gone, or no permission) or the drive does
        // not answer its IDENTIFY: bit 1, the reason as an error message, no device section.
        let v = json!({
            "json_format_version": [1, 0],
            "smartctl": { "version": [7, 3], "argv": ["smartctl", "--json", "-a", "-n", "standby", dev], "messages": [{ "string": said, "severity": "error" }], "exit_status": 2 },
            "local_time": { "time_t": 0, "asctime": "Thu Jan  1 00:00:00 1970 UTC" }
        });
        return (2, v.to_string());
    }
    let mut v = json!({
        "json_format_version": [1, 0],
        "smartctl": version,
        "device": { "name": dev, "info_name": dev },
        "model_name": d.model.clone().unwrap_or_default(),
        "serial_number": d.serial.clone().unwrap_or_default(),
        "user_capacity": { "bytes": d.size },
    });
    let protocol = h.protocol.unwrap_or(Protocol::Ata);
    let (kind, proto) = match protocol {
        Protocol::Nvme => ("nvme", "NVMe"),
        Protocol::Scsi => ("scsi", "SCSI"),
        _ => ("sat", "ATA"),
    };
    v["device"]["type"] = json!(kind);
    v["device"]["protocol"] = json!(proto);
    let mut status = 0;
    if !h.available {
        v["smart_support"] = json!({ "available": false, "enabled": false });
        v["smartctl"]["messages"] = json!([{ "string": "SMART support is: Unavailable - device lacks SMART capability.", "severity": "error" }]);
        status |= 4;
    } else if protocol != Protocol::Nvme {
        v["smart_support"] = json!({ "available": true, "enabled": true });
    }
    if let Some(p) = h.passed.filter(|_| h.available) {
        v["smart_status"] = json!({ "passed": p });
        if !p {
            status |= 8;
        }
    }
    if h.available && protocol == Protocol::Ata {
        let row = |id: u32, name: &str, raw: Option<u64>| {
            raw.map(|r| json!({ "id": id, "name": name, "value": 100, "worst": 100, "thresh": 10, "raw": { "value": r, "string": r.to_string() } }))
        };
        let table: Vec<_> = [
            row(5, "Reallocated_Sector_Ct", h.reallocated),
            row(9, "Power_On_Hours", h.power_on_hours),
            row(
                194,
                "Temperature_Celsius",
                h.temperature.map(|t| t.max(0) as u64),
            ),
            row(197, "Current_Pending_Sector", h.pending),
            row(198, "Offline_Uncorrectable", h.offline_uncorrectable),
        ]
        .into_iter()
        .flatten()
        .collect();
        v["ata_smart_attributes"] = json!({ "revision": 16, "table": table });
    }
    if h.available && protocol == Protocol::Nvme {
        v["nvme_smart_health_information_log"] = json!({
            "critical_warning": h.nvme_critical_warning.unwrap_or(0),
            "temperature": h.temperature.unwrap_or(35),
            "available_spare": 100,
            "available_spare_threshold": 10,
            "percentage_used": h.nvme_percentage_used.unwrap_or(0),
            "media_errors": h.nvme_media_errors.unwrap_or(0),
            "num_err_log_entries": 0,
            "power_on_hours": h.power_on_hours.unwrap_or(0),
        });
    }
    if h.available && protocol == Protocol::Scsi {
        v["scsi_grown_defect_list"] = json!(h.scsi_grown_defects.unwrap_or(0));
    }
    if let Some(p) = h.power_on_hours.filter(|_| h.available) {
        v["power_on_time"] = json!({ "hours": p });
    }
    if let Some(t) = h.temperature.filter(|_| h.available) {
        v["temperature"] = json!({ "current": t });
    }
    v["smartctl"]["exit_status"] = json!(status);
    (status, v.to_string())
}
