//! `hyraid import`: write the file that describes the machine as it is, so that `hyraid plan`
//! on it right away shows no changes (or, when mdadm.conf does not list the arrays yet, exactly
//! that). This is how a hand-built box is adopted. What hyraid does not manage is left out and
//! said so, never described as something else.

mod cache;
mod disks;
mod encryption;
mod lvm;
mod mirrors;
mod monitoring;
mod yaml;

use crate::config::raw::*;
use crate::observe::{BlockDevice, Observed};
use disks::{Builder, role};
use mirrors::{mdadm_conf_note, mirrors};
use std::collections::BTreeMap;
pub use yaml::{emit, to_yaml};

/// The imported file, what was left out and why, and what `plan` on it will show.
pub struct Imported {
    pub config: RawConfig,
    /// `not imported: …`: objects on the machine the file does not describe, and why.
    pub skipped: Vec<String>,
    /// What `hyraid plan` on the file shows besides "no changes" (mdadm.conf lacking lines).
    pub notes: Vec<String>,
    /// Notes that belong to one mirror, written above it in the file as well.
    pub at_mirror: BTreeMap<String, Vec<String>>,
    /// What stops the machine from booting when a disk of its mirrored system dies (status's
    /// lints of the ESPs, which the caller adds), with the fix: what the file does not change.
    pub boot: Vec<String>,
}

pub fn import(o: &Observed) -> Imported {
    // First pass: which disks are used; then name them in kernel-name order (ssd0 before ssd1).
    let first = build(o, &BTreeMap::new());
    let mut used: Vec<&BlockDevice> = o
        .block_devices
        .iter()
        .filter(|d| first.names.contains_key(&d.kname))
        .collect();
    used.sort_by(|a, b| (a.kname.len(), &a.kname).cmp(&(b.kname.len(), &b.kname)));
    let mut counters: BTreeMap<&str, usize> = BTreeMap::new();
    let mut names = BTreeMap::new();
    // A disk hyraid's udev rule names (its drive cache is managed) keeps that name, so the
    // rule the file gives is the one on the machine; the others are named by role.
    let rule = o.boot.write_cache_rule.as_deref();
    let mut taken: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for d in &used {
        let named = rule
            .zip(d.serial.as_deref())
            .and_then(|(r, s)| crate::plan::persist::rule_disk_name(r, s))
            .filter(|n| crate::config::valid_name(n) && !taken.contains(n));
        if let Some(n) = named {
            taken.insert(n.clone());
            names.insert(d.kname.clone(), n);
        }
    }
    for d in used {
        if names.contains_key(&d.kname) {
            continue;
        }
        let role = role(d);
        let k = counters.entry(role).or_insert(0);
        let name = loop {
            let n = format!("{role}{k}");
            *k += 1;
            if !taken.contains(&n) {
                break n;
            }
        };
        taken.insert(name.clone());
        names.insert(d.kname.clone(), name);
    }
    let second = build(o, &names);
    Imported {
        config: second.config,
        skipped: second.skipped,
        notes: second.notes,
        at_mirror: second.at_mirror,
        boot: Vec::new(),
    }
}

struct Built {
    config: RawConfig,
    skipped: Vec<String>,
    notes: Vec<String>,
    at_mirror: BTreeMap<String, Vec<String>>,
    names: BTreeMap<String, String>,
}

fn build(o: &Observed, preassigned: &BTreeMap<String, String>) -> Built {
    let mut b = Builder::new(o, preassigned);
    let (mut mirrors, mirror_of, conf) = mirrors(&mut b);
    let kept = monitoring::settings(o);
    if let Some(s) = &kept {
        monitoring::checks(s, &mut mirrors);
    }
    let vgs = lvm::volume_groups(&mut b, &mirror_of);
    b.partitions();
    let mut notes: Vec<String> = mdadm_conf_note(o, &conf, !b.converted.is_empty())
        .into_iter()
        .collect();
    notes.append(&mut b.converted);
    let accept = encryption::plaintext_caches(&mirrors, &vgs, &mut notes);
    Built {
        config: RawConfig {
            version: 1,
            host: Some(o.hostname.clone()).filter(|h| !h.is_empty()),
            disks: b.disks,
            mirrors,
            volume_groups: vgs,
            accept,
            check: None,
            alerts: kept.as_ref().and_then(monitoring::alerts),
            boot: None,
        },
        skipped: b.skipped,
        notes,
        at_mirror: b.at_mirror,
        names: b.disk_name,
    }
}
