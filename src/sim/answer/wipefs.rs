//! `wipefs --no-act --json DEV`: the signatures on a device, as util-linux prints them.

use crate::host::{CmdOutput, HostError};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};
use serde_json::{Value, json};

pub fn wipefs(st: &SimState, dev: &str) -> Result<CmdOutput, HostError> {
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
    let sigs: Vec<Value> = d
        .signatures
        .clone()
        .unwrap_or_default()
        .iter()
        .map(|s| json!({"device": k, "offset": s.offset, "type": s.kind, "uuid": s.uuid, "label": null}))
        .collect();
    out(&serde_json::to_string_pretty(&json!({ "signatures": sigs })).unwrap())
}
