//! Crash cases of an encrypted mirror's key: the key file changed in the file, the new key added,
//! proven, the old removed, the header backup taken again and crypttab rewritten.

use super::{Case, converged};
use hyraid::plan::Policy;

pub fn cases() -> Vec<Case> {
    // A key rotated: interrupted between adding the new key and removing the old, at every
    // command, the next apply completes it and only the new key opens the header.
    let (mut d, h) = converged("microserver-gen8-encrypted");
    d.mirrors
        .get_mut("data0")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .key_file = "/etc/hyraid/keys/data0-new.key".into();
    vec![Case {
        name: "rotate the key of an encrypted mirror".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![
            "cryptsetup luksRemoveKey --batch-mode /dev/md/data0 /etc/hyraid/keys/data0.key".into(),
        ],
        finally: Some(|w| {
            w.key_slots
                .values()
                .any(|s| s.values().collect::<Vec<_>>() == vec!["/etc/hyraid/keys/data0-new.key"])
                && w.boot
                    .crypttab
                    .as_deref()
                    .is_some_and(|t| t.contains(" /etc/hyraid/keys/data0-new.key luks\n"))
        }),
        policy: Policy::default(),
    }]
}
