//! Synthetic machines of any size for benchmarks and scale tests: `pairs` hybrid mirrors (one
//! SATA SSD + one SATA HDD each), one volume group per two mirrors, and `lvs` logical volumes
//! spread over the groups. Every HDD's drive write cache is managed; on every other HDD the
//! kernel exposes no scsi_disk `cache_type`, so the observer must ask `hdparm -W` (as for disks
//! behind controllers that do not emulate the caching mode page).

use crate::observe::{BlockDevice, DevKind, Observed, WriteCacheSource, WriteCacheState};
use std::fmt::Write;

/// Size of every synthetic disk (a 1 TB drive).
pub const DISK_SIZE: u64 = 1_000_204_886_016;

/// The shape of a synthetic machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Mirrors; the machine has twice as many disks.
    pub pairs: usize,
    /// Logical volumes, spread round-robin over the volume groups.
    pub lvs: usize,
}

impl Shape {
    pub fn disks(&self) -> usize {
        self.pairs * 2
    }
    pub fn vgs(&self) -> usize {
        self.pairs.div_ceil(2)
    }
    pub fn hostname(&self) -> String {
        format!("scale{}", self.disks())
    }
}

/// The kernel's name for the n-th SCSI disk: sda … sdz, sdaa … sdzz.
pub fn sd_name(n: usize) -> String {
    let mut s = String::new();
    let mut n = n + 1;
    while n > 0 {
        n -= 1;
        s.insert(0, (b'a' + (n % 26) as u8) as char);
        n /= 26;
    }
    format!("sd{s}")
}

/// The sd driver's device number of the n-th disk (16 minors per disk, majors 8, 65–71, 128–135).
pub(super) fn sd_maj_min(n: usize) -> String {
    const MAJORS: [u32; 16] = [
        8, 65, 66, 67, 68, 69, 70, 71, 128, 129, 130, 131, 132, 133, 134, 135,
    ];
    format!("{}:{}", MAJORS[(n / 16) % 16], (n % 16) * 16)
}

fn serial(kind: &str, i: usize) -> String {
    format!("HY{kind}{i:05}")
}

fn by_id(kind: &str, i: usize) -> String {
    let model = if kind == "SSD" {
        "HYRAID_SSD"
    } else {
        "HYRAID_HDD"
    };
    format!("ata-{model}_{}", serial(kind, i))
}

/// The configuration for `shape`: mirrors with a 64 MiB bitmap chunk and the HDD write-mostly,
/// drive write cache on for every HDD, LVs of 4 GiB.
pub fn config_yaml(shape: Shape) -> String {
    let mut y = String::new();
    let _ = writeln!(y, "version: 1\nhost: {}\n\ndisks:", shape.hostname());
    for i in 0..shape.pairs {
        let _ = writeln!(y, "  ssd{i:03}: {{ id: {} }}", by_id("SSD", i));
        let _ = writeln!(
            y,
            "  hdd{i:03}: {{ id: {}, write_cache: on }}",
            by_id("HDD", i)
        );
    }
    y.push_str("\nmirrors:\n");
    for i in 0..shape.pairs {
        let _ = writeln!(
            y,
            "  data{i:03}: {{ members: [ssd{i:03}, hdd{i:03}], bitmap: {{ chunk: 64MiB }} }}"
        );
    }
    y.push_str("\nvolume_groups:\n");
    for v in 0..shape.vgs() {
        let pvs: Vec<String> = (v * 2..(v * 2 + 2).min(shape.pairs))
            .map(|i| format!("data{i:03}"))
            .collect();
        let _ = writeln!(y, "  vg{v:03}:\n    pvs: [{}]\n    lvs:", pvs.join(", "));
        for l in (v..shape.lvs).step_by(shape.vgs()) {
            let _ = writeln!(y, "      lv{l:04}: {{ size: 4GiB }}");
        }
    }
    y
}

fn disk(n: usize, kind: &str, i: usize, hdparm_only: bool) -> BlockDevice {
    let ssd = kind == "SSD";
    let wwn = format!("0x5000c500{:08x}", n);
    BlockDevice {
        kname: sd_name(n),
        kind: DevKind::Disk,
        maj_min: sd_maj_min(n),
        size: DISK_SIZE,
        rotational: !ssd,
        serial: Some(serial(kind, i)),
        wwn: Some(wwn.clone()),
        model: Some(format!("HYRAID {kind}")),
        tran: Some("sata".into()),
        by_id: vec![by_id(kind, i), format!("wwn-{wwn}")],
        parent: None,
        partlabel: None,
        parttype: None,
        pttype: None,
        fstype: None,
        holders: vec![],
        mountpoint: None,
        signatures: Some(vec![]),
        probe_error: None,
        write_cache: Some(WriteCacheState {
            // Drives ship with the cache off after a power cycle on these boxes.
            // Disks without a scsi_disk cache_type still answer `hdparm -W`.
            enabled: Some(ssd),
            source: if hdparm_only {
                WriteCacheSource::Hdparm
            } else {
                WriteCacheSource::ScsiCacheType
            },
        }),
    }
}

/// The blank machine for `shape`: every disk empty, no arrays, no LVM, Debian's stock
/// mdadm.conf and update-initramfs.
pub fn blank_machine(shape: Shape) -> Observed {
    let mut block_devices = Vec::new();
    for i in 0..shape.pairs {
        block_devices.push(disk(2 * i, "SSD", i, false));
        block_devices.push(disk(2 * i + 1, "HDD", i, i % 2 == 1));
    }
    super::blank::with_disks(&shape.hostname(), block_devices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sd_names_follow_the_kernel() {
        assert_eq!(sd_name(0), "sda");
        assert_eq!(sd_name(25), "sdz");
        assert_eq!(sd_name(26), "sdaa");
        assert_eq!(sd_name(51), "sdaz");
        assert_eq!(sd_name(52), "sdba");
        assert_eq!(sd_name(239), "sdif");
        assert_eq!(sd_maj_min(0), "8:0");
        assert_eq!(sd_maj_min(17), "65:16");
    }

    #[test]
    fn the_config_loads_and_matches_the_shape() {
        let shape = Shape {
            pairs: 12,
            lvs: 200,
        };
        let d = crate::config::load_str("scale.yaml", &config_yaml(shape)).unwrap();
        assert_eq!(d.disks.len(), 24);
        assert_eq!(d.mirrors.len(), 12);
        assert_eq!(d.volume_groups.len(), 6);
        let lvs: usize = d.volume_groups.values().map(|v| v.lvs.len()).sum();
        assert_eq!(lvs, 200);
        let m = blank_machine(shape);
        assert_eq!(m.block_devices.len(), 24);
        for spec in d.disks.values() {
            assert!(m.by_id(spec.id.as_ref().unwrap()).is_some());
        }
    }
}
