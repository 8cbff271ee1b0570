//! LVM's devices file, `/etc/lvm/devices/system.devices`: with `devices/use_devicesfile = 1`
//! (the default of lvm2 on EL 9 and later; Debian builds it off) LVM sees only the devices it
//! lists. `pvcreate`, `vgcreate` and `vgextend` add their devices to it; a PV made elsewhere, or
//! on an array whose md UUID changed, is invisible to LVM until `lvm lvmdevices --adddev`.
//!
//! The format is lvm2's `lib/device/device_id.c` (`device_ids_write`): `#` comments, a
//! `VERSION=` line (and `HASH=` in newer releases), then one line per device:
//! `IDTYPE=sys_wwid IDNAME=naa.5000c50000000001 DEVNAME=/dev/sda PVID=… [PART=n]`, `.` where a
//! value is unknown. See ../shared/REFERENCE.md §7.3.

use serde::{Deserialize, Serialize};

pub const LVM_DEVICES_PATH: &str = "/etc/lvm/devices/system.devices";

/// One device the file lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LvmDeviceEntry {
    /// How LVM identifies the device: `sys_wwid`, `sys_serial`, `md_uuid`, `mpath_uuid`,
    /// `lvmlv_uuid`, `devname`, `loop_file`, …
    pub idtype: String,
    pub idname: String,
    /// The path LVM last saw it at (it may change; the id is what counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devname: Option<String>,
    /// The PV's UUID without dashes, as LVM writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pvid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<u32>,
}

/// The devices file as read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LvmDevices {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub entries: Vec<LvmDeviceEntry>,
}

fn value(v: &str) -> Option<String> {
    (!v.is_empty() && v != ".").then(|| v.to_string())
}

/// Parse the file. Lines LVM would not take as an entry (no IDTYPE) are skipped, as lvm2 does.
pub fn parse(text: &str) -> LvmDevices {
    let mut out = LvmDevices::default();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(v) = line.strip_prefix("VERSION=") {
            out.version = Some(v.to_string());
            continue;
        }
        let (mut idtype, mut idname, mut devname, mut pvid, mut part) =
            (None, None, None, None, None);
        for field in line.split_whitespace() {
            match field.split_once('=') {
                Some(("IDTYPE", v)) => idtype = value(v),
                Some(("IDNAME", v)) => idname = value(v),
                Some(("DEVNAME", v)) => devname = value(v),
                Some(("PVID", v)) => pvid = value(v),
                Some(("PART", v)) => part = v.parse().ok(),
                _ => {}
            }
        }
        if let (Some(idtype), Some(idname)) = (idtype, idname) {
            out.entries.push(LvmDeviceEntry {
                idtype,
                idname,
                devname,
                pvid,
                part,
            });
        }
    }
    out
}

/// An md UUID as mdadm prints it (`35ef4149:ad5a357a:63e5e3d5:dfce81f3`) in the form of
/// `/sys/block/mdX/md/uuid`, which LVM writes as an `md_uuid` IDNAME
/// (`35ef4149-ad5a-357a-63e5-e3d5dfce81f3`).
pub fn md_uuid_idname(mdadm_uuid: &str) -> String {
    let hex: String = mdadm_uuid
        .chars()
        .filter(|c| c.is_ascii_hexdigit())
        .collect();
    if hex.len() != 32 {
        return mdadm_uuid.to_string();
    }
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

impl LvmDevices {
    /// Whether an entry names this device: by its md UUID (an array), its WWN or serial (a
    /// disk), or else by the path LVM last saw.
    pub fn lists(&self, dev: &DeviceIds) -> bool {
        self.entries.iter().any(|e| match e.idtype.as_str() {
            "md_uuid" => dev.md_uuid.as_deref().map(md_uuid_idname).as_deref() == Some(&e.idname),
            "sys_wwid" => {
                e.part == dev.part
                    && dev.wwn.as_deref().is_some_and(|w| {
                        let w = w.trim_start_matches("0x");
                        !w.is_empty() && e.idname.ends_with(w)
                    })
            }
            "sys_serial" => e.part == dev.part && dev.serial.as_deref() == Some(e.idname.as_str()),
            "devname" => e.idname == dev.devname,
            _ => e.devname.as_deref() == Some(dev.devname.as_str()),
        })
    }
}

/// What LVM may identify a device by.
pub struct DeviceIds {
    pub devname: String,
    pub md_uuid: Option<String>,
    pub wwn: Option<String>,
    pub serial: Option<String>,
    /// A partition's number (LVM lists it as its disk's id with `PART=`).
    pub part: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lvm2_devices_file_lines() {
        let f =
            parse(&std::fs::read_to_string("tests/fixtures/lvm-system-devices-el9.txt").unwrap());
        assert_eq!(f.version.as_deref(), Some("1.1.6"));
        assert_eq!(f.entries.len(), 3);
        let md = &f.entries[1];
        assert_eq!(md.idtype, "md_uuid");
        assert_eq!(md.idname, "35ef4149-ad5a-357a-63e5-e3d5dfce81f3");
        assert_eq!(md.devname.as_deref(), Some("/dev/md127"));
        assert_eq!(md.pvid.as_deref().map(str::len), Some(32));
        assert_eq!(f.entries[2].part, Some(2));
        // A `.` is no value.
        assert_eq!(f.entries[2].pvid, None);
    }

    #[test]
    fn an_array_is_listed_by_its_md_uuid_not_its_name() {
        let f = parse(
            "VERSION=1.1.1\nIDTYPE=md_uuid IDNAME=35ef4149-ad5a-357a-63e5-e3d5dfce81f3 DEVNAME=/dev/md127 PVID=x\n",
        );
        let ids = |uuid: &str, dev: &str| DeviceIds {
            devname: dev.into(),
            md_uuid: Some(uuid.into()),
            wwn: None,
            serial: None,
            part: None,
        };
        assert!(f.lists(&ids("35ef4149:ad5a357a:63e5e3d5:dfce81f3", "/dev/md126")));
        // Re-created with a new UUID under the same name: LVM no longer sees it.
        assert!(!f.lists(&ids("11111111:ad5a357a:63e5e3d5:dfce81f3", "/dev/md127")));
    }

    #[test]
    fn a_disk_is_listed_by_its_wwid() {
        let f = parse("IDTYPE=sys_wwid IDNAME=naa.5000c50000000003 DEVNAME=/dev/sdc PVID=abc\n");
        let d = |wwn: &str| DeviceIds {
            devname: "/dev/sdq".into(),
            md_uuid: None,
            wwn: Some(wwn.into()),
            serial: None,
            part: None,
        };
        assert!(f.lists(&d("0x5000c50000000003")));
        assert!(!f.lists(&d("0x5000c50000000004")));
    }
}
