//! The crash matrix's cases: every example built from scratch, and the changes to a machine
//! holding data that each kind of step makes (tests/it/crash.rs kills apply after each command).

mod boot;
mod encryption;
mod fs_change;
mod inactive;
mod vocabulary;

use crate::common::*;
use hyraid::config::Desired;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

pub struct Case {
    pub name: String,
    pub desired: Desired,
    pub before: hyraid::observe::Observed,
    /// Commands that remove something but are part of the change asked for.
    pub allowed_removals: Vec<String>,
    /// What must hold once every resync has finished and apply ran once more.
    pub finally: Option<fn(&hyraid::observe::Observed) -> bool>,
    /// The command line's allow flags for every plan and apply of the case.
    pub policy: Policy,
}

pub(crate) fn converged(name: &str) -> (Desired, SimHost) {
    let (d, h) = example(name);
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for name in EXAMPLES {
        let (d, h) = example(name);
        v.push(Case {
            name: format!("{name}: fresh build"),
            desired: d,
            before: h.world(),
            allowed_removals: vec![],
            finally: None,
            policy: Policy::default(),
        });
    }
    // Layout options fixed at creation: a 1.0 superblock and a stripe size.
    let (mut d, h) = example("microserver-gen8");
    d.mirrors.get_mut("data0").unwrap().metadata = hyraid::config::raw::MdMetadata::V1_0;
    nextcloud(&mut d).stripe_size = Some(128 << 10);
    v.push(Case {
        name: "microserver-gen8: fresh build, metadata 1.0 and a stripe size".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            let a = w.arrays.iter().find(|a| a.name.as_deref() == Some("data0"));
            let lv = w.lvm.lvs.iter().find(|l| l.name == "nextcloud_wcorig");
            a.is_some_and(|a| a.superblock_version() == "1.0")
                && lv.is_some_and(|l| l.stripe_size == Some(128 << 10))
        }),
        policy: Policy::default(),
    });

    let (mut d, h) = converged("microserver-gen8");
    nextcloud(&mut d).size = hyraid::config::size::LvSize::Bytes(900 << 30);
    v.push(Case {
        name: "grow a filled LV".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![],
        finally: None,
        policy: Policy::default(),
    });

    let (mut d, _) = example("microserver-gen8");
    let wc = nextcloud(&mut d).writecache.take();
    let (_, h) = example("microserver-gen8");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    nextcloud(&mut d).writecache = wc;
    v.push(Case {
        name: "writecache onto a filled LV".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![],
        finally: None,
        policy: Policy::default(),
    });

    let (mut d, h) = converged("microserver-gen8");
    nextcloud(&mut d).writecache = None;
    v.push(Case {
        name: "detach a writecache".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec!["lvremove --yes vg0/nextcloud_wc".into()],
        finally: None,
        policy: Policy::default(),
    });

    // A writecache resized, grown and shrunk, with dirty blocks: detach (flush), remove the
    // old cache volume, create the new one, attach.
    for (label, size) in [("grow", 64u64 << 30), ("shrink", 16 << 30)] {
        let (mut d, h) = converged("microserver-gen8");
        let mut w = h.world();
        if let Some(wc) = w
            .lvm
            .lvs
            .iter_mut()
            .find(|l| l.name == "nextcloud")
            .and_then(|l| l.writecache.as_mut())
        {
            wc.free_blocks = wc.total_blocks.map(|t| t - 1000);
        }
        nextcloud(&mut d).writecache.as_mut().unwrap().size = size;
        v.push(Case {
            name: format!("{label} a dirty writecache"),
            desired: d,
            before: w,
            allowed_removals: vec!["lvremove --yes vg0/nextcloud_wc".into()],
            finally: Some(if size > 32 << 30 {
                |w| {
                    w.lvm
                        .lvs
                        .iter()
                        .any(|l| l.name == "nextcloud_wc_cvol" && l.size == 64 << 30)
                }
            } else {
                |w| {
                    w.lvm
                        .lvs
                        .iter()
                        .any(|l| l.name == "nextcloud_wc_cvol" && l.size == 16 << 30)
                }
            }),
            policy: Policy::default(),
        });
    }

    // dm-cache: a writecache switched to a dm-cache (detach, then attach), a writeback cache
    // with dirty blocks resized, and one flushed and detached.
    let (mut d, h) = converged("microserver-gen8");
    dm_cache_instead(&mut d, hyraid::config::raw::CacheMode::Writethrough);
    v.push(Case {
        name: "switch a writecache to a dm-cache".into(),
        desired: d.clone(),
        before: h.world(),
        allowed_removals: vec!["lvremove --yes vg0/nextcloud_wc".into()],
        finally: Some(|w| {
            w.lvm
                .lvs
                .iter()
                .any(|l| l.name == "nextcloud" && l.cache.is_some())
        }),
        policy: Policy::default(),
    });
    let h2 = SimHost::new(h.world());
    apply(&h2, &d, Policy::default()).unwrap();
    // The attached writethrough cache switched to writeback online (lvchange --cachemode).
    let mut writeback = d.clone();
    if let Some(c) = nextcloud(&mut writeback).cache.as_mut() {
        c.mode = hyraid::config::raw::CacheMode::Writeback;
    }
    v.push(Case {
        name: "a dm-cache from writethrough to writeback".into(),
        desired: writeback,
        before: h2.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            w.lvm.lvs.iter().any(|l| {
                l.name == "nextcloud" && l.cache.as_ref().is_some_and(|c| c.mode == "writeback")
            })
        }),
        policy: Policy::default(),
    });
    let mut w = h2.world();
    if let Some(c) = w
        .lvm
        .lvs
        .iter_mut()
        .find(|l| l.name == "nextcloud")
        .and_then(|l| l.cache.as_mut())
    {
        c.mode = "writeback".into();
        c.dirty_blocks = Some(77);
    }
    let mut wb = d.clone();
    nextcloud(&mut wb).cache.as_mut().unwrap().mode = hyraid::config::raw::CacheMode::Writeback;
    nextcloud(&mut wb).cache.as_mut().unwrap().size = 48 << 30;
    v.push(Case {
        name: "resize a dirty writeback dm-cache".into(),
        desired: wb,
        before: w.clone(),
        allowed_removals: vec!["lvremove --yes vg0/nextcloud_cache".into()],
        finally: Some(|w| {
            w.lvm
                .lvs
                .iter()
                .any(|l| l.name == "nextcloud_cache_cvol" && l.size == 48 << 30)
        }),
        policy: Policy::default(),
    });
    let mut none = d.clone();
    nextcloud(&mut none).cache = None;
    v.push(Case {
        name: "flush and detach a dirty writeback dm-cache".into(),
        desired: none,
        before: w,
        allowed_removals: vec!["lvremove --yes vg0/nextcloud_cache".into()],
        finally: Some(|w| w.lvm.lvs.iter().all(|l| l.cache.is_none())),
        policy: Policy::default(),
    });

    let (mut d, h) = converged("single-pair");
    for c in [
        "mdadm /dev/md/md-home --fail /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001",
        "mdadm /dev/md/md-home --remove /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001",
    ] {
        assert_eq!(run(&h, &c.split(' ').collect::<Vec<_>>()).status, 0, "{c}");
    }
    let mut w = h.world();
    plug_blank_disk(
        &mut w,
        "sdb",
        "sdc",
        32,
        "ZA4000099",
        "ata-ST500DM009-2F110A_ZA4000099",
    );
    d.disks.get_mut("hdd").unwrap().id = Some("ata-ST500DM009-2F110A_ZA4000099".into());
    v.push(Case {
        name: "replace a failed HDD member".into(),
        desired: d,
        before: w,
        allowed_removals: vec![],
        finally: None,
        policy: Policy::default(),
    });

    // Hot replace of a working HDD by a new disk named in the file.
    let (mut d, h) = converged("single-pair");
    let mut w = h.world();
    plug_blank_disk(
        &mut w,
        "sdb",
        "sdc",
        32,
        "ZA4000099",
        "ata-ST500DM009-2F110A_ZA4000099",
    );
    d.disks.get_mut("hdd").unwrap().id = Some("ata-ST500DM009-2F110A_ZA4000099".into());
    v.push(Case {
        name: "hot-replace a working HDD".into(),
        desired: d,
        before: w,
        allowed_removals: vec![],
        finally: Some(|o| {
            let a = o.array_named("md-home").unwrap();
            a.member("sdb").is_none()
                && a.member("sdc")
                    .is_some_and(|m| m.has("in_sync") && m.write_mostly())
        }),
        policy: Policy::default(),
    });

    // The same HDD returns after it was failed and removed: re-added.
    let (d, h) = converged("single-pair");
    for c in [
        "mdadm /dev/md/md-home --fail /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001",
        "mdadm /dev/md/md-home --remove /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001",
    ] {
        assert_eq!(run(&h, &c.split(' ').collect::<Vec<_>>()).status, 0, "{c}");
    }
    v.push(Case {
        name: "re-add a returning HDD".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![],
        finally: None,
        policy: Policy {
            re_add: vec!["hdd".into()],
            ..Policy::default()
        },
    });

    let (mut d, h) = converged("single-pair");
    let m = d.mirrors.get_mut("md-home").unwrap();
    m.bitmap_chunk = Some(128 << 20);
    m.write_behind = 1024;
    v.push(Case {
        name: "change bitmap chunk + write-behind".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![],
        finally: None,
        policy: Policy::default(),
    });
    // Seed 002: an NVMe added to a 2-HDD mirror (spare, grow, recovery), the HDDs then
    // write-mostly.
    let (mut d, h) = example("nvme-plus-two-hdd");
    let full = d.clone();
    let m = d.mirrors.get_mut("tank").unwrap();
    m.members = vec!["hdd0".into(), "hdd1".into()];
    m.write_mostly = hyraid::config::WriteMostly::Auto;
    m.write_behind = 0;
    d.disks.remove("nvme0");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut d = full;
    let m = d.mirrors.get_mut("tank").unwrap();
    m.write_mostly = hyraid::config::WriteMostly::Auto;
    m.write_behind = 0;
    v.push(Case {
        name: "grow a 2-HDD mirror by an NVMe".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![],
        finally: Some(|o| {
            let a = o.array_named("tank").unwrap();
            a.raid_disks == 3
                && a.members.iter().filter(|m| m.has("in_sync")).count() == 3
                && a.members.iter().filter(|m| m.write_mostly()).count() == 2
        }),
        policy: Policy::default(),
    });

    // A member leaves a 3-way mirror (fail, remove, shrink), with --allow-destroy.
    let (mut d, h) = converged("nvme-plus-two-hdd");
    let m = d.mirrors.get_mut("tank").unwrap();
    m.members = vec!["nvme0".into(), "hdd0".into()];
    m.write_mostly = hyraid::config::WriteMostly::List(vec!["hdd0".into()]);
    d.disks.remove("hdd1");
    v.push(Case {
        name: "remove a member from a 3-way mirror".into(),
        desired: d,
        before: h.world(),
        // The member leaves for good: its superblock is erased so that no reboot takes it back.
        allowed_removals: vec![
            "mdadm --zero-superblock /dev/disk/by-id/wwn-0x50014ee2b0000002".into(),
        ],
        finally: Some(|o| {
            let a = o.array_named("tank").unwrap();
            a.raid_disks == 2 && a.degraded == 0 && a.members.len() == 2
        }),
        policy: Policy::destroying(true),
    });

    // A PV replaced by another: vgextend, pvmove off the old one, vgreduce, pvremove.
    let (mut d, h2) = example("microserver-gen8");
    let vg = d.volume_groups.get_mut("vg0").unwrap();
    vg.pvs.retain(|r| r.name() != "data1");
    vg.lvs.clear();
    let mut small = d.clone();
    let lv = hyraid::config::LvSpec {
        name: "data".into(),
        size: hyraid::config::size::LvSize::Bytes(100 << 30),
        pvs: None,
        stripes: None,
        stripe_size: None,
        writecache: None,
        cache: None,
        filesystem: None,
        encryption: None,
        absent: false,
        tags: vec![],
    };
    small
        .volume_groups
        .get_mut("vg0")
        .unwrap()
        .lvs
        .insert("data".into(), lv.clone());
    apply(&h2, &small, Policy::default()).unwrap();
    h2.finish_syncs();
    let vg = d.volume_groups.get_mut("vg0").unwrap();
    vg.lvs.insert("data".into(), lv);
    vg.pvs[0] = hyraid::config::DeviceRef::Mirror("data1".into());
    v.push(Case {
        name: "move a PV's extents to a new PV and remove it".into(),
        desired: d,
        before: h2.world(),
        allowed_removals: vec!["pvremove --yes /dev/md/data0".into()],
        finally: Some(|w| {
            let k = w.array_named("data0").unwrap().kname.clone();
            w.pv(&k).is_none() && w.lvm.lvs.iter().all(|l| l.pvmove.is_none())
        }),
        policy: Policy::default(),
    });

    // Seed 004: a bitmap in a file, converted to an internal one.
    let (d, h) = converged("single-pair");
    let mut w = h.world();
    let b = w.arrays[0].bitmap.as_mut().unwrap();
    b.kind = hyraid::observe::BitmapKind::File;
    b.file = Some("/mnt/ssd/md-home.bitmap".into());
    v.push(Case {
        name: "file bitmap to internal".into(),
        desired: d,
        before: w,
        allowed_removals: vec![],
        finally: Some(|w| {
            w.arrays[0].bitmap.as_ref().map(|b| b.kind)
                == Some(hyraid::observe::BitmapKind::Internal)
        }),
        policy: Policy::default(),
    });
    // A filesystem on the LV (made before its writecache is attached), listed and mounted.
    let (mut d, h) = example("microserver-gen8");
    nextcloud(&mut d).filesystem = Some(ext4_at("/srv/nextcloud"));
    let mut w = h.world();
    w.boot.fstab =
        Some("UUID=6a1e2b7c-93f1-4a57-9d62-0c2a5b8f1e01 / ext4 errors=remount-ro 0 1\n".into());
    w.boot.systemd = true;
    let w_fs = w.clone();
    v.push(Case {
        name: "fresh build with an ext4 filesystem, mounted".into(),
        desired: d,
        before: w,
        allowed_removals: vec![],
        finally: Some(|w| {
            w.filesystems
                .iter()
                .any(|f| f.mountpoint.as_deref() == Some("/srv/nextcloud"))
        }),
        policy: Policy::default(),
    });
    // A mirror used without LVM: its ext4 made right after mdadm --create, listed, mounted.
    let d = hyraid::config::load_file(std::path::Path::new("examples/filesystems/backup.yaml"))
        .unwrap();
    v.push(Case {
        name: "fresh build with an ext4 on a mirror, mounted".into(),
        desired: d,
        before: w_fs.clone(),
        allowed_removals: vec![],
        finally: Some(|w| {
            w.filesystems
                .iter()
                .any(|f| f.md && f.mountpoint.as_deref() == Some("/srv/backup"))
        }),
        policy: Policy::default(),
    });
    // A filesystem onto a filled LV that has none.
    let (mut d, h) = converged("microserver-gen8");
    nextcloud(&mut d).filesystem = Some(ext4_at("/srv/nc"));
    v.push(Case {
        name: "ext4 onto an existing blank LV".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            w.filesystems
                .iter()
                .any(|f| f.mountpoint.as_deref() == Some("/srv/nc"))
        }),
        policy: Policy::default(),
    });
    // The LV and its mounted filesystem grow (lvextend, then resize2fs online).
    let (mut d, h) = example("microserver-gen8");
    nextcloud(&mut d).filesystem = Some(ext4_at("/srv/nextcloud"));
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    nextcloud(&mut d).size = hyraid::config::size::LvSize::Bytes(900 << 30);
    v.push(Case {
        name: "grow an LV and its mounted ext4".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            let lv = w.lvm.lvs.iter().find(|l| l.name == "nextcloud");
            w.filesystems
                .iter()
                .any(|f| f.size.is_some() && f.size == lv.map(|l| l.size))
        }),
        policy: Policy::default(),
    });
    // A mounted ext4 and its LV shrink (umount, e2fsck, resize2fs, lvreduce, mount).
    let (mut d, h) = example("microserver-gen8");
    nextcloud(&mut d).writecache = None;
    nextcloud(&mut d).filesystem = Some(ext4_at("/srv/nextcloud"));
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    nextcloud(&mut d).size = hyraid::config::size::LvSize::Bytes(600 << 30);
    v.push(Case {
        name: "shrink a mounted ext4 and its LV".into(),
        desired: d,
        before: h.world(),
        allowed_removals: vec!["lvreduce --yes -L 644245094400b vg0/nextcloud".into()],
        finally: Some(|w| {
            w.filesystems.iter().any(|f| {
                f.size == Some(600 << 30) && f.mountpoint.as_deref() == Some("/srv/nextcloud")
            })
        }),
        policy: Policy::destroying(true),
    });

    // A partition added beside open ones (sgdisk, then partx --add).
    let (_, full, h) = partitioned_without_cache();
    v.push(Case {
        name: "partition added to an in-use disk".into(),
        desired: full,
        before: h.world(),
        allowed_removals: vec![],
        finally: Some(|w| w.partition_tables.is_empty() && w.array_named("cache").is_some()),
        policy: Policy::default(),
    });

    // The last partition grows into free space (growpart), its PV follows (pvresize).
    let (_, h) = example("microserver-partitioned");
    apply(&h, &pv_partition_file("20GiB"), Policy::default()).unwrap();
    h.finish_syncs();
    v.push(Case {
        name: "grow the last partition and its PV".into(),
        desired: pv_partition_file("rest"),
        before: h.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            let p = w.by_id("ata-ST1000LM048-2E7172_WDE00001-part2");
            p.is_some_and(|p| {
                p.size > 20 << 30 && w.pv(&p.kname).is_some_and(|v| v.dev_size == p.size)
            })
        }),
        policy: Policy::default(),
    });
    v.extend(boot::cases());
    v.extend(encryption::cases());
    v.extend(fs_change::cases());
    v.extend(vocabulary::cases());
    v.extend(inactive::cases());
    v.extend(vocabulary::monitoring_cases());
    v.extend(vocabulary::tune_cases());

    // A mirror of two partitions grows: growpart on each member, mdadm --grow --size=max, the
    // resync of the new region, pvresize.
    let (_, h) = example("microserver-partitioned");
    apply(
        &h,
        &mirrored_partitions_file("500GiB", "500GiB"),
        Policy::default(),
    )
    .unwrap();
    h.finish_syncs();
    v.push(Case {
        name: "grow a mirror of partitions and its PV".into(),
        desired: mirrored_partitions_file("rest", "rest"),
        before: h.world(),
        allowed_removals: vec![],
        finally: Some(|w| {
            let a = w.array_named("data");
            a.is_some_and(|a| {
                a.size_kib > 900 << 20
                    && w.pv(&a.kname)
                        .is_some_and(|p| p.dev_size == a.size_kib * 1024)
            })
        }),
        policy: Policy::default(),
    });
    v
}

fn ext4_at(mount: &str) -> hyraid::config::filesystem::FilesystemSpec {
    hyraid::config::filesystem::FilesystemSpec {
        fstype: hyraid::config::filesystem::FsType::Ext4,
        label: Some("nextcloud".into()),
        mount: Some(mount.into()),
        options: vec!["noatime".into()],
    }
}

/// The microserver's writecache replaced by a dm-cache of the same size on the same PV.
fn dm_cache_instead(d: &mut Desired, mode: hyraid::config::raw::CacheMode) {
    let lv = nextcloud(d);
    let wc = lv.writecache.take().unwrap();
    lv.cache = Some(hyraid::config::CacheSpec {
        mode,
        size: wc.size,
        pvs: wc.pvs,
    });
}
