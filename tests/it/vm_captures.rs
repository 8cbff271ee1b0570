//! Captures taken by `hyraid observe --capture` inside the real-kernel VM: tests/fixtures/vm on
//! Debian 12 (kernel 6.1, mdadm 4.2, lvm2 2.03.16, util-linux 2.38), tests/fixtures/vm-trixie
//! on Debian 13 (kernel 6.12, mdadm 4.4, lvm2 2.03.31, util-linux 2.41). Replaying the real answers must give the
//! observed state recorded with them, and the simulated host loaded from that state must answer
//! so that the same parsers read back the same state.

use crate::common;
use hyraid::host::record::{Exchange, Replay};
use hyraid::observe::capture::Capture;
use hyraid::observe::observe;
use hyraid::sim::SimHost;

fn captures() -> Vec<(String, Capture)> {
    let mut v: Vec<(String, Capture)> = ["tests/fixtures/vm", "tests/fixtures/vm-trixie"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "json").then(|| {
                (
                    p.display().to_string(),
                    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap(),
                )
            })
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn real_captures_parse_to_their_recorded_state() {
    let caps = captures();
    assert!(
        caps.len() >= 3,
        "expected the VM captures in tests/fixtures/vm"
    );
    for (name, cap) in caps {
        let mut replayed =
            observe(&Replay::from(cap.clone())).unwrap_or_else(|e| panic!("{name}: {e}"));
        before_loaders(&cap, &mut replayed);
        assert_eq!(replayed, cap.observed, "{name}");
    }
}

#[test]
fn simulated_host_answers_like_the_real_tools() {
    for (name, cap) in captures() {
        let sim = SimHost::new(cap.observed.clone());
        let mut from_sim = observe(&sim).unwrap_or_else(|e| panic!("{name}: {e}"));
        let old = before_loaders(&cap, &mut from_sim);
        assert_eq!(
            from_sim, cap.observed,
            "{name}: the simulated host's answers parse differently"
        );
        // And it asks the same things the real host was asked, no more. (Captures older than
        // the one-run wipefs probe have a run per device: the same questions.)
        let real: Vec<Vec<String>> = cap
            .exchanges
            .iter()
            .filter_map(|e| match e {
                Exchange::Run { argv, .. } => Some(argv.clone()),
                _ => None,
            })
            .collect();
        let asked: Vec<Vec<String>> = sim
            .commands()
            .into_iter()
            .filter(|a| {
                !(old
                    && (*a == hyraid::observe::loader::partuuid_argv(&a[a.len() - 1])
                        || *a == hyraid::observe::loader::efibootmgr_argv()))
            })
            .collect();
        assert_eq!(per_device(asked), per_device(real), "{name}: commands run");
    }
}

/// A capture older than the observation of the boot loaders (no `blkid -s PARTUUID` of an ESP
/// was asked) recorded none: what was read of them is left out of the comparison. Whether it is.
fn before_loaders(cap: &Capture, o: &mut hyraid::observe::Observed) -> bool {
    let old = !cap.exchanges.iter().any(|e| {
        matches!(e, Exchange::Run { argv, .. } if argv.first().is_some_and(|a| a == "blkid") && argv.get(1).is_some_and(|a| a == "-o"))
    });
    if old {
        o.boot.loaders = Default::default();
    }
    old
}

/// A `wipefs --no-act --json` of several devices as one run per device, and lsblk's columns as
/// one word (a capture older than a column hyraid asks for now, PARTTYPE, asked the same run).
fn per_device(cmds: Vec<Vec<String>>) -> Vec<Vec<String>> {
    cmds.into_iter()
        .map(|mut argv| {
            if argv[0] == "lsblk"
                && let Some(o) = argv.iter().position(|a| a == "-o")
            {
                argv[o + 1] = "COLUMNS".into();
            }
            argv
        })
        .flat_map(|argv| {
            if argv.len() > 4 && argv[..3] == ["wipefs", "--no-act", "--json"] {
                argv[3..]
                    .iter()
                    .map(|d| vec![argv[0].clone(), argv[1].clone(), argv[2].clone(), d.clone()])
                    .collect()
            } else {
                vec![argv]
            }
        })
        .collect()
}

#[test]
fn built_layout_as_the_real_kernel_reports_it() {
    let built: Vec<(String, Capture)> = captures()
        .into_iter()
        .filter(|(n, _)| n.ends_with("fresh-build-built.json"))
        .collect();
    assert_eq!(built.len(), 2, "a capture of the built layout per release");
    for (_, cap) in built {
        built_layout(cap.observed);
    }
}

fn built_layout(o: hyraid::observe::Observed) {
    let data0 = o.array_named("data0").unwrap();
    assert!(data0.is_idle());
    let hdd = o.by_id("ata-HYRAID_HDD_HYHDD1").unwrap();
    assert!(data0.member(&hdd.kname).unwrap().write_mostly());
    assert_eq!(data0.bitmap.as_ref().unwrap().chunk, 64 << 20);
    assert_eq!(
        o.array_named("data1")
            .unwrap()
            .bitmap
            .as_ref()
            .unwrap()
            .backlog,
        256
    );
    assert_eq!(hdd.write_cache.unwrap().enabled, Some(true));
    let lv = o.lv("vg0", "nextcloud").unwrap();
    assert_eq!(
        lv.writecache.as_ref().unwrap().cachevol,
        "nextcloud_wc_cvol"
    );
    assert_eq!(o.lv("vg0", "nextcloud_wcorig").unwrap().stripes, 2);
    assert!(o.lv("vg0", "nextcloud_wc_cvol").unwrap().hidden);
}

/// The real kernel's inactive array after a disk swap (VM 09-disk-swap, Debian 12 and 13): md
/// shows no bitmap for it, its members' superblocks do (`mdadm --examine`, `mdadm -X`). The file
/// names the new disk and a larger bitmap chunk: the plan, with the preview `hyraid plan` makes
/// of the machine after it, starts the array, adds the disk, waits for the recovery and
/// re-chunks the bitmap. The preview once waited forever there for a resync the inactive
/// array's `resync_start` seemed to announce: it must end (within a minute).
#[test]
fn the_real_inactive_array_after_a_disk_swap_is_planned_whole() {
    let text = std::fs::read_to_string("tests/vm/configs/swapped.yaml")
        .unwrap()
        .replace("chunk: 64MiB", "chunk: 128MiB");
    let d = hyraid::config::load_str("swapped.yaml", &text).unwrap();
    for dir in ["tests/fixtures/vm", "tests/fixtures/vm-trixie"] {
        let cap: Capture = serde_json::from_str(
            &std::fs::read_to_string(format!("{dir}/disk-swap-inactive.json")).unwrap(),
        )
        .unwrap();
        let obs = observe(&Replay::from(cap)).unwrap();
        let a = &obs.arrays[0];
        assert!(a.superblock_read && !a.resync_pending, "{dir}: {a:?}");
        assert_eq!(a.bitmap.as_ref().map(|b| b.chunk), Some(64 << 20), "{dir}");
        let (tx, rx) = std::sync::mpsc::channel();
        let (d2, o2) = (d.clone(), obs.clone());
        std::thread::spawn(move || {
            let _ = tx.send(hyraid::apply::preview::review(&d2, &o2, Default::default()));
        });
        let p = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the plan and its preview end")
            .unwrap();
        assert!(p.refused.is_empty(), "{dir}: {:#?}", p.refused);
        let ops: Vec<String> = common::ops(&p)
            .into_iter()
            .filter(|o| !["write_file", "reload_udev"].contains(&o.as_str()))
            .collect();
        assert_eq!(
            ops,
            [
                "start_array",
                "add_member",
                "wait_idle",
                "remove_bitmap",
                "add_bitmap"
            ],
            "{dir}"
        );
    }
}

/// The degraded day on the real kernel (VM 09-disk-swap, Debian 12 and 13): the HDD gone across
/// a reboot, the mirror assembled and not running, so LVM sees no PV and no VG on it and lsblk
/// no signature. With the file unchanged the plan refuses the missing disk; with the new disk
/// named it starts the mirror and adds the disk. Neither shows a pvcreate, vgcreate, lvcreate or
/// mkfs for what the mirror holds (they once did: "the LV carries no filesystem yet").
#[test]
fn the_real_inactive_mirror_with_a_vg_on_it_is_never_planned_blank() {
    // The captures were taken before the scenario named a webhook (and linked hyraid into
    // /usr/local/bin for it): the files without their `alerts:`.
    let load = |name: &str| {
        let text = std::fs::read_to_string(format!("tests/vm/configs/{name}")).unwrap();
        let mut d = hyraid::config::load_str(name, &text).unwrap();
        d.alerts = None;
        d
    };
    let (day, new_hdd) = (load("degraded-day.yaml"), load("degraded-day-new-hdd.yaml"));
    let creates = [
        "create_pv",
        "create_vg",
        "create_lv",
        "make_filesystem",
        "format_luks",
    ];
    for dir in ["tests/fixtures/vm", "tests/fixtures/vm-trixie"] {
        let cap: Capture = serde_json::from_str(
            &std::fs::read_to_string(format!("{dir}/degraded-day-inactive.json")).unwrap(),
        )
        .unwrap();
        let obs = observe(&Replay::from(cap)).unwrap();
        assert_eq!(obs.arrays[0].array_state, "inactive", "{dir}");
        assert!(obs.lvm.vgs.is_empty(), "{dir}: LVM sees no VG on it");
        let p = hyraid::plan::plan(&day, &obs, Default::default()).unwrap();
        assert!(
            p.refused.iter().any(|r| r.object == "disk hdd0"),
            "{dir}: {:#?}",
            p.refused
        );
        let o = common::ops(&p);
        assert!(
            !o.iter().any(|s| creates.contains(&s.as_str())),
            "{dir}: {o:?}"
        );
        let p = hyraid::plan::plan(&new_hdd, &obs, Default::default()).unwrap();
        assert!(p.refused.is_empty(), "{dir}: {:#?}", p.refused);
        let o: Vec<String> = common::ops(&p)
            .into_iter()
            .filter(|o| !["write_file", "reload_udev", "set_write_cache"].contains(&o.as_str()))
            .collect();
        assert_eq!(o, ["start_array", "add_member"], "{dir}");
        assert_eq!(p.behind_open, ["mirror data0"], "{dir}");
    }
}
