//! `wipefs --no-act --json DEV...` and `blkid -p DEV`: the signatures on the devices, as util-linux prints them:
//! one table for all of them, each signature with its device's kernel name; a device it cannot
//! open ends the whole run (exit 1, nothing on stdout).

use crate::host::{CmdOutput, HostError};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};
use serde_json::{Value, json};

pub fn wipefs(st: &SimState, devs: &[&str]) -> Result<CmdOutput, HostError> {
    let mut sigs: Vec<Value> = Vec::new();
    for dev in devs {
        let Some(Target::Block(k)) = st.resolve(dev) else {
            return fail(
                1,
                format!(
                    "wipefs: error: {dev}: probing initialization failed: No such file or directory\n"
                ),
            );
        };
        let d = st.world.device(&k).unwrap();
        if let Some(e) = &d.probe_error {
            return fail(1, format!("{e}\n"));
        }
        sigs.extend(
            d.signatures.clone().unwrap_or_default().iter().map(
                |s| json!({"device": k, "offset": s.offset, "type": s.kind, "uuid": s.uuid, "label": null}),
            ),
        );
    }
    out(&serde_json::to_string_pretty(&json!({ "signatures": sigs })).unwrap())
}

/// `blkid -p DEV` (a low-level probe of the device itself): `DEV: TYPE="…"` and exit 0 for what
/// lsblk would show on it (a filesystem, a LUKS header, a PV label; a partition table as
/// PTTYPE) or a disk's own signature; nothing and exit 2 when nothing is found.
pub fn blkid_probe(st: &SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let name = match st.resolve(dev) {
        Some(Target::Block(k) | Target::Md(k)) => k,
        Some(Target::Lv(vg, lv)) => super::dm_name(&vg, &lv),
        _ => return fail(2, format!("error: {dev}: No such file or directory\n")),
    };
    let own = st.world.device(&name).and_then(|d| d.signatures.clone());
    if let Some(s) = own.as_ref().and_then(|s| s.first()) {
        return out(&format!("{dev}: TYPE=\"{}\"\n", s.kind));
    }
    let node: Option<Value> =
        super::lsblk_of(&st.world, &name).and_then(|j| serde_json::from_str(&j).ok());
    let n = node.as_ref().map(|v| &v["blockdevices"][0]);
    if let Some(t) = n.and_then(|n| n["fstype"].as_str()) {
        return out(&format!("{dev}: TYPE=\"{t}\"\n"));
    }
    if let Some(t) = n.and_then(|n| n["pttype"].as_str()) {
        return out(&format!("{dev}: PTTYPE=\"{t}\"\n"));
    }
    fail(2, "")
}
