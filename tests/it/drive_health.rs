//! Drive health in `hyraid status`, from smartctl's JSON: healthy drives say nothing; pending or
//! uncorrectable sectors, media errors, a critical warning or a failed assessment are degraded,
//! louder for the write-mostly member; reallocated sectors are a lint until they grow since
//! hyraid first saw the drive; a drive without SMART, or asleep, is said so as information; no
//! smartctl at all is a lint; the textfile carries the counters.

use crate::common;
use common::*;
use hyraid::observe::smart::{DriveHealth, Protocol};
use hyraid::plan::Policy;
use hyraid::sim::SimHost;
use hyraid::status::{Health, Records, Severity, with_records};

fn built() -> (hyraid::config::Desired, SimHost) {
    let (d, h) = example("single-pair");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}

fn ata(f: impl FnOnce(&mut DriveHealth)) -> DriveHealth {
    let mut h = DriveHealth {
        protocol: Some(Protocol::Ata),
        available: true,
        passed: Some(true),
        reallocated: Some(0),
        pending: Some(0),
        offline_uncorrectable: Some(0),
        power_on_hours: Some(20000),
        temperature: Some(38),
        ..Default::default()
    };
    f(&mut h);
    h
}

/// The drive findings of `status FILE` on `h` (`remember`: keep the counters, as a root run does).
fn drive_findings(
    h: &SimHost,
    d: &hyraid::config::Desired,
    remember: bool,
) -> Vec<hyraid::status::Finding> {
    let o = observe(h, d);
    let mut health = Health::read(h, &o, Some(d));
    let f = with_records(vec![], &o, Some(d), &Records::default(), &health, 0)
        .into_iter()
        .filter(|f| f.object.starts_with("disk ") || f.object == "host")
        .collect();
    if remember {
        health.remember(h, hyraid::history::now_secs()).unwrap();
    }
    f
}

fn with_smart(h: &SimHost, kname: &str, health: DriveHealth) -> SimHost {
    let mut w = h.world();
    w.smart.insert(kname.into(), health);
    SimHost::new(w)
}

#[test]
fn healthy_drives_say_nothing() {
    let (d, h) = built();
    assert!(
        drive_findings(&h, &d, false).is_empty(),
        "{:?}",
        drive_findings(&h, &d, false)
    );
}

#[test]
fn pending_sectors_on_the_write_mostly_hdd_are_degraded_and_say_why_it_matters() {
    let (d, h) = built();
    let h = with_smart(&h, "sdb", ata(|x| x.pending = Some(8)));
    let f = drive_findings(&h, &d, false);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].severity, f[0].object.as_str()),
        (Severity::Degraded, "disk hdd")
    );
    assert!(
        f[0].message
            .starts_with("8 pending sectors; it is a write-mostly member"),
        "{}",
        f[0].message
    );
    assert!(f[0].fix.contains("hyraid check"), "{}", f[0].fix);
    // The same count on the SSD (not write-mostly) is degraded too, without the member's words.
    let (d, h) = built();
    let h = with_smart(&h, "sda", ata(|x| x.offline_uncorrectable = Some(2)));
    let f = drive_findings(&h, &d, false);
    assert_eq!(f[0].message, "2 offline uncorrectable sectors");
}

#[test]
fn reallocated_sectors_are_a_lint_until_they_grow() {
    let (d, h) = built();
    let h = with_smart(&h, "sda", ata(|x| x.reallocated = Some(8)));
    let f = drive_findings(&h, &d, true);
    assert_eq!(f[0].severity, Severity::Lint, "{f:?}");
    assert_eq!(f[0].lint, Some("drive-reallocated"));
    // Seen again with more: the drive is getting worse.
    let mut w = h.world();
    w.smart.get_mut("sda").unwrap().reallocated = Some(24);
    let h = SimHost::new(w);
    let f = drive_findings(&h, &d, true);
    assert_eq!(f[0].severity, Severity::Degraded, "{f:?}");
    assert!(
        f[0].message
            .starts_with("reallocated sectors grew from 8 ("),
        "{}",
        f[0].message
    );
    assert!(f[0].message.ends_with(") to 24"), "{}", f[0].message);
    // On the write-mostly member, any reallocated count is degraded.
    let (d, h) = built();
    let h = with_smart(&h, "sdb", ata(|x| x.reallocated = Some(1)));
    assert_eq!(
        drive_findings(&h, &d, false)[0].severity,
        Severity::Degraded
    );
}

#[test]
fn a_failed_assessment_and_nvme_warnings_are_degraded() {
    let (d, h) = built();
    let h = with_smart(&h, "sda", ata(|x| x.passed = Some(false)));
    let f = drive_findings(&h, &d, false);
    assert!(
        f.iter()
            .any(|f| f.severity == Severity::Degraded
                && f.message.contains("SMART assessment FAILED")),
        "{f:?}"
    );
    let nvme = DriveHealth {
        protocol: Some(Protocol::Nvme),
        available: true,
        passed: Some(true),
        nvme_critical_warning: Some(4),
        nvme_media_errors: Some(3),
        nvme_percentage_used: Some(95),
        ..Default::default()
    };
    let (d, h) = built();
    let h = with_smart(&h, "sda", nvme);
    let f = drive_findings(&h, &d, false);
    let msgs: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
    assert!(msgs.contains(&"3 NVMe media errors"), "{msgs:?}");
    assert!(msgs.contains(&"NVMe critical warning 0x04"), "{msgs:?}");
    assert!(
        msgs.contains(&"95% of its rated endurance used"),
        "{msgs:?}"
    );
}

#[test]
fn a_drive_without_smart_or_asleep_is_information_and_no_smartctl_a_lint() {
    let (d, h) = built();
    let h = with_smart(
        &h,
        "sda",
        DriveHealth {
            available: false,
            ..Default::default()
        },
    );
    let h = with_smart(
        &h,
        "sdb",
        DriveHealth {
            standby: true,
            ..Default::default()
        },
    );
    let f = drive_findings(&h, &d, false);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f.iter().all(|f| f.severity == Severity::Info));
    assert!(f.iter().any(|f| f.message.starts_with("gives no SMART")));
    assert!(f.iter().any(|f| f.message.starts_with("asleep (standby)")));
    let mut w = h.world();
    w.missing_tools.push("smartctl".into());
    let h = SimHost::new(w);
    let f = drive_findings(&h, &d, false);
    assert_eq!((f.len(), f[0].lint), (1, Some("no-smart")), "{f:?}");
}

#[test]
fn the_textfile_carries_the_drives_counters() {
    let (_, h) = built();
    let h = with_smart(&h, "sdb", ata(|x| x.pending = Some(8)));
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("m.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let o = hyraid(&[
        "status",
        "examples/single-pair.yaml",
        "--sim",
        snap.to_str().unwrap(),
        "--format",
        "prometheus",
    ]);
    let t = text(&o).0;
    assert!(
        t.contains("hyraid_drive_pending_sectors{disk=\"hdd\",serial=\"ZA4000001\"} 8\n"),
        "{t}"
    );
    assert!(
        t.contains("hyraid_drive_write_mostly{disk=\"hdd\",serial=\"ZA4000001\"} 1\n"),
        "{t}"
    );
    assert!(
        t.contains("hyraid_drive_smart_passed{disk=\"ssd\",serial=\"2204E6000001\"} 1\n"),
        "{t}"
    );
    assert!(
        t.contains("# HELP hyraid_drive_temperature_celsius "),
        "{t}"
    );
}
