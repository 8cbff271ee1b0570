//! Drive write caches (hdparm, sdparm) and hyraid's udev rule that sets them again at boot and hotplug.

use super::*;
use crate::plan::step::{ReloadUdev, SetWriteCache, WriteFile};

impl<'a> Planner<'a> {
    pub(in crate::plan) fn write_caches(&mut self) {
        let mut out = Vec::new();
        let mut rule = Vec::new();
        let mut refusals: Vec<Refusal> = Vec::new();
        let notes: Vec<String> = Vec::new();
        for r in self.disks.values().filter(|r| r.part.is_none()) {
            let Some(want) = r.spec.write_cache else {
                continue;
            };
            let name = &r.spec.name;
            let Some(dev) = r.dev else {
                // Missing for now: its line stays in the rule, so the setting is back when it is.
                if let Some((serial, tool)) = self
                    .o
                    .boot
                    .write_cache_rule
                    .as_deref()
                    .and_then(|cur| persist::rule_entry(cur, name))
                {
                    rule.push((name.clone(), serial, want, tool));
                }
                continue;
            };
            let tran = dev.tran.as_deref().unwrap_or("unknown");
            let object = format!("disk {name}");
            if !r.rotational {
                refusals.push(Refusal { object: object.clone(), reason: ("write_cache: hyraid switches the volatile cache of rotational disks only; SSDs and NVMe manage their own (with power-loss protection or not, it is not a setting to flip)").into(), fix: "remove `write_cache` for this disk (or set `media: hdd` if the kernel misreports a rotational disk)".into() });
                continue;
            }
            // ATA disks take hdparm; SCSI/SAS disks (they have a scsi_disk cache_type and are not
            // ATA) take sdparm; anything else (virtio, USB bridges) is refused.
            let scsi = dev
                .write_cache
                .is_some_and(|w| w.source == crate::observe::WriteCacheSource::ScsiCacheType);
            let tool = match tran {
                "sata" | "ata" => CacheTool::Hdparm,
                _ if scsi => CacheTool::Sdparm,
                _ => {
                    refusals.push(Refusal { object: object.clone(), reason: format!("write_cache: this disk ({tran}) has no write cache hyraid can switch: ATA disks take hdparm, SCSI/SAS disks sdparm"), fix: "remove `write_cache` for this disk".into() });
                    continue;
                }
            };
            let cur = dev.write_cache.and_then(|w| w.enabled);
            if cur.is_none() {
                refusals.push(Refusal { object: object.clone(), reason: ("the drive does not report its write cache state (hdparm -W / cache_type), so a change could not be verified").into(), fix: "remove `write_cache` for this disk".into() });
                continue;
            }
            match dev.serial.as_deref().filter(|s| crate::observe::names::rule_safe(s)) {
                                Some(s) => rule.push((name.clone(), s.to_string(), want, tool)),
                None => refusals.push(Refusal { object: object.clone(), reason: "write_cache: the disk reports no serial a udev rule can match, so the setting could not be made to survive a power cycle".into(), fix: "remove `write_cache` for this disk (a volatile setting hyraid cannot keep is a setting lost at the next boot)".into() }),
            }
            if cur == Some(want) {
                continue;
            }
            let reason = if want {
                "the drive's volatile cache roughly doubles HDD write speed; the kernel flushes it at every barrier"
            } else {
                "the file asks for the drive cache off"
            };
            out.push(ps(
                Step::SetWriteCache(SetWriteCache {
                    disk: name.clone(),
                    device: r.path.clone(),
                    on: want,
                    tool,
                    kname: (tool == CacheTool::Sdparm).then(|| dev.kname.clone()),
                }),
                Risk::Safe,
                reason,
            ));
        }
        self.steps.extend(out);
        self.refused.extend(refusals);
        self.notes.extend(notes);
        // The setting is volatile: hyraid's udev rule re-applies it whenever the disk appears.
        let cur = self.o.boot.write_cache_rule.as_deref();
        if rule.is_empty() && cur.is_none() {
            return;
        }
        let new = match persist::write_cache_rule(&rule) {
            Ok(text) => text,
            Err(e) => {
                let fix = "name the disk by `id:` and leave its write cache as it is (remove `write_cache`)";
                self.refuse(format!("file {WRITE_CACHE_RULE_PATH}"), e.to_string(), fix);
                return;
            }
        };
        if cur != Some(new.as_str()) {
            self.steps.push(ps(
                Step::WriteFile(WriteFile { path: WRITE_CACHE_RULE_PATH.into(), old: cur.map(str::to_string), content: new, purpose: "udev rule that re-applies drive write caches at boot and hotplug".into() }),
                Risk::Safe,
                "hdparm -W is lost at every power cycle; the rule sets it again whenever the disk appears",
            ));
            self.steps.push(ps(
                Step::ReloadUdev(ReloadUdev {}),
                Risk::Safe,
                "udevd reads the new rule",
            ));
        }
    }
}
