//! GPT partitions: a new table on blank disks, appended partitions into free space (existing ones
//! untouched), refusals for foreign tables and content, and no resizing.

use crate::common;
use common::*;
use hyraid::config::PartitionSpec;
use hyraid::plan::step::{CreatePartitions, WipeSignatures};
use hyraid::plan::{Policy, Risk, Step};

fn created(p: &hyraid::plan::Plan, disk: &str) -> Option<(bool, Vec<(u32, String)>)> {
    p.steps.iter().find_map(|s| match &s.step {
        Step::CreatePartitions(CreatePartitions {
            disk: d,
            new_table,
            parts,
            ..
        }) if d == disk => Some((
            *new_table,
            parts.iter().map(|x| (x.number, x.name.clone())).collect(),
        )),
        _ => None,
    })
}

#[test]
fn a_partition_added_to_the_file_is_appended_and_the_rest_is_untouched() {
    let (mut d, h) = example("microserver-partitioned");
    // First build without the cache partitions and cache mirror.
    let full = d.clone();
    for s in ["ssd0", "ssd1"] {
        d.disks.get_mut(s).unwrap().partitions.truncate(1);
    }
    d.mirrors.remove("cache");
    let vg = d.volume_groups.get_mut("vg0").unwrap();
    vg.pvs.retain(|p| p.name() != "cache");
    vg.lvs.get_mut("nextcloud").unwrap().writecache = None;
    apply(&h, &d, Policy::default()).unwrap();
    let before = h.world();
    // Now the file wants the cache partitions too: only partition 2 is created, no new table.
    let p = plan_for(&h, &full, Policy::default());
    assert_eq!(
        created(&p, "ssd0"),
        Some((false, vec![(2, "cache".to_string())]))
    );
    assert!(p.steps.iter().all(|s| s.risk != Risk::Destroys));
    apply(&h, &full, Policy::default()).unwrap();
    let after = h.world();
    let raid = |w: &hyraid::observe::Observed| {
        w.block_devices
            .iter()
            .find(|b| b.partlabel.as_deref() == Some("raid") && b.parent.as_deref() == Some("sda"))
            .cloned()
            .unwrap()
    };
    assert_eq!(
        raid(&before).size,
        raid(&after).size,
        "the existing partition is untouched"
    );
    assert_eq!(
        before.array_named("data0").unwrap().uuid,
        after.array_named("data0").unwrap().uuid
    );
    assert!(after.array_named("cache").is_some());
}

#[test]
fn foreign_tables_and_content_are_refused_without_allow_destroy() {
    for (pttype, sig) in [(Some("dos"), "dos"), (None, "ext4")] {
        let (d, h) = example("microserver-partitioned");
        let mut w = h.world();
        let ssd = w
            .block_devices
            .iter_mut()
            .find(|b| b.kname == "sda")
            .unwrap();
        ssd.pttype = pttype.map(str::to_string);
        ssd.signatures = Some(vec![hyraid::observe::Signature {
            offset: "0x1fe".into(),
            kind: sig.into(),
            uuid: None,
        }]);
        let h = hyraid::sim::SimHost::new(w);
        let p = plan_for(&h, &d, Policy::default());
        assert!(created(&p, "ssd0").is_none(), "{sig}");
        assert!(
            p.refused
                .iter()
                .any(|r| r.object == "disk ssd0" && r.fix.contains("--allow-destroy")),
            "{sig}: {:?}",
            p.refused
        );
        assert!(
            p.refused
                .iter()
                .any(|r| r.object == "mirror data0" && r.reason.contains("cannot be created")),
            "{sig}: dependents wait: {:?}",
            p.refused
        );
        let p = plan_for(&h, &d, Policy::destroying(true));
        let i = p
            .steps
            .iter()
            .position(|s| matches!(&s.step, Step::WipeSignatures(WipeSignatures { disk, .. }) if disk == "ssd0"))
            .expect("wipe");
        assert_eq!(p.steps[i].risk, Risk::Destroys);
        assert!(matches!(
            &p.steps[i + 1].step,
            Step::CreatePartitions(CreatePartitions {
                new_table: true,
                ..
            })
        ));
        apply(&h, &d, Policy::destroying(true)).unwrap();
    }
}

#[test]
fn partitions_are_never_resized() {
    let (mut d, h) = example("microserver-partitioned");
    apply(&h, &d, Policy::default()).unwrap();
    d.disks.get_mut("hdd0").unwrap().partitions = vec![PartitionSpec {
        name: "raid".into(),
        size: Some(950 << 30),
        role: Default::default(),
    }];
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    // A difference hyraid will not make is a refusal, never "no changes".
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "disk hdd0" && r.reason.contains("never resizes partitions")),
        "{:?}",
        p.refused
    );
    assert!(matches!(
        apply(&h, &d, Policy::default()),
        Err(hyraid::apply::ApplyError::Refused { count: 1 })
    ));
}

#[test]
fn not_enough_free_space_is_refused() {
    let (mut d, h) = example("single-pair");
    d.disks.get_mut("ssd").unwrap().partitions = vec![PartitionSpec {
        name: "big".into(),
        size: Some(600_000_000_000),
        role: Default::default(),
    }];
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "disk ssd" && r.reason.contains("is free")),
        "{:?}",
        p.refused
    );
}
