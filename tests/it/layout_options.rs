//! Layout options fixed at creation: a mirror's superblock format (`metadata: "1.0"`), a
//! striped LV's stripe size (`stripe_size`), and the md name that must fit the superblock with
//! the host's name. The exact commands, convergence, and the refusals when an existing object
//! differs.

use crate::common;

use common::*;
use hyraid::config::{Desired, load_str};
use hyraid::plan::{Policy, plan};
use hyraid::sim::SimHost;

/// The microserver's two hybrid mirrors, `data0` with `metadata`, and a 2-stripe LV over both
/// with `stripe_size`.
fn file(host: Option<&str>, metadata: &str, stripe_size: &str, mirror: &str) -> Desired {
    let host = host.map(|h| format!("host: {h}\n")).unwrap_or_default();
    load_str(
        "layout.yaml",
        &format!(
            r#"version: 1
{host}disks:
  ssd0: {{ id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A }}
  ssd1: {{ id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100002B }}
  hdd0: {{ id: ata-ST1000LM048-2E7172_WDE00001 }}
  hdd1: {{ id: ata-ST1000LM048-2E7172_WDE00002 }}
mirrors:
  {mirror}: {{ members: [ssd0, hdd0]{metadata} }}
  data1: {{ members: [ssd1, hdd1] }}
volume_groups:
  vg0:
    pvs: [{mirror}, data1]
    lvs:
      striped: {{ size: 100GiB, stripes: 2{stripe_size} }}
"#
        ),
    )
    .unwrap()
}

fn machine() -> SimHost {
    example("microserver-gen8").1
}

fn built(metadata: &str, stripe_size: &str) -> (Desired, SimHost) {
    let d = file(Some("microserver8"), metadata, stripe_size, "data0");
    let h = machine();
    apply(&h, &d, Policy::default()).unwrap();
    (d, h)
}

#[test]
fn metadata_1_0_and_a_stripe_size_build_and_converge() {
    let (d, h) = built(r#", metadata: "1.0""#, ", stripe_size: 128KiB");
    let made: Vec<String> = changes(&h)
        .into_iter()
        .filter(|c| c.starts_with("mdadm --create") || c.starts_with("lvcreate"))
        .collect();
    assert_eq!(made.len(), 3, "{made:#?}");
    assert!(
        made[0].starts_with(
            "mdadm --create /dev/md/data0 --metadata=1.0 --level=1 --raid-devices=2 --bitmap=internal --bitmap-chunk=64M --uuid="
        ),
        "{}",
        made[0]
    );
    assert!(
        made[1].starts_with("mdadm --create /dev/md/data1 --metadata=1.2 "),
        "{}",
        made[1]
    );
    assert_eq!(
        made[2],
        "lvcreate --yes -n striped -L 107374182400b -i 2 -I 128k vg0"
    );
    // What the machine reports: /proc/mdstat and sysfs name the format; the member carries its
    // superblock at its end; the LVM report has the stripe size.
    let o = observe(&h, &d);
    let a = o
        .arrays
        .iter()
        .find(|a| a.name.as_deref() == Some("data0"))
        .unwrap();
    assert_eq!(a.superblock_version(), "1.0");
    let member = o.device(&a.members[0].kname).unwrap();
    let probe = run(
        &h,
        &[
            "wipefs",
            "--no-act",
            "--json",
            &format!("/dev/{}", member.kname),
        ],
    );
    let at = format!("{:#x}", ((member.size / 512 - 16) & !7) * 512);
    assert!(
        probe.stdout.contains(&at) && probe.stdout.contains("linux_raid_member"),
        "the superblock 8 to 12 KiB before the end ({at}): {}",
        probe.stdout
    );
    assert_eq!(a.size_kib, {
        // Each member's space before its own end reserve (mdadm 4.2, metadata 1.0).
        let min = [&a.members[0].kname, &a.members[1].kname]
            .iter()
            .map(|k| o.device(k).unwrap().size / 512)
            .min()
            .unwrap();
        (hyraid::plan::capacity::md_avail_1_0(min).unwrap() / 2) & !63
    });
    let lv = o.lvm.lvs.iter().find(|l| l.name == "striped").unwrap();
    assert_eq!((lv.stripes, lv.stripe_size), (2, Some(128 << 10)));
    let conf = o.boot.mdadm_conf.clone().unwrap_or_default();
    assert!(
        conf.contains("ARRAY /dev/md/data0 metadata=1.0 UUID="),
        "{conf}"
    );
    assert!(
        conf.contains("ARRAY /dev/md/data1 metadata=1.2 UUID="),
        "{conf}"
    );
    // Converged: the second plan is empty.
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty() && p.refused.is_empty(), "{:#?}", p.steps);
}

#[test]
fn the_plan_says_the_format_and_the_stripe_size() {
    let d = file(
        Some("microserver8"),
        r#", metadata: "1.0""#,
        ", stripe_size: 256KiB",
        "data0",
    );
    let p = plan_for(&machine(), &d, Policy::default());
    let text = hyraid::render::text(&p, false);
    assert!(
        text.contains("metadata 1.0 (superblock at the end)"),
        "{text}"
    );
    assert!(text.contains("2 stripes of 256.00 KiB"), "{text}");
}

#[test]
fn lvm_default_stripe_size_is_observed_and_not_required() {
    // Without `stripe_size`, LVM's 64 KiB default is what the LV gets; the file does not ask.
    let (d, h) = built("", "");
    assert!(
        changes(&h).contains(&"lvcreate --yes -n striped -L 107374182400b -i 2 vg0".to_string())
    );
    let o = observe(&h, &d);
    let lv = o.lvm.lvs.iter().find(|l| l.name == "striped").unwrap();
    assert_eq!(lv.stripe_size, Some(64 << 10));
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn a_different_format_on_an_existing_array_is_refused() {
    let (_, h) = built("", "");
    let d = file(Some("microserver8"), r#", metadata: "1.0""#, "", "data0");
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:#?}", p.steps);
    assert_eq!(p.refused.len(), 1, "{:#?}", p.refused);
    assert_eq!(p.refused[0].object, "mirror data0");
    assert_eq!(
        p.refused[0].reason,
        "/dev/md/data0 has metadata 1.2, the file says 1.0; the superblock format of an existing array cannot be changed (re-creating the array destroys its data)"
    );
    assert_eq!(p.refused[0].fix, r#"set `metadata: "1.2"` in the file"#);
}

#[test]
fn a_different_stripe_size_on_an_existing_lv_is_refused() {
    let (_, h) = built("", ", stripe_size: 128KiB");
    let d = file(Some("microserver8"), "", ", stripe_size: 64KiB", "data0");
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:#?}", p.steps);
    assert_eq!(p.refused.len(), 1, "{:#?}", p.refused);
    assert_eq!(p.refused[0].object, "lv vg0/striped");
    assert_eq!(
        p.refused[0].reason,
        "has a stripe size of 128.00 KiB, the file says 64.00 KiB; the stripe size of an existing LV cannot be changed in place"
    );
    assert_eq!(
        p.refused[0].fix,
        "set `stripe_size: 128KiB` in the file (a different one means a new LV and copying the data)"
    );
}

#[test]
fn a_stripe_size_over_the_extent_size_is_refused() {
    let d = file(Some("microserver8"), "", ", stripe_size: 8MiB", "data0");
    let p = plan_for(&machine(), &d, Policy::default());
    let r: Vec<_> = p
        .refused
        .iter()
        .filter(|r| r.object == "lv vg0/striped")
        .collect();
    assert_eq!(r.len(), 1, "{:#?}", p.refused);
    assert_eq!(
        r[0].reason,
        "stripe size 8.00 MiB is larger than the extent size 4.00 MiB of VG vg0; lvcreate would reduce it to 4.00 MiB"
    );
    assert_eq!(r[0].fix, "set `stripe_size: 4MiB` or less");
}

#[test]
fn the_sim_lvcreate_takes_and_checks_stripe_sizes() {
    let (_, h) = built("", "");
    let out = run(
        &h,
        &[
            "lvcreate",
            "--yes",
            "-n",
            "x",
            "-L",
            "1073741824b",
            "-i",
            "2",
            "-I",
            "3k",
            "vg0",
        ],
    );
    assert_ne!(out.status, 0);
    assert_eq!(out.stderr, "  Invalid stripe size 3.00 KiB.\n");
    let out = run(
        &h,
        &[
            "lvcreate",
            "--yes",
            "-n",
            "y",
            "-L",
            "1073741824b",
            "-I",
            "64k",
            "vg0",
        ],
    );
    assert_eq!(out.status, 0);
    assert!(
        out.stdout
            .starts_with("  Ignoring stripesize argument with single stripe.\n"),
        "{}",
        out.stdout
    );
    let out = run(
        &h,
        &[
            "lvcreate",
            "--yes",
            "-n",
            "z",
            "-L",
            "1073741824b",
            "-i",
            "2",
            "-I",
            "8m",
            "vg0",
        ],
    );
    assert_eq!(out.status, 0);
    assert!(
        out.stdout.starts_with(
            "  Reducing requested stripe size 8.00 MiB to maximum, physical extent size 4.00 MiB.\n"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn a_name_too_long_with_the_machines_hostname_is_refused_at_plan() {
    // No `host:` in the file: the observed hostname decides. "microserver8:" is 13 characters,
    // so 18 are left for the name.
    let long = "a-mirror-of-19-chrs";
    let d = file(None, "", "", long);
    let p = plan(&d, &observe(&machine(), &d), Policy::default()).unwrap();
    let r: Vec<_> = p
        .refused
        .iter()
        .filter(|r| r.object == format!("mirror {long}"))
        .collect();
    assert_eq!(r.len(), 1, "{:#?}", p.refused);
    assert_eq!(
        r[0].reason,
        "cannot create: the array's name in its superblock would be `microserver8:a-mirror-of-19-chrs`, 32 characters; mdadm keeps at most 31 (homehost:name), and beyond that writes the name without the host, so the array would not be this host's"
    );
    assert_eq!(
        r[0].fix,
        "shorten the mirror's name to at most 18 characters, or the hostname"
    );
    assert!(
        !p.steps
            .iter()
            .any(|s| serde_json::to_string(&s.step).unwrap().contains(long)),
        "nothing is built on it"
    );
    // 18 characters fit.
    let d = file(None, "", "", "a-mirror-of-18-chr");
    let p = plan(&d, &observe(&machine(), &d), Policy::default()).unwrap();
    assert!(p.refused.is_empty(), "{:#?}", p.refused);
}

#[test]
fn the_sim_mdadm_drops_the_host_from_a_name_that_does_not_fit() {
    let d = file(Some("microserver8"), "", "", "a-mirror-of-18-chr");
    let h = machine();
    apply(&h, &d, Policy::default()).unwrap();
    let o = observe(&h, &d);
    let k = &o
        .arrays
        .iter()
        .find(|a| a.name.as_deref() == Some("a-mirror-of-18-chr"))
        .unwrap()
        .members[0]
        .kname;
    let out = run(
        &h,
        &["mdadm", "--examine", "--export", &format!("/dev/{k}")],
    );
    assert!(
        out.stdout
            .contains("MD_NAME=microserver8:a-mirror-of-18-chr\n"),
        "{}",
        out.stdout
    );
}
