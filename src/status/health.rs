//! The drives' health from SMART: a drive that fails its own assessment, has pending or
//! uncorrectable sectors, media errors or a critical warning; reallocated sectors or grown
//! defects (louder when they grew since hyraid first saw the drive, or on a write-mostly member,
//! which md reads only during a check or a rebuild); a drive smartctl cannot read at all (gone,
//! not answering: what smartctl said, as a degraded finding); a drive that gives no SMART.

use super::{Findings, Severity};
use crate::config::Desired;
use crate::history::drives::{Drives, key};
use crate::host::Host;
use crate::observe::smart::{self, DriveHealth};
use crate::observe::{DevKind, Observed};

/// One drive as status read it.
#[derive(Debug, Clone)]
pub struct Reading {
    /// `disk NAME` (the file's name) or `disk /dev/sdX`.
    pub object: String,
    pub kname: String,
    pub serial: Option<String>,
    /// A member of a mirror that md keeps write-mostly.
    pub write_mostly: bool,
    /// The array it (or a partition of it) is a member of (`md127`), and that array's name
    /// (`data0`), which `hyraid check` takes.
    pub array: Option<String>,
    pub mirror: Option<String>,
    pub health: Result<DriveHealth, String>,
}

/// smartctl is not installed.
#[derive(Debug, Clone, Default)]
pub struct Health {
    pub smartctl: bool,
    pub readings: Vec<Reading>,
    /// The counters as first seen, by serial.
    pub history: Drives,
}

impl Health {
    /// Ask smartctl of the file's disks (every disk without a file).
    pub fn read(host: &dyn Host, o: &Observed, d: Option<&Desired>) -> Health {
        let smartctl = smart::SMARTCTL_PATHS.iter().any(|p| host.exists(p));
        let mut h = Health {
            smartctl,
            readings: vec![],
            history: crate::history::drives::read(host).unwrap_or_default(),
        };
        if !smartctl {
            return h;
        }
        let disks: Vec<(String, &crate::observe::BlockDevice)> = match d {
            Some(d) => d
                .disks
                .values()
                .filter_map(|s| Some((format!("disk {}", s.name), crate::plan::disk_for(o, s)?)))
                .collect(),
            None => o
                .block_devices
                .iter()
                .filter(|b| b.kind == DevKind::Disk)
                .map(|b| (format!("disk /dev/{}", b.kname), b))
                .collect(),
        };
        for (object, b) in disks {
            let dev = b
                .by_id
                .first()
                .map(|i| format!("/dev/disk/by-id/{i}"))
                .unwrap_or_else(|| format!("/dev/{}", b.kname));
            let health = host
                .run(&smart::argv(&dev))
                .map_err(|e| e.to_string())
                .and_then(|o| smart::parse(&o.stdout));
            let on_disk = |m: &crate::observe::MdMember| {
                m.kname == b.kname
                    || o.device(&m.kname).and_then(|x| x.parent.as_deref())
                        == Some(b.kname.as_str())
            };
            let write_mostly =
                (o.arrays.iter()).any(|a| a.members.iter().any(|m| m.write_mostly() && on_disk(m)));
            let of =
                (o.arrays.iter()).find(|a| a.members.iter().any(|m| !m.faulty() && on_disk(m)));
            let (array, mirror) = (of.map(|a| a.kname.clone()), of.and_then(|a| a.name.clone()));
            h.readings.push(Reading {
                object,
                kname: b.kname.clone(),
                serial: b.serial.clone(),
                write_mostly,
                array,
                mirror,
                health,
            });
        }
        h
    }

    /// Keep what was read: each drive's counters as first and last seen.
    pub fn remember(&mut self, host: &dyn Host, now: u64) -> Result<(), String> {
        for r in &self.readings {
            if let Ok(h) = &r.health
                && h.available
            {
                self.history
                    .saw(&key(r.serial.as_deref(), &r.kname), &h.counters(), now);
            }
        }
        crate::history::drives::write(host, &self.history)
    }
}

fn date(secs: u64) -> String {
    let ago = crate::history::now_secs().saturating_sub(secs);
    format!(
        "{} ago",
        crate::config::monitoring::human_duration(ago - ago % 3600)
    )
}

/// The findings of the drives' health.
pub(super) fn findings(h: &Health, f: &mut Findings) {
    if !h.smartctl {
        f.lint(
            "no-smart",
            "host".into(),
            "smartctl is not installed: the drives' health is not read".into(),
            "SMART and the checks are the only ways a write-mostly member's errors are seen before a rebuild needs it",
            "`apt install smartmontools` (it also brings smartd, which watches the drives between two status runs)",
        );
        return;
    }
    for r in &h.readings {
        let o = r.object.clone();
        let hd = match &r.health {
            Ok(x) => x,
            Err(e) => {
                f.add(
                    Severity::Info,
                    o,
                    format!("SMART could not be read: {e}"),
                    "smartctl ran but gave no answer hyraid reads",
                    "run `smartctl -a` on it to see why",
                );
                continue;
            }
        };
        if hd.standby {
            f.add(
                Severity::Info,
                o,
                "asleep (standby): not woken to read SMART".into(),
                "status never spins a sleeping drive up",
                "nothing to do: it is read when it is awake",
            );
            continue;
        }
        if let Some(said) = &hd.unreadable {
            unreadable(r, said, f);
            continue;
        }
        if !hd.available {
            f.add(
                Severity::Info,
                o,
                "gives no SMART (a USB bridge, or a virtual disk)".into(),
                "its health is seen only through md's errors and the checks",
                "nothing to do; on a USB enclosure `smartctl -d sat` may reach it",
            );
            continue;
        }
        let wm = if r.write_mostly {
            "; it is a write-mostly member: md reads it only during a check or a rebuild, so SMART and the checks are the only ways its errors show before it is needed"
        } else {
            ""
        };
        let replace = "copy the data while it reads (the mirror's other member holds it too); replace the disk: name the new disk's id in the file and apply";
        if hd.passed == Some(false) {
            f.add(
                Severity::Degraded,
                o.clone(),
                format!("the drive's own SMART assessment FAILED{wm}"),
                "the drive predicts its own failure",
                replace,
            );
        }
        for (what, v) in [
            ("pending sectors", hd.pending),
            ("offline uncorrectable sectors", hd.offline_uncorrectable),
            ("NVMe media errors", hd.nvme_media_errors),
        ] {
            if let Some(n) = v.filter(|n| *n > 0) {
                f.add(Severity::Degraded, o.clone(), format!("{n} {what}{wm}"), "sectors it could not read: the data there is read from the other member only as long as that one lives", &format!("{} (a check rewrites an unreadable sector from the good copy); if they stay, {replace}", match &r.mirror { Some(m) => format!("`hyraid check {m} --now`"), None => "check its mirror now (`hyraid check NAME --now`)".into() }));
            }
        }
        if let Some(w) = hd.nvme_critical_warning.filter(|w| *w != 0) {
            f.add(Severity::Degraded, o.clone(), format!("NVMe critical warning {w:#04x}{wm}"), "the drive reports spare space low, temperature, reliability degraded, read-only mode or a failed backup (the bits of the NVMe SMART log)", replace);
        }
        let first = h.history.drives.get(&key(r.serial.as_deref(), &r.kname));
        for (what, v) in [
            ("reallocated sectors", hd.reallocated),
            ("grown defects", hd.scsi_grown_defects),
        ] {
            let Some(n) = v.filter(|n| *n > 0) else {
                continue;
            };
            let base = first.and_then(|d| Some((d.baseline.get(what).copied()?, d.first_seen)));
            match base {
                Some((b, when)) if n > b => f.add(Severity::Degraded, o.clone(), format!("{what} grew from {b} ({}) to {n}{wm}", date(when)), "a drive that keeps remapping sectors is failing", replace),
                _ if r.write_mostly => f.add(Severity::Degraded, o.clone(), format!("{n} {what}{wm}"), "the drive has remapped sectors it could not write", &format!("watch it (`hyraid status` says when the count grows); {replace} when it does")),
                _ => f.lint("drive-reallocated", o.clone(), format!("{n} {what} (not grown since hyraid first saw the drive)"), "the drive has remapped sectors; a count that stays is common, one that grows is a drive failing", "watch it: `hyraid status` says when the count grows"),
            }
        }
        if let Some(p) = hd.nvme_percentage_used.filter(|p| *p >= 90) {
            f.lint(
                "drive-worn",
                o.clone(),
                format!("{p}% of its rated endurance used"),
                "past 100% a flash drive may turn read-only or fail",
                "plan its replacement",
            );
        }
    }
}

/// smartctl could not read a drive at all: it is gone, it stopped answering, or this run may not
/// open it. Not "no SMART": for a drive of a mirror it is the first sign of the degraded day.
fn unreadable(r: &Reading, said: &str, f: &mut Findings) {
    let o = r.object.clone();
    if said.contains("Permission denied") || said.contains("Operation not permitted") {
        f.add(
            Severity::Error,
            o,
            format!("SMART could not be read: smartctl said \"{said}\""),
            "smartctl opens the drive for ATA or SCSI pass-through, which needs root",
            "run `hyraid status` as root (its timer and `hyraid apply` do)",
        );
        return;
    }
    let (severity, stake) = match &r.array {
        Some(md) => (
            Severity::Degraded,
            format!(
                "; it is a member of /dev/{md}, which has one copy fewer the moment md fails it"
            ),
        ),
        None => (Severity::Degraded, String::new()),
    };
    f.add(
        severity,
        o,
        format!("the drive cannot be read: smartctl said \"{said}\"{stake}"),
        "a drive that cannot be opened or stopped answering is gone, unplugged or failing; md fails it at its next I/O error",
        "check its cable and power and the kernel's log (`journalctl -k | grep -i -e ata -e sd`); if it does not come back, replace it: name the new disk's id in the file and apply",
    );
}
