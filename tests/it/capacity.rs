//! Capacity is proven at plan time: on blank machines whose disks are the VM suite's sizes, what
//! does not fit is refused with the numbers and nothing runs; what fits exactly plans, applies on
//! the simulated tools (which size arrays, PVs and LVs as mdadm 4.2 and lvm2 2.03.16 do) and
//! converges; one extent more is refused.

use crate::common;
use common::{apply, changes, observe};
use hyraid::apply::{Journal, execute};
use hyraid::config::{Desired, load_str};
use hyraid::observe::{BlockDevice, Boot, DevKind, Lvm, Observed, SNAPSHOT_FORMAT};
use hyraid::plan::{Plan, Policy, plan};
use hyraid::sim::SimHost;
use proptest::prelude::*;

const MIB: u64 = 1 << 20;
const EXT: u64 = 4 * MIB;

fn disk(n: usize, name: &str, size: u64, rotational: bool) -> BlockDevice {
    let kname = format!("sd{}", (b'a' + n as u8) as char);
    let model = if rotational { "HDD" } else { "SSD" };
    BlockDevice {
        kname,
        kind: DevKind::Disk,
        maj_min: format!("8:{}", n * 16),
        size,
        rotational,
        serial: Some(format!("HY{}", name.to_uppercase())),
        wwn: None,
        model: Some(format!("HYRAID {model}")),
        tran: Some("sata".into()),
        by_id: vec![format!("ata-HYRAID_{model}_HY{}", name.to_uppercase())],
        parent: None,
        partlabel: None,
        parttype: None,
        pttype: None,
        fstype: None,
        holders: vec![],
        mountpoint: None,
        signatures: Some(vec![]),
        write_cache: None,
        probe_error: None,
    }
}

/// A blank machine with these disks (name, size, rotational).
fn machine(disks: &[(&str, u64, bool)]) -> SimHost {
    let block_devices = disks
        .iter()
        .enumerate()
        .map(|(i, (n, s, r))| disk(i, n, *s, *r))
        .collect();
    SimHost::new(
        Observed {
            format: SNAPSHOT_FORMAT,
            hostname: "cap".into(),
            block_devices,
            arrays: vec![],
            lvm: Lvm::default(),
            boot: Boot {
                mdadm_conf_path: Some("/etc/mdadm/mdadm.conf".into()),
                mdadm_conf: Some("HOMEHOST <system>\nMAILADDR root\n".into()),
                initramfs_tool: Some("update-initramfs".into()),
                write_cache_rule: None,
                ..Boot::default()
            },
            dev_md_strays: vec![],
            partition_tables: Default::default(),
            missing_tools: vec![],
            other_devices: vec![],
            ..Observed::default()
        }
        .normalized(),
    )
}

/// One SSD and one HDD of 1 GiB mirrored (a 255-extent PV) and a 256 MiB cache SSD (63 extents).
fn pair() -> SimHost {
    machine(&[
        ("ssd1", 1 << 30, false),
        ("hdd1", 1 << 30, true),
        ("cache", 256 * MIB, false),
    ])
}

const PAIR: &str = "version: 1
disks:
  ssd0: { id: ata-HYRAID_SSD_HYSSD1 }
  hdd0: { id: ata-HYRAID_HDD_HYHDD1 }
  cache0: { id: ata-HYRAID_SSD_HYCACHE }
mirrors:
  data0: { members: [ssd0, hdd0] }
volume_groups:
  vg0:
    pvs: [data0, cache0]
    lvs:
";

fn file(lvs: &str) -> Desired {
    load_str("capacity.yaml", &format!("{PAIR}{lvs}")).unwrap()
}

fn plan_of(h: &SimHost, d: &Desired) -> Plan {
    plan(d, &observe(h, d), Policy::default()).unwrap()
}

/// The plan is refused as a whole with a refusal for `object` whose reason has every `part`,
/// and running it changes nothing.
fn refused(h: &SimHost, d: &Desired, object: &str, parts: &[&str]) -> String {
    let p = plan_of(h, d);
    let r = p
        .refused
        .iter()
        .find(|r| r.object == object)
        .unwrap_or_else(|| panic!("no refusal for {object}: {:?} {:?}", p.refused, p.steps));
    for part in parts {
        assert!(r.reason.contains(part), "{:?} lacks {part:?}", r.reason);
    }
    assert!(p.withheld && p.steps.is_empty(), "steps: {:?}", p.steps);
    h.clear_log();
    execute(
        h,
        &p,
        &observe(h, d),
        &Journal { path: None },
        &mut std::io::sink(),
    )
    .unwrap();
    assert!(changes(h).is_empty(), "ran {:?}", changes(h));
    format!("{}; fix: {}", r.reason, r.fix)
}

/// Plans without refusals, applies on the simulated tools and converges.
fn fits(h: &SimHost, d: &Desired) {
    let p = plan_of(h, d);
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    apply(h, d, Policy::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(plan_of(h, d).steps.is_empty());
}

#[test]
fn an_lv_larger_than_its_new_vg_is_refused_with_the_numbers() {
    let d = file("      nextcloud: { size: 40TiB, pvs: [data0] }\n");
    let why = refused(
        &pair(),
        &d,
        "lv vg0/nextcloud",
        &[
            "vg0 will have 1.24 GiB free (318 extents) when nextcloud is created",
            "nextcloud asks 40.00 TiB (43980465111040 bytes, 10485760 extents)",
            "and may only use data0 (1020.00 MiB)",
        ],
    );
    assert!(
        why.contains("at most 1069547520 bytes (1020.00 MiB)"),
        "{why}"
    );
}

#[test]
fn an_lv_larger_than_the_pvs_it_may_use_is_refused() {
    let d = file("      nextcloud: { size: 1GiB, pvs: [data0] }\n");
    let why = refused(
        &pair(),
        &d,
        "lv vg0/nextcloud",
        &["may use will have data0 (1020.00 MiB)"],
    );
    assert!(why.contains("at most 1069547520 bytes"), "{why}");
}

#[test]
fn a_writecache_larger_than_its_pv_is_refused() {
    let d = file(
        "      files: { size: 512MiB, pvs: [data0], writecache: { size: 300MiB, pvs: [cache0] } }\n",
    );
    let why = refused(
        &pair(),
        &d,
        "lv vg0/files",
        &[
            "writecache asks 300.00 MiB",
            "on cache0, which will have 252.00 MiB free (63 extents)",
        ],
    );
    assert!(why.contains("at most 264241152 bytes"), "{why}");
}

#[test]
fn an_lv_without_placement_can_take_the_space_of_a_later_writecache() {
    // 1 GiB does not fit data0 (255 extents): lvm takes the last extent from cache0, and the
    // cache volume created after the LVs finds 62 of its 63 extents.
    let d = file("      files: { size: 1GiB, writecache: { size: 252MiB, pvs: [cache0] } }\n");
    refused(
        &pair(),
        &d,
        "lv vg0/files",
        &["which will have 248.00 MiB free (62 extents)"],
    );
}

#[test]
fn percent_of_the_vg_plus_a_fixed_lv_is_refused_in_either_order() {
    // LVs are created in name order. 90%VG of 318 extents is 286.
    let d = file("      a_media: { size: 90%VG }\n      b_logs: { size: 200MiB }\n");
    refused(
        &pair(),
        &d,
        "lv vg0/b_logs",
        &[
            "vg0 will have 128.00 MiB free (32 extents) when b_logs is created",
            "b_logs asks 200.00 MiB",
        ],
    );
    let d = file("      logs: { size: 200MiB }\n      media: { size: 90%VG }\n");
    let why = refused(
        &pair(),
        &d,
        "lv vg0/media",
        &[
            "vg0 will have 1.05 GiB free (268 extents) when media is created",
            "media asks 90%VG = 1.12 GiB (286 extents)",
        ],
    );
    assert!(why.contains("use at most 84%VG"), "{why}");
}

#[test]
fn stripes_over_pvs_without_enough_free_extents_are_refused() {
    // 600 MiB in two stripes is 75 extents on each of two PVs; cache0 has 63.
    let d = file("      nextcloud: { size: 600MiB, stripes: 2 }\n");
    let why = refused(
        &pair(),
        &d,
        "lv vg0/nextcloud",
        &[
            "2 stripes of 300.00 MiB on 2 different PVs",
            "data0 (1020.00 MiB), cache0 (252.00 MiB)",
        ],
    );
    assert!(why.contains("at most 528482304 bytes"), "{why}");
}

#[test]
fn a_partition_set_larger_than_its_disk_is_refused() {
    // Four partitions of 63 MiB + 4 KiB need 252 MiB + 16 KiB, but each starts on the next MiB
    // boundary: the fourth would end 41 sectors past the last usable one of a 256 MiB disk.
    let h = machine(&[("ssd1", 256 * MIB, false)]);
    let d = load_str(
        "p.yaml",
        "version: 1
disks:
  ssd0:
    id: ata-HYRAID_SSD_HYSSD1
    partitions:
      - { name: a, size: 66064384 }
      - { name: b, size: 66064384 }
      - { name: c, size: 66064384 }
      - { name: d, size: 66064384 }
",
    )
    .unwrap();
    refused(
        &h,
        &d,
        "disk ssd0",
        &[
            "partition d of 66064384 bytes (63.00 MiB) would start at sector 395264 and end at 524295",
            "last usable sector 524254",
        ],
    );
}

#[test]
fn a_bitmap_chunk_too_small_for_the_array_is_refused() {
    let d = load_str(
        "b.yaml",
        &PAIR
            .replace(
                "{ members: [ssd0, hdd0] }",
                "{ members: [ssd0, hdd0], bitmap: { chunk: 4KiB } }",
            )
            .replace("    pvs: [data0, cache0]\n    lvs:\n", "    pvs: [data0]\n"),
    )
    .unwrap();
    let why = refused(
        &pair(),
        &d,
        "mirror data0",
        &["bitmap chunk 4.00 KiB is too small for a 1022.00 MiB array"],
    );
    assert!(why.contains("chunk: 64KiB"), "{why}");
}

/// Whole disks: the largest LV and writecache that fit, exactly.
#[test]
fn exactly_fitting_lvs_plan_apply_and_converge_and_one_extent_more_is_refused() {
    let exact = "      files: { size: 1069547520, pvs: [data0], writecache: { size: 264241152, pvs: [cache0] } }\n";
    let h = pair();
    fits(&h, &file(exact));
    let w = h.world();
    let vg = w.vg("vg0").unwrap();
    assert_eq!((vg.size, vg.free), ((255 + 63) * EXT, 0));
    assert_eq!(w.lv("vg0", "files").unwrap().size, 255 * EXT);
    for (lv, wc) in [(1069547520 + 1, 264241152), (1069547520, 264241152 + EXT)] {
        let more = format!(
            "      files: {{ size: {lv}, pvs: [data0], writecache: {{ size: {wc}, pvs: [cache0] }} }}\n"
        );
        refused(&pair(), &file(&more), "lv vg0/files", &[]);
    }
}

/// The VM scenario's disks (tests/vm/scenarios/16-capacity.sh): two 512 MiB disks mirrored give a
/// 523264 KiB array (data offset 2048 sectors), a 127-extent PV; the 256 MiB cache disk 63.
#[test]
fn the_vm_scenario_reads_the_largest_sizes_from_the_refusal() {
    let h = machine(&[
        ("ssd1", 512 * MIB, false),
        ("hdd1", 512 * MIB, true),
        ("cache", 256 * MIB, false),
    ]);
    let big = "      files: { size: 100GiB, pvs: [data0], writecache: { size: 100GiB, pvs: [cache0] } }\n";
    let p = plan_of(&h, &file(big));
    let fixes: Vec<&str> = p.refused.iter().map(|r| r.fix.as_str()).collect();
    assert!(
        fixes
            .iter()
            .any(|f| f.starts_with("make files at most 532676608 bytes")),
        "{fixes:?}"
    );
    assert!(
        fixes
            .iter()
            .any(|f| f.starts_with("make the writecache at most 264241152 bytes")),
        "{fixes:?}"
    );
    fits(
        &h,
        &file(
            "      files: { size: 532676608, pvs: [data0], writecache: { size: 264241152, pvs: [cache0] } }\n",
        ),
    );
    assert_eq!(h.world().array_named("data0").unwrap().size_kib, 523264);
    assert_eq!(h.world().vg("vg0").unwrap().free, 0);
}

const PARTITIONED: &str = "version: 1
disks:
  ssd0: { id: ata-HYRAID_SSD_HYSSD1, partitions: [{ name: raid, size: 384MiB }, { name: cache, size: rest }] }
  ssd1: { id: ata-HYRAID_SSD_HYSSD2, partitions: [{ name: raid, size: 384MiB }, { name: cache, size: rest }] }
  hdd0: { id: ata-HYRAID_HDD_HYHDD1, partitions: [{ name: raid, size: 384MiB }] }
  hdd1: { id: ata-HYRAID_HDD_HYHDD2, partitions: [{ name: raid, size: 384MiB }] }
mirrors:
  data0: { members: ['ssd0:raid', 'hdd0:raid'] }
  data1: { members: ['ssd1:raid', 'hdd1:raid'] }
  cache: { members: ['ssd0:cache', 'ssd1:cache'] }
volume_groups:
  vg0:
    pvs: [data0, data1, cache]
    lvs:
      nextcloud: { size: LV, pvs: [data0, data1], stripes: 2, writecache: { size: WC, pvs: [cache] } }
";

fn partitioned() -> SimHost {
    machine(&[
        ("ssd1", 512 * MIB, false),
        ("hdd1", 512 * MIB, true),
        ("ssd2", 512 * MIB, false),
        ("hdd2", 512 * MIB, true),
    ])
}

fn partitioned_file(lv: u64, wc: u64) -> Desired {
    let y = PARTITIONED
        .replace("LV", &lv.to_string())
        .replace("WC", &wc.to_string());
    load_str("partitioned.yaml", &y).unwrap()
}

/// Partitions made in the same plan: 384 MiB raid partitions give 95-extent PVs; the cache
/// partitions take the rest of 512 MiB (260063 sectors), their mirror a 31-extent PV.
#[test]
fn exactly_fitting_on_new_partitions_and_mirrors_and_one_stripe_step_more_is_refused() {
    let h = partitioned();
    fits(&h, &partitioned_file(190 * EXT, 31 * EXT));
    let w = h.world();
    assert_eq!(w.vg("vg0").unwrap().free, 0);
    assert_eq!(w.array_named("cache").unwrap().size_kib, 128960);
    assert_eq!(w.array_named("data0").unwrap().size_kib, 392192);
    refused(
        &partitioned(),
        &partitioned_file(190 * EXT + 1, 31 * EXT),
        "lv vg0/nextcloud",
        &["2 stripes of 384.00 MiB"],
    );
    refused(
        &partitioned(),
        &partitioned_file(190 * EXT, 31 * EXT + 1),
        "lv vg0/nextcloud",
        &["writecache asks"],
    );
}

#[test]
fn hyraid_plan_prints_the_refusal_and_exits_1_and_apply_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sim = dir.path().join("world.json");
    std::fs::write(&sim, serde_json::to_string(&pair().world()).unwrap()).unwrap();
    let yaml = dir.path().join("h.yaml");
    std::fs::write(&yaml, format!("{PAIR}      nextcloud: {{ size: 40TiB }}\n")).unwrap();
    let run = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend([yaml.to_str().unwrap(), "--sim", sim.to_str().unwrap()]);
        common::hyraid(&a)
    };
    let o = run(&["plan"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("! lv vg0/nextcloud: vg0 will have 1.24 GiB free (318 extents) when nextcloud is created; nextcloud asks 40.00 TiB"), "{out}");
    assert!(
        out.starts_with("hyraid refuses 1 change(s) the file asks for on cap")
            && out.contains("Nothing is planned until the refusals above are fixed (the file does not fit the machine as it is).\n"),
        "{out}"
    );
    assert!(!out.contains("$ "), "no command is planned: {out}");
    let before = std::fs::read_to_string(&sim).unwrap();
    let o = run(&["apply", "--yes", "--sim-write"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&sim).unwrap(), before);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever the sizes, a plan that is accepted applies and converges; on the pair the
    /// verdict is exact: it is accepted exactly when both fit in whole extents.
    #[test]
    fn an_accepted_plan_applies(lv in 200u64..=262, wc in 50u64..=70, dl in -2i64..=2, dw in -2i64..=2) {
        let (lv, wc) = ((lv * EXT).saturating_add_signed(dl), (wc * EXT).saturating_add_signed(dw));
        let d = file(&format!(
            "      files: {{ size: {lv}, pvs: [data0], writecache: {{ size: {wc}, pvs: [cache0] }} }}\n"
        ));
        let h = pair();
        let p = plan_of(&h, &d);
        prop_assert_eq!(p.refused.is_empty(), lv.div_ceil(EXT) <= 255 && wc.div_ceil(EXT) <= 63);
        if p.refused.is_empty() {
            fits(&h, &d);
        }
    }

    /// Several LVs in one VG, fixed and shares, striped or not, with or without a writecache.
    #[test]
    fn an_accepted_plan_of_several_lvs_applies(
        a in 1u64..=200, b in 1u64..=100, share in 1u8..=100, vg_share in any::<bool>(),
        stripes in 1u32..=2, wc in 0u64..=70,
    ) {
        let share = format!("{share}%{}", if vg_share { "VG" } else { "FREE" });
        let wc = if wc > 0 { format!(", writecache: {{ size: {}, pvs: [cache0] }}", wc * EXT) } else { String::new() };
        let d = file(&format!(
            "      a: {{ size: {}, stripes: {stripes}{wc} }}\n      b: {{ size: {share} }}\n      c: {{ size: {} }}\n",
            a * EXT - 1, b * EXT
        ));
        let h = pair();
        if plan_of(&h, &d).refused.is_empty() {
            fits(&h, &d);
        }
    }

    /// New partitions and mirrors, sized at random around what fits.
    #[test]
    fn an_accepted_partitioned_plan_applies(lv in 180u64..=196, wc in 28u64..=34, dl in -1i64..=1) {
        let d = partitioned_file((lv * EXT).saturating_add_signed(dl), wc * EXT);
        let h = partitioned();
        let p = plan_of(&h, &d);
        let k = (lv * EXT).saturating_add_signed(dl).div_ceil(EXT).div_ceil(2) * 2;
        prop_assert_eq!(p.refused.is_empty(), k <= 190 && wc <= 31);
        if p.refused.is_empty() {
            fits(&h, &d);
        }
    }
}
