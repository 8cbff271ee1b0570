//! Scale: a 24-disk machine (12 hybrid mirrors, 6 VGs, 200 LVs) built on the simulated host,
//! and the observer's spawn budget on it.

use crate::common;

use hyraid::config::load_str;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;
use hyraid::sim::synthetic::{Shape, blank_machine, config_yaml};

const SHAPE: Shape = Shape {
    pairs: 12,
    lvs: 200,
};

fn built() -> (hyraid::config::Desired, SimHost) {
    let d = load_str("scale24.yaml", &config_yaml(SHAPE)).unwrap();
    let h = SimHost::new(blank_machine(SHAPE));
    common::apply(&h, &d, Policy::default()).unwrap();
    (d, h)
}

#[test]
fn builds_and_converges() {
    let (d, h) = built();
    let p = common::plan_for(&h, &d, Policy::default());
    assert!(p.is_empty(), "{:?}", p.steps);
    assert!(p.refused.is_empty(), "{:?}", p.refused);
}

/// Programs the observer spawned, with how often each.
fn spawns(h: &dyn hyraid::host::Host, d: &hyraid::config::Desired) -> Vec<(String, usize)> {
    let rec = hyraid::host::record::Recorder::new(h);
    hyraid::machine::observe_for(&rec, Some(d)).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    for e in rec.take_exchanges() {
        if let hyraid::host::record::Exchange::Run { argv, .. } = e {
            *counts.entry(argv[0].clone()).or_insert(0) += 1;
        }
    }
    counts.into_iter().collect()
}

/// The devices the observation's wipefs runs were given, in order.
fn probed(h: &dyn hyraid::host::Host, d: Option<&hyraid::config::Desired>) -> Vec<Vec<String>> {
    let rec = hyraid::host::record::Recorder::new(h);
    hyraid::machine::observe_for(&rec, d).unwrap();
    rec.take_exchanges()
        .into_iter()
        .filter_map(|e| match e {
            hyraid::host::record::Exchange::Run { argv, .. } if argv[0] == "wipefs" => {
                Some(argv[3..].to_vec())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn spawn_budget_on_24_disks() {
    let (d, h) = built();
    let w = h.world();
    assert_eq!(w.block_devices.len(), 24);
    assert_eq!(w.arrays.len(), 12);
    assert_eq!(w.lvm.lvs.len(), 200);
    // Disks whose write cache is managed but that have no scsi_disk cache_type: one hdparm each.
    let managed: Vec<_> = d
        .disks
        .values()
        .filter(|s| s.write_cache.is_some())
        .map(|s| w.by_id(s.id.as_ref().unwrap()).unwrap())
        .collect();
    let without_cache_type = managed
        .iter()
        .filter(|b| {
            b.write_cache.unwrap().source != hyraid::observe::WriteCacheSource::ScsiCacheType
        })
        .count();
    assert_eq!((managed.len(), without_cache_type), (12, 6));
    assert_eq!(
        spawns(&h, &d),
        vec![
            ("hdparm".to_string(), without_cache_type),
            ("lsblk".to_string(), 1),
            ("lvm".to_string(), 1),
        ],
        "1 lsblk, 1 LVM report, nothing per array, hdparm only where sysfs has no cache_type"
    );
}

#[test]
fn spawn_budget_on_the_blank_24_disks() {
    // Before the build every disk is free, so each is probed read-only (hyraid proves a disk
    // empty before it creates anything on it), all 24 by one wipefs; nothing else grows with
    // the size.
    let d = load_str("scale24.yaml", &config_yaml(SHAPE)).unwrap();
    let h = SimHost::new(blank_machine(SHAPE));
    assert_eq!(
        spawns(&h, &d),
        vec![
            ("hdparm".to_string(), 6),
            ("lsblk".to_string(), 1),
            ("lvm".to_string(), 1),
            ("wipefs".to_string(), 1),
        ]
    );
    let runs = probed(&h, Some(&d));
    assert_eq!(runs.len(), 1);
    let mut devs = runs[0].clone();
    devs.sort();
    devs.dedup();
    assert_eq!(devs.len(), 24, "{devs:?}");
    let w = h.world();
    for b in &w.block_devices {
        assert!(
            devs.contains(&format!("/dev/{}", b.kname)),
            "{} not probed",
            b.kname
        );
    }
}

#[test]
fn a_probe_wipefs_cannot_make_for_one_disk_is_that_disks_error_only() {
    // wipefs ends its whole run at a device it cannot open: hyraid then probes each device on its
    // own, so one unreadable disk costs its own answer, not the others'.
    let d = load_str("scale24.yaml", &config_yaml(SHAPE)).unwrap();
    let mut w = blank_machine(SHAPE);
    let bad = w.block_devices[5].kname.clone();
    w.block_devices[5].probe_error = Some(format!(
        "wipefs: error: /dev/{bad}: probing initialization failed: Input/output error"
    ));
    let h = SimHost::new(w);
    let runs = probed(&h, Some(&d));
    assert_eq!(runs.len(), 1 + 24, "one batch, then one per disk");
    let obs = hyraid::machine::observe_for(&h, Some(&d)).unwrap();
    for b in &obs.block_devices {
        if b.kname == bad {
            assert!(b.signatures.is_none());
            assert!(
                b.probe_error
                    .as_deref()
                    .unwrap()
                    .contains("Input/output error")
            );
        } else {
            assert_eq!(b.signatures.as_deref(), Some(&[][..]), "{}", b.kname);
        }
    }
}

#[test]
fn blank_disks_the_file_does_not_name_are_never_probed() {
    // The file names the first 6 of the 12 pairs: their 12 disks get a wipefs probe each, the
    // 12 blank disks it does not name none (a plan never asks what is on a disk it leaves
    // alone), and without a file (`hyraid observe`, `import`) every blank disk is probed.
    let half = Shape { pairs: 6, lvs: 20 };
    let yaml = config_yaml(half).replace("host: scale12", "host: scale24");
    let d = load_str("scale12.yaml", &yaml).unwrap();
    let h = SimHost::new(blank_machine(SHAPE));
    let named = probed(&h, Some(&d));
    assert_eq!(
        named.len(),
        1,
        "one wipefs for every disk probed: {named:?}"
    );
    assert_eq!(named[0].len(), 12, "{named:?}");
    let w = h.world();
    for b in &w.block_devices {
        let id = b.by_id.iter().find(|i| i.starts_with("ata-")).unwrap();
        let in_file = yaml.contains(id.as_str());
        let dev = format!("/dev/{}", b.kname);
        assert_eq!(named[0].contains(&dev), in_file, "{dev} ({id})");
    }
    let all = probed(&h, None);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].len(), 24);
    // The plan on that observation still builds the 6 named pairs.
    let p = common::plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    assert!(!p.is_empty());
}
