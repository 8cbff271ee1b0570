//! The boot loader's tools as they behave on the simulated machine: mkfs.vfat (dosfstools 4.2)
//! on an ESP, its mount at hyraid's mount point, grub-install (2.06) on it or in a disk's boot
//! sector, mtools' mtype reading hyraid's stamp, blkid's PARTUUID and efibootmgr (17). The ESPs'
//! stamps, the grub and the firmware's entries live in `boot.loaders` of the world.

use crate::host::{CmdOutput, HostError};
use crate::observe::loader::{ESP_STAMP, EfiEntry, Esp};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

const BIOS_BOOT_GPT_TYPE: &str = "21686148-6449-6e6f-744e-656564454649";

fn block(st: &SimState, dev: &str) -> Option<String> {
    match st.resolve(dev) {
        Some(Target::Block(k)) => Some(k),
        _ => None,
    }
}

/// A partition's GPT UUID, made up once from its disk's identity and number.
fn partuuid(st: &SimState, k: &str) -> String {
    let d = st.world.device(k);
    let seed = format!(
        "{}{}",
        d.and_then(|d| d.parent.clone()).unwrap_or_default(),
        d.and_then(|d| d.parent.as_ref())
            .and_then(|p| st.world.device(p))
            .and_then(|p| p.serial.clone())
            .unwrap_or_default()
    ) + k;
    let h = seed.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        (h >> 20) & 0xfff,
        h & 0xffff_ffff_ffff
    )
}

/// `mkfs.vfat -F 32 -n LABEL DEV`.
pub(in crate::sim) fn mkfs_vfat(st: &mut SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(k) = block(st, dev) else {
        return fail(
            1,
            format!("mkfs.fat: unable to open {dev}: No such file or directory\n"),
        );
    };
    let d = st.dev_mut(&k).expect("resolved");
    if d.mountpoint.is_some() || !d.holders.is_empty() {
        return fail(
            1,
            format!("mkfs.fat: unable to open {dev}: Device or resource busy\n"),
        );
    }
    d.fstype = Some("vfat".into());
    d.signatures = Some(vec![]);
    let uuid = partuuid(st, &k);
    st.world.boot.loaders.esps.insert(
        k,
        Esp {
            partuuid: Some(uuid),
            stamp: None,
            unread: None,
        },
    );
    out("mkfs.fat 4.2 (2021-01-31)\n")
}

/// `mount -t vfat -o OPTS DEV MP`.
pub(in crate::sim) fn mount_vfat(
    st: &mut SimState,
    dev: &str,
    mp: &str,
) -> Result<CmdOutput, HostError> {
    let Some(k) = block(st, dev) else {
        return fail(
            32,
            format!("mount: {mp}: special device {dev} does not exist.\n"),
        );
    };
    if st
        .world
        .block_devices
        .iter()
        .any(|d| d.mountpoint.as_deref() == Some(mp))
    {
        return fail(32, format!("mount: {mp}: {dev} already mounted on {mp}.\n"));
    }
    let d = st.dev_mut(&k).expect("resolved");
    if d.fstype.as_deref() != Some("vfat") {
        return fail(
            32,
            format!(
                "mount: {mp}: wrong fs type, bad option, bad superblock on {dev}, missing codepage or helper program, or other error.\n"
            ),
        );
    }
    d.mountpoint = Some(mp.into());
    out("")
}

/// `umount MP` of a partition (an ESP); None when no partition is mounted there.
pub(in crate::sim) fn umount_partition(
    st: &mut SimState,
    mp: &str,
) -> Option<Result<CmdOutput, HostError>> {
    let d = st
        .world
        .block_devices
        .iter_mut()
        .find(|d| d.mountpoint.as_deref() == Some(mp))?;
    d.mountpoint = None;
    Some(out(""))
}

/// The ESP mounted at `mp`.
fn esp_at(st: &SimState, mp: &str) -> Option<String> {
    st.world
        .block_devices
        .iter()
        .find(|d| d.mountpoint.as_deref() == Some(mp))
        .map(|d| d.kname.clone())
}

/// `grub-install ARGS`.
pub(in crate::sim) fn grub_install(
    st: &mut SimState,
    args: &[&str],
) -> Result<CmdOutput, HostError> {
    let l = &st.world.boot.loaders;
    let Some(version) = l.grub.clone() else {
        return fail(127, "grub-install: command not found\n");
    };
    if args == ["--version"] {
        return out(&format!("{version}\n"));
    }
    let target = args.iter().find_map(|a| a.strip_prefix("--target="));
    if let Some(t) = target
        && !l.platforms.iter().any(|p| p == t)
    {
        return fail(
            1,
            format!(
                "grub-install: error: /usr/lib/grub/{t}/modinfo.sh doesn't exist. Please specify --target or --directory.\n"
            ),
        );
    }
    match target {
        Some("x86_64-efi") => {
            let Some(dir) = args.iter().find_map(|a| a.strip_prefix("--efi-directory=")) else {
                return fail(1, "grub-install: error: cannot find EFI directory.\n");
            };
            let Some(k) = esp_at(st, dir) else {
                return fail(1, "grub-install: error: cannot find EFI directory.\n");
            };
            let d = st.world.device(&k).expect("mounted");
            if d.fstype.as_deref() != Some("vfat") {
                return fail(
                    1,
                    format!("grub-install: error: {dir} doesn't look like an EFI partition.\n"),
                );
            }
            out("Installing for x86_64-efi platform.\nInstallation finished. No error reported.\n")
        }
        Some("i386-pc") => {
            let Some(dev) = args.last() else {
                return fail(1, "grub-install: error: install device isn't specified.\n");
            };
            let Some(k) = block(st, dev) else {
                return fail(
                    1,
                    format!(
                        "grub-install: error: cannot find a GRUB drive for {dev}.  Check your device.map.\n"
                    ),
                );
            };
            let w = &st.world;
            let gpt = w.device(&k).and_then(|d| d.pttype.as_deref()) == Some("gpt");
            let bios_boot = w.block_devices.iter().any(|p| {
                p.parent.as_deref() == Some(k.as_str())
                    && p.parttype.as_deref() == Some(BIOS_BOOT_GPT_TYPE)
            });
            if gpt && !bios_boot {
                return fail(
                    1,
                    "Installing for i386-pc platform.\ngrub-install: warning: this GPT partition label contains no BIOS Boot Partition; embedding won't be possible.\ngrub-install: error: embedding is not possible, but this is required for cross-disk install.\n",
                );
            }
            out("Installing for i386-pc platform.\nInstallation finished. No error reported.\n")
        }
        _ => fail(1, "grub-install: error: platform not specified.\n"),
    }
}

/// hyraid's stamp written on the ESP mounted under `path`; false when `path` is not on one.
pub(in crate::sim) fn write_stamp(st: &mut SimState, path: &str, content: &str) -> bool {
    let Some(mp) = path.strip_suffix(&format!("/{ESP_STAMP}")) else {
        return false;
    };
    let Some(k) = esp_at(st, mp) else {
        return false;
    };
    st.world.boot.loaders.esps.entry(k).or_default().stamp = Some(content.trim().to_string());
    true
}

/// `mtype -i DEV ::/PATH` of hyraid's stamp.
pub(in crate::sim) fn mtype(st: &SimState, dev: &str, file: &str) -> Result<CmdOutput, HostError> {
    let Some(k) = block(st, dev) else {
        return fail(
            1,
            "init: open: No such file or directory\nCannot initialize '::'\n",
        );
    };
    if st.world.device(&k).and_then(|d| d.fstype.as_deref()) != Some("vfat") {
        return fail(1, "init: non DOS media\nCannot initialize '::'\n");
    }
    match st
        .world
        .boot
        .loaders
        .esps
        .get(&k)
        .and_then(|e| e.stamp.clone())
    {
        Some(s) if file == format!("::/{ESP_STAMP}") => out(&format!("{s}\n")),
        _ => fail(1, format!("File \"{file}\" not found\n")),
    }
}

/// `blkid -o value -s PARTUUID DEV`.
pub(in crate::sim) fn blkid_partuuid(st: &SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(k) = block(st, dev) else {
        return fail(2, "");
    };
    let known = st
        .world
        .boot
        .loaders
        .esps
        .get(&k)
        .and_then(|e| e.partuuid.clone());
    out(&format!("{}\n", known.unwrap_or_else(|| partuuid(st, &k))))
}

fn no_efi() -> Result<CmdOutput, HostError> {
    fail(2, "EFI variables are not supported on this system.\n")
}

/// `efibootmgr -v`, `--create`, `--delete-bootnum`.
pub(in crate::sim) fn efibootmgr(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    if !st.world.boot.uefi {
        return no_efi();
    }
    let entries = st
        .world
        .boot
        .loaders
        .efi_entries
        .get_or_insert_with(Vec::new);
    match args {
        ["-v"] => {
            let mut s = String::from("BootCurrent: 0001\nTimeout: 0 seconds\nBootOrder: ");
            s.push_str(
                &entries
                    .iter()
                    .map(|e| e.number.clone())
                    .collect::<Vec<_>>()
                    .join(","),
            );
            s.push('\n');
            for e in entries.iter() {
                let dp = match (&e.partuuid, &e.path) {
                    (Some(u), Some(p)) => format!("HD(2,GPT,{u},0x800,0x100000)/File({p})"),
                    _ => "PciRoot(0x0)/Pci(0x1f,0x2)/Sata(0,65535,0)".into(),
                };
                s.push_str(&format!(
                    "Boot{}{} {}\t{dp}\n",
                    e.number,
                    if e.active { "*" } else { " " },
                    e.label
                ));
            }
            out(&s)
        }
        [
            "--quiet",
            "--create",
            "--disk",
            disk,
            "--part",
            part,
            "--label",
            label,
            "--loader",
            loader,
        ] => {
            let Some(k) = block(st, disk) else {
                return fail(1, format!("efibootmgr: Could not open disk {disk}\n"));
            };
            let pk = st
                .world
                .block_devices
                .iter()
                .find(|p| p.parent.as_deref() == Some(k.as_str()) && p.kname.ends_with(part))
                .map(|p| p.kname.clone());
            let Some(pk) = pk else {
                return fail(
                    5,
                    "efibootmgr: Could not prepare Boot variable: No such file or directory\n",
                );
            };
            let uuid = st
                .world
                .boot
                .loaders
                .esps
                .get(&pk)
                .and_then(|e| e.partuuid.clone())
                .unwrap_or_else(|| partuuid(st, &pk));
            let entries = st
                .world
                .boot
                .loaders
                .efi_entries
                .get_or_insert_with(Vec::new);
            let n = (0..0xffff)
                .find(|n| !entries.iter().any(|e| e.number == format!("{n:04X}")))
                .unwrap_or(0);
            // --create puts the new entry first in BootOrder.
            entries.insert(
                0,
                EfiEntry {
                    number: format!("{n:04X}"),
                    label: label.to_string(),
                    active: true,
                    partuuid: Some(uuid),
                    path: Some(loader.to_string()),
                },
            );
            out("")
        }
        ["--quiet", "--delete-bootnum", "--bootnum", n] => {
            match entries
                .iter()
                .position(|e| e.number.eq_ignore_ascii_case(n))
            {
                Some(i) => {
                    entries.remove(i);
                    out("")
                }
                None => fail(8, format!("Boot entry {n} not found\n")),
            }
        }
        _ => crate::sim::unsupported(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
    }
}

/// Whether the loaders' tools and grub's platforms are where Debian puts them.
pub(in crate::sim) fn exists(w: &crate::observe::Observed, path: &str) -> Option<bool> {
    use crate::observe::loader as l;
    let missing = |t: &str| w.missing_tools.iter().any(|m| m == t);
    if path == l::GRUB_INSTALL_PATHS[0] {
        return Some(w.boot.loaders.grub.is_some());
    }
    if let Some(p) = path
        .strip_prefix(l::GRUB_LIB)
        .and_then(|p| p.strip_prefix('/'))
    {
        return Some(w.boot.loaders.platforms.iter().any(|x| x == p));
    }
    if path == l::MTYPE_PATHS[0] {
        return Some(!missing("mtools"));
    }
    if path == l::EFIBOOTMGR_PATHS[0] {
        return Some(!missing("efibootmgr"));
    }
    if path == l::GRUB_CFG {
        return Some(w.boot.loaders.grub_cfg);
    }
    if path == l::DPKG_QUERY_PATHS[0] {
        return Some(!missing("dpkg"));
    }
    None
}

/// `update-grub`, `debconf-show grub-pc` and
/// `debconf-set-selections FILE` (of hyraid's answer, kept among its records).
pub(in crate::sim) fn debconf(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    use crate::observe::loader as l;
    let installed = st.world.boot.loaders.grub_pc.is_some();
    match args {
        ["dpkg-query", "-W", _, "grub-pc"] if installed => out("ii "),
        ["dpkg-query", "-W", _, "grub-pc"] => out("un "),
        ["update-grub"] if st.world.boot.loaders.grub.is_some() => {
            st.world.boot.loaders.grub_cfg = true;
            out("Generating grub configuration file ...\ndone\n")
        }
        ["debconf-show", "grub-pc"] => {
            let d = st.world.boot.loaders.grub_pc.clone().unwrap_or_default();
            out(&format!(
                "  grub-pc/timeout: 5\n* grub-pc/install_devices: {}\n",
                d.join(", ")
            ))
        }
        ["debconf-set-selections", path] if *path == l::GRUB_PC_SELECTIONS => {
            let text = st
                .world
                .boot
                .monitoring
                .records
                .get(*path)
                .cloned()
                .unwrap_or_default();
            let Some(v) = text
                .lines()
                .find_map(|x| x.strip_prefix("grub-pc grub-pc/install_devices multiselect "))
            else {
                return fail(
                    1,
                    format!("debconf-set-selections: warning: Unknown type in {path}\n"),
                );
            };
            if installed {
                st.world.boot.loaders.grub_pc = Some(
                    v.split(',')
                        .map(|d| d.trim().to_string())
                        .filter(|d| !d.is_empty())
                        .collect(),
                );
            }
            out("")
        }
        _ => crate::sim::unsupported(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
    }
}
