//! What the file names and the machine lacks is never "matches the file": a disk gone or
//! mistyped, a member md failed. The plan refuses it (exit 1, in the headline) and says what to
//! do; a failed member goes back into its mirror only when the user asks (`--re-add NAME`).

use crate::common;
use common::*;
use hyraid::plan::{Policy, Risk, Step};
use hyraid::sim::SimHost;

const HDD: &str = "/dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001";

/// single-pair, applied and in sync.
fn converged() -> (hyraid::config::Desired, SimHost) {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
    (d, h)
}

/// The HDD (sdb) is gone from a running machine: md keeps the array degraded without it.
fn hdd_gone(h: &SimHost) -> SimHost {
    let mut w = h.world();
    let kname = w
        .block_devices
        .iter()
        .find(|b| b.by_id.iter().any(|i| HDD.ends_with(i.as_str())))
        .unwrap()
        .kname
        .clone();
    w.block_devices.retain(|b| b.kname != kname);
    let a = w
        .arrays
        .iter_mut()
        .find(|a| a.name.as_deref() == Some("md-home"))
        .unwrap();
    a.members.retain(|m| m.kname != kname);
    a.degraded = 1;
    SimHost::new(w)
}

/// `hyraid plan FILE --sim SNAPSHOT ARGS…` on a snapshot of `h`: (exit code, stdout).
fn plan_cli(h: &SimHost, file: &str, args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("box.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let yaml = dir.path().join("hyraid.yaml");
    std::fs::write(&yaml, file).unwrap();
    let mut argv = vec![
        "plan",
        yaml.to_str().unwrap(),
        "--sim",
        snap.to_str().unwrap(),
    ];
    argv.extend_from_slice(args);
    let o = hyraid(&argv);
    (o.status.code().unwrap_or(-1), text(&o).0)
}

#[test]
fn a_member_gone_from_the_machine_is_refused_never_matches_the_file() {
    let (d, h) = converged();
    let h = hdd_gone(&h);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
    assert_eq!(p.refused.len(), 1, "{:#?}", p.refused);
    let r = &p.refused[0];
    assert_eq!(r.object, "disk hdd");
    assert!(
        r.reason.contains("not on this machine") && r.reason.contains("member of mirror md-home"),
        "{}",
        r.reason
    );
    assert!(
        r.fix.contains("reconnect") && r.fix.contains("disks.hdd"),
        "{}",
        r.fix
    );
    let shown = hyraid::render::text(&p, false);
    assert!(!shown.contains("matches the file"), "{shown}");
    // The README's drift check (plan --detailed-exitcode) fails on it.
    let file = std::fs::read_to_string("examples/single-pair.yaml").unwrap();
    let (code, out) = plan_cli(&h, &file, &["--detailed-exitcode"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        !out.contains("matches the file") && out.contains("disk hdd"),
        "{out}"
    );
    // status says it once: its own finding, with the plan's fix.
    let (f, _) = hyraid::status::check(&observe(&h, &d), Some(&d), None);
    let about: Vec<_> = f.iter().filter(|x| x.object == "disk hdd").collect();
    assert_eq!(about.len(), 1, "{f:#?}");
    assert!(about[0].fix.contains("disks.hdd"), "{:#?}", about[0]);
    // apply runs nothing and says why.
    assert!(matches!(
        apply(&h, &d, Policy::default()),
        Err(hyraid::apply::ApplyError::Refused { .. })
    ));
}

#[test]
fn a_mistyped_id_on_a_disk_that_only_sets_its_cache_is_refused_with_the_close_id() {
    let (_, h) = converged();
    let w = h.world();
    let hdd = w
        .block_devices
        .iter()
        .find(|b| b.rotational && b.parent.is_none())
        .unwrap();
    let id = hdd
        .by_id
        .iter()
        .find(|i| i.starts_with("ata-"))
        .unwrap()
        .clone();
    // One character off (the last digit of the serial).
    let mut typo = id.clone();
    let last = typo.pop().unwrap();
    typo.push(if last == '9' { '8' } else { '9' });
    let file = format!("version: 1\ndisks:\n  spare: {{ id: {typo}, write_cache: off }}\n");
    let (code, out) = plan_cli(&h, &file, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("matches the file"), "{out}");
    assert!(
        out.contains("disk `spare`") && out.contains("write cache is to be off"),
        "{out}"
    );
    assert!(
        out.contains(&format!("close to /dev/disk/by-id/{id}")),
        "{out}"
    );
    // The right id plans the change it asks for.
    let file = format!("version: 1\ndisks:\n  spare: {{ id: {id}, write_cache: off }}\n");
    let (code, out) = plan_cli(&h, &file, &["--detailed-exitcode"]);
    assert!(code == 2 || code == 0, "{out}");
}

#[test]
fn a_member_md_failed_goes_back_only_when_asked_and_the_step_is_marked() {
    let (d, h) = converged();
    assert_eq!(
        run(&h, &["mdadm", "/dev/md/md-home", "--fail", HDD]).status,
        0
    );
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        !p.steps
            .iter()
            .any(|s| matches!(s.step, Step::ReAddMember(_) | Step::AddMember(_))),
        "{:?}",
        ops(&p)
    );
    assert_eq!(p.refused.len(), 1, "{:#?}", p.refused);
    let r = &p.refused[0];
    assert!(
        r.reason.contains("member hdd") && r.reason.contains("has failed"),
        "{}",
        r.reason
    );
    assert!(
        r.fix.contains("disks.hdd")
            && r.fix.contains("--re-add hdd")
            && r.fix.contains("transient"),
        "{}",
        r.fix
    );
    // status says the same: failed, and the same two ways out.
    let obs = observe(&h, &d);
    let f = hyraid::status::status(&obs, Some(&d), None);
    assert!(
        f.iter()
            .any(|x| x.message.contains("has failed") && x.fix.contains("--re-add")),
        "{f:#?}"
    );
    // Asked for, the re-add is planned, marked, and says when it is right.
    let p = plan_for(&h, &d, re_add("hdd"));
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
    let back = p
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::ReAddMember(_)))
        .expect("re-add planned");
    assert_eq!(back.risk, Risk::DataAtRisk);
    assert!(
        back.reason.contains("--re-add hdd") && back.reason.contains("transient"),
        "{}",
        back.reason
    );
    apply(&h, &d, re_add("hdd")).unwrap();
    h.finish_syncs();
    assert!(plan_for(&h, &d, Policy::default()).is_empty());
    // On the command line too: without the flag, exit 1; with it, the step is shown.
    assert_eq!(
        run(&h, &["mdadm", "/dev/md/md-home", "--fail", HDD]).status,
        0
    );
    let file = std::fs::read_to_string("examples/single-pair.yaml").unwrap();
    let (code, out) = plan_cli(&h, &file, &[]);
    assert_eq!(code, 1, "{out}");
    let (code, out) = plan_cli(&h, &file, &["--re-add", "hdd"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("data-at-risk") || out.contains("[data"),
        "{out}"
    );
}

#[test]
fn re_add_of_a_name_that_is_no_member_is_refused_with_the_members() {
    let (d, h) = converged();
    let p = plan_for(&h, &d, re_add("hdd9"));
    assert_eq!(p.refused.len(), 1, "{:#?}", p.refused);
    assert!(
        p.refused[0].reason.contains("`hdd9`") && p.refused[0].fix.contains("ssd, hdd")
            || p.refused[0].fix.contains("hdd, ssd"),
        "{:#?}",
        p.refused
    );
    // A file without mirrors: no empty list, the flag is said to have nothing to act on.
    let d: hyraid::config::Desired = hyraid::config::load_str(
        "hyraid.yaml",
        "version: 1\ndisks:\n  ssd: { id: ata-CT500MX500SSD1_2204E6000001 }\n",
    )
    .unwrap();
    let p = plan_for(&h, &d, re_add("hdd"));
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "--re-add hdd")
        .unwrap();
    assert!(
        !r.fix.contains("members: )") && r.fix.contains("declares no mirror"),
        "{r:?}"
    );
}

#[test]
fn a_disk_pulled_before_a_reboot_names_mdadm_run_for_the_inactive_mirror() {
    let (d, h) = converged();
    let kname = h
        .world()
        .block_devices
        .iter()
        .find(|b| b.rotational && b.parent.is_none())
        .unwrap()
        .kname
        .clone();
    h.reboot_without_disk(&kname);
    let p = plan_for(&h, &d, Policy::default());
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "disk hdd")
        .expect("the missing disk is refused");
    // An array md has not started is not said to run complete.
    assert!(
        r.reason
            .contains("its array is assembled without it and not running")
            && !r.reason.contains("runs complete"),
        "{}",
        r.reason
    );
    // The kernel's device: udev gives an inactive array no /dev/md/NAME link.
    let md = h.world().array_named("md-home").unwrap().kname.clone();
    assert!(
        r.fix
            .contains(&format!("`mdadm --run /dev/{md}` starts it")),
        "{}",
        r.fix
    );
}

#[test]
fn a_gone_write_mostly_member_is_reported_as_degraded_not_as_a_write_behind_lint() {
    let (mut d, h) = example("single-pair");
    d.mirrors.get_mut("md-home").unwrap().write_behind = 256;
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let h = hdd_gone(&h);
    let f = hyraid::status::status(&observe(&h, &d), Some(&d), None);
    assert!(
        f.iter()
            .any(|x| x.severity == hyraid::status::Severity::Degraded
                && x.object.contains("md-home")),
        "{f:#?}"
    );
    assert!(
        !f.iter().any(|x| x.message.contains("write-behind")),
        "the missing member is not blamed on the file: {f:#?}"
    );
}

/// Captured on the real kernel by tests/vm/scenarios/36-failed-member.sh (bookworm).
fn captured(f: &str) -> hyraid::observe::Observed {
    let cap: hyraid::observe::capture::Capture = serde_json::from_str(
        &std::fs::read_to_string(format!("tests/fixtures/vm/{f}.json")).unwrap(),
    )
    .unwrap();
    hyraid::observe::observe(&hyraid::host::record::Replay::from(cap)).unwrap()
}

#[test]
fn real_kernel_captures_of_a_failed_and_a_pulled_member_are_refused() {
    let d = hyraid::config::load_file(std::path::Path::new("tests/vm/configs/failed-member.yaml"))
        .unwrap();
    let failed =
        hyraid::plan::plan(&d, &captured("failed-member-md-failed"), Policy::default()).unwrap();
    assert!(
        failed
            .refused
            .iter()
            .any(|r| r.reason.contains("member hdd0") && r.reason.contains("has failed")),
        "{:#?}",
        failed.refused
    );
    assert!(
        !failed
            .steps
            .iter()
            .any(|s| matches!(s.step, Step::ReAddMember(_)))
    );
    let gone =
        hyraid::plan::plan(&d, &captured("failed-member-hdd-gone"), Policy::default()).unwrap();
    assert!(
        gone.refused.iter().any(|r| r.object == "disk hdd0"),
        "{:#?}",
        gone.refused
    );
    let f = hyraid::status::status(&captured("failed-member-hdd-gone"), Some(&d), None);
    assert!(
        !f.iter().any(|x| x.message.contains("write-behind")),
        "{f:#?}"
    );
}

/// A member md is rebuilding: nothing for hyraid to do, yet the mirror has one complete copy.
/// The plan says so in its headline (never "matches the file"), --detailed-exitcode exits 2,
/// and once the recovery ends the same file matches and exits 0.
#[test]
fn a_mirror_rebuilding_a_member_is_not_yet_as_the_file_says() {
    let (d, h) = converged();
    for cmd in ["--fail", "--remove", "--add"] {
        let o = run(&h, &["mdadm", "/dev/md/md-home", cmd, HDD]);
        assert_eq!(o.status, 0, "{cmd}: {}", o.stderr);
    }
    // Put back by hand without write-mostly: apply sets it, and says the mirror is still
    // rebuilding rather than "matches the file".
    let opts = hyraid::apply::Options::default();
    let source = hyraid::apply::Source::Desired(Box::new(d.clone()));
    let out =
        hyraid::apply::apply(source, &h, &opts, &mut |_| Ok(()), &mut std::io::sink()).unwrap();
    assert_eq!(ops(&out.plan), ["set_write_mostly"]);
    assert!(out.applied.is_some());
    assert_eq!(out.waiting.len(), 1, "{:#?}", out.waiting);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty() && p.refused.is_empty(), "{:?}", ops(&p));
    assert!(!p.matches());
    assert_eq!(p.waiting.len(), 1, "{:#?}", p.waiting);
    assert!(
        p.waiting[0].contains("mirror md-home")
            && p.waiting[0].contains("rebuilding hdd (/dev/sdb)")
            && p.waiting[0].contains("one complete copy"),
        "{}",
        p.waiting[0]
    );
    let shown = hyraid::render::text(&p, false);
    assert!(!shown.contains("matches the file"), "{shown}");
    assert!(shown.contains("not yet as the file says"), "{shown}");
    let md = hyraid::render::markdown(&p);
    assert!(!md.contains("matches the file"), "{md}");
    let file = std::fs::read_to_string("examples/single-pair.yaml").unwrap();
    let (code, out) = plan_cli(&h, &file, &["--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("md is rebuilding hdd"), "{out}");
    // Without --detailed-exitcode there is nothing to change and nothing refused.
    assert_eq!(plan_cli(&h, &file, &[]).0, 0);
    h.finish_syncs();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.matches(), "{:#?}", p.waiting);
    let (code, out) = plan_cli(&h, &file, &["--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("matches the file"), "{out}");
}

/// On a blank machine a mirror member's id mistyped by one character: the mirror cannot be
/// made, and its refusal names the id on the machine that is one character away.
#[test]
fn a_mistyped_member_id_on_a_blank_machine_names_the_close_id() {
    let (mut d, h) = example("single-pair");
    d.disks.get_mut("hdd").unwrap().id = Some("ata-ST500DM009-2F110A_ZA4000002".into());
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "mirror md-home")
        .expect("the mirror is refused");
    assert!(
        r.reason.contains(
            "the id is close to /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001, which is on this machine"
        ) && r.reason.contains("`disks.hdd.id`"),
        "{}",
        r.reason
    );
}

/// vg0 on two mirrors, and one of them gone with both its disks: LVM reports the VG partial.
/// Nothing of it is planned and the plan refuses it with how to bring the PV back, never
/// "matches the file".
#[test]
fn a_vg_missing_a_pv_is_refused_with_how_to_bring_it_back() {
    let pvs = "data0, data1";
    let lvs = "{ files: { size: 100GiB } }";
    let d = two_pair_file(pvs, lvs);
    let h = two_pair_built(pvs, lvs);
    let mut w = h.world();
    for vg in w.lvm.vgs.iter_mut().filter(|v| v.name == "vg0") {
        vg.partial = true;
    }
    let h = SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
    let r = p
        .refused
        .iter()
        .find(|r| r.object == "vg vg0")
        .expect("vg0 refused");
    assert!(
        r.reason.contains("missing a PV (LVM reports it partial)"),
        "{}",
        r.reason
    );
    assert!(
        r.fix.contains("pvs -o pv_name,vg_name,pv_missing")
            && r.fix
                .contains("vgreduce --removemissing` only once its data is given up"),
        "{}",
        r.fix
    );
    assert!(!hyraid::render::text(&p, false).contains("matches the file"));
}
