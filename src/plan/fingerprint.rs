//! A fingerprint of an observation: what a saved plan was made from. Progress counters that move
//! on their own (resync position, dirty writecache blocks) are left out; everything a step
//! depends on is in.

use crate::observe::Observed;
use sha2::{Digest, Sha256};

pub fn fingerprint(obs: &Observed) -> String {
    let mut o = obs.clone();
    for a in o.arrays.iter_mut() {
        // Resync/recovery progress moves on its own; a member that fails shows as `faulty`.
        a.sync_completed = None;
        a.sync_action = String::new();
        a.array_state = String::new();
        a.degraded = 0;
        for m in a.members.iter_mut() {
            m.state.retain(|w| w == "faulty" || w == "write_mostly");
        }
    }
    for l in o.lvm.lvs.iter_mut() {
        if let Some(w) = l.writecache.as_mut() {
            w.writeback_blocks = None;
        }
    }
    let bytes = serde_json::to_vec(&o).expect("observation serializes");
    let digest = Sha256::digest(&bytes);
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}
