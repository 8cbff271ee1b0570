//! `wipefs --no-act --json DEV...`: the signatures on the devices, as util-linux prints them:
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
