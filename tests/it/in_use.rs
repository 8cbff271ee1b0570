//! `--allow-destroy` allows destroying data at rest, never anything in use: a disk any of whose
//! partitions is open (dm-crypt, swap, a mount, an md leg) is refused, and a destroying step is
//! planned only together with the step that needs it.

use crate::common;
use common::*;
use hyraid::apply::ApplyError;
use hyraid::observe::{DevKind, Signature};
use hyraid::plan::step::WipeSignatures;
use hyraid::plan::{Policy, Step};

const ALLOW: Policy = Policy::destroying(true);

/// single-pair, with the HDD (sdb) partitioned: sdb1 free, the others in use as named.
fn partitioned_hdd(uses: &[(&str, &str)]) -> (hyraid::config::Desired, hyraid::sim::SimHost) {
    let (d, h) = example("single-pair");
    let mut w = h.world();
    let disk = w.device("sdb").unwrap().clone();
    w.block_devices
        .iter_mut()
        .find(|b| b.kname == "sdb")
        .unwrap()
        .pttype = Some("gpt".into());
    for (n, (what, arg)) in (1..).zip([("free", "")].iter().chain(uses)) {
        let mut p = disk.clone();
        p.kname = format!("sdb{n}");
        p.kind = DevKind::Part;
        p.parent = Some("sdb".into());
        p.maj_min = format!("8:{}", 16 + n);
        p.size = disk.size / 8;
        p.by_id = vec![format!("{}-part{n}", disk.by_id[0])];
        p.serial = None;
        p.write_cache = None;
        p.signatures = Some(vec![]);
        match *what {
            "free" => {}
            "holder" => {
                p.holders = vec![arg.to_string()];
                p.fstype = Some("crypto_LUKS".into());
            }
            "swap" => {
                p.mountpoint = Some("[SWAP]".into());
                p.fstype = Some("swap".into());
            }
            "mount" => {
                p.mountpoint = Some(arg.to_string());
                p.fstype = Some("ext4".into());
            }
            "md" => {
                p.holders = vec![arg.to_string()];
                p.fstype = Some("linux_raid_member".into());
            }
            other => panic!("{other}"),
        }
        w.block_devices.push(p);
    }
    (d, hyraid::sim::SimHost::new(w))
}

#[test]
fn a_disk_with_any_partition_in_use_is_refused_even_with_allow_destroy() {
    let uses = [
        ("holder", "dm-0"),
        ("swap", ""),
        ("mount", "/srv"),
        ("md", "md5"),
    ];
    let (d, h) = partitioned_hdd(&uses);
    let p = plan_for(&h, &d, ALLOW);
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(&s.step, Step::WipeSignatures(_) | Step::CreateArray(_))),
        "{:#?}",
        p.steps
    );
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "mirror md-home")
        .unwrap_or_else(|| panic!("{:#?}", p.refused));
    for want in [
        "/dev/sdb2 is in use by dm-0",
        "/dev/sdb3 is active swap",
        "/dev/sdb4 is mounted on /srv",
        "/dev/sdb5 is in use by md5",
    ] {
        assert!(r.reason.contains(want), "{want}: {}", r.reason);
    }
    assert!(!r.reason.contains("sdb1"), "{}", r.reason);
    h.clear_log();
    assert!(matches!(
        apply(&h, &d, ALLOW),
        Err(ApplyError::Refused { .. })
    ));
    assert!(changes(&h).is_empty(), "{:?}", changes(&h));
    // One partition in use is enough, whichever it is.
    for u in uses {
        let (d, h) = partitioned_hdd(&[u]);
        let p = plan_for(&h, &d, ALLOW);
        assert!(
            !p.steps
                .iter()
                .any(|s| matches!(&s.step, Step::WipeSignatures(_))),
            "{u:?}"
        );
        assert!(!p.refused.is_empty(), "{u:?}");
    }
    // With every partition free, the wipe is offered (marked) and needs --allow-destroy.
    let (d, h) = partitioned_hdd(&[]);
    let p = plan_for(&h, &d, ALLOW);
    assert!(
        p.steps
            .iter()
            .any(|s| matches!(&s.step, Step::WipeSignatures(WipeSignatures { disk, .. }) if disk == "hdd")),
        "{:#?}",
        p.steps
    );
}

#[test]
fn no_wipe_for_a_join_that_is_refused() {
    let (mut d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    // A third disk, too small for the array, with a filesystem on it, named as a member of the
    // 2-way mirror. (A large enough disk now joins as a spare and the mirror grows.)
    let mut w = h.world();
    plug_blank_disk(
        &mut w,
        "sdb",
        "sdc",
        32,
        "ZA4000009",
        "ata-ST500DM009-2F110A_ZA4000009",
    );
    let c = w
        .block_devices
        .iter_mut()
        .find(|b| b.kname == "sdc")
        .unwrap();
    c.signatures = Some(vec![Signature {
        offset: "0x438".into(),
        kind: "ext4".into(),
        uuid: None,
    }]);
    c.fstype = Some("ext4".into());
    c.size /= 2;
    let h = hyraid::sim::SimHost::new(w);
    let mut spec = d.disks["hdd"].clone();
    spec.name = "hdd2".into();
    spec.id = Some("ata-ST500DM009-2F110A_ZA4000009".into());
    spec.serial = None;
    d.disks.insert("hdd2".into(), spec);
    d.mirrors
        .get_mut("md-home")
        .unwrap()
        .members
        .push("hdd2".into());
    let p = plan_for(&h, &d, ALLOW);
    assert!(
        p.refused
            .iter()
            .any(|r| r.reason.contains("is smaller than the array's members")),
        "{:#?}",
        p.refused
    );
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(&s.step, Step::WipeSignatures(_))),
        "the wipe is refused with the join: {:#?}",
        p.steps
    );
    h.clear_log();
    assert!(matches!(
        apply(&h, &d, ALLOW),
        Err(ApplyError::Refused { .. })
    ));
    assert!(changes(&h).is_empty(), "{:?}", changes(&h));
    assert_eq!(
        h.world().device("sdc").unwrap().fstype.as_deref(),
        Some("ext4")
    );
}
