//! Changes that plan the step kinds no build or day-2 change above plans: a wipe before a
//! create, an auto-read-only array made writable, an array started after a reboot without its
//! disk, write-behind and writecache settings set in place, removals (LV, VG, mirror), a pvmove
//! resumed, a PV label left by a stopped removal, partitions the kernel has not registered, and
//! the superblock a replaced disk keeps. The crash matrix (tests/it/crash.rs) names any kind no case
//! plans.

use super::Case;
use crate::common::*;
use hyraid::config::Desired;
use hyraid::observe::Observed;
use hyraid::plan::{Command, Policy};
use hyraid::render::command_line;
use hyraid::sim::SimHost;

/// What the case's plan removes on purpose: its wipes, stops and removals are the change asked
/// for (every other destroying command in a crash run is a failure).
fn planned_removals(before: &Observed, d: &Desired, policy: &Policy) -> Vec<String> {
    plan_for(&SimHost::new(before.clone()), d, policy.clone())
        .steps
        .iter()
        .flat_map(|s| s.step.commands())
        .filter(|c| matches!(c, Command::Run { .. }))
        .map(|c| command_line(&c))
        .collect()
}

fn case(name: &str, desired: Desired, before: Observed, policy: Policy) -> Case {
    Case {
        name: name.into(),
        allowed_removals: planned_removals(&before, &desired, &policy),
        desired,
        before,
        finally: None,
        policy,
    }
}

fn converged(name: &str) -> (Desired, SimHost) {
    let (d, h) = example(name);
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}

fn ok(h: &SimHost, cmd: &str) {
    let o = run(h, &cmd.split(' ').collect::<Vec<_>>());
    assert_eq!(o.status, 0, "{cmd}: {}", o.stderr);
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let allow = Policy::destroying(true);

    // An old ext4 on the HDD: wiped (allowed) before the mirror is made.
    let (d, h) = with_content("ext4", "0x438");
    let w = h.world();
    v.push(case(
        "fresh build over an old ext4 (--allow-destroy)",
        d,
        w,
        allow.clone(),
    ));

    // After a reboot the array is auto-read-only: made writable before its bitmap is re-chunked.
    let (mut d, h) = converged("single-pair");
    let mut w = h.world();
    w.arrays[0].array_state = "read-auto".into();
    d.mirrors.get_mut("md-home").unwrap().bitmap_chunk = Some(256 << 20);
    v.push(case(
        "re-chunk the bitmap of an auto-read-only array",
        d,
        w,
        Policy::default(),
    ));

    // The HDD died and the box rebooted with a blank disk in its bay: the array waits, inactive.
    let (mut d, h) = converged("single-pair");
    let mut w = h.world();
    let id = "ata-ST500DM009-2F110A_ZA4000099";
    plug_blank_disk(&mut w, "sdb", "sdc", 32, "ZA4000099", id);
    let h = SimHost::new(w);
    h.reboot_without_disk("sdb");
    d.disks.get_mut("hdd").unwrap().id = Some(id.into());
    v.push(case(
        "start an array left inactive and rebuild onto a new disk",
        d,
        h.world(),
        Policy::default(),
    ));

    // Write-behind and writecache settings set in place.
    let (mut d, h) = converged("single-pair");
    d.mirrors.get_mut("md-home").unwrap().write_behind = 256;
    v.push(case("set write-behind", d, h.world(), Policy::default()));
    let (mut d, h) = converged("microserver-gen8");
    let wc = nextcloud(&mut d).writecache.as_mut().unwrap();
    wc.settings.insert("high_watermark".into(), "60".into());
    v.push(case(
        "change writecache settings",
        d,
        h.world(),
        Policy::default(),
    ));

    // Removals the file asks for (state: absent), allowed.
    let (mut d, h) = converged("microserver-gen8");
    nextcloud(&mut d).absent = true;
    v.push(case(
        "remove an LV (--allow-destroy)",
        d,
        h.world(),
        allow.clone(),
    ));
    let (mut d, h) = converged("single-pair");
    d.volume_groups.get_mut("home").unwrap().absent = true;
    d.mirrors.get_mut("md-home").unwrap().absent = true;
    v.push(case(
        "remove a VG and its mirror (--allow-destroy)",
        d,
        h.world(),
        allow.clone(),
    ));

    // A pvmove whose apply and machine died: resumed by bare `pvmove`.
    let h = two_pair_built("data0, data1", "{ data: { size: 100GiB } }");
    let d = two_pair_file("data1", "{ data: { size: 100GiB } }");
    ok(&h, "pvmove --background /dev/md/data0 /dev/md/data1");
    h.stall_moves();
    v.push(case(
        "resume a pvmove that died",
        d,
        h.world(),
        Policy::default(),
    ));

    // A PV removal stopped between vgreduce and pvremove: its label goes.
    let h = two_pair_built("data0, data1", "{ data: { size: 10GiB, pvs: [data0] } }");
    let d = two_pair_file("data0", "{ data: { size: 10GiB, pvs: [data0] } }");
    ok(&h, "vgreduce vg0 /dev/md/data1");
    v.push(case(
        "a PV label left by a stopped removal",
        d,
        h.world(),
        Policy::default(),
    ));

    // Partitions written to the table, the apply killed before partx: the kernel lacks them.
    let (full, h) = killed_before_partx();
    v.push(case(
        "partitions in the table, not yet in the kernel",
        full,
        h.world(),
        Policy::default(),
    ));

    // A hot replace whose old disk stays declared: its superblock is erased after the copy.
    let (mut d, h) = converged("single-pair");
    let mut w = h.world();
    let new_id = "ata-ST500DM009-2F110A_ZA4000098";
    plug_blank_disk(&mut w, "sdb", "sdc", 32, "ZA4000098", new_id);
    let mut spec = d.disks["hdd"].clone();
    spec.name = "hdd2".into();
    spec.id = Some(new_id.into());
    spec.serial = None;
    d.disks.insert("hdd2".into(), spec);
    d.mirrors.get_mut("md-home").unwrap().members = vec!["ssd".into(), "hdd2".into()];
    v.push(case(
        "hot-replace a disk that stays declared",
        d,
        w,
        Policy::default(),
    ));
    v
}

/// A box where systemd runs, hyraid is installed, md's monitor is stopped and Debian 13's
/// scheduled check is enabled: what the file's `check:` and `alerts:` change.
pub fn monitored_box(name: &str) -> (Desired, SimHost) {
    let (d, h) = example(name);
    let mut w = h.world();
    w.boot.systemd = true;
    let m = &mut w.boot.monitoring;
    m.hyraid_path = Some("/usr/bin/hyraid".into());
    m.mdmonitor = Some("inactive".into());
    m.enabled.insert("mdcheck_start.timer".into());
    m.enabled.insert("mdcheck_continue.timer".into());
    // The webhook's token file (MONITORING_YAML) is on the machine.
    m.alert_files.insert("/etc/hyraid/hook.token".into(), true);
    (d, SimHost::new(w))
}

/// The file's checks and alerts, as YAML appended to an example's text.
pub const MONITORING_YAML: &str = "
check:
  budget: 4h
  speed_max: 100MiB
  distribution: off
alerts:
  webhook: { url: \"https://hooks.example.com/nas\", token_file: /etc/hyraid/hook.token }
";

pub fn monitoring_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let text = std::fs::read_to_string("examples/single-pair.yaml").unwrap() + MONITORING_YAML;
    let d = hyraid::config::load_str("monitored.yaml", &text).unwrap();
    let (_, h) = monitored_box("single-pair");
    v.push(case(
        "fresh build with checks and alerts, the release's schedule off",
        d.clone(),
        h.world(),
        Policy::default(),
    ));
    // Built and monitored; then the file checks no mirror and keeps its alerts: the timer goes.
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut none = d.clone();
    for m in none.mirrors.values_mut() {
        m.check = None;
    }
    v.push(case(
        "a mirror's check dropped from the file",
        none,
        h.world(),
        Policy::default(),
    ));
    v
}

/// Every change `hyraid tune` makes, and the way back: the file's state to each configuration
/// the layout allows (write-mostly off, each write-behind value, the drive cache, a writecache)
/// and each back to the file's; a scratch LV made, and one a killed run left (with a writecache
/// attached) removed.
pub fn tune_cases() -> Vec<Case> {
    use hyraid::config::desired::DeviceRef;
    let mut v = Vec::new();
    let (d, h) = crate::common::tune::tune_box();
    let obs = observe(&h, &d);
    let cache = Some((DeviceRef::Disk("ssd2".into()), 1 << 30));
    for c in hyraid::tune::configs(&d, &obs, "vg0", "data", true, cache)
        .into_iter()
        .skip(1)
    {
        v.push(case(
            &format!("tune: to {}", c.name),
            c.desired.clone(),
            h.world(),
            Policy::default(),
        ));
        let there = SimHost::new(h.world());
        apply(&there, &c.desired, Policy::default()).unwrap();
        there.finish_syncs();
        v.push(case(
            &format!("tune: back from {}", c.name),
            d.clone(),
            there.world(),
            Policy::default(),
        ));
    }
    let mut scratch = d.clone();
    scratch.volume_groups.get_mut("vg0").unwrap().lvs.insert(
        hyraid::config::TUNE_LV.into(),
        hyraid::config::LvSpec {
            name: hyraid::config::TUNE_LV.into(),
            size: hyraid::config::size::LvSize::Bytes(2 << 30),
            pvs: Some(vec![DeviceRef::Mirror("data0".into())]),
            stripes: None,
            stripe_size: None,
            writecache: None,
            cache: None,
            filesystem: None,
            encryption: None,
            absent: false,
            tags: vec![hyraid::config::TUNE_TAG.into()],
        },
    );
    v.push(case(
        "tune: a scratch LV made",
        scratch.clone(),
        h.world(),
        Policy::default(),
    ));
    let left = SimHost::new(h.world());
    let mut cached = scratch.clone();
    cached
        .volume_groups
        .get_mut("vg0")
        .unwrap()
        .lvs
        .get_mut(hyraid::config::TUNE_LV)
        .unwrap()
        .writecache = Some(hyraid::config::WritecacheSpec {
        size: 1 << 30,
        pvs: vec![DeviceRef::Disk("ssd2".into())],
        settings: Default::default(),
    });
    apply(&left, &cached, Policy::default()).unwrap();
    v.push(case(
        "tune: a killed run's scratch LV (with a writecache) removed",
        d.clone(),
        left.world(),
        Policy::default(),
    ));
    v
}
