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

/// [`mirrored_partitions_file`]'s mirror, encrypted (md → LUKS2 → PV).
pub fn encrypted_partitions_file(size0: &str, size1: &str) -> Desired {
    let text = format!(
        "version: 1\nhost: microserver8\ndisks:\n  hdd0:\n    id: ata-ST1000LM048-2E7172_WDE00001\n    partitions: [{{ name: raid, size: {size0} }}]\n  hdd1:\n    id: ata-ST1000LM048-2E7172_WDE00002\n    partitions: [{{ name: raid, size: {size1} }}]\nmirrors:\n  data: {{ members: [\"hdd0:raid\", \"hdd1:raid\"], bitmap: {{ chunk: 64MiB }}, encryption: {{ key_file: /etc/hyraid/keys/data.key }} }}\nvolume_groups:\n  vg0:\n    pvs: [data]\n    lvs:\n      files: {{ size: 100GiB }}\n"
    );
    hyraid::config::load_str("encrypted-grow.yaml", &text).unwrap()
}
