//! The boot disks of the file's `boot:`, each: present, its ESP holding the installed grub (or its
//! boot sector, for BIOS), its firmware entry, and its copy of /boot in sync. A boot disk that
//! cannot start the machine now is "boot redundancy lost", with the fix.

use super::{Findings, Severity};
use crate::config::Desired;
use crate::config::boot::{BootSpec, ESP_PARTITION, entry_label};
use crate::observe::{BlockDevice, Observed};

/// Whether each boot disk can start the machine now, and why not: (disk, problems).
pub fn readiness(o: &Observed, d: &Desired) -> Vec<(String, Vec<String>)> {
    let Some(b) = &d.boot else { return vec![] };
    b.disks
        .iter()
        .map(|disk| (disk.clone(), problems(o, d, b, disk)))
        .collect()
}

fn problems(o: &Observed, d: &Desired, b: &BootSpec, disk: &str) -> Vec<String> {
    let Some(dev) = d.disks.get(disk).and_then(|s| crate::plan::disk_for(o, s)) else {
        return vec!["the disk is not on the machine".into()];
    };
    let l = &o.boot.loaders;
    let grub = l.grub.as_deref().unwrap_or("no grub-install");
    let mut p = Vec::new();
    let part = |name: &str| -> Option<&BlockDevice> {
        o.block_devices.iter().find(|c| {
            c.parent.as_deref() == Some(dev.kname.as_str()) && c.partlabel.as_deref() == Some(name)
        })
    };
    // Its copy of /boot: the member of the /boot mirror on this disk, in sync.
    let array = d
        .mirrors
        .get(&b.mirror)
        .and_then(|m| crate::plan::array_for(o, m));
    match array {
        None => p.push(format!(
            "mirror {} (which holds /boot) is not running",
            b.mirror
        )),
        Some(a) => {
            let member = a.members.iter().find(|m| {
                o.device(&m.kname)
                    .is_some_and(|x| x.parent.as_deref() == Some(dev.kname.as_str()))
            });
            match member {
                None => p.push(format!("it has no member in mirror {} (/boot)", b.mirror)),
                Some(m) if !m.state.iter().any(|s| s == "in_sync") => p.push(format!(
                    "its copy of /boot (/dev/{} in mirror {}) is {}",
                    m.kname,
                    b.mirror,
                    if a.sync_action == "recover" {
                        "being rebuilt".to_string()
                    } else {
                        m.state.join(",")
                    }
                )),
                Some(_) => {}
            }
        }
    }
    if b.firmware.uefi() {
        match part(ESP_PARTITION) {
            None => p.push("it has no EFI system partition".into()),
            Some(esp) => match l.esps.get(&esp.kname) {
                None => p.push(format!("its ESP /dev/{} was not read", esp.kname)),
                Some(e) if e.unread.is_some() => p.push(format!(
                    "what its ESP /dev/{} holds is unknown: {}",
                    esp.kname,
                    e.unread.as_deref().unwrap_or("")
                )),
                Some(e) => {
                    match &e.stamp {
                        None => p.push(format!("its ESP /dev/{} holds no loader of hyraid's", esp.kname)),
                        Some(s) if Some(s.as_str()) != l.grub.as_deref() => p.push(format!(
                            "the loader on its ESP /dev/{} is stale: `{s}`, the installed grub is `{grub}`",
                            esp.kname
                        )),
                        Some(_) => {}
                    }
                    if o.boot.uefi
                        && let Some(entries) = &l.efi_entries
                        && !entries.iter().any(|x| {
                            x.label == entry_label(disk)
                                && x.partuuid.is_some()
                                && x.partuuid == e.partuuid
                        })
                    {
                        p.push(format!(
                            "the firmware has no entry `{}` for it",
                            entry_label(disk)
                        ));
                    }
                }
            },
        }
    }
    if b.firmware.bios() {
        let id = dev.by_id.iter().find(|i| l.bios.contains_key(*i));
        match id.and_then(|i| l.bios.get(i)) {
            None => p.push("its boot sector holds no BIOS loader of hyraid's".into()),
            Some(v) if Some(v.as_str()) != l.grub.as_deref() => p.push(format!(
                "the BIOS loader in its boot sector is stale: `{v}`, the installed grub is `{grub}`"
            )),
            Some(_) => {}
        }
    }
    p
}

/// The findings: a boot disk that cannot start the machine is boot redundancy lost; one that can
/// is said, with what its ESP holds.
pub(super) fn boot_disks(o: &Observed, d: &Desired, f: &mut Findings) {
    let Some(b) = &d.boot else { return };
    let ready = readiness(o, d);
    let able: Vec<&str> = ready
        .iter()
        .filter(|(_, p)| p.is_empty())
        .map(|(d, _)| d.as_str())
        .collect();
    for (disk, problems) in &ready {
        let object = format!("disk {disk}");
        if problems.is_empty() {
            f.add(
                Severity::Info,
                object,
                format!(
                    "boots the machine: {} on its {}; /boot on mirror {}",
                    o.boot.loaders.grub.as_deref().unwrap_or("grub"),
                    match b.firmware.as_str() {
                        "both" => "ESP and boot sector",
                        "bios" => "boot sector",
                        _ => "ESP",
                    },
                    b.mirror
                ),
                "a boot disk whose loader is current and whose copy of /boot is in sync",
                "nothing to do",
            );
            continue;
        }
        let others = if able.is_empty() {
            "no boot disk can start the machine now".to_string()
        } else {
            format!("the machine boots from {} alone", able.join(", "))
        };
        let gone = problems.iter().any(|p| p.contains("not on the machine"));
        let rebuilding = problems.iter().any(|p| p.contains("being rebuilt"));
        f.add(
            Severity::Degraded,
            object,
            format!("boot redundancy lost: {disk} is not ready to start the machine: {}", problems.join("; ")),
            &format!("{others}; if it dies, the mirror keeps the data but the box does not come up"),
            if gone {
                "replace the disk (docs/booting.md#replacing-a-boot-disk): name the new disk's id under `disks`, then `hyraid apply`: it partitions it, rebuilds its copy of /boot, then installs its loader"
            } else if rebuilding {
                "wait for the rebuild, then `hyraid apply` (or the update hooks) install its loader"
            } else {
                "`hyraid apply FILE` (or `hyraid apply --loaders-only FILE`, what the update hooks run) installs the loaders and entries the plan shows"
            },
        );
    }
}
