//! Encrypted mirrors on the simulated machine: the README's box with both mirrors encrypted.

use super::*;
use hyraid::plan::Policy;

pub const FILE: &str = "examples/microserver-gen8-encrypted.yaml";

pub fn encrypted() -> (hyraid::config::Desired, SimHost) {
    let d = load_file(Path::new(FILE)).unwrap();
    let snap =
        std::fs::read_to_string("examples/snapshots/microserver-gen8-encrypted.json").unwrap();
    (d, SimHost::from_json(&snap).unwrap())
}

pub fn refusals(p: &hyraid::plan::Plan) -> String {
    p.refused
        .iter()
        .map(|r| format!("{}: {} ({})\n", r.object, r.reason, r.fix))
        .collect()
}

/// The example applied, as hyraid leaves it.
pub fn built() -> (hyraid::config::Desired, SimHost) {
    let (d, h) = encrypted();
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}
