//! The boot loaders of `boot:`: each boot disk's ESP made, grub on each (after the disk's member
//! in the /boot mirror is rebuilt), one firmware entry per disk, the stale ones of a dead or
//! replaced disk removed, and the hooks that refresh them after every update.

use super::*;
use crate::config::boot::{BootSpec, ESP_PARTITION, entry_label, loader_id};
use crate::observe::loader::{self as obs_loader, HOOKS};
use crate::plan::step::{
    CreateBootEntry, DeleteBootEntry, InstallBiosLoader, InstallEfiLoader, MakeEsp,
    SetGrubPcDevices, WaitIdle, WriteGrubConfig, WriteHook, esp_mount,
};

/// What the refusals and notes of the loaders are about.
pub const OBJECT: &str = "boot";

/// The steps that refresh what the firmware starts (what `hyraid apply --loaders-only`, which the
/// update hooks run, keeps of a plan), and the wait for a rebuild they come after.
pub fn is_loader_step(s: &Step) -> bool {
    matches!(
        s,
        Step::InstallEfiLoader(_)
            | Step::InstallBiosLoader(_)
            | Step::CreateBootEntry(_)
            | Step::DeleteBootEntry(_)
            | Step::SetGrubPcDevices(_)
            | Step::WriteGrubConfig(_)
    )
}

/// The plan of `--loaders-only`: its loader steps (with the wait before them), and only the
/// refusals of the loaders; the rest of the file's differences are left to a full apply.
pub fn loaders_only(mut p: Plan) -> Plan {
    let first = p.steps.iter().position(|s| is_loader_step(&s.step));
    let mut i = 0;
    p.steps.retain(|s| {
        let keep = is_loader_step(&s.step)
            || matches!(s.step, Step::WaitIdle(_)) && first.is_some_and(|f| i + 1 == f);
        i += 1;
        keep
    });
    p.refused.retain(|r| r.object == OBJECT);
    p.withheld = false;
    p
}

impl<'a> Planner<'a> {
    pub(in crate::plan) fn boot_loaders(&mut self) {
        let Some(b) = &self.d.boot else {
            return;
        };
        let esps = self.esps(b);
        let Some(grub) = self.loader_ready(b) else {
            return;
        };
        // A disk whose member of the /boot mirror this plan rebuilds gets its loader once md
        // has copied /boot onto it: before that, grub started from it would find no /boot.
        let rebuilding = self.steps.iter().any(|s| {
            super::mirror::converge::starts_rebuild(&s.step)
                && s.step.object() == Address::Mirror(b.mirror.clone())
        }) || self
            .d
            .mirrors
            .get(&b.mirror)
            .and_then(|m| self.array_of(m))
            .is_some_and(|a| a.sync_action == "recover");
        let mut waited = false;
        let mut wait = |me: &mut Self| {
            if rebuilding && !waited {
                waited = true;
                let md_device = me.d.mirrors.get(&b.mirror).and_then(|m| m.md_device());
                me.steps.push(ps(
                    Step::WaitIdle(WaitIdle {
                        array: b.mirror.clone(),
                        md_device,
                    }),
                    Risk::Safe,
                    "a boot disk's loader is installed once md has rebuilt its copy of /boot",
                ));
            }
        };
        if b.firmware.uefi() {
            for (disk, esp) in &esps {
                let Some(esp) = esp else { continue };
                if esp.stamp.as_deref() == Some(grub.as_str()) {
                    continue;
                }
                wait(self);
                let mounted = esp.mounted;
                self.steps.push(ps(
                    Step::InstallEfiLoader(InstallEfiLoader {
                        disk: disk.clone(),
                        device: esp.path.clone(),
                        grub: grub.clone(),
                        mounted,
                        had: esp.stamp.clone(),
                    }),
                    Risk::Safe,
                    match &esp.stamp {
                        None => "the disk's ESP has no loader of hyraid's: without one the firmware cannot start the system from this disk".to_string(),
                        Some(_) => "the loader on this ESP is not the installed grub: started from this disk, it would load modules of another version from /boot".to_string(),
                    },
                ));
            }
            self.boot_entries(b, &esps);
        }
        if b.firmware.bios() {
            self.bios_loaders(b, &grub, &mut wait);
            self.grub_pc_devices(b);
        }
        if !self.o.boot.loaders.grub_cfg {
            self.steps.push(ps(
                Step::WriteGrubConfig(WriteGrubConfig {}),
                Risk::Safe,
                "/boot/grub/grub.cfg does not exist: every loader would stop at grub's prompt",
            ));
        }
        self.hooks();
    }

    /// Each boot disk's ESP, made where it has no FAT yet; None for a disk not on the machine.
    fn esps(&mut self, b: &BootSpec) -> Vec<(String, Option<EspNow>)> {
        let mut out = Vec::new();
        if !b.firmware.uefi() {
            return out;
        }
        for disk in &b.disks {
            let key = format!("{disk}:{ESP_PARTITION}");
            let (Some(r), Some(_)) = (self.disks.get(&key), self.disks[disk].dev) else {
                out.push((disk.clone(), None));
                continue;
            };
            if self.blocked_parts.contains(disk) {
                out.push((disk.clone(), None));
                continue;
            }
            let path = r.path.clone();
            let part = r.part.map(|(n, _)| n).unwrap_or(0);
            let dev = r.dev;
            let seen = dev.and_then(|d| self.o.boot.loaders.esps.get(&d.kname));
            let fstype = dev.and_then(|d| d.fstype.clone());
            match fstype.as_deref() {
                Some("vfat") => {}
                Some(other) if !self.policy.allow_destroy => {
                    self.refuse(
                        format!("disk {disk}"),
                        format!("its partition `{ESP_PARTITION}` ({path}) holds {other}, not the FAT of an EFI system partition"),
                        "check it holds nothing you need, then run with --allow-destroy (hyraid makes the ESP there)",
                    );
                    out.push((disk.clone(), None));
                    continue;
                }
                _ => {
                    let destroys = fstype.is_some();
                    self.steps.push(ps(
                        Step::MakeEsp(MakeEsp {
                            disk: disk.clone(),
                            device: path.clone(),
                        }),
                        if destroys { Risk::Destroys } else { Risk::Safe },
                        if destroys {
                            "the partition holds another filesystem, which the ESP replaces"
                        } else {
                            "a boot disk's own EFI system partition: the firmware loads the boot loader from it"
                        },
                    ));
                    out.push((
                        disk.clone(),
                        Some(EspNow {
                            path,
                            part,
                            stamp: None,
                            partuuid: None,
                            mounted: false,
                        }),
                    ));
                    continue;
                }
            }
            if let Some(why) = seen.and_then(|e| e.unread.clone()) {
                self.refuse(
                    format!("disk {disk}"),
                    format!("what its ESP ({path}) holds cannot be read: {why}"),
                    "install mtools (`apt install mtools`), or check the partition with `fsck.vfat -n`",
                );
                out.push((disk.clone(), None));
                continue;
            }
            out.push((
                disk.clone(),
                Some(EspNow {
                    path,
                    part,
                    stamp: seen.and_then(|e| e.stamp.clone()),
                    partuuid: seen.and_then(|e| e.partuuid.clone()),
                    mounted: dev.and_then(|d| d.mountpoint.as_deref()) == Some(&esp_mount(disk)),
                }),
            ));
        }
        out
    }

    /// The grub version to install, when the loaders can be installed now: grub and its
    /// platforms installed, /boot on the file's mirror and readable by grub. Otherwise refused
    /// (or waiting, while the system is not yet on the mirror) and None.
    fn loader_ready(&mut self, b: &BootSpec) -> Option<String> {
        let array = self
            .d
            .mirrors
            .get(&b.mirror)
            .and_then(|m| self.array_of(m))
            .map(|a| a.kname.clone());
        let chain = crate::observe::system::boot_chain(self.o);
        let on_mirror = array
            .as_ref()
            .zip(chain.as_ref())
            .is_some_and(|(a, c)| c.arrays.contains(a));
        if !on_mirror {
            let where_ = match &chain {
                Some(c) => format!("{} is on /dev/{}", c.mount, c.kname),
                None => "/boot and / are on no LV or md array".into(),
            };
            self.waiting.push(format!(
                "boot: the boot loaders are installed once the system is on mirror {} ({where_}): copy it there and run `hyraid apply` from it (docs/booting.md)",
                b.mirror
            ));
            return None;
        }
        let chain = chain.expect("on the mirror");
        if !chain.unreadable.is_empty() {
            self.refuse(
                OBJECT,
                format!(
                    "{} is behind {}, which grub cannot read: the firmware would start a loader that finds no /boot",
                    chain.mount,
                    chain.unreadable.join(" and ")
                ),
                "keep /boot on a filesystem of its own on the mirror (an LV without a cache, or the mirror itself), outside encryption",
            );
            return None;
        }
        let l = &self.o.boot.loaders;
        let needed: Vec<&str> = [
            (b.firmware.uefi(), "x86_64-efi", "grub-efi-amd64-bin"),
            (b.firmware.bios(), "i386-pc", "grub-pc-bin"),
        ]
        .iter()
        .filter(|(want, p, _)| *want && !l.platforms.iter().any(|x| x == p))
        .map(|(_, _, pkg)| *pkg)
        .collect();
        let Some(grub) = l.grub.clone().filter(|_| needed.is_empty()) else {
            let pkgs = match needed.is_empty() {
                true => "grub2-common".to_string(),
                false => needed.join(" "),
            };
            self.refuse(
                OBJECT,
                format!(
                    "grub is not installed for `firmware: {}`",
                    b.firmware.as_str()
                ),
                format!("`apt install {pkgs}`, then plan again"),
            );
            return None;
        };

        Some(grub)
    }

    /// One firmware entry per boot disk, labelled with its name and loading its own folder; an
    /// entry of hyraid's that loads from no boot disk's ESP is removed.
    fn boot_entries(&mut self, b: &BootSpec, esps: &[(String, Option<EspNow>)]) {
        if !self.o.boot.uefi {
            self.notes.push("boot: this machine did not start through UEFI (or /sys/firmware/efi is not here, as in a chroot without it), so the firmware's boot entries are not read or made; the removable path on every ESP starts the system meanwhile, and `hyraid apply` on the machine started through UEFI makes them".into());
            return;
        }
        let Some(entries) = self.o.boot.loaders.efi_entries.clone() else {
            self.refuse(
                OBJECT,
                "the firmware's boot entries cannot be read: efibootmgr is not installed",
                "`apt install efibootmgr`, then plan again",
            );
            return;
        };
        let mut kept: Vec<String> = Vec::new();
        // `efibootmgr --create` puts the new entry first: made last to first, the entries stand
        // in BootOrder as the file lists the disks.
        for (disk, esp) in esps.iter().rev() {
            let Some(esp) = esp else { continue };
            let label = entry_label(disk);
            let path = format!("\\EFI\\{}\\grubx64.efi", loader_id(disk));
            let mine = entries.iter().find(|e| {
                e.label == label
                    && esp.partuuid.is_some()
                    && e.partuuid == esp.partuuid
                    && e.path
                        .as_deref()
                        .is_some_and(|p| p.eq_ignore_ascii_case(&path))
            });
            match mine {
                Some(e) => kept.push(e.number.clone()),
                None => {
                    let device = self.disks[disk].path.clone();
                    self.steps.push(ps(
                        Step::CreateBootEntry(CreateBootEntry {
                            disk: disk.clone(),
                            device,
                            part: esp.part,
                        }),
                        Risk::Safe,
                        "one entry per boot disk, each with its own label: the firmware keeps them apart and falls back to the next when a disk is gone",
                    ));
                }
            }
        }
        for e in entries
            .iter()
            .filter(|e| e.label.starts_with("hyraid ") && !kept.contains(&e.number))
        {
            let disk = e.label.trim_start_matches("hyraid ").to_string();
            let why = if !b.disks.contains(&disk) {
                "the file boots from no disk of that name"
            } else if esps.iter().any(|(d, x)| *d == disk && x.is_none()) {
                "its disk is not on the machine"
            } else {
                "it loads from a partition that is not this disk's ESP (a replaced disk's, or a duplicate)"
            };
            // A present disk's entry is re-created above; a missing disk's is kept while the
            // disk may come back, unless it points at no ESP of the machine at all.
            let missing = esps.iter().any(|(d, x)| *d == disk && x.is_none());
            let points_at_present_esp = e.partuuid.as_ref().is_some_and(|u| {
                self.o
                    .boot
                    .loaders
                    .esps
                    .values()
                    .any(|x| x.partuuid.as_ref() == Some(u))
            });
            if missing && !points_at_present_esp {
                continue;
            }
            self.steps.push(ps(
                Step::DeleteBootEntry(DeleteBootEntry {
                    disk,
                    number: e.number.clone(),
                    label: e.label.clone(),
                    why: why.into(),
                }),
                Risk::Safe,
                "a firmware entry that starts nothing of the boot disks: firmwares try it first and wait on it",
            ));
        }
    }

    fn bios_loaders(&mut self, b: &BootSpec, grub: &str, wait: &mut dyn FnMut(&mut Self)) {
        // The record keeps the boot disks' lines: a replaced disk's goes with the next write.
        let ids: Vec<String> = b
            .disks
            .iter()
            .flat_map(|disk| {
                let spec_id = self.d.disks.get(disk).and_then(|s| s.id.clone());
                let path = self
                    .disks
                    .get(disk)
                    .map(|r| r.path.trim_start_matches("/dev/disk/by-id/").to_string());
                spec_id.into_iter().chain(path)
            })
            .collect();
        let mut record = self.o.boot.loaders.bios.clone();
        record.retain(|id, _| ids.contains(id));
        for disk in &b.disks {
            let r = &self.disks[disk];
            if r.dev.is_none() || self.blocked_parts.contains(disk) {
                continue;
            }
            let path = r.path.clone();
            let id = path.trim_start_matches("/dev/disk/by-id/").to_string();
            let had = record.get(&id).cloned();
            if had.as_deref() == Some(grub) {
                continue;
            }
            wait(self);
            record.insert(id, grub.to_string());
            self.steps.push(ps(
                Step::InstallBiosLoader(InstallBiosLoader {
                    disk: disk.clone(),
                    device: path,
                    grub: grub.to_string(),
                    record: obs_loader::render_bios_record(&record),
                    had: had.clone(),
                }),
                Risk::Safe,
                match had {
                    None => "a BIOS starts the boot sector of the disk it boots from: every boot disk needs grub's",
                    Some(_) => "the loader in this disk's boot sector is not the installed grub",
                },
            ));
        }
    }

    /// Where Debian's grub-pc is installed, its upgrades install grub on the disks its debconf
    /// answer lists: every boot disk, by id.
    fn grub_pc_devices(&mut self, b: &BootSpec) {
        let Some(had) = self.o.boot.loaders.grub_pc.clone() else {
            return;
        };
        let devices: Vec<String> = b
            .disks
            .iter()
            .filter_map(|d| self.disks.get(d))
            .filter(|r| r.path.starts_with("/dev/disk/by-id/"))
            .map(|r| r.path.clone())
            .collect();
        if devices == had {
            return;
        }
        self.steps.push(ps(
            Step::SetGrubPcDevices(SetGrubPcDevices { devices, had }),
            Risk::Safe,
            "grub-pc's upgrades run grub-install on the disks this answer lists: a boot disk left out keeps an old loader in its boot sector",
        ));
    }

    /// The update hooks: each runs `hyraid apply --loaders-only` on the file.
    fn hooks(&mut self) {
        let Some(hyraid) = self.o.boot.monitoring.hyraid_path.clone() else {
            self.refuse(
                OBJECT,
                "hyraid is not installed where the update hooks can run it, so the ESPs would go stale after the next grub or kernel update",
                "install the package (`apt install ./hyraid_*.deb`), then plan again",
            );
            return;
        };
        for (path, executable) in HOOKS {
            let content = hook_text(path, &hyraid);
            let old = self.o.boot.loaders.hooks.get(path).cloned();
            if old.as_deref() == Some(content.as_str()) {
                continue;
            }
            self.steps.push(ps(
                Step::WriteHook(WriteHook {
                    path: path.into(),
                    old,
                    content,
                    purpose: "refreshes every boot disk's loader after updates".into(),
                    executable,
                }),
                Risk::Safe,
                "Debian's own grub updates write one ESP (the one at /boot/efi), or none: without this the others go stale, and a disk whose loader is older than /boot's modules does not boot",
            ));
        }
    }
}

/// A boot disk's ESP as the plan finds (or makes) it.
struct EspNow {
    path: String,
    part: u32,
    stamp: Option<String>,
    partuuid: Option<String>,
    mounted: bool,
}

/// The file hyraid's conventions put at `path`: /etc/hyraid/hyraid.yaml is the file the hooks
/// refresh from (as the drift unit reads it).
pub fn hook_text(path: &str, hyraid: &str) -> String {
    let run = format!(
        "[ -x {hyraid} ] && [ -f /etc/hyraid/hyraid.yaml ] && {hyraid} apply --loaders-only --yes /etc/hyraid/hyraid.yaml"
    );
    if path.starts_with("/etc/apt/") {
        format!(
            "// hyraid: refreshes the boot disks' loaders after dpkg runs (grub's own upgrades); `hyraid apply` keeps this file\nDPkg::Post-Invoke {{ \"{run} >&2 || true\"; }};\n"
        )
    } else {
        format!(
            "#!/bin/sh\n# hyraid: refreshes the boot disks' loaders (hyraid.yaml `boot:`); `hyraid apply` keeps this file\n# A failure is not the update's: status and the drift unit say a loader is stale.\n{run} >&2 || true\nexit 0\n"
        )
    }
}
