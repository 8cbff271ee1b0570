//! A blank machine made from a list of disks, without a real machine (`hyraid sim new`): the
//! snapshot a user plans against before the disks are bought. Each disk is named as the kernel
//! would name it (sda, sdb, … for SATA SSDs and HDDs; nvme0n1, nvme1n1, … for NVMe), with the
//! /dev/disk/by-id names udev would give it from its model and serial.

use super::synthetic::{sd_maj_min, sd_name};
use crate::config::size::parse_bytes;
use crate::observe::{
    BlockDevice, Boot, DevKind, Lvm, Observed, SNAPSHOT_FORMAT, WriteCacheSource, WriteCacheState,
};

/// What kind of drive a disk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Media {
    /// A SATA SSD (non-rotational, the drive write cache read from scsi_disk cache_type).
    Ssd,
    /// A SATA HDD (rotational).
    Hdd,
    /// An NVMe SSD.
    Nvme,
}

/// One disk of `hyraid sim new --disk MEDIA:SIZE[:MODEL[:SERIAL]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskSpec {
    pub media: Media,
    pub size: u64,
    pub model: Option<String>,
    pub serial: Option<String>,
}

impl std::str::FromStr for DiskSpec {
    type Err = String;

    /// `ssd:500GB`, `hdd:4TB:WDC WD40EFRX-68N32N0`, `nvme:1TB:Samsung SSD 980 1TB:S64ANS0T1`.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.splitn(4, ':');
        let media = match parts.next().unwrap_or("") {
            "ssd" => Media::Ssd,
            "hdd" => Media::Hdd,
            "nvme" => Media::Nvme,
            m => {
                return Err(format!(
                    "`{m}` is not a kind of disk: write ssd, hdd or nvme (as in `hdd:4TB`)"
                ));
            }
        };
        let size = parts
            .next()
            .ok_or_else(|| format!("`{s}` has no size: write MEDIA:SIZE, e.g. `hdd:4TB`"))?;
        let size = parse_bytes(size).map_err(|e| format!("`{s}`: {e}"))?;
        if size < 1 << 30 {
            return Err(format!(
                "`{s}`: a disk of less than 1 GiB is not a disk hyraid plans for"
            ));
        }
        let text = |p: Option<&str>| p.map(str::trim).filter(|p| !p.is_empty()).map(String::from);
        let (model, serial) = (text(parts.next()), text(parts.next()));
        if let Some(bad) = [&model, &serial]
            .into_iter()
            .flatten()
            .find(|t| t.contains('/'))
        {
            return Err(format!(
                "`{bad}`: a model or serial cannot contain `/` (udev names it in /dev/disk/by-id)"
            ));
        }
        Ok(DiskSpec {
            media,
            size,
            model,
            serial,
        })
    }
}

/// The by-id form of a model or serial: udev replaces blanks with `_`.
fn udev_word(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join("_")
}

/// One disk as lsblk and udev would show it; `n` counts the SATA disks, `i` every disk.
fn disk(spec: &DiskSpec, n: usize, nvme: usize, i: usize) -> BlockDevice {
    let (model, serial) = match spec.media {
        Media::Ssd => ("HYRAID SSD", format!("HYSSD{i:05}")),
        Media::Hdd => ("HYRAID HDD", format!("HYHDD{i:05}")),
        Media::Nvme => ("HYRAID NVMe", format!("HYNVME{i:05}")),
    };
    let model = spec.model.clone().unwrap_or_else(|| model.into());
    let serial = spec.serial.clone().unwrap_or(serial);
    let wwn = format!("0x5000c500{i:08x}");
    let id = format!("{}_{}", udev_word(&model), udev_word(&serial));
    let sata = spec.media != Media::Nvme;
    BlockDevice {
        kname: if sata {
            sd_name(n)
        } else {
            format!("nvme{nvme}n1")
        },
        kind: DevKind::Disk,
        maj_min: if sata {
            sd_maj_min(n)
        } else {
            format!("259:{nvme}")
        },
        size: spec.size,
        rotational: spec.media == Media::Hdd,
        serial: Some(serial),
        wwn: sata.then(|| wwn.clone()),
        model: Some(model),
        tran: Some(if sata { "sata" } else { "nvme" }.into()),
        by_id: if sata {
            vec![format!("ata-{id}"), format!("wwn-{wwn}")]
        } else {
            vec![
                format!("nvme-{id}"),
                format!("nvme-eui.{:016x}", 0x0025_38b9_1100_0000u64 + i as u64),
            ]
        },
        parent: None,
        partlabel: None,
        parttype: None,
        pttype: None,
        fstype: None,
        holders: vec![],
        mountpoint: None,
        signatures: Some(vec![]),
        probe_error: None,
        // SATA drives leave the factory with their volatile write cache on.
        write_cache: sata.then_some(WriteCacheState {
            enabled: Some(true),
            source: WriteCacheSource::ScsiCacheType,
        }),
    }
}

/// A blank disk plugged into machine `w`: the next kernel name free (`sdX`, `nvmeNn1`), the
/// next serial free when the spec names none, as udev would show it.
pub fn plugged(w: &Observed, spec: &DiskSpec) -> BlockDevice {
    let taken = |k: &str| w.block_devices.iter().any(|b| b.kname == k);
    let sata = (0..).find(|n| !taken(&sd_name(*n))).unwrap_or(0);
    let nvme = (0..).find(|n| !taken(&format!("nvme{n}n1"))).unwrap_or(0);
    let serials: Vec<&str> = w
        .block_devices
        .iter()
        .filter_map(|b| b.serial.as_deref())
        .collect();
    let i = (w.block_devices.len() + 1..)
        .find(|i| !serials.iter().any(|s| s.ends_with(&format!("{i:05}"))))
        .unwrap_or(1);
    disk(spec, sata, nvme, i)
}

/// The blank machine `hostname` with `disks`, in the order given.
pub fn machine(hostname: &str, disks: &[DiskSpec]) -> Observed {
    let (mut sata, mut nvme) = (0, 0);
    let mut block_devices = Vec::new();
    for (i, d) in disks.iter().enumerate() {
        block_devices.push(disk(d, sata, nvme, i + 1));
        if d.media == Media::Nvme {
            nvme += 1;
        } else {
            sata += 1;
        }
    }
    with_disks(hostname, block_devices)
}

/// A machine with nothing on `disks`: no arrays, no LVM, Debian's stock mdadm.conf and
/// update-initramfs.
pub(super) fn with_disks(hostname: &str, block_devices: Vec<BlockDevice>) -> Observed {
    Observed {
        format: SNAPSHOT_FORMAT,
        hostname: hostname.into(),
        block_devices,
        arrays: vec![],
        lvm: Lvm::default(),
        boot: Boot {
            mdadm_conf_path: Some("/etc/mdadm/mdadm.conf".into()),
            mdadm_conf: Some(
                "HOMEHOST <system>\nMAILADDR root\n\n# definitions of existing MD arrays\n".into(),
            ),
            initramfs_tool: Some("update-initramfs".into()),
            write_cache_rule: None,
            monitoring: debian_12_monitoring(),
            ..Boot::default()
        },
        other_devices: vec![],
        dev_md_strays: vec![],
        filesystems: vec![],
        partition_tables: Default::default(),
        missing_tools: vec![],
        smart: Default::default(),
        luks: vec![],
        files: Default::default(),
        key_slots: Default::default(),
    }
    .normalized()
}

/// What a Debian 12 machine with hyraid's package has: hyraid in /usr/bin, and mdadm's monthly
/// checkarray (its cron job, and `AUTOCHECK=true`, debconf's default).
pub fn debian_12_monitoring() -> crate::observe::monitoring::Monitoring {
    crate::observe::monitoring::Monitoring {
        hyraid_path: Some("/usr/bin/hyraid".into()),
        cron_mdadm: Some(DEBIAN_12_CRON.into()),
        default_mdadm: Some("# mdadm Debian configuration\nAUTOCHECK=true\nAUTOSCAN=true\nSTART_DAEMON=true\nDAEMON_OPTIONS=\"--syslog\"\nVERBOSE=false\n".into()),
        ..Default::default()
    }
}

/// Debian 12's /etc/cron.d/mdadm (mdadm 4.2-5), its comments left out.
pub const DEBIAN_12_CRON: &str = "57 0 * * 0 root if [ -x /usr/share/mdadm/checkarray ] && [ $(date +\\%d) -le 7 ]; then /usr/share/mdadm/checkarray --cron --all --idle --quiet; fi\n";

/// The `disks:` section of a file for `machine`'s disks, by their by-id names, as a start.
pub fn disks_yaml(m: &Observed) -> String {
    let mut y = String::from("disks:\n");
    let (mut s, mut h, mut n) = (0, 0, 0);
    for d in &m.block_devices {
        let name = match (d.tran.as_deref(), d.rotational) {
            (Some("nvme"), _) => {
                n += 1;
                format!("nvme{n}")
            }
            (_, true) => {
                h += 1;
                format!("hdd{h}")
            }
            _ => {
                s += 1;
                format!("ssd{s}")
            }
        };
        y.push_str(&format!("  {name}: {{ id: {} }}\n", d.by_id[0]));
    }
    y
}
