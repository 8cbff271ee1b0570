//! The boot loaders as the machine has them: the grub that `grub-install` would put down, what
//! each EFI system partition holds (hyraid's stamp on it, read with mtools without mounting it),
//! the firmware's boot entries (`efibootmgr -v`) and the BIOS loaders hyraid installed.

use super::model::BlockDevice;
use crate::host::Host;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const GRUB_INSTALL_PATHS: [&str; 2] = ["/usr/sbin/grub-install", "/sbin/grub-install"];
pub const MTYPE_PATHS: [&str; 1] = ["/usr/bin/mtype"];
pub const EFIBOOTMGR_PATHS: [&str; 2] = ["/usr/bin/efibootmgr", "/bin/efibootmgr"];
/// Where, on every ESP hyraid keeps, it writes the version of the grub it installed there.
pub const ESP_STAMP: &str = "EFI/hyraid/loader";
/// The BIOS loaders hyraid installed: one line per disk, `BY-ID-NAME GRUB-VERSION`.
pub const BIOS_RECORD_PATH: &str = "/var/lib/hyraid/bios-loaders";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Loaders {
    /// The first line of `grub-install --version` (`grub-install (GRUB) 2.06-13+deb12u1`); None:
    /// grub-install is not installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grub: Option<String>,
    /// Every partition of the EFI system type, by kernel name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub esps: BTreeMap<String, Esp>,
    /// The firmware's boot entries; None: not read (no UEFI, or no efibootmgr).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efi_entries: Option<Vec<EfiEntry>>,
    /// The BIOS loaders hyraid installed, by the disk's /dev/disk/by-id name: the grub version.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bios: BTreeMap<String, String>,
    /// The grub platforms installed (`x86_64-efi`, `i386-pc`: /usr/lib/grub/PLATFORM).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub platforms: Vec<String>,
    /// Debian's grub-pc package (grub for a BIOS, whose upgrades run grub-install on the disks
    /// its debconf question `grub-pc/install_devices` lists), when installed: those disks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grub_pc: Option<Vec<String>>,
    /// grub's configuration (/boot/grub/grub.cfg, what `update-grub` writes) exists: without
    /// it every loader stops at grub's prompt.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub grub_cfg: bool,
    /// hyraid's update hooks ([`HOOKS`]) that exist, by path: their content.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hooks: BTreeMap<String, String>,
}

/// The grub platforms hyraid installs: UEFI on x86-64 (grub-efi-amd64-bin), BIOS (grub-pc-bin).
pub const PLATFORMS: [&str; 2] = ["x86_64-efi", "i386-pc"];
pub const GRUB_LIB: &str = "/usr/lib/grub";

/// The hooks that refresh the loaders after an update: the kernel's (run by run-parts after a
/// kernel is installed, after update-grub's own hook), the initramfs's (after every
/// update-initramfs) and apt's (after every dpkg run: grub's own upgrades), with whether it is
/// executable.
pub const HOOKS: [(&str, bool); 3] = [
    ("/etc/kernel/postinst.d/zzz-hyraid-boot", true),
    ("/etc/initramfs/post-update.d/hyraid-boot", true),
    ("/etc/apt/apt.conf.d/90hyraid-boot", false),
];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Esp {
    /// The partition's GPT UUID (what a firmware boot entry names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partuuid: Option<String>,
    /// hyraid's stamp on it: the grub version it installed there; None: no stamp (no loader of
    /// hyraid's, or never read: see `unread`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<String>,
    /// Why its content could not be read (no mtools, no FAT, an I/O error): unknown, never
    /// "no loader".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EfiEntry {
    /// `Boot0003` → `0003`.
    pub number: String,
    pub label: String,
    pub active: bool,
    /// The partition it loads from (`HD(n,GPT,UUID,…)`), lowercase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partuuid: Option<String>,
    /// The loader's path on it (`\EFI\hyraid-ssd0\grubx64.efi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

pub fn grub_version_argv() -> Vec<String> {
    vec!["grub-install".into(), "--version".into()]
}
pub fn stamp_argv(dev: &str) -> Vec<String> {
    ["mtype", "-i", dev, &format!("::/{ESP_STAMP}")]
        .iter()
        .map(|s| s.to_string())
        .collect()
}
pub fn partuuid_argv(dev: &str) -> Vec<String> {
    ["blkid", "-o", "value", "-s", "PARTUUID", dev]
        .iter()
        .map(|s| s.to_string())
        .collect()
}
pub fn grub_pc_devices_argv() -> Vec<String> {
    vec!["debconf-show".into(), "grub-pc".into()]
}
/// Where hyraid writes the answer it gives debconf (`debconf-set-selections FILE`).
pub const GRUB_PC_SELECTIONS: &str = "/var/lib/hyraid/grub-pc.debconf";
pub const GRUB_CFG: &str = "/boot/grub/grub.cfg";
pub const DPKG_QUERY_PATHS: [&str; 1] = ["/usr/bin/dpkg-query"];
pub fn grub_pc_installed_argv() -> Vec<String> {
    ["dpkg-query", "-W", "-f=${db:Status-Abbrev}", "grub-pc"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// `debconf-show grub-pc`: the line `* grub-pc/install_devices: /dev/disk/by-id/a, /dev/…`.
pub fn parse_grub_pc_devices(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            l.trim_start_matches(['*', ' '])
                .strip_prefix("grub-pc/install_devices:")
        })
        .flat_map(|v| v.split(','))
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .collect()
}

pub fn efibootmgr_argv() -> Vec<String> {
    vec!["efibootmgr".into(), "-v".into()]
}

fn installed(host: &dyn Host, paths: &[&str]) -> bool {
    paths.iter().any(|p| host.exists(p))
}

/// Whether `b` is an EFI system partition by its type.
pub fn is_esp(b: &BlockDevice) -> bool {
    b.parttype
        .as_deref()
        .is_some_and(|t| t == super::lsblk::ESP_GPT_TYPE || t == super::lsblk::ESP_MBR_TYPE)
}

/// Read the loaders; nothing here stops the rest of the observation (what cannot be read is
/// said so, per ESP).
pub fn read(host: &dyn Host, devices: &[BlockDevice], uefi: bool) -> Loaders {
    let mut l = Loaders::default();
    let esps: Vec<&BlockDevice> = devices.iter().filter(|b| is_esp(b)).collect();
    if installed(host, &GRUB_INSTALL_PATHS)
        && let Ok(o) = host.run(&grub_version_argv())
        && o.status == 0
    {
        l.grub = o.stdout.lines().next().map(|s| s.trim().to_string());
    }
    let mtools = installed(host, &MTYPE_PATHS);
    for b in esps {
        let dev = format!("/dev/{}", b.kname);
        let mut e = Esp::default();
        if let Ok(o) = host.run(&partuuid_argv(&dev))
            && o.status == 0
        {
            e.partuuid = Some(o.stdout.trim().to_lowercase()).filter(|s| !s.is_empty());
        }
        if b.fstype.as_deref() != Some("vfat") {
            e.unread = Some(match &b.fstype {
                Some(f) => format!("it holds {f}, not FAT"),
                None => "it holds no filesystem".into(),
            });
        } else if !mtools {
            e.unread = Some("mtools is not installed (`apt install mtools`)".into());
        } else {
            match host.run(&stamp_argv(&dev)) {
                Ok(o) if o.status == 0 => e.stamp = Some(o.stdout.trim().to_string()),
                Ok(o) if o.stderr.contains("not found") => {}
                Ok(o) => e.unread = Some(format!("mtype: {}", o.stderr.trim())),
                Err(err) => e.unread = Some(err.to_string()),
            }
        }
        l.esps.insert(b.kname.clone(), e);
    }
    if uefi
        && installed(host, &EFIBOOTMGR_PATHS)
        && let Ok(o) = host.run(&efibootmgr_argv())
        && o.status == 0
    {
        l.efi_entries = Some(parse_efibootmgr(&o.stdout));
    }
    if let Ok(text) = host.read_file(BIOS_RECORD_PATH) {
        l.bios = parse_bios_record(&text);
    }
    l.platforms = PLATFORMS
        .iter()
        .filter(|p| host.exists(&format!("{GRUB_LIB}/{p}")))
        .map(|p| p.to_string())
        .collect();
    // grub-pc needs grub's BIOS platform (grub-pc-bin): asked only where that is installed.
    if l.platforms.iter().any(|p| p == "i386-pc")
        && installed(host, &DPKG_QUERY_PATHS)
        && let Ok(o) = host.run(&grub_pc_installed_argv())
        && o.status == 0
        && o.stdout.starts_with("ii")
    {
        l.grub_pc = Some(match host.run(&grub_pc_devices_argv()) {
            Ok(o) if o.status == 0 => parse_grub_pc_devices(&o.stdout),
            _ => vec![],
        });
    }
    l.grub_cfg = host.exists(GRUB_CFG);
    for (path, _) in HOOKS {
        if let Ok(text) = host.read_file(path) {
            l.hooks.insert(path.to_string(), text);
        }
    }
    l
}

/// `efibootmgr -v`: `Boot0003* label<TAB>HD(2,GPT,uuid,0x800,0x100000)/File(\EFI\x\grubx64.efi)`
/// (efibootmgr 17, Debian 12) or `…/\EFI\x\grubx64.efi` (efibootmgr 18, Debian 13).
pub fn parse_efibootmgr(text: &str) -> Vec<EfiEntry> {
    let mut v = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("Boot") else {
            continue;
        };
        let (num, rest) = rest.split_at(rest.len().min(4));
        if num.len() != 4 || !num.chars().all(|c| c.is_ascii_hexdigit()) {
            continue; // BootCurrent:, BootOrder:
        }
        let active = rest.starts_with('*');
        let rest = rest.trim_start_matches('*').trim_start();
        let (label, dp) = match rest.split_once('\t') {
            Some((l, d)) => (l.trim_end(), d.trim()),
            None => (rest.trim_end(), ""),
        };
        let partuuid = dp.find("HD(").and_then(|i| {
            let f: Vec<&str> = dp[i + 3..].split([',', ')']).collect();
            (f.get(1) == Some(&"GPT")).then(|| f.get(2).map(|u| u.to_lowercase()))?
        });
        let path = if let Some(i) = dp.find("File(") {
            dp[i + 5..].split(')').next().map(str::to_string)
        } else {
            dp.find("/\\").map(|i| {
                dp[i + 1..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
        };
        v.push(EfiEntry {
            number: num.to_uppercase(),
            label: label.to_string(),
            active,
            partuuid,
            path: path.filter(|p| !p.is_empty()),
        });
    }
    v
}

pub fn parse_bios_record(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(id, v)| (id.to_string(), v.trim().to_string()))
        .collect()
}

pub fn render_bios_record(entries: &BTreeMap<String, String>) -> String {
    let mut s = String::from(
        "# hyraid: the BIOS boot loaders `hyraid apply` installed (disk, grub version)\n",
    );
    for (id, v) in entries {
        s.push_str(&format!("{id} {v}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_efibootmgr_formats_give_the_partition_and_the_path() {
        let v17 = "BootCurrent: 0004\nTimeout: 0 seconds\nBootOrder: 0004,0005,0000\nBoot0000* UiApp\tFvVol(7cb8bdc9-f8eb-4f34-aaea-3ee4af6516a1)/FvFile(462caa21-7614-4503-836e-8ab6f4662331)\nBoot0004* hyraid ssd0\tHD(2,GPT,6F0D8F4B-6A0B-4C57-9D6B-2E4B1B1B7A10,0x800,0x100000)/File(\\EFI\\hyraid-ssd0\\grubx64.efi)\nBoot0005  hyraid hdd0\tHD(2,GPT,0d6a2b9c-1c7e-4f0e-8b53-3d2a9f1c4e55,0x800,0x100000)/File(\\EFI\\hyraid-hdd0\\grubx64.efi)\n";
        let e = parse_efibootmgr(v17);
        assert_eq!(e.len(), 3);
        assert_eq!(e[1].number, "0004");
        assert_eq!(e[1].label, "hyraid ssd0");
        assert!(e[1].active && !e[2].active);
        assert_eq!(
            e[1].partuuid.as_deref(),
            Some("6f0d8f4b-6a0b-4c57-9d6b-2e4b1b1b7a10")
        );
        assert_eq!(
            e[1].path.as_deref(),
            Some("\\EFI\\hyraid-ssd0\\grubx64.efi")
        );
        assert_eq!(e[0].partuuid, None);
        let v18 = "Boot0004* hyraid ssd0\tHD(2,GPT,6f0d8f4b-6a0b-4c57-9d6b-2e4b1b1b7a10,0x800,0x100000)/\\EFI\\hyraid-ssd0\\grubx64.efi\n";
        let e = parse_efibootmgr(v18);
        assert_eq!(
            e[0].path.as_deref(),
            Some("\\EFI\\hyraid-ssd0\\grubx64.efi")
        );
        assert_eq!(
            e[0].partuuid.as_deref(),
            Some("6f0d8f4b-6a0b-4c57-9d6b-2e4b1b1b7a10")
        );
    }

    #[test]
    fn grub_pcs_install_devices_as_debconf_shows_them() {
        let t = "  grub-pc/timeout: 5\n* grub-pc/install_devices: /dev/disk/by-id/ata-A_1, /dev/disk/by-id/ata-B_2\n  grub-pc/install_devices_empty: false\n";
        assert_eq!(
            parse_grub_pc_devices(t),
            vec!["/dev/disk/by-id/ata-A_1", "/dev/disk/by-id/ata-B_2"]
        );
        assert!(parse_grub_pc_devices("  grub-pc/install_devices:\n").is_empty());
    }

    #[test]
    fn the_bios_record_reads_back_what_was_written() {
        let mut m = BTreeMap::new();
        m.insert(
            "ata-A_1".to_string(),
            "grub-install (GRUB) 2.06-13+deb12u1".to_string(),
        );
        assert_eq!(parse_bios_record(&render_bios_record(&m)), m);
    }
}
