//! Partitions on a disk in use: a partition added beside open ones reaches the kernel with
//! `partx --add` (its re-read fails with EBUSY), a kill between the table write and partx
//! converges; the last partition grows into free space with growpart and its PV follows.

use crate::common;
use common::*;
use hyraid::plan::step::Command;
use hyraid::plan::{Policy, Risk, Step};
use hyraid::sim::{Fault, SimHost};

fn argvs(p: &hyraid::plan::Plan, pick: impl Fn(&Step) -> bool) -> Vec<String> {
    p.steps
        .iter()
        .filter(|s| pick(&s.step))
        .flat_map(|s| s.step.commands())
        .map(|c| match c {
            Command::Run { argv, .. } => argv.join(" "),
            other => format!("{other:?}"),
        })
        .collect()
}

const SSD0: &str = "/dev/disk/by-id/ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A";

#[test]
fn a_partition_added_beside_open_ones_is_added_to_the_kernel_with_partx() {
    let (_, full, h) = partitioned_without_cache();
    let p = plan_for(&h, &full, Policy::default());
    assert_eq!(
        argvs(
            &p,
            |s| matches!(s, Step::CreatePartitions(c) if c.disk == "ssd0")
        ),
        vec![
            format!("sgdisk --new=2:0:0 --change-name=2:cache --typecode=2:fd00 {SSD0}"),
            format!("partx --add --nr 2 {SSD0}"),
            "udevadm settle".into(),
        ]
    );
    assert!(p.steps.iter().all(|s| s.risk != Risk::Destroys));
    let uuid = h.world().array_named("data0").unwrap().uuid.clone();
    apply(&h, &full, Policy::default()).unwrap();
    h.finish_syncs();
    let w = h.world();
    assert!(
        w.partition_tables.is_empty(),
        "the kernel agrees with the table"
    );
    assert_eq!(w.array_named("data0").unwrap().uuid, uuid);
    assert!(w.array_named("cache").is_some());
    let again = plan_for(&h, &full, Policy::default());
    assert!(again.steps.is_empty(), "{:?}", again.steps);
}

#[test]
fn killed_between_the_table_write_and_partx_the_next_plan_only_registers() {
    let (full, h) = killed_before_partx();
    let w = h.world();
    assert!(
        w.partition_tables.contains_key("sda"),
        "in the table, not in the kernel"
    );
    assert!(w.device("sda2").is_none());
    let p = plan_for(&h, &full, Policy::default());
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(&s.step, Step::CreatePartitions(c) if c.disk == "ssd0")),
        "partition 2 is not created twice: {:?}",
        p.steps
    );
    assert_eq!(
        argvs(&p, |s| matches!(s, Step::RegisterPartitions(_))),
        vec![
            format!("partx --add --nr 2 {SSD0}"),
            "udevadm settle".into()
        ]
    );
    apply(&h, &full, Policy::default()).unwrap();
    h.finish_syncs();
    assert!(plan_for(&h, &full, Policy::default()).steps.is_empty());
    assert!(h.world().array_named("cache").is_some());
}

const HDD0: &str = "/dev/disk/by-id/ata-ST1000LM048-2E7172_WDE00001";

#[test]
fn the_last_partition_grows_into_free_space_and_its_pv_follows() {
    let (_, h) = example("microserver-partitioned");
    apply(&h, &pv_partition_file("20GiB"), Policy::default()).unwrap();
    h.finish_syncs();
    let d = pv_partition_file("rest");
    let p = plan_for(&h, &d, Policy::default());
    let pv = format!("{HDD0}-part2");
    assert_eq!(
        ops(&p),
        vec!["grow_partition".to_string(), "resize_pv".to_string()]
    );
    assert_eq!(
        argvs(&p, |_| true),
        vec![
            format!("growpart {HDD0} 2"),
            "udevadm settle".into(),
            format!("pvresize {pv}"),
        ]
    );
    assert!(p.steps.iter().all(|s| s.risk == Risk::Safe));
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    let part = w.by_id("ata-ST1000LM048-2E7172_WDE00001-part2").unwrap();
    // The last usable sector of the disk, 34 before its end: growpart's limit.
    let disk = w.by_id("ata-ST1000LM048-2E7172_WDE00001").unwrap();
    let start = 2048 + 900 * 2048 * 1024;
    assert_eq!(part.size, (disk.size / 512 - 34 - start + 1) * 512);
    assert_eq!(w.pv(&part.kname).unwrap().dev_size, part.size);
    let again = plan_for(&h, &d, Policy::default());
    assert!(again.steps.is_empty(), "{:?}", again.steps);
}

#[test]
fn killed_after_growpart_the_pv_is_resized_next_time() {
    let (_, h) = example("microserver-partitioned");
    apply(&h, &pv_partition_file("20GiB"), Policy::default()).unwrap();
    let d = pv_partition_file("rest");
    h.inject_fault(Fault {
        needle: "pvresize".into(),
        status: 137,
        stderr: "Killed".into(),
    });
    assert!(apply(&h, &d, Policy::default()).is_err());
    h.clear_faults();
    // growpart resized the PV itself (cloud-guest-utils runs pvresize on a PV it grew).
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.steps
            .iter()
            .all(|s| !matches!(s.step, Step::GrowPartition(_)))
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn a_partition_before_another_or_a_mirror_member_is_not_grown() {
    let (_, h) = example("microserver-partitioned");
    apply(&h, &pv_partition_file("20GiB"), Policy::default()).unwrap();
    // raid is followed by pv: it cannot grow without moving pv.
    let mut d = pv_partition_file("20GiB");
    d.disks.get_mut("hdd0").unwrap().partitions[0].size = Some(910 << 30);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "disk hdd0" && r.reason.contains("another partition follows")),
        "{:?}",
        p.refused
    );
    // hdd1's raid is the last partition, with room, but a member of data1.
    let mut d = pv_partition_file("20GiB");
    d.disks.get_mut("hdd1").unwrap().partitions[0].size = None;
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "disk hdd1" && r.reason.contains("member of /dev/md/data1")),
        "{:?}",
        p.refused
    );
    assert!(
        p.steps
            .iter()
            .all(|s| !matches!(s.step, Step::GrowPartition(_)))
    );
}

#[test]
fn partx_and_growpart_answer_like_the_real_tools() {
    let (_, _, h) = partitioned_without_cache();
    let show = run(
        &h,
        &[
            "partx",
            "--pairs",
            "--output",
            "NR,START,SECTORS,NAME",
            SSD0,
        ],
    );
    assert_eq!(
        show.stdout,
        "NR=\"1\" START=\"2048\" SECTORS=\"1887436800\" NAME=\"raid\"\n"
    );
    let again = run(&h, &["partx", "--add", "--nr", "1", SSD0]);
    assert_eq!(
        (again.status, again.stderr.as_str()),
        (
            1,
            format!("partx: {SSD0}: error adding partition 1\n").as_str()
        )
    );
    // The raid partition is the last one, with the disk's rest after it.
    let g = run(&h, &["growpart", SSD0, "1"]);
    assert_eq!(
        (g.status, g.stdout.as_str()),
        (
            0,
            "CHANGED: partition=1 start=2048 old: size=1887436800 end=1887438847 new: size=1953523087 end=1953525134\n"
        )
    );
    let g = run(&h, &["growpart", SSD0, "1"]);
    assert_eq!(
        (g.status, g.stdout.as_str()),
        (
            1,
            "NOCHANGE: partition 1 size is 1000203820544 bytes (1953523087 sectors of 512). it cannot be grown\n"
        )
    );
}

#[test]
fn a_host_without_growpart_is_refused_with_the_package() {
    let (_, h) = example("microserver-partitioned");
    apply(&h, &pv_partition_file("20GiB"), Policy::default()).unwrap();
    let mut w = h.world();
    w.missing_tools = vec!["growpart".into()];
    let h = SimHost::new(w);
    let p = plan_for(&h, &pv_partition_file("rest"), Policy::default());
    assert!(
        p.refused.iter().any(|r| r.object == "disk hdd0"
            && r.reason.contains("growpart is not installed")
            && r.fix.contains("cloud-guest-utils")),
        "{:?}",
        p.refused
    );
    assert!(
        p.steps
            .iter()
            .all(|s| !matches!(s.step, Step::GrowPartition(_)))
    );
}

#[test]
fn a_partition_larger_than_the_file_says_is_refused_never_shrunk() {
    let (_, h) = example("microserver-partitioned");
    apply(&h, &pv_partition_file("rest"), Policy::default()).unwrap();
    h.finish_syncs();
    // The file now says 20GiB for a partition that fills the rest of the disk.
    let before = h.world();
    let p = plan_for(&h, &pv_partition_file("20GiB"), Policy::default());
    assert!(
        p.steps.iter().all(|s| !matches!(
            s.step,
            Step::CreatePartitions(_) | Step::GrowPartition(_) | Step::WipeSignatures(_)
        )),
        "{:?}",
        p.steps
    );
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "disk hdd0")
        .expect("a refusal for the shrink");
    assert!(
        r.reason.contains("partition pv is")
            && r.reason.contains("larger than the file's 20.00 GiB"),
        "{}",
        r.reason
    );
    assert!(
        r.reason.contains("never shrinks a partition"),
        "{}",
        r.reason
    );
    assert!(r.fix.contains("set partition pv's size to"), "{}", r.fix);
    // Apply runs nothing for a refused plan.
    assert!(apply(&h, &pv_partition_file("20GiB"), Policy::default()).is_err());
    assert_eq!(h.world(), before);
}
