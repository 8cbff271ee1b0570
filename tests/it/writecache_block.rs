//! A writecache attached over a filesystem takes the block lvm2 takes for it: 4096 over hyraid's
//! own filesystem, and over one already there 4096 when libblkid reports 4096 or more, 512 under
//! it (an ext4 that mke2fs made on a small LV has 1 KiB blocks; an xfs may have 512-byte sectors).
//! lvconvert refuses a writecache block larger than the filesystem's, and any `block_size` but 512
//! and 4096 ("Invalid setting"): a plan that asked 4096 over a 1 KiB ext4 stopped at its last step,
//! and so did one that asked 1024 (VM 15-adopt found both, on Debian 12's lvm2 2.03.16).

use crate::common;
use common::tune::{TUNE_YAML, tune_box};
use common::*;
use hyraid::config::Desired;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

/// The tune box's file with a writecache on the second SSD for vg0/data (an ext4 at /srv/data).
fn with_writecache() -> Desired {
    let text = TUNE_YAML.replace(
        "        pvs: [data0]\n",
        "        pvs: [data0]\n        writecache: { size: 1GiB, pvs: [ssd2] }\n",
    );
    assert_ne!(text, TUNE_YAML);
    hyraid::config::load_str("hyraid.yaml", &text).unwrap()
}

/// The tune box, its ext4 on vg0/data reporting `block` as its block size.
fn box_with_fs_block(block: u64) -> SimHost {
    let (_, h) = tune_box();
    let mut w = h.world();
    let f = w.filesystems.iter_mut().find(|f| f.lv == "data").unwrap();
    f.block_size = Some(block);
    SimHost::new(w)
}

fn attach_line(h: &SimHost) -> String {
    changes(h)
        .into_iter()
        .find(|c| c.starts_with("lvconvert --yes --type writecache"))
        .expect("a writecache attach ran")
}

/// Applies the file with a writecache over an ext4 of `block` bytes: the attach's block size.
fn attached_block(block: u64) -> (String, Option<u64>) {
    let h = box_with_fs_block(block);
    let d = with_writecache();
    let obs = observe(&h, &d);
    let fs = obs.filesystems.iter().find(|f| f.lv == "data").unwrap();
    assert_eq!(fs.block_size, Some(block), "dumpe2fs's Block size is read");
    apply(&h, &d, Policy::default()).unwrap();
    let wc = h
        .world()
        .lv("vg0", "data")
        .unwrap()
        .writecache
        .clone()
        .unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
    (attach_line(&h), wc.block_size)
}

#[test]
fn over_an_ext4_with_1k_blocks_the_writecache_block_is_512() {
    let (line, block) = attached_block(1024);
    assert!(line.contains("--cachesettings block_size=512"), "{line}");
    assert_eq!(block, Some(512));
}

#[test]
fn over_blocks_of_4096_or_more_the_writecache_block_is_4096() {
    for fs in [4096, 65536] {
        let (line, block) = attached_block(fs);
        assert!(
            line.contains("--cachesettings block_size=4096"),
            "{fs}: {line}"
        );
        assert_eq!(block, Some(4096), "{fs}");
    }
    let (line, _) = attached_block(2048);
    assert!(line.contains("--cachesettings block_size=512"), "{line}");
}

#[test]
fn a_block_size_in_the_file_larger_than_the_filesystem_s_is_refused_at_plan_time() {
    let h = box_with_fs_block(1024);
    let text = TUNE_YAML.replace(
        "        pvs: [data0]\n",
        "        pvs: [data0]\n        writecache: { size: 1GiB, pvs: [ssd2], settings: { block_size: 4096 } }\n",
    );
    let d = hyraid::config::load_str("hyraid.yaml", &text).unwrap();
    let p = plan_for(&h, &d, Policy::default());
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "lv vg0/data")
        .expect("the writecache is refused");
    assert!(
        r.reason.contains(
            "block_size 4096 is larger than the block of the filesystem on the LV (1024 bytes)"
        ),
        "{}",
        r.reason
    );
    assert!(r.fix.contains("512"), "{}", r.fix);
    assert!(
        !ops(&p)
            .iter()
            .any(|o| o.contains("cachevol") || o.contains("writecache")),
        "no cache volume is made for a writecache that cannot be attached: {:?}",
        ops(&p)
    );
}

/// The same over a filesystem the file does not name: its block size is read all the same, and
/// the plan refuses what lvconvert would refuse at the last step.
#[test]
fn a_block_size_larger_than_an_unnamed_filesystem_s_is_refused_at_plan_time() {
    let h = box_with_fs_block(1024);
    let text = TUNE_YAML.replace(
        "        pvs: [data0]\n        filesystem: { type: ext4, mount: /srv/data }\n",
        "        pvs: [data0]\n        writecache: { size: 1GiB, pvs: [ssd2], settings: { block_size: 4096 } }\n",
    );
    assert_ne!(text, TUNE_YAML);
    let d = hyraid::config::load_str("hyraid.yaml", &text).unwrap();
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.refused
            .iter()
            .any(|r| r.object == "lv vg0/data" && r.reason.contains("(1024 bytes)")),
        "{:?}",
        p.refused
    );
    assert!(
        !ops(&p)
            .iter()
            .any(|o| o.contains("cachevol") || o.contains("writecache")),
        "{:?}",
        ops(&p)
    );
}

#[test]
fn over_a_filesystem_hyraid_makes_the_writecache_block_is_4096() {
    let (_, h) = tune_box();
    let d = with_writecache();
    apply(&h, &d, Policy::default()).unwrap();
    assert!(
        attach_line(&h).contains("--cachesettings block_size=4096"),
        "{}",
        attach_line(&h)
    );
}

#[test]
fn a_block_larger_than_the_filesystem_s_is_refused_as_lvconvert_refuses_it() {
    let h = box_with_fs_block(1024);
    fn argv(a: &str) -> Vec<&str> {
        a.split(' ').collect()
    }
    for c in [
        "lvcreate --yes -n data_wc -L 1073741824b --addtag hyraid_cachevol vg0 /dev/disk/by-id/ata-HYRAID_SSD_HYSSD00003",
        "lvchange --activate n vg0/data_wc",
    ] {
        assert_eq!(run(&h, &argv(c)).status, 0, "{c}");
    }
    let o = run(
        &h,
        &argv(
            "lvconvert --yes --type writecache --cachevol data_wc --cachesettings block_size=4096 vg0/data",
        ),
    );
    assert_eq!(o.status, 5);
    assert!(
        o.stderr.contains(
            "Writecache block size 4096 cannot be larger than file system block size 1024"
        ),
        "{}",
        o.stderr
    );
    let o = run(
        &h,
        &argv(
            "lvconvert --yes --type writecache --cachevol data_wc --cachesettings block_size=1024 vg0/data",
        ),
    );
    assert_eq!(o.status, 5);
    assert!(
        o.stderr.contains("Invalid setting: block_size"),
        "{}",
        o.stderr
    );
    let o = run(
        &h,
        &argv(
            "lvconvert --yes --type writecache --cachevol data_wc --cachesettings block_size=512 vg0/data",
        ),
    );
    assert_eq!(o.status, 0, "{}", o.stderr);
}

#[test]
fn the_block_sizes_the_tools_report_are_read() {
    use hyraid::observe::filesystems::{ext4_block_size, xfs_block_size};
    assert_eq!(
        ext4_block_size("Block count:              262144\nBlock size:               1024\n"),
        Some(1024)
    );
    let xfs = "meta-data=/dev/vg0/media          isize=512    agcount=4, agsize=20480 blks\n         =                       sectsz=512   attr=2, projid32bit=1\ndata     =                       bsize=4096   blocks=81920, imaxpct=25\nlog      =internal log           bsize=4096   blocks=16384, version=2\n         =                       sectsz=4096  sunit=1 blks, lazy-count=1\n";
    assert_eq!(
        xfs_block_size(xfs),
        Some(512),
        "the meta-data section's, not the log's"
    );
    assert_eq!(xfs_block_size("data     =  bsize=4096"), None);
}
