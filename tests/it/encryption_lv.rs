//! Encrypted LVs (LV → LUKS2 → filesystem) on the simulated machine: the steps and their order,
//! the filesystem made inside the mapping and listed by its own UUID, convergence, an LV that
//! carries anything never formatted, a closed mapping opened before what is inside is planned,
//! an LV with an open mapping never removed, the file's checks, and the import of the built box.

use crate::common;
use common::luks::refusals;
use common::*;
use hyraid::config::load_str;
use hyraid::plan::{Policy, Step};
use hyraid::sim::SimHost;

const HOME: &str = "{ home: { size: 20GiB, pvs: [data0], filesystem: { type: ext4, mount: /home }, encryption: { key_file: /etc/hyraid/keys/home.key, header_backup: /root/home.luks-header } } }";

fn file(lvs: &str) -> hyraid::config::Desired {
    two_pair_file("data0, data1", lvs)
}

fn lines(p: &hyraid::plan::Plan) -> Vec<String> {
    p.steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::plan::step::command_line(&c))
        .collect()
}

/// The plan, with --allow-destroy, of the box's file with vg0 marked absent (its LVs unlisted).
fn vg_gone(h: &SimHost) -> hyraid::plan::Plan {
    let text = "version: 1\nhost: microserver8\ndisks:\n  ssd0: { id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A }\n  ssd1: { id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100002B }\n  hdd0: { id: ata-ST1000LM048-2E7172_WDE00001 }\n  hdd1: { id: ata-ST1000LM048-2E7172_WDE00002 }\nmirrors:\n  data0: { members: [ssd0, hdd0] }\n  data1: { members: [ssd1, hdd1] }\nvolume_groups:\n  vg0: { pvs: [data0, data1], state: absent }\n";
    destroying(h, &load_str("vg-gone.yaml", text).unwrap())
}

/// The plan of `d` with --allow-destroy.
fn destroying(h: &SimHost, d: &hyraid::config::Desired) -> hyraid::plan::Plan {
    plan_for(
        h,
        d,
        Policy {
            allow_destroy: true,
            ..Policy::default()
        },
    )
}

/// The box with `home` built on it.
fn built() -> (hyraid::config::Desired, SimHost) {
    let (_, h) = example("microserver-gen8");
    let d = file(HOME);
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}

#[test]
fn an_encrypted_lv_is_made_formatted_opened_and_its_filesystem_made_inside() {
    let (_, h) = example("microserver-gen8");
    let d = file(HOME);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    let o = ops(&p);
    let at = |op: &str| {
        o.iter()
            .position(|x| x == op)
            .unwrap_or_else(|| panic!("{op}: {o:?}"))
    };
    assert!(at("create_lv") < at("create_key_file"), "{o:?}");
    assert!(at("create_key_file") < at("format_luks"), "{o:?}");
    assert!(at("format_luks") < at("backup_luks_header"), "{o:?}");
    assert!(at("backup_luks_header") < at("open_luks"), "{o:?}");
    assert!(at("open_luks") < at("make_filesystem"), "{o:?}");
    assert!(at("make_filesystem") < at("mount_filesystem"), "{o:?}");
    let l = lines(&p);
    assert!(
        l.iter().any(
            |x| x.starts_with("cryptsetup luksFormat --batch-mode --type luks2 --uuid ")
                && x.ends_with(" --key-file /etc/hyraid/keys/home.key --pbkdf pbkdf2 --pbkdf-force-iterations 1000 /dev/vg0/home")
        ),
        "{l:?}"
    );
    assert!(
        l.iter().any(|x| x
            == "cryptsetup open --type luks --key-file /etc/hyraid/keys/home.key /dev/vg0/home vg0-home_crypt"),
        "{l:?}"
    );
    assert!(
        l.iter()
            .any(|x| x.starts_with("mkfs.ext4 ") && x.ends_with(" /dev/mapper/vg0-home_crypt")),
        "{l:?}"
    );
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    let k = &w.files["/etc/hyraid/keys/home.key"];
    assert_eq!((k.mode, k.uid, k.size), (0o400, 0, 512));
    let header = w.luks.iter().find(|l| l.device == "vg0/home").unwrap();
    let uuid = header.uuid.clone().unwrap();
    let tab = w.boot.crypttab.clone().unwrap();
    assert!(
        tab.contains(&format!(
            "vg0-home_crypt UUID={uuid} /etc/hyraid/keys/home.key luks\n"
        )),
        "{tab}"
    );
    let fs = w
        .filesystems
        .iter()
        .find(|f| f.mapper.as_deref() == Some("vg0-home_crypt"))
        .unwrap();
    assert_eq!(fs.mountpoint.as_deref(), Some("/home"));
    let fstab = w.boot.fstab.clone().unwrap();
    assert!(
        fstab.contains(&format!("UUID={} /home ext4", fs.uuid.clone().unwrap())),
        "{fstab}"
    );
    // The filesystem spans the mapping: the LV less the 16 MiB header.
    let lv = w.lvm.lvs.iter().find(|l| l.name == "home").unwrap().size;
    assert_eq!(fs.size, Some((lv - (16 << 20)) / 4096 * 4096));
    let again = plan_for(&h, &d, Policy::default());
    assert!(
        again.steps.is_empty() && again.refused.is_empty(),
        "{:?} {}",
        ops(&again),
        refusals(&again)
    );
}

#[test]
fn an_lv_that_carries_a_filesystem_is_never_formatted() {
    let (_, h) = example("microserver-gen8");
    let plain =
        file("{ home: { size: 20GiB, pvs: [data0], filesystem: { type: ext4, mount: /home } } }");
    apply(&h, &plain, Policy::default()).unwrap();
    let p = destroying(&h, &file(HOME));
    let r = refusals(&p);
    assert!(
        r.contains("lv vg0/home: /dev/vg0/home carries a ext4 signature: hyraid formats LUKS only on a blank LV, and never encrypts data in place"),
        "{r}"
    );
    let o = ops(&p);
    assert!(
        !o.contains(&"format_luks".to_string()) && !o.contains(&"make_filesystem".to_string()),
        "{o:?}"
    );
}

#[test]
fn a_closed_mapping_is_opened_before_its_filesystem_is_planned() {
    let (d, h) = built();
    let mut w = h.world();
    // Closed by hand: its filesystem unmounted, the mapping gone.
    w.filesystems.retain(|f| f.mapper.is_none());
    let kept = w.clone();
    w.other_devices.retain(|o| o.kind != "crypt");
    for l in w.luks.iter_mut() {
        l.mapping = None;
    }
    let closed = SimHost::new(w);
    let p = plan_for(&closed, &d, Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    assert_eq!(ops(&p), vec!["open_luks".to_string()], "{:?}", ops(&p));
    assert_eq!(p.behind_open, vec!["lv vg0/home".to_string()]);
    assert!(
        p.notes
            .iter()
            .any(|n| n.starts_with("lv vg0/home: its LUKS header is opened by this plan")),
        "{:?}",
        p.notes
    );
    // Opened, with its filesystem (unmounted) seen again: the mount follows.
    let mut open = kept;
    let fs = h
        .world()
        .filesystems
        .into_iter()
        .find(|f| f.mapper.is_some())
        .unwrap();
    open.filesystems.push(hyraid::observe::Filesystem {
        mountpoint: None,
        ..fs
    });
    let p = plan_for(&SimHost::new(open), &d, Policy::default());
    assert_eq!(
        ops(&p),
        vec!["mount_filesystem".to_string()],
        "{:?}",
        ops(&p)
    );
}

#[test]
fn an_lv_removed_while_its_mapping_is_open_is_refused() {
    let (_, h) = built();
    // Unmounted, but the mapping is open: lvremove would fail, hyraid never closes it.
    let mut w = h.world();
    for f in w.filesystems.iter_mut() {
        f.mountpoint = None;
    }
    let h = SimHost::new(w);
    let gone = file(
        "{ home: { size: 20GiB, state: absent, encryption: { key_file: /etc/hyraid/keys/home.key } } }",
    );
    let p = destroying(&h, &gone);
    let r = refusals(&p);
    assert!(
        r.contains("lv vg0/home: the LV is open as /dev/mapper/vg0-home_crypt"),
        "{r}"
    );
    assert!(!ops(&p).contains(&"remove_lv".to_string()), "{:?}", ops(&p));
    // The whole VG removed: the same.
    let p = vg_gone(&h);
    let r = refusals(&p);
    assert!(
        r.contains("lv vg0/home: the LV is open as /dev/mapper/vg0-home_crypt"),
        "{r}"
    );
    assert!(!ops(&p).contains(&"remove_vg".to_string()), "{:?}", ops(&p));
}

#[test]
fn the_file_is_checked_where_it_says_it() {
    let base = std::fs::read_to_string("examples/microserver-gen8-encrypted.yaml").unwrap();
    // A cached LV with encryption of its own, and a mapping name another device takes.
    let text = base.replace(
        "        pvs: [data0, data1]\n",
        "        pvs: [data0, data1]\n        encryption: { key_file: /etc/hyraid/keys/nc.key, name: data0_crypt }\n",
    );
    assert_ne!(text, base);
    let err = load_str("enc.yaml", &text).unwrap_err().to_string();
    assert!(err.contains("has both `encryption` and a cache"), "{err}");
    assert!(
        err.contains(
            "mirror `data0` and lv `vg0/nextcloud` are both opened as /dev/mapper/data0_crypt"
        ),
        "{err}"
    );
}

#[test]
fn the_built_box_is_imported_with_its_encrypted_lv_and_plans_empty() {
    let (_, h) = built();
    let obs = observe_bare(&h);
    let imp = hyraid::import::import(&obs);
    assert!(imp.skipped.is_empty(), "{:?}", imp.skipped);
    let yaml = hyraid::import::to_yaml(&imp);
    assert!(
        yaml.contains("        encryption:\n          key_file: /etc/hyraid/keys/home.key\n"),
        "{yaml}"
    );
    assert!(yaml.contains("          mount: /home\n"), "{yaml}");
    let d = load_str("imported.yaml", &yaml).unwrap();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(&s.step, Step::WriteFile(w) if w.path == "/etc/crypttab")),
        "{:?}",
        ops(&p)
    );
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
}

#[test]
fn an_encrypted_lv_that_grows_takes_its_mapping_and_filesystem_along() {
    let (_, h) = built();
    let d = file(&HOME.replace("size: 20GiB", "size: 30GiB"));
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    let o = ops(&p);
    assert_eq!(
        o,
        vec!["extend_lv", "resize_luks", "grow_filesystem"],
        "{o:?}"
    );
    assert!(
        lines(&p).contains(
            &"cryptsetup resize --key-file /etc/hyraid/keys/home.key vg0-home_crypt".to_string()
        ),
        "{:?}",
        lines(&p)
    );
    assert!(
        lines(&p)
            .iter()
            .any(|l| l == "resize2fs /dev/mapper/vg0-home_crypt"),
        "{:?}",
        lines(&p)
    );
    apply(&h, &d, Policy::default()).unwrap();
    let fs = h
        .world()
        .filesystems
        .into_iter()
        .find(|f| f.mapper.is_some())
        .unwrap();
    assert_eq!(fs.size, Some((30u64 << 30) - (16 << 20)));
    let again = plan_for(&h, &d, Policy::default());
    assert!(again.steps.is_empty(), "{:?}", ops(&again));
}

#[test]
fn what_the_review_found_is_refused_or_kept_out() {
    // A partition table inside the open mapping (no FSTYPE): not blank, so mkfs is destroying.
    let (d, h) = built();
    let mut w = h.world();
    for f in w.filesystems.iter_mut().filter(|f| f.mapper.is_some()) {
        f.fstype = "gpt partition table".into();
        f.mountpoint = None;
        f.uuid = None;
    }
    let p = plan_for(&SimHost::new(w), &d, Policy::default());
    let r = refusals(&p);
    assert!(
        r.contains("carries gpt partition table"),
        "{r} {:?}",
        ops(&p)
    );
    assert!(
        !ops(&p).contains(&"make_filesystem".to_string()),
        "{:?}",
        ops(&p)
    );
    // An encrypted LV that is not active: neither blank nor a header that is gone.
    let mut w = h.world();
    w.filesystems.retain(|f| f.vg != "vg0");
    w.luks.retain(|l| l.device != "vg0/home");
    w.other_devices.retain(|o| o.kind != "crypt");
    for l in w.lvm.lvs.iter_mut() {
        l.active = false;
    }
    let p = plan_for(&SimHost::new(w), &d, Policy::default());
    let r = refusals(&p);
    assert!(
        r.contains("lv vg0/home: the LV is not active or its device was not seen")
            && r.contains("lvchange -ay vg0/home"),
        "{r}"
    );
    assert!(!r.contains("its header is gone"), "{r}");
    assert!(
        !ops(&p).contains(&"format_luks".to_string()),
        "{:?}",
        ops(&p)
    );
    // /usr on an encrypted LV with a key file: Debian's initramfs would not open it.
    // (validate keeps / and /usr out of a file; a Desired built otherwise is checked again).
    let mut root = file(HOME);
    let home = root
        .volume_groups
        .get_mut("vg0")
        .unwrap()
        .lvs
        .get_mut("home")
        .unwrap();
    home.filesystem.as_mut().unwrap().mount = Some("/usr".into());
    let (_, blank) = example("microserver-gen8");
    let p = plan_for(&blank, &root, Policy::default());
    assert!(
        refusals(&p).contains("lv vg0/home would be mounted by the initramfs"),
        "{}",
        refusals(&p)
    );
    // Shrinking an encrypted LV is refused, never run.
    let p = plan_for(
        &h,
        &file(&HOME.replace("size: 20GiB", "size: 10GiB")),
        Policy {
            allow_destroy: true,
            ..Policy::default()
        },
    );
    assert!(
        refusals(&p).contains("hyraid does not shrink an encrypted LV"),
        "{}",
        refusals(&p)
    );
    // The whole VG removed, its LVs not listed, the mapping closed: hyraid's crypttab line goes.
    let mut w = h.world();
    for f in w.filesystems.iter_mut() {
        f.mountpoint = None;
    }
    w.filesystems.retain(|f| f.mapper.is_none());
    w.other_devices.retain(|o| o.kind != "crypt");
    for l in w.luks.iter_mut() {
        l.mapping = None;
    }
    let p = vg_gone(&SimHost::new(w));
    let tab = p.steps.iter().find_map(|s| match &s.step {
        Step::WriteFile(w) if w.path == "/etc/crypttab" => Some(w.content.clone()),
        _ => None,
    });
    assert!(
        tab.as_ref().is_some_and(|t| !t.contains("vg0-home_crypt")),
        "{tab:?} {:?} {}",
        ops(&p),
        refusals(&p)
    );
    assert!(ops(&p).contains(&"remove_vg".to_string()), "{:?}", ops(&p));
}
