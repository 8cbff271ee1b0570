//! Drive health in `hyraid status`, from smartctl's JSON: healthy drives say nothing; pending or
//! uncorrectable sectors, media errors, a critical warning or a failed assessment are degraded,
//! louder for the write-mostly member; reallocated sectors are a lint until they grow since
//! hyraid first saw the drive; a drive without SMART, or asleep, is said so as information; one
//! smartctl cannot open (gone, not answering) is degraded in smartctl's words, and a run that may
//! not open it an error; SAS drives with SMART "Disabled" are read whole; no smartctl at all is a
//! lint; the textfile carries the counters and whether each drive could be read.

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

/// `status examples/single-pair.yaml --format prometheus` of `h`, through a snapshot.
fn textfile(h: &SimHost) -> String {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("m.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let s = snap.to_str().unwrap();
    let o = hyraid(&[
        "status",
        "examples/single-pair.yaml",
        "--sim",
        s,
        "--format",
        "prometheus",
    ]);
    text(&o).0
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
    let t = textfile(&h);
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

/// smartctl could not open a drive of the mirror (it stopped answering: the SCSI layer set it
/// offline, as captured in the guest): not "no SMART" but a degraded finding that quotes
/// smartctl, names the array and says what to do; the textfile says it was not readable.
#[test]
fn a_drive_smartctl_cannot_open_is_degraded_with_smartctls_words() {
    let (_, h) = built();
    let said = "Smartctl open device: /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001 failed: No such device or address";
    let gone = DriveHealth {
        unreadable: Some(said.into()),
        ..Default::default()
    };
    let h = with_smart(&h, "sdb", gone);
    let (d, _) = example("single-pair");
    let f = drive_findings(&h, &d, false);
    assert_eq!(f.len(), 1, "{f:?}");
    let md = h.world().arrays[0].kname.clone();
    assert_eq!(
        (f[0].severity, f[0].object.as_str()),
        (Severity::Degraded, "disk hdd")
    );
    assert!(
        f[0].message.contains(said) && f[0].message.contains(&format!("member of /dev/{md}")),
        "{}",
        f[0].message
    );
    assert!(!f[0].message.contains("no SMART"), "{}", f[0].message);
    assert!(f[0].fix.contains("replace it"), "{}", f[0].fix);
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("m.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let sim = ["--sim", snap.to_str().unwrap()];
    let t = textfile(&h);
    assert!(
        t.contains("hyraid_drive_smart_readable{disk=\"hdd\",serial=\"ZA4000001\"} 0\n")
            && t.contains("hyraid_drive_smart_readable{disk=\"ssd\",serial=\"2204E6000001\"} 1\n"),
        "{t}"
    );
    // The command line exits as for any degraded finding.
    let o = hyraid(&[&["status", "examples/single-pair.yaml"][..], &sim[..]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).0);
}

/// Run as another user than root, smartctl cannot open any drive: said once per drive as an
/// error of the run (with the fix: root), not as drives failing.
#[test]
fn permission_denied_is_the_runs_error_not_the_drives() {
    let (d, h) = built();
    let h = with_smart(
        &h,
        "sda",
        DriveHealth {
            unreadable: Some("Smartctl open device: /dev/disk/by-id/ata-CT500MX500SSD1_2204E6000001 failed: Permission denied".into()),
            ..Default::default()
        },
    );
    let f = drive_findings(&h, &d, false);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].fix.contains("as root"), "{}", f[0].fix);
}

/// The two outside SAS samples with SMART "Disabled" (tests/fixtures/smart/outside-*), read as
/// status reads a drive: both healthy, so status says nothing of them, and the textfile carries
/// their temperature, power-on hours and grown defects.
#[test]
fn the_outside_sas_samples_with_smart_disabled_are_read_whole() {
    let (d, h) = built();
    for (file, temperature) in [
        ("outside-sas-wd4001fyyg-disabled.json", 29),
        ("outside-sas-st373453lc-disabled.json", 34),
    ] {
        let json = std::fs::read_to_string(format!("tests/fixtures/smart/{file}")).unwrap();
        let health = hyraid::observe::smart::parse(&json).unwrap();
        assert!(health.available, "{file}");
        // The same drive with one grown defect more than when hyraid first saw it, as the
        // write-mostly member: what status says of a SAS drive it can read.
        let grown = DriveHealth {
            scsi_grown_defects: Some(3),
            ..health.clone()
        };
        let h = with_smart(&h, "sdb", health);
        assert!(drive_findings(&h, &d, true).is_empty(), "{file}");
        let t = textfile(&h);
        assert!(
            t.contains(&format!(
                "hyraid_drive_temperature_celsius{{disk=\"hdd\",serial=\"ZA4000001\"}} {temperature}\n"
            )) && t.contains("hyraid_drive_scsi_grown_defects{disk=\"hdd\",serial=\"ZA4000001\"} 0\n"),
            "{file}: {t}"
        );
        let h = with_smart(&h, "sdb", grown);
        let f = drive_findings(&h, &d, false);
        assert_eq!(f.len(), 1, "{file}: {f:?}");
        assert_eq!(f[0].severity, Severity::Degraded, "{file}");
        assert!(
            f[0].message.contains("grown defects grew from 0"),
            "{file}: {}",
            f[0].message
        );
    }
}
