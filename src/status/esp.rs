//! Whether the machine still boots when a disk of the mirror that carries its system dies: on a
//! machine the firmware booted through UEFI, every such disk needs its own EFI system partition
//! (ESP) with the loader on it. One ESP (the installer's), an ESP on md (firmware and boot tools
//! write one member behind md's back) and a /boot/efi in fstab that waits for its one disk are
//! the ways a mirrored system stops at boot.

use super::{Findings, drives::stable_name};
use crate::config::Desired;
use crate::observe::lsblk::{ESP_GPT_TYPE, ESP_MBR_TYPE};
use crate::observe::{DevKind, Observed};
use std::collections::BTreeSet;

/// Where Debian mounts the ESP.
const ESP_MOUNT: &str = "/boot/efi";

fn is_esp_type(t: Option<&str>) -> bool {
    matches!(t, Some(ESP_GPT_TYPE | ESP_MBR_TYPE))
}

pub use crate::observe::system::system_disks;

/// The findings: only on a machine booted through UEFI whose system is on more than one disk.
pub(super) fn esp_redundancy(o: &Observed, desired: Option<&Desired>, f: &mut Findings) {
    let system = system_disks(o);
    if !o.boot.uefi || system.len() < 2 {
        return;
    }
    let name = |k: &str| stable_name(o, desired, k);
    let list = |s: &BTreeSet<String>| s.iter().map(|k| name(k)).collect::<Vec<_>>().join(", ");
    // An ESP on md: a member partition of ESP type, or a vfat array mounted at /boot/efi.
    let on_md: Vec<&str> = o
        .arrays
        .iter()
        .filter(|a| {
            a.members.iter().any(|m| {
                o.device(&m.kname)
                    .is_some_and(|d| is_esp_type(d.parttype.as_deref()))
            }) || o.filesystems.iter().any(|fs| {
                fs.md && fs.kname == a.kname && fs.mountpoint.as_deref() == Some(ESP_MOUNT)
            })
        })
        .map(|a| a.kname.as_str())
        .collect();
    for md in &on_md {
        f.lint(
            "esp-on-md",
            "host".into(),
            format!("the EFI system partition is on the md array {md}"),
            "the firmware reads one member as a plain vfat and writes to it (boot entries, capsule updates), and so do boot tools, behind md's back: the copies diverge without a word, and the next resync copies one over the other",
            "keep one independent ESP per disk instead: a vfat partition of type EF00 on each disk, the loader installed on each (`grub-install --target=x86_64-efi --efi-directory=MOUNT --bootloader-id=debian-DISK`, then again with `--removable` for the fallback path), then stop the array and take it out of mdadm.conf and fstab",
        );
    }
    let esp_disks: BTreeSet<String> = o
        .block_devices
        .iter()
        .filter(|d| d.kind == DevKind::Part && is_esp_type(d.parttype.as_deref()))
        .filter(|d| !o.arrays.iter().any(|a| a.member(&d.kname).is_some()))
        .filter_map(|d| d.parent.clone())
        .collect();
    let missing: BTreeSet<String> = system.difference(&esp_disks).cloned().collect();
    if on_md.is_empty() && !esp_disks.is_empty() && !missing.is_empty() {
        let message = if esp_disks.len() == 1 {
            format!(
                "the machine boots from one disk: its only EFI system partition is on {}",
                list(&esp_disks)
            )
        } else {
            format!(
                "{} carr{} the system but no EFI system partition",
                list(&missing),
                if missing.len() == 1 { "ies" } else { "y" }
            )
        };
        f.lint(
            "boots-from-one-disk",
            "host".into(),
            message,
            &format!(
                "the system is mirrored on {}, but the firmware loads the boot loader from an ESP: when the disk with the ESP dies, the mirror survives and the machine does not come up",
                list(&system)
            ),
            &format!(
                "give {}{} an ESP of its own (a 512 MiB vfat partition of type EF00) and install the loader on it with its own boot entry: `grub-install --target=x86_64-efi --efi-directory=MOUNT --bootloader-id=debian-DISK`, then again with `--removable` for the fallback path; a disk with no room for one needs its partitions laid out again",
                if missing.len() > 1 { "each of " } else { "" },
                list(&missing)
            ),
        );
    }
    if let Some(line) = esp_fstab_line(o.boot.fstab.as_deref())
        && on_md.is_empty()
    {
        f.lint(
            "esp-mount-stops-boot",
            "host".into(),
            format!("/etc/fstab mounts {ESP_MOUNT} without `nofail`: `{line}`"),
            "the ESP is on one disk; when that disk dies, boot waits for the mount and stops in emergency mode, although the mirror with the system survived",
            &format!(
                "add `nofail,x-systemd.device-timeout=10s` to the options of the {ESP_MOUNT} line in /etc/fstab (or `noauto`, mounting it only to update the loader)"
            ),
        );
    }
}

/// The fstab line that mounts /boot/efi at boot and waits for it (no `nofail`, no `noauto`).
fn esp_fstab_line(fstab: Option<&str>) -> Option<String> {
    fstab?.lines().find_map(|l| {
        let l = l.trim();
        if l.starts_with('#') {
            return None;
        }
        let fields: Vec<&str> = l.split_whitespace().collect();
        let (mount, opts) = (fields.get(1)?, fields.get(3).copied().unwrap_or("defaults"));
        let waits = !opts.split(',').any(|o| o == "nofail" || o == "noauto");
        (*mount == ESP_MOUNT && waits).then(|| fields.join(" "))
    })
}

#[cfg(test)]
mod tests {
    use super::esp_fstab_line;

    #[test]
    fn the_esp_line_that_waits_for_its_disk() {
        let debian = "# /boot/efi was on /dev/sda1 during installation\nUUID=5A1B-2C3D  /boot/efi       vfat    umask=0077      0       1\n";
        assert_eq!(
            esp_fstab_line(Some(debian)).as_deref(),
            Some("UUID=5A1B-2C3D /boot/efi vfat umask=0077 0 1")
        );
        assert_eq!(
            esp_fstab_line(Some(
                "UUID=5A1B-2C3D /boot/efi vfat umask=0077,nofail 0 1\n"
            )),
            None
        );
        assert_eq!(
            esp_fstab_line(Some(
                "UUID=5A1B-2C3D /boot/efi vfat noauto,umask=0077 0 1\n"
            )),
            None
        );
        assert_eq!(
            esp_fstab_line(Some("#UUID=x /boot/efi vfat defaults 0 1\n")),
            None
        );
        assert_eq!(esp_fstab_line(None), None);
    }
}
