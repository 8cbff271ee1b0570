//! The drives: devices whose content could not be probed, and the disks the file names (present,
//! drive write cache as the file says and made persistent).

use super::{Findings, Severity};
use crate::config::Desired;
use crate::observe::{BlockDevice, Observed};

/// Devices hyraid could not probe: taken as holding data.
pub(super) fn probe_errors(o: &Observed, f: &mut Findings) {
    for d in o.block_devices.iter().filter(|d| d.probe_error.is_some()) {
        f.add(
            Severity::Lint,
            format!("device /dev/{}", d.kname),
            format!(
                "content unknown: probing failed ({})",
                d.probe_error.as_deref().unwrap_or("")
            ),
            "hyraid treats it as holding data: it creates nothing on it without --allow-destroy",
            "check the device (`dmesg`, `smartctl -a`); probe it by hand with `wipefs -n`",
        );
    }
}

/// Each disk the file names: present, and its drive write cache as the file says.
pub(super) fn named_disks(o: &Observed, d: &Desired, f: &mut Findings) {
    for s in d.disks.values() {
        let dev = crate::plan::disk_for(o, s);
        let object = format!("disk {}", s.name);
        let Some(dev) = dev else {
            f.add(
                Severity::Error,
                object,
                format!(
                    "not present ({})",
                    s.id.clone().or(s.serial.clone()).unwrap_or_default()
                ),
                "a disk the file names is missing",
                "check cabling, or replace it in the file",
            );
            continue;
        };
        if let Some(want) = s.write_cache {
            write_cache(o, dev, want, object, f);
        }
    }
}

/// The drive write cache the file asks for: set now, and kept by hyraid's udev rule.
fn write_cache(o: &Observed, dev: &BlockDevice, want: bool, object: String, f: &mut Findings) {
    let cur = dev.write_cache.and_then(|w| w.enabled);
    if cur != Some(want) {
        f.add(
            Severity::Lint,
            object.clone(),
            format!(
                "drive write cache is {}, the file says {}",
                cur.map(|c| if c { "on" } else { "off" })
                    .unwrap_or("unknown"),
                if want { "on" } else { "off" }
            ),
            "the setting is volatile: a power cycle resets it",
            "run `hyraid apply`",
        );
    }
    let persistent = dev.serial.as_ref().is_some_and(|s| {
        o.boot
            .write_cache_rule
            .as_deref()
            .and_then(|r| crate::plan::persist::rule_line(r, s))
            .is_some_and(|l| {
                if want {
                    l.contains("-W1") || l.contains("--set=WCE")
                } else {
                    l.contains("-W0") || l.contains("--clear=WCE")
                }
            })
    });
    if !persistent {
        f.add(
            Severity::Lint,
            object,
            format!(
                "drive write cache {} is not made persistent",
                if want { "on" } else { "off" }
            ),
            "hdparm -W is lost at every power cycle; hyraid's udev rule is missing or differs",
            "run `hyraid apply` (it writes /etc/udev/rules.d/61-hyraid-write-cache.rules)",
        );
    }
}

/// A device as a person knows it: the file's disk name when the file names it, else its stable
/// /dev/disk/by-id name (a WWN first), else the kernel name.
pub fn stable_name(o: &Observed, desired: Option<&Desired>, kname: &str) -> String {
    let Some(b) = o.device(kname) else {
        return format!("/dev/{kname}");
    };
    let disk = b.parent.as_deref().unwrap_or(kname);
    let part = b.parent.is_some().then(|| kname.trim_start_matches(disk));
    let named = desired.and_then(|d| {
        let dev = o.device(disk)?;
        d.disks.values().find(|s| {
            s.id.as_ref().is_some_and(|i| dev.by_id.contains(i))
                || s.serial.is_some() && s.serial == dev.serial
        })
    });
    let by_id = b
        .by_id
        .iter()
        .find(|i| i.starts_with("wwn-"))
        .or(b.by_id.first())
        .map(|i| format!("/dev/disk/by-id/{i}"));
    match (named, by_id) {
        (Some(s), Some(p)) if part.is_none() => format!("disk {} ({p})", s.name),
        (Some(s), _) if part.is_none() => format!("disk {}", s.name),
        (_, Some(p)) => p,
        _ => format!("/dev/{kname}"),
    }
}
