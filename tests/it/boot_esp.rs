//! Whether a mirrored system boots with a disk dead: status and import say where the EFI system
//! partitions are (one on one disk, one on md, a /boot/efi that waits for its disk).

use crate::common::*;
use hyraid::observe::{BlockDevice, DevKind, Filesystem, Observed};
use hyraid::plan::Policy;
use hyraid::sim::SimHost;
use hyraid::status::{Finding, Severity, status};

const ESP: &str = "c12a7328-f81f-11d2-ba4b-00a0c93ec93b";

/// The partitioned MicroServer built, its system (`/`) on vg0/nextcloud over both hybrid
/// mirrors (four disks), booted through UEFI or not, with an ESP on each disk of `esps`.
fn host(uefi: bool, esps: &[&str]) -> (hyraid::config::Desired, SimHost) {
    let (d, h) = example("microserver-partitioned");
    apply(&h, &d, Policy::default()).unwrap();
    let mut w = h.world();
    w.boot.uefi = uefi;
    for disk in esps {
        let parent = w.device(disk).unwrap().clone();
        let mut p: BlockDevice = parent.clone();
        p.kname = format!("{disk}9");
        p.kind = DevKind::Part;
        p.parent = Some(disk.to_string());
        p.size = 512 << 20;
        p.partlabel = Some("EFI System Partition".into());
        p.parttype = Some(ESP.into());
        p.fstype = Some("vfat".into());
        p.by_id = parent.by_id.iter().map(|i| format!("{i}-part9")).collect();
        p.holders.clear();
        p.serial = None;
        w.block_devices.push(p);
    }
    let lv = w
        .lvm
        .lvs
        .iter()
        .find(|l| l.vg == "vg0" && l.name == "nextcloud")
        .unwrap()
        .clone();
    w.filesystems.push(Filesystem {
        vg: "vg0".into(),
        lv: "nextcloud".into(),
        md: false,
        kname: "dm-0".into(),
        fstype: "ext4".into(),
        uuid: Some("0b4e2a5c-1111-4e0e-9a57-d1f8c2c0aa01".into()),
        mountpoint: Some("/".into()),
        size: Some(lv.size),
        min_size: None,
        label: None,
        block_size: None,
        mapper: None,
    });
    (d, SimHost::new(w))
}

/// [`host`] observed: /sys/firmware/efi and PARTTYPE as the simulated tools answer them.
fn machine(uefi: bool, esps: &[&str]) -> (hyraid::config::Desired, Observed) {
    let (d, h) = host(uefi, esps);
    let o = observe(&h, &d);
    assert_eq!(o.boot.uefi, uefi);
    (d, o)
}

fn boot_findings(f: &[Finding]) -> Vec<&Finding> {
    f.iter()
        .filter(|x| {
            x.object == "host"
                && x.lint
                    .is_some_and(|l| l.contains("esp") || l.starts_with("boots"))
        })
        .collect()
}

#[test]
fn one_esp_under_a_mirrored_system_is_a_lint_that_names_the_disks_without_one() {
    let (d, o) = machine(true, &["sda"]);
    let all = status(&o, Some(&d), None);
    let f = boot_findings(&all);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].lint, Some("boots-from-one-disk"));
    assert_eq!(f[0].severity, Severity::Lint);
    assert!(
        f[0].message.contains("boots from one disk"),
        "{}",
        f[0].message
    );
    // The disks by the file's names: the ESP's and the three that lack one.
    assert!(f[0].message.contains("ssd0"), "{}", f[0].message);
    for missing in ["hdd0", "ssd1", "hdd1"] {
        assert!(f[0].fix.contains(missing), "{missing}: {}", f[0].fix);
    }
    assert!(!f[0].fix.contains("ssd0"), "{}", f[0].fix);
    assert!(f[0].fix.contains("--removable"), "{}", f[0].fix);
    assert_eq!(hyraid::status::exit_code(&all), 2);
}

#[test]
fn an_esp_on_every_disk_of_the_system_says_nothing() {
    let (d, o) = machine(true, &["sda", "sdb", "sdc", "sdd"]);
    let all = status(&o, Some(&d), None);
    assert!(boot_findings(&all).is_empty(), "{all:#?}");
}

#[test]
fn a_machine_booted_through_bios_says_nothing_of_esps() {
    let (d, o) = machine(false, &["sda"]);
    assert!(boot_findings(&status(&o, Some(&d), None)).is_empty());
}

#[test]
fn two_esps_of_four_name_the_two_without() {
    let (d, o) = machine(true, &["sda", "sdb"]);
    let all = status(&o, Some(&d), None);
    let f = boot_findings(&all);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(
        f[0].message
            .contains("carry the system but no EFI system partition"),
        "{}",
        f[0].message
    );
}

#[test]
fn the_lint_is_accepted_on_the_host() {
    let (mut d, o) = machine(true, &["sda"]);
    d.accept
        .insert("host".into(), vec!["boots-from-one-disk".into()]);
    let all = status(&o, Some(&d), None);
    let f = boot_findings(&all);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
    assert!(f[0].message.contains("accepted in the file"));
}

#[test]
fn a_boot_efi_line_without_nofail_stops_the_boot_when_its_disk_is_gone() {
    let (d, mut o) = machine(true, &["sda", "sdb", "sdc", "sdd"]);
    o.boot.fstab = Some("UUID=5A1B-2C3D  /boot/efi  vfat  umask=0077  0  1\n".into());
    let all = status(&o, Some(&d), None);
    let f = boot_findings(&all);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].lint, Some("esp-mount-stops-boot"));
    assert!(f[0].fix.contains("nofail"));
    o.boot.fstab = Some("UUID=5A1B-2C3D  /boot/efi  vfat  umask=0077,nofail  0  1\n".into());
    assert!(boot_findings(&status(&o, Some(&d), None)).is_empty());
}

#[test]
fn an_esp_on_md_is_its_own_lint_and_not_counted_as_a_disk_s_esp() {
    let (d, mut o) = machine(true, &[]);
    // The cache mirror's members (partitions of ssd0 and ssd1) typed as ESPs: an ESP on md.
    let cache = o
        .arrays
        .iter()
        .find(|a| a.name.as_deref() == Some("cache"))
        .unwrap()
        .clone();
    for m in &cache.members {
        let dev = o
            .block_devices
            .iter_mut()
            .find(|b| b.kname == m.kname)
            .unwrap();
        dev.parttype = Some(ESP.into());
    }
    let all = status(&o, Some(&d), None);
    let f = boot_findings(&all);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].lint, Some("esp-on-md"));
    assert!(f[0].message.contains(&cache.kname), "{}", f[0].message);
}

#[test]
fn import_says_it_and_writes_it_into_the_file_it_makes() {
    let (_, h) = host(true, &["sda"]);
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("m.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let o = hyraid(&["import", "--sim", snap.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("boot: the machine boots from one disk"),
        "{err}"
    );
    assert!(
        out.contains("\n# boot: the machine boots from one disk"),
        "{out}"
    );
    // What plan on the file says is unchanged by it: the ESPs are not the file's.
    assert!(
        out.contains("`hyraid plan` on this file shows no changes"),
        "{out}"
    );
}

#[test]
fn the_real_kernel_s_esp_on_one_disk_of_four() {
    // Captured in VM 10, booted through UEFI: /boot on vg0/nextcloud over data0 and data1 (and
    // its writecache on the cache mirror), an ESP (sgdisk type EF00) made on hdd0 alone, and a
    // /boot/efi line without nofail in fstab.
    let cap: hyraid::observe::capture::Capture = serde_json::from_str(
        &std::fs::read_to_string("tests/fixtures/vm/partitions-esp-one-disk.json").unwrap(),
    )
    .unwrap();
    let o = hyraid::observe::observe(&hyraid::host::record::Replay::from(cap)).unwrap();
    assert!(o.boot.uefi);
    let esp = o.device("sdb9").unwrap();
    assert_eq!(esp.parttype.as_deref(), Some(ESP));
    assert_eq!(hyraid::status::system_disks(&o).len(), 4);
    let d = hyraid::config::load_file(std::path::Path::new("tests/vm/configs/partitioned.yaml"))
        .unwrap();
    let all = status(&o, Some(&d), None);
    let f = boot_findings(&all);
    // And the /boot/efi line the scenario wrote into fstab before the capture.
    let lints: Vec<_> = f.iter().map(|x| x.lint.unwrap()).collect();
    assert_eq!(
        lints,
        ["boots-from-one-disk", "esp-mount-stops-boot"],
        "{f:#?}"
    );
    assert!(
        f[0].message
            .contains("its only EFI system partition is on disk hdd0"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].fix.starts_with("give each of disk ssd0"),
        "{}",
        f[0].fix
    );
}
