//! LVM's devices file on the simulated machine (EL 9: `devices/use_devicesfile = 1`): a world
//! whose `boot.lvm_devices` is set shows LVM only the PVs listed there, by the device's id
//! (md UUID, WWN, serial; its path otherwise), as lvm2's device_id.c matches them; pvcreate,
//! vgcreate and vgextend add their devices, and `lvm lvmdevices --adddev` adds one.

use crate::observe::lvm_devices::{DeviceIds, LvmDeviceEntry, LvmDevices, md_uuid_idname};
use crate::observe::{Observed, Pv};
use crate::sim::world::SimState;

/// The ids LVM would read for the device of kernel name `k`.
fn ids(w: &Observed, k: &str) -> DeviceIds {
    let a = w.array(k);
    let d = w.device(k);
    let part = d.filter(|d| d.parent.is_some()).and_then(|d| {
        let digits: String = d
            .kname
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.chars().rev().collect::<String>().parse().ok()
    });
    DeviceIds {
        devname: format!("/dev/{k}"),
        md_uuid: a.and_then(|a| a.uuid.clone()),
        wwn: d.and_then(|d| d.wwn.clone()),
        serial: d.and_then(|d| d.serial.clone()),
        part,
    }
}

/// Whether LVM sees the PV: no devices file, or one that lists its device.
pub(crate) fn sees(w: &Observed, p: &Pv) -> bool {
    w.boot
        .lvm_devices
        .as_ref()
        .is_none_or(|f| f.lists(&ids(w, &p.kname)))
}

/// The entry lvm2 writes for the device of kernel name `k` (device_id.c's order of preference:
/// md UUID for an array, the disk's WWID, its serial, its path).
fn entry(w: &Observed, k: &str, pvid: Option<String>) -> LvmDeviceEntry {
    let i = ids(w, k);
    let (idtype, idname) = if let Some(u) = &i.md_uuid {
        ("md_uuid", md_uuid_idname(u))
    } else if let Some(wwn) = &i.wwn {
        ("sys_wwid", format!("naa.{}", wwn.trim_start_matches("0x")))
    } else if let Some(s) = &i.serial {
        ("sys_serial", s.clone())
    } else {
        ("devname", i.devname.clone())
    };
    LvmDeviceEntry {
        idtype: idtype.into(),
        idname,
        devname: Some(i.devname.clone()),
        pvid,
        part: if i.md_uuid.is_some() { None } else { i.part },
    }
}

/// After pvcreate, vgcreate or vgextend on `k`, or `lvm lvmdevices --adddev`: the device is
/// listed (once), where the machine has a devices file.
pub(crate) fn add(st: &mut SimState, k: &str) {
    let pvid = st
        .world
        .lvm
        .pvs
        .iter()
        .find(|p| p.kname == k)
        .map(|p| p.uuid.replace('-', ""));
    let e = entry(&st.world, k, pvid);
    let ids = ids(&st.world, k);
    let Some(f) = st.world.boot.lvm_devices.as_mut() else {
        return;
    };
    if !f.lists(&ids) {
        f.entries.push(e);
        let minor = f
            .version
            .as_deref()
            .and_then(|v| v.rsplit('.').next()?.parse::<u32>().ok())
            .unwrap_or(0);
        f.version = Some(format!("1.1.{}", minor + 1));
    }
}

/// The file as lvm2 writes it.
pub(crate) fn render(f: &LvmDevices) -> String {
    let mut s = String::from(
        "# LVM uses devices listed in this file.\n# Created by LVM command pvcreate pid 1873 at Wed Dec  2 08:14:07 2026\n",
    );
    s.push_str(&format!(
        "VERSION={}\n",
        f.version.as_deref().unwrap_or("1.1.1")
    ));
    for e in &f.entries {
        s.push_str(&format!(
            "IDTYPE={} IDNAME={} DEVNAME={} PVID={}",
            e.idtype,
            e.idname,
            e.devname.as_deref().unwrap_or("."),
            e.pvid.as_deref().unwrap_or(".")
        ));
        if let Some(p) = e.part {
            s.push_str(&format!(" PART={p}"));
        }
        s.push('\n');
    }
    s
}
