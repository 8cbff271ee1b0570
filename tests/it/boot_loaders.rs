//! `boot:`: the file's boot disks laid out (BIOS boot partition, ESP, then the file's own), the
//! loaders put on every one once the system is on the mirror (after a replaced disk's rebuild),
//! one firmware entry per disk, the hooks, a stale loader refreshed by `--loaders-only`, and what
//! status says of each boot disk.

use crate::common::boot::system_on_the_mirror;
use crate::common::*;
use hyraid::apply;
use hyraid::config::Desired;
use hyraid::plan::{Policy, Step};
use hyraid::sim::SimHost;
use hyraid::status::{Severity, status};

const FILE: &str = "version: 1
disks:
  ssd: { id: ata-CT500MX500SSD1_2204E6000001, partitions: [{ name: system, size: rest }] }
  hdd: { id: ata-ST500DM009-2F110A_ZA4000001, partitions: [{ name: system, size: rest }] }
mirrors:
  system: { members: [\"ssd:system\", \"hdd:system\"] }
volume_groups:
  vg0: { pvs: [system], lvs: { root: { size: 40GiB } } }
boot:
  firmware: uefi
  disks: [ssd, hdd]
  mirror: system
";

fn errors(text: &str) -> String {
    hyraid::config::load_str("boot.yaml", text)
        .unwrap_err()
        .to_string()
}

#[test]
fn validate_refuses_what_cannot_boot_and_says_where() {
    // A boot disk without partitions: its ESP needs a partitioned disk.
    let e = errors(&FILE.replace(
        "hdd: { id: ata-ST500DM009-2F110A_ZA4000001, partitions: [{ name: system, size: rest }] }",
        "hdd: { id: ata-ST500DM009-2F110A_ZA4000001 }\n  hdd2: { id: ata-X_1, partitions: [{ name: system, size: rest }] }",
    ).replace("\"hdd:system\"", "\"hdd2:system\""));
    assert!(
        e.contains("boot.yaml:12:16: boot.disks[1]: boot disk `hdd` has no `partitions:`"),
        "{e}"
    );
    assert!(e.contains("`hdd:system`"), "{e}");
    // The ESP's name is hyraid's.
    let e = errors(&FILE.replace(
        "[{ name: system, size: rest }] }\nmirrors",
        "[{ name: esp, size: 1GiB }, { name: system, size: rest }] }\nmirrors",
    ));
    assert!(
        e.contains("disks.hdd.partitions[0].name: `esp` is the name of the boot partition"),
        "{e}"
    );
    // A boot disk with no member in the mirror that holds /boot.
    let e = errors(
        &FILE
            .replace("disks: [ssd, hdd]", "disks: [ssd, hdd, hdd3]")
            .replace(
                "mirrors:",
                "  hdd3: { id: ata-Y_1, partitions: [{ name: x, size: rest }] }\nmirrors:",
            ),
    );
    assert!(
        e.contains("boot disk `hdd3` has no member in mirror `system`"),
        "{e}"
    );
    // An ESP too small, an ESP with a BIOS, an unknown mirror, an encrypted one.
    let e = errors(&FILE.replace(
        "  mirror: system\n",
        "  mirror: system\n  esp_size: 64MiB\n",
    ));
    assert!(
        e.contains("boot.esp_size: an EFI system partition of 64.00 MiB is too small"),
        "{e}"
    );
    let e = errors(
        &FILE
            .replace("firmware: uefi", "firmware: bios")
            .replace("  mirror: system\n", "  mirror: system\n  esp_size: 1GiB\n"),
    );
    assert!(e.contains("`esp_size` with `firmware: bios`"), "{e}");
    let e = errors(&FILE.replace("  mirror: system\n", "  mirror: sytem\n"));
    assert!(
        e.contains("`sytem` is not a mirror of this file") && e.contains("did you mean `system`?"),
        "{e}"
    );
    let e = errors(&FILE.replace(
        "system: { members: [\"ssd:system\", \"hdd:system\"] }",
        "system: { members: [\"ssd:system\", \"hdd:system\"], encryption: { key_file: /root/k } }",
    ));
    assert!(
        e.contains("mirror `system` is encrypted: grub cannot read /boot"),
        "{e}"
    );
    // And the schema knows `firmware`.
    let e = errors(&FILE.replace("firmware: uefi", "firmware: efi"));
    assert!(e.contains("boot.firmware"), "{e}");
}

#[test]
fn each_boot_disk_gets_its_boot_partitions_first_then_an_esp_and_the_loaders_wait_for_the_system() {
    let (d, h) = example("boot-mirror");
    let p = plan_for(&h, &d, Policy::default());
    for disk in [
        "ata-CT500MX500SSD1_2204E6000001",
        "ata-ST500DM009-2F110A_ZA4000001",
    ] {
        let sgdisk = p
            .steps
            .iter()
            .flat_map(|s| s.step.commands())
            .map(|c| hyraid::render::command_line(&c))
            .find(|l| l.starts_with("sgdisk --new") && l.ends_with(disk))
            .unwrap();
        assert!(
            sgdisk.contains("--new=1:0:+1024K --change-name=1:bios-boot --typecode=1:ef02 --new=2:0:+524288K --change-name=2:esp --typecode=2:ef00 --new=3:0:0 --change-name=3:system --typecode=3:fd00"),
            "{sgdisk}"
        );
    }
    assert_eq!(
        ops(&p).iter().filter(|o| *o == "make_esp").count(),
        2,
        "{:?}",
        ops(&p)
    );
    // / is not on the mirror yet: no loader, and the plan does not say "matches".
    assert!(
        !ops(&p)
            .iter()
            .any(|o| o.contains("loader") || o.contains("boot_entry"))
    );
    assert!(
        p.waiting
            .iter()
            .any(|w| w
                .contains("the boot loaders are installed once the system is on mirror system")),
        "{:?}",
        p.waiting
    );
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    let esps: Vec<_> = w
        .block_devices
        .iter()
        .filter(|b| b.partlabel.as_deref() == Some("esp"))
        .collect();
    assert!(
        esps.len() == 2
            && esps
                .iter()
                .all(|e| e.fstype.as_deref() == Some("vfat") && e.size == 512 << 20)
    );
    // Status: neither disk can start the machine yet, and says why.
    let f = status(&observe(&h, &d), Some(&d), None);
    let lost: Vec<_> = f
        .iter()
        .filter(|f| {
            f.severity == Severity::Degraded && f.message.starts_with("boot redundancy lost")
        })
        .collect();
    assert_eq!(lost.len(), 2, "{f:#?}");
    assert!(
        lost[0].message.contains("holds no loader of hyraid's"),
        "{}",
        lost[0].message
    );
}

/// The boot-mirror example with its system on the mirror, as a host.
fn on_the_mirror() -> (Desired, SimHost) {
    let (d, w) = system_on_the_mirror();
    (d, SimHost::new(w))
}

#[test]
fn on_the_mirror_every_disk_gets_grub_an_entry_and_the_hooks_then_nothing_is_left() {
    let (d, h) = on_the_mirror();
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&p),
        vec![
            "install_efi_loader",
            "install_efi_loader",
            "create_boot_entry",
            "create_boot_entry",
            "install_bios_loader",
            "install_bios_loader",
            "write_grub_config",
            "write_hook",
            "write_hook",
            "write_hook",
        ]
    );
    let lines: Vec<String> = p.steps[0]
        .step
        .commands()
        .iter()
        .map(hyraid::render::command_line)
        .collect();
    assert_eq!(
        lines,
        vec![
            "mkdir -p /run/hyraid/esp/ssd",
            "mount -t vfat -o nodev,nosuid,noexec /dev/disk/by-id/ata-CT500MX500SSD1_2204E6000001-part2 /run/hyraid/esp/ssd",
            "grub-install --target=x86_64-efi --efi-directory=/run/hyraid/esp/ssd --bootloader-id=hyraid-ssd --no-nvram",
            "grub-install --target=x86_64-efi --efi-directory=/run/hyraid/esp/ssd --removable --no-nvram",
            lines[4].as_str(),
            "umount /run/hyraid/esp/ssd",
        ]
    );
    assert!(
        lines[4].contains("/run/hyraid/esp/ssd/EFI/hyraid/loader"),
        "{}",
        lines[4]
    );
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    let entries = w.boot.loaders.efi_entries.clone().unwrap();
    let labels: Vec<&str> = entries.iter().map(|e| e.label.as_str()).collect();
    assert!(
        labels.contains(&"hyraid ssd") && labels.contains(&"hyraid hdd"),
        "{labels:?}"
    );
    // The firmware's own entry is not hyraid's: left alone.
    assert!(labels.contains(&"UEFI QEMU HARDDISK QM00001"), "{labels:?}");
    assert!(w.block_devices.iter().all(|b| {
        b.mountpoint
            .as_deref()
            .is_none_or(|m| !m.starts_with("/run/hyraid/esp"))
    }));
    assert!(plan_for(&h, &d, Policy::default()).matches());
    let f = status(&observe(&h, &d), Some(&d), None);
    assert!(
        !f.iter().any(|f| f.severity >= Severity::Degraded),
        "{f:#?}"
    );
    assert_eq!(
        f.iter()
            .filter(|f| f.message.starts_with("boots the machine"))
            .count(),
        2
    );
}

#[test]
fn a_grub_upgrade_leaves_every_loader_stale_until_the_hook_refreshes_them_alone() {
    let (mut d, h) = on_the_mirror();
    apply(&h, &d, Policy::default()).unwrap();
    let mut w = h.world();
    w.boot.loaders.grub = Some("grub-install (GRUB) 2.06-13+deb12u2".into());
    let h = SimHost::new(w);
    let f = status(&observe(&h, &d), Some(&d), None);
    let stale: Vec<_> = f.iter().filter(|f| f.message.contains("is stale: `grub-install (GRUB) 2.06-13+deb12u1`, the installed grub is `grub-install (GRUB) 2.06-13+deb12u2`")).collect();
    assert_eq!(stale.len(), 2, "{f:#?}");
    assert!(stale.iter().all(|f| f.severity == Severity::Degraded));
    // Other drift (the HDD's cache the file now wants off) is left to a full apply.
    d.disks.get_mut("hdd").unwrap().write_cache = Some(false);
    let p = plan_for(&h, &d, Policy::default());
    assert!(ops(&p).contains(&"set_write_cache".to_string()));
    let loader = p
        .steps
        .iter()
        .find_map(|s| match &s.step {
            Step::InstallEfiLoader(l) => Some(l.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        loader.had.as_deref(),
        Some("grub-install (GRUB) 2.06-13+deb12u1")
    );
    let opts = apply::Options {
        loaders_only: true,
        ..Default::default()
    };
    let out = apply::apply(
        apply::Source::Desired(Box::new(d.clone())),
        &h,
        &opts,
        &mut |_| Ok(()),
        &mut std::io::sink(),
    )
    .unwrap();
    assert_eq!(
        ops(&out.plan),
        vec![
            "install_efi_loader",
            "install_efi_loader",
            "install_bios_loader",
            "install_bios_loader"
        ]
    );
    assert!(
        !changes(&h).iter().any(|c| c.starts_with("hdparm")),
        "{:?}",
        changes(&h)
    );
    let after = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&after),
        vec!["set_write_cache", "write_file", "reload_udev"]
    );
}

#[test]
fn a_replaced_boot_disk_gets_its_loader_after_its_rebuild_and_the_dead_disks_entry_goes() {
    let (mut d, h) = on_the_mirror();
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    // The HDD dies and is pulled; the box still lists its entry.
    h.pull_disk("sdb");
    let f = status(&observe(&h, &d), Some(&d), None);
    let lost = f
        .iter()
        .find(|f| {
            f.object == "disk hdd"
                && f.severity == Severity::Degraded
                && f.message.starts_with("boot redundancy lost")
        })
        .unwrap_or_else(|| panic!("{f:#?}"));
    assert!(
        lost.message.contains("not on the machine")
            && lost.reason.contains("the machine boots from ssd alone"),
        "{lost:?}"
    );
    assert!(lost.fix.contains("docs/booting.md#replacing-a-boot-disk"));
    // A blank disk in its place, named in the file.
    let new = h.insert_disk(
        &"hdd:500107862016:ST500DM009-2F110A:ZA4000099"
            .parse()
            .unwrap(),
    );
    d.disks.get_mut("hdd").unwrap().id = Some(new.by_id[0].clone());
    let p = plan_for(&h, &d, Policy::default());
    eprintln!("{}", hyraid::render::text(&p, false));
    let o = ops(&p);
    let at = |op: &str| {
        o.iter()
            .position(|x| x == op)
            .unwrap_or_else(|| panic!("{op}: {o:?}"))
    };
    assert!(at("create_partitions") < at("add_member"));
    assert!(
        at("add_member") < at("wait_idle") && at("wait_idle") < at("install_efi_loader"),
        "{o:?}"
    );
    assert!(at("make_esp") < at("install_efi_loader"));
    let gone = p
        .steps
        .iter()
        .find_map(|s| match &s.step {
            Step::DeleteBootEntry(e) => Some(e.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(gone.label, "hyraid hdd");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    assert!(plan_for(&h, &d, Policy::default()).matches());
    let w = h.world();
    let hdd: Vec<_> = w
        .boot
        .loaders
        .efi_entries
        .as_ref()
        .unwrap()
        .iter()
        .filter(|e| e.label == "hyraid hdd")
        .collect();
    assert_eq!(hdd.len(), 1, "one entry per disk: {hdd:?}");
    let esp = w
        .block_devices
        .iter()
        .find(|b| {
            b.parent.as_deref() == Some(new.kname.as_str()) && b.partlabel.as_deref() == Some("esp")
        })
        .unwrap();
    assert_eq!(hdd[0].partuuid, w.boot.loaders.esps[&esp.kname].partuuid);
    let f = status(&observe(&h, &d), Some(&d), None);
    assert!(
        !f.iter().any(|f| f.severity >= Severity::Degraded),
        "{f:#?}"
    );
}

#[test]
fn what_grub_cannot_read_or_a_missing_grub_is_refused() {
    let (d, mut w) = system_on_the_mirror();
    // /boot behind a writecache.
    let root = w.lvm.lvs.iter_mut().find(|l| l.name == "root").unwrap();
    root.segtype = "writecache".into();
    let p = plan_for(&SimHost::new(w.clone()), &d, Policy::default());
    assert!(
        p.refused.iter().any(|r| r.object == "boot"
            && r.reason
                .contains("/ is behind a writecache on lv vg0/root, which grub cannot read")),
        "{:?}",
        p.refused
    );
    // No grub for UEFI.
    let (_, mut w) = system_on_the_mirror();
    w.boot.loaders.platforms.retain(|p| p != "x86_64-efi");
    let p = plan_for(&SimHost::new(w), &d, Policy::default());
    assert!(
        p.refused.iter().any(|r| r
            .reason
            .contains("grub is not installed for `firmware: both`")
            && r.fix.contains("apt install grub-efi-amd64-bin")),
        "{:?}",
        p.refused
    );
}

#[test]
fn the_textfile_says_which_boot_disk_is_ready() {
    let (d, h) = on_the_mirror();
    apply(&h, &d, Policy::default()).unwrap();
    h.pull_disk("sda");
    let o = observe(&h, &d);
    let p = plan_for(&h, &d, Policy::default());
    let f = status(&o, Some(&d), None);
    let text = hyraid::status::render_prometheus(
        &o,
        Some(&p),
        &f,
        &Default::default(),
        &Default::default(),
    );
    assert!(
        text.contains("hyraid_boot_disk_ready{disk=\"ssd\"} 0\n"),
        "{text}"
    );
    assert!(
        text.contains("hyraid_boot_disk_ready{disk=\"hdd\"} 1\n"),
        "{text}"
    );
}

#[test]
fn grub_pcs_own_upgrades_are_told_every_boot_disk_and_grub_cfg_is_written_once() {
    let (d, mut w) = system_on_the_mirror();
    // Debian's grub-pc installed, its answer naming the first disk only (as the installer left it).
    w.boot.loaders.grub_pc = Some(vec![
        "/dev/disk/by-id/ata-CT500MX500SSD1_2204E6000001".into(),
    ]);
    let h = SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    let set = p
        .steps
        .iter()
        .find_map(|s| match &s.step {
            Step::SetGrubPcDevices(g) => Some(g.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        set.devices,
        vec![
            "/dev/disk/by-id/ata-CT500MX500SSD1_2204E6000001",
            "/dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001"
        ]
    );
    let lines: Vec<String> = p
        .steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::render::command_line(&c))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l == "debconf-set-selections /var/lib/hyraid/grub-pc.debconf")
    );
    assert!(lines.iter().any(|l| l == "update-grub"), "{lines:?}");
    apply(&h, &d, Policy::default()).unwrap();
    let w = h.world();
    assert_eq!(w.boot.loaders.grub_pc.as_ref().unwrap().len(), 2);
    assert!(w.boot.loaders.grub_cfg);
    assert!(plan_for(&h, &d, Policy::default()).matches());
}

#[test]
fn loaders_only_takes_the_file_never_a_saved_plan() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap.json");
    std::fs::copy("examples/snapshots/boot-mirror.json", &snap).unwrap();
    let s = snap.to_str().unwrap();
    let plan = dir.path().join("plan.json");
    let o = hyraid(&[
        "plan",
        "examples/boot-mirror.yaml",
        "--sim",
        s,
        "-o",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let before = std::fs::read(&snap).unwrap();
    let o = hyraid(&[
        "apply",
        plan.to_str().unwrap(),
        "--loaders-only",
        "--yes",
        "--sim",
        s,
        "--sim-write",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("--loaders-only takes the configuration file, not a saved plan"),
        "{}",
        text(&o).1
    );
    assert_eq!(std::fs::read(&snap).unwrap(), before, "nothing ran");
}

#[test]
fn a_file_without_boot_reads_no_loader_and_one_with_it_does() {
    let (d, w) = system_on_the_mirror();
    let h = SimHost::new(w);
    let asked = |h: &SimHost| -> Vec<String> {
        h.commands()
            .iter()
            .map(|c| c.join(" "))
            .filter(|c| {
                c.starts_with("grub-install --version")
                    || c.starts_with("efibootmgr")
                    || c.starts_with("mtype")
                    || c.starts_with("blkid -o value -s PARTUUID")
            })
            .collect()
    };
    let mut without = d.clone();
    without.boot = None;
    plan_for(&h, &without, Policy::default());
    assert!(
        asked(&h).is_empty(),
        "a plan's hot path reads loaders it does not use: {:?}",
        asked(&h)
    );
    h.clear_log();
    plan_for(&h, &d, Policy::default());
    assert_eq!(asked(&h).len(), 6, "{:?}", asked(&h));
}
