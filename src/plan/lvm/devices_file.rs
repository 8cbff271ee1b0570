//! LVM's devices file (EL 9 and later): a device that carries a PV label LVM does not report,
//! on a machine whose devices file does not list it, is a PV LVM has been told to ignore (made on
//! another host, or on an array whose md UUID changed). It may hold a VG's data: hyraid never
//! makes it a PV again or wipes it, even with --allow-destroy; the operator lets LVM see it.

use super::*;
use crate::observe::lvm_devices::{DeviceIds, LVM_DEVICES_PATH};

impl<'a> Planner<'a> {
    /// The refusal's reason when the PV reference `r` (at `path`) is a PV the devices file hides.
    pub(in crate::plan) fn hidden_by_devices_file(
        &self,
        r: &DeviceRef,
        path: &str,
        content: &[String],
    ) -> Option<(String, String)> {
        let file = self.o.boot.lvm_devices.as_ref()?;
        // The array's lsblk FSTYPE, or a disk's wipefs signatures (`LVM2_member at 0x218`).
        if !content
            .iter()
            .any(|c| c == "LVM2_member" || c.starts_with("LVM2_member "))
        {
            return None;
        }
        let ids = match r {
            // An encrypted mirror's PV is its mapping, which no devices file names by an md UUID.
            DeviceRef::Mirror(n)
                if self
                    .d
                    .mirrors
                    .get(n)
                    .is_some_and(|m| m.encryption.is_some()) =>
            {
                return None;
            }
            DeviceRef::Mirror(n) => {
                let a = self.array_of_mirror(n)?;
                DeviceIds {
                    devname: format!("/dev/{}", a.kname),
                    md_uuid: a.uuid.clone(),
                    wwn: None,
                    serial: None,
                    part: None,
                }
            }
            DeviceRef::Disk(n) => {
                let res = &self.disks[n];
                let d = res.dev?;
                DeviceIds {
                    devname: format!("/dev/{}", d.kname),
                    md_uuid: None,
                    wwn: d.wwn.clone(),
                    serial: d.serial.clone(),
                    part: res.part.map(|(n, _)| n),
                }
            }
        };
        let listed = file.lists(&ids);
        let why = if listed {
            format!(
                "{path} carries an LVM PV label that LVM does not report, though {LVM_DEVICES_PATH} lists it (its entry may name an old id)"
            )
        } else {
            format!(
                "{path} carries an LVM PV label, and LVM's devices file {LVM_DEVICES_PATH} does not list it, so LVM ignores it: a PV made on another machine, or on an array whose md UUID changed, may hold a volume group's data"
            )
        };
        let fix = if listed {
            format!(
                "check `lvm lvmdevices` (`lvm lvmdevices --update` fixes stale ids), see `pvs --devicesfile \"\" {path}`, then plan again"
            )
        } else {
            format!(
                "to use what it holds: `lvm lvmdevices --adddev {path}` (or `lvm vgimportdevices VG`), then plan again; to discard it, look with `pvs --devicesfile \"\" {path}` and remove the label by hand (`wipefs`)"
            )
        };
        Some((why, fix))
    }
}
