//! The boot disks' loaders: the example built, its system then on the mirror (as after the copy
//! of docs/booting.md), with a firmware entry of a disk the file no longer boots from.

use super::Case;
use crate::common::boot::system_on_the_mirror;
use hyraid::observe::loader::EfiEntry;
use hyraid::plan::Policy;

pub fn cases() -> Vec<Case> {
    let (d, mut w) = system_on_the_mirror();
    // Debian's grub-pc installed, its answer naming no disk yet.
    w.boot.loaders.grub_pc = Some(vec![]);
    w.boot
        .loaders
        .efi_entries
        .get_or_insert_with(Vec::new)
        .push(EfiEntry {
            number: "0007".into(),
            label: "hyraid old".into(),
            active: true,
            partuuid: Some("0b0e0f00-0000-4000-8000-000000000001".into()),
            path: Some("\\EFI\\hyraid-old\\grubx64.efi".into()),
        });
    vec![Case {
        name: "boot-mirror: the system on the mirror, loaders installed".into(),
        desired: d,
        before: w,
        allowed_removals: vec![],
        finally: Some(|w| {
            let l = &w.boot.loaders;
            l.esps.len() == 2
                && l.esps.values().all(|e| e.stamp == l.grub)
                && l.efi_entries.as_ref().is_some_and(|e| {
                    e.iter().filter(|e| e.label.starts_with("hyraid ")).count() == 2
                })
                && l.hooks.len() == 3
        }),
        policy: Policy::default(),
    }]
}
