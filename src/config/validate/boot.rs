//! `boot:`: boot disks that can carry their own boot partitions and sit in the mirror that holds
//! /boot; then the layout: each boot disk's BIOS boot partition and ESP in front of its own.

use super::{Ctx, nearest, seg, size_bytes};
use crate::config::boot::*;
use crate::config::desired::*;
use crate::config::raw::*;
use std::collections::BTreeMap;

pub(super) fn boot(
    c: &mut Ctx,
    raw: &RawConfig,
    disks: &mut BTreeMap<String, DiskSpec>,
    mirrors: &BTreeMap<String, MirrorSpec>,
) -> Option<BootSpec> {
    let b = raw.boot.as_ref()?;
    let esp_size = match (&b.esp_size, b.firmware.uefi()) {
        (None, _) => DEFAULT_ESP_SIZE,
        (Some(_), false) => {
            c.err(
                "/boot/esp_size",
                true,
                "`esp_size` with `firmware: bios`: a BIOS boots without an EFI system partition",
                Some("remove `esp_size`, or write `firmware: both`".into()),
            );
            DEFAULT_ESP_SIZE
        }
        (Some(s), true) => match size_bytes(s) {
            Ok(n) if n < MIN_ESP_SIZE => {
                c.err(
                    "/boot/esp_size",
                    false,
                    format!(
                        "an EFI system partition of {} is too small: FAT32 and the firmwares that read it need at least 100MiB",
                        crate::config::size::human(n)
                    ),
                    Some("512MiB is the usual size (260MiB is the least on a disk of 4096-byte sectors)".into()),
                );
                n
            }
            Ok(n) => n,
            Err(e) => {
                c.err("/boot/esp_size", false, e, None);
                DEFAULT_ESP_SIZE
            }
        },
    };
    if b.disks.is_empty() {
        c.err(
            "/boot/disks",
            false,
            "no boot disk",
            Some("list the disks the machine boots from, e.g. `disks: [ssd0, hdd0]`".into()),
        );
    }
    let mirror = mirrors.get(&b.mirror).filter(|m| !m.absent);
    match mirror {
        None => c.err(
            "/boot/mirror",
            false,
            format!("`{}` is not a mirror of this file", b.mirror),
            Some(
                nearest(&b.mirror, mirrors.keys())
                    .map(|n| format!("did you mean `{n}`?"))
                    .unwrap_or_else(|| "name the mirror that holds /boot (or / with /boot in it)".into()),
            ),
        ),
        Some(m) if m.encryption.is_some() => c.err(
            "/boot/mirror",
            false,
            format!("mirror `{}` is encrypted: grub cannot read /boot from the LUKS2 header hyraid makes", m.name),
            Some("keep /boot on a mirror of its own without `encryption:` (metadata 1.0 or 1.2), and encrypt the data mirror".into()),
        ),
        Some(_) => {}
    }
    let mut seen = Vec::new();
    for (i, name) in b.disks.iter().enumerate() {
        let p = format!("/boot/disks/{i}");
        if seen.contains(name) {
            c.err(&p, false, format!("disk `{name}` is listed twice"), None);
            continue;
        }
        seen.push(name.clone());
        let Some(d) = disks.get(name) else {
            c.err(
                &p,
                false,
                format!("`{name}` is not defined under `disks:`"),
                nearest(name, raw.disks.keys()).map(|n| format!("did you mean `{n}`?")),
            );
            continue;
        };
        if d.partitions.is_empty() {
            c.err(
                &p,
                false,
                format!("boot disk `{name}` has no `partitions:`: its EFI system partition and boot loader need a partitioned disk"),
                Some(format!(
                    "declare the partition the mirror uses (`disks.{name}.partitions: [{{ name: {}, size: rest }}]`) and name `{name}:{}` as the member; hyraid adds the boot partitions in front of it",
                    b.mirror, b.mirror
                )),
            );
            continue;
        }
        for (j, part) in d.partitions.iter().enumerate() {
            if part.name == ESP_PARTITION || part.name == BIOS_BOOT_PARTITION {
                c.err(
                    &format!("/disks/{}/partitions/{j}/name", seg(name)),
                    false,
                    format!(
                        "`{}` is the name of the boot partition hyraid lays out on a boot disk",
                        part.name
                    ),
                    Some(
                        "give your partition another name; hyraid adds its boot partitions itself"
                            .into(),
                    ),
                );
            }
        }
        if let Some(m) = mirror
            && !m.members.iter().any(|x| split_device(x).0 == name)
        {
            c.err(
                &p,
                false,
                format!("boot disk `{name}` has no member in mirror `{}`, which holds /boot: a loader started from it would find no /boot", m.name),
                Some(format!("add a partition of `{name}` to `mirrors.{}.members`, or boot from the mirror's disks", m.name)),
            );
        }
    }
    if !c.errors.is_empty() {
        return None;
    }
    // The layout: hyraid's boot partitions first, in the order BIOS boot, ESP (as Proxmox and
    // the Debian installer lay them out), then the file's.
    for name in &b.disks {
        let d = disks.get_mut(name).expect("checked above");
        let mut front = Vec::new();
        if b.firmware.bios() {
            front.push(PartitionSpec {
                name: BIOS_BOOT_PARTITION.into(),
                size: Some(BIOS_BOOT_SIZE),
                role: PartitionRole::BiosBoot,
            });
        }
        if b.firmware.uefi() {
            front.push(PartitionSpec {
                name: ESP_PARTITION.into(),
                size: Some(esp_size),
                role: PartitionRole::Esp,
            });
        }
        front.append(&mut d.partitions);
        d.partitions = front;
    }
    Some(BootSpec {
        firmware: b.firmware,
        disks: b.disks.clone(),
        mirror: b.mirror.clone(),
        esp_size,
    })
}
