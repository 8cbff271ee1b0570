//! The content probe of unused disks and partitions (`wipefs --no-act --json`): one run for all
//! of them, started as soon as observation knows which (on a real machine it runs while sysfs is
//! read), and one run per device when the batch fails, so one bad disk costs only its own answer.

use super::model::Signature;
use super::wipefs;
use crate::host::{Host, Started};
use std::collections::HashMap;

/// What the probe found on each device: its signatures, or why it gave no answer.
pub(super) type Found = HashMap<String, Result<Vec<Signature>, String>>;

/// A probe under way.
pub(super) struct Probe {
    knames: Vec<String>,
    run: Option<Started>,
}

/// Start probing `knames` (kernel names): one wipefs for all of them.
pub(super) fn start(host: &dyn Host, knames: Vec<String>) -> Probe {
    let devs: Vec<String> = knames.iter().map(|k| format!("/dev/{k}")).collect();
    let run = match devs.as_slice() {
        [] => None,
        [one] => Some(host.start(&wipefs::argv(one))),
        _ => Some(host.start(&wipefs::argv_many(&devs))),
    };
    Probe { knames, run }
}

impl Probe {
    /// Wait for the probe; when a batch run failed (a device it cannot open ends it), probe
    /// each device on its own.
    pub(super) fn finish(self, host: &dyn Host) -> Found {
        let Probe { knames, run } = self;
        let Some(run) = run else {
            return Found::new();
        };
        if let [one] = knames.as_slice() {
            return Found::from([(one.clone(), answer(run))]);
        }
        let batch = run
            .wait()
            .ok()
            .filter(|o| o.status == 0)
            .and_then(|o| wipefs::parse_by_device(&o.stdout).ok())
            .filter(|sigs| sigs.iter().all(|(d, _)| knames.contains(d)));
        let mut found = Found::new();
        if let Some(sigs) = batch {
            for k in &knames {
                found.insert(k.clone(), Ok(vec![]));
            }
            for (d, sig) in sigs {
                if let Some(Ok(v)) = found.get_mut(&d) {
                    v.push(sig);
                }
            }
            return found;
        }
        for k in knames {
            let one = host.run(&wipefs::argv(&format!("/dev/{k}")));
            found.insert(k, answer(Started::done(one)));
        }
        found
    }
}

/// The signatures of one device's probe, or why it gave no answer.
fn answer(run: Started) -> Result<Vec<Signature>, String> {
    let out = run.wait().map_err(|e| e.to_string())?;
    if out.status != 0 {
        let err = out.stderr.trim();
        return Err(if err.is_empty() {
            format!("wipefs exited {}", out.status)
        } else {
            err.to_string()
        });
    }
    wipefs::parse(&out.stdout).map_err(|e| e.to_string())
}
