//! What stands on an array udev assembled and did not start (a member gone at boot) cannot be
//! read: LVM sees no PV there, lsblk no signature and no holder. It is unknown, never blank: the
//! plan starts the array and plans what stands on it only once it runs (apply plans again, shows
//! and asks), and never shows or runs a create or a mkfs for it. For each kind of content hyraid
//! manages: a PV with its VG and LV, a LUKS header with a PV inside, a filesystem on the array
//! itself, and an array of partitions.

use crate::common;

use common::*;
use hyraid::config::Desired;
use hyraid::observe::Observed;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

/// What makes a new object over a device: never planned for what an inactive array carries.
const CREATES: [&str; 6] = [
    "create_pv",
    "create_vg",
    "create_lv",
    "make_filesystem",
    "format_luks",
    "create_array",
];
/// The same among the commands run.
const CREATE_COMMANDS: [&str; 6] = [
    "pvcreate",
    "vgcreate",
    "lvcreate",
    "mkfs",
    "cryptsetup luksFormat",
    "mdadm --create",
];

/// Each kind of content: (what, the file, the machine built from it and synced, the HDD's id).
pub(crate) fn built() -> Vec<(&'static str, Desired, SimHost, &'static str)> {
    let mut v = Vec::new();
    let (d, h) = example("single-pair");
    v.push((
        "a PV, its VG and LV",
        d,
        h,
        "ata-ST500DM009-2F110A_ZA4000001",
    ));
    let (d, h) = example("microserver-gen8-encrypted");
    v.push(("a LUKS header with a PV inside", d, h, HDD0));
    let d = common::fs::mirror_file("{ type: ext4, mount: /srv/backup }");
    v.push(("a filesystem on the array", d, common::fs::machine(), HDD0));
    let (d, h) = example("microserver-partitioned");
    v.push(("an array of partitions", d, h, HDD0));
    for (what, d, h, _) in &v {
        apply(h, d, Policy::default()).unwrap_or_else(|e| panic!("{what}: build: {e}"));
        h.finish_syncs();
        assert!(plan_for(h, d, Policy::default()).matches(), "{what}: built");
    }
    v
}

pub(crate) const HDD0: &str = "ata-ST1000LM048-2E7172_WDE00001";
pub(crate) const NEW_ID: &str = "ata-ST1000LM048-2E7172_WDE00099";

pub(crate) fn kname_of(w: &Observed, id: &str) -> String {
    w.block_devices
        .iter()
        .find(|b| b.by_id.iter().any(|i| i == id))
        .unwrap_or_else(|| panic!("{id} on the machine"))
        .kname
        .clone()
}

/// The disk with `id` gone across a reboot, a blank one of its kind in another bay; the file
/// unchanged.
pub(crate) fn pulled(h: &SimHost, id: &str) -> SimHost {
    let mut w = h.world();
    let old = kname_of(&w, id);
    plug_blank_disk(&mut w, &old, "sdz", 250, "WDE00099", NEW_ID);
    let h = SimHost::new(w);
    h.reboot_without_disk(&old);
    assert!(
        h.world().arrays.iter().any(|a| a.array_state == "inactive"),
        "an array assembled and not running"
    );
    h
}

/// The things the content is made of, by identity: the VG and LV uuids, the LUKS headers'
/// and filesystems' uuids.
fn contents(w: &Observed) -> Vec<String> {
    let mut v: Vec<String> = w.lvm.vgs.iter().map(|g| format!("vg {}", g.uuid)).collect();
    v.extend(w.lvm.lvs.iter().map(|l| format!("lv {}", l.uuid)));
    v.extend(
        w.luks
            .iter()
            .filter_map(|l| l.uuid.clone())
            .map(|u| format!("luks {u}")),
    );
    v.extend(
        w.filesystems
            .iter()
            .filter_map(|f| f.uuid.clone())
            .map(|u| format!("fs {u}")),
    );
    v.sort();
    v
}

#[test]
fn with_the_disk_missing_nothing_on_the_array_is_shown_as_made() {
    for (what, d, h, id) in built() {
        let h = pulled(&h, id);
        let p = plan_for(&h, &d, Policy::default());
        assert!(
            p.refused.iter().any(
                |r| r.reason.contains("not found") || r.reason.contains("assembled without it")
            ),
            "{what}: the missing disk is refused: {:#?}",
            p.refused
        );
        let o = ops(&p);
        assert!(o.contains(&"start_array".to_string()), "{what}: {o:?}");
        assert!(
            !o.iter().any(|s| CREATES.contains(&s.as_str())),
            "{what}: a create or mkfs for content nobody could read: {o:?}\n{}",
            hyraid::render::text(&p, false)
        );
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("assembled but not running")),
            "{what}: the plan says what it cannot see: {:?}",
            p.notes
        );
        assert!(!p.behind_open.is_empty(), "{what}: {:?}", p.behind_open);
        // status says the same, with the command that starts it (not `--assemble --scan`, which
        // does nothing to an array already assembled).
        let o = observe(&h, &d);
        let a = o
            .arrays
            .iter()
            .find(|a| a.array_state == "inactive")
            .unwrap();
        let f = hyraid::status::status(&o, Some(&d), None);
        assert!(
            f.iter().any(|x| x
                .message
                .contains("assembled but not running (1 of 2 members present)")
                && x.fix.contains(&format!("mdadm --run /dev/{}", a.kname))),
            "{what}: {f:#?}"
        );
    }
}

#[test]
fn a_new_disk_in_its_place_starts_and_rebuilds_the_array_and_leaves_its_contents_alone() {
    for (what, mut d, h, id) in built() {
        let before = contents(&h.world());
        let h = pulled(&h, id);
        let name = d
            .disks
            .values()
            .find(|s| s.id.as_deref() == Some(id))
            .unwrap()
            .name
            .clone();
        d.disks.get_mut(&name).unwrap().id = Some(NEW_ID.into());
        let p = plan_for(&h, &d, Policy::default());
        assert!(p.refused.is_empty(), "{what}: {:#?}", p.refused);
        let o = ops(&p);
        let start = o.iter().position(|s| s == "start_array");
        let add = o.iter().position(|s| s == "add_member");
        assert!(
            start.is_some() && add.is_some() && start < add,
            "{what}: start, then the new disk: {o:?}"
        );
        assert!(
            !o.iter().any(|s| CREATES.contains(&s.as_str())),
            "{what}: {o:?}"
        );
        // apply starts the array, adds the disk, plans again what it can read now: nothing to
        // make, the content is there.
        h.clear_log();
        apply(&h, &d, Policy::default()).unwrap_or_else(|e| panic!("{what}: apply: {e}"));
        let ran = changes(&h);
        assert!(
            !ran.iter()
                .any(|c| CREATE_COMMANDS.iter().any(|x| c.starts_with(x))),
            "{what}: ran {ran:#?}"
        );
        h.finish_syncs();
        let again = plan_for(&h, &d, Policy::default());
        assert!(
            again.matches(),
            "{what}: converged\n{}",
            hyraid::render::text(&again, false)
        );
        assert_eq!(contents(&h.world()), before, "{what}: the same objects");
    }
}

/// A saved plan runs what its reviewer saw: the start and the add, then it stops and says to
/// plan again (what stands on the array was not in it).
#[test]
fn a_saved_plan_stops_after_the_start() {
    let (_, _, h, id) = built().remove(0);
    let h = pulled(&h, id);
    let file = "examples/single-pair.yaml";
    let text = std::fs::read_to_string(file).unwrap().replace(id, NEW_ID);
    let d = hyraid::config::load_str(file, &text).unwrap();
    let p = saved_plan(file, &text, &observe(&h, &d), Policy::default());
    assert_eq!(ops(&p), ["start_array", "add_member"]);
    let o = apply_saved(&h, p, Policy::default()).unwrap();
    assert!(
        o.waiting
            .iter()
            .any(|w| w.contains("run `hyraid plan` again")),
        "{:?}",
        o.waiting
    );
    assert!(
        !changes(&h)
            .iter()
            .any(|c| CREATE_COMMANDS.iter().any(|x| c.starts_with(x))),
        "{:#?}",
        changes(&h)
    );
    // Planned again, what stands on the array is there: nothing to make.
    h.finish_syncs();
    let again = plan_for(&h, &d, Policy::default());
    assert!(again.matches(), "{}", hyraid::render::text(&again, false));
}
