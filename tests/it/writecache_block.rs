//! A writecache attached over a filesystem takes the filesystem's block size: hyraid's own (4096)
//! over one it makes, the one libblkid reports over one already there (an ext4 that mke2fs made
//! on a small LV has 1 KiB blocks; an xfs made elsewhere may have 512-byte sectors). lvconvert
//! refuses a writecache block larger than the filesystem's, so a plan that asked 4096 over such
//! a filesystem stopped at its last step (VM 15-adopt found it: an adopted ext4 of 512 MiB).

use crate::common;
use common::tune::{TUNE_YAML, tune_box};
use common::*;
use hyraid::config::Desired;
use hyraid::host::Host;
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

#[test]
fn over_an_ext4_with_1k_blocks_the_writecache_block_is_1k() {
    let h = box_with_fs_block(1024);
    let d = with_writecache();
    let obs = observe(&h, &d);
    let fs = obs.filesystems.iter().find(|f| f.lv == "data").unwrap();
    assert_eq!(fs.block_size, Some(1024), "dumpe2fs's Block size is read");
    apply(&h, &d, Policy::default()).unwrap();
    assert!(
        attach_line(&h).contains("--cachesettings block_size=1024"),
        "{}",
        attach_line(&h)
    );
    let wc = h
        .world()
        .lv("vg0", "data")
        .unwrap()
        .writecache
        .clone()
        .unwrap();
    assert_eq!(wc.block_size, Some(1024));
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
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
    let argv = |a: &str| a.split(' ').map(str::to_string).collect::<Vec<_>>();
    for c in [
        "lvcreate --yes -n data_wc -L 1073741824b --addtag hyraid_cachevol vg0 /dev/disk/by-id/ata-HYRAID_SSD_HYSSD00003",
        "lvchange --activate n vg0/data_wc",
    ] {
        assert_eq!(h.run(&argv(c)).unwrap().status, 0, "{c}");
    }
    let o = h
        .run(&argv("lvconvert --yes --type writecache --cachevol data_wc --cachesettings block_size=4096 vg0/data"))
        .unwrap();
    assert_eq!(o.status, 5);
    assert!(
        o.stderr.contains(
            "Writecache block size 4096 cannot be larger than file system block size 1024"
        ),
        "{}",
        o.stderr
    );
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
