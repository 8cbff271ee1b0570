//! The key of an encrypted mirror with a header: the file's key file opens it, or it is rotated
//! from the key file hyraid's crypttab line names (add, prove, remove the old), each a step.

use super::*;
use crate::config::encryption::EncryptionSpec;
use crate::observe::luks::Luks;
use crate::plan::step::{AddLuksKey, CreateKeyFile, RemoveLuksKey, TestLuksKey};

impl Planner<'_> {
    /// The key steps of mirror `m` with header `h`; `old`: the key file hyraid's crypttab line
    /// opens it with, when that is not the file's. Some(whether the key slots change), or None
    /// when refused.
    pub(in crate::plan) fn keys(
        &mut self,
        m: &MirrorSpec,
        e: &EncryptionSpec,
        h: &Luks,
        device: &str,
        key_there: bool,
        old: Option<&str>,
    ) -> Option<bool> {
        let object = format!("mirror {}", m.name);
        let opens = |k: &str| h.opens_with.get(k).copied();
        let new_opens = key_there && opens(&e.key_file) == Some(true);
        let Some(old) = old else {
            if !key_there {
                self.refuse(&object, format!("the key file {} is missing or empty: the LUKS header on {device} opens only with its key", e.key_file), "restore the key file from your copy (mode 0400, root's), then plan again");
                return None;
            }
            if opens(&e.key_file) == Some(false) {
                self.refuse(&object, format!("the key file {} does not open the LUKS header on {device}", e.key_file), "name the key file that opens it (`cryptsetup open --test-passphrase --key-file FILE DEVICE` tells)");
                return None;
            }
            return Some(false);
        };
        let step = |s: Step, why: &str| ps(s, Risk::Safe, why);
        match (new_opens, opens(old)) {
            // Added and proven before (an apply stopped after it): the old slot goes.
            (true, Some(true)) => {
                self.steps.push(step(
                    Step::RemoveLuksKey(RemoveLuksKey {
                        mirror: m.name.clone(),
                        device: device.into(),
                        key_file: old.into(),
                    }),
                    "the new key opens the header; the old one is removed",
                ));
                Some(true)
            }
            // Removed already: crypttab follows.
            (true, _) => Some(false),
            (false, Some(true)) => {
                if !key_there {
                    self.steps.push(step(
                        Step::CreateKeyFile(CreateKeyFile {
                            mirror: m.name.clone(),
                            path: e.key_file.clone(),
                        }),
                        "the new key file the file names is not there",
                    ));
                }
                self.steps.extend([
                    step(
                        Step::AddLuksKey(AddLuksKey { mirror: m.name.clone(), device: device.into(), with: old.into(), key_file: e.key_file.clone() }),
                        &format!("the file changes the key file from {old}: the new key goes into a free slot first"),
                    ),
                    step(
                        Step::TestLuksKey(TestLuksKey { mirror: m.name.clone(), device: device.into(), key_file: e.key_file.clone() }),
                        "the old key is removed only once the new one is proven",
                    ),
                    step(
                        Step::RemoveLuksKey(RemoveLuksKey { mirror: m.name.clone(), device: device.into(), key_file: old.into() }),
                        "the new key opens the header; the old one is removed",
                    ),
                ]);
                Some(true)
            }
            (false, _) => {
                self.refuse(&object, format!("neither the file's key file {} nor the one /etc/crypttab names ({old}) opens the LUKS header on {device}", e.key_file), "restore a key file that opens it, then plan again");
                None
            }
        }
    }
}
