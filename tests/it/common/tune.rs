//! The machine `hyraid tune` is tested on: an SSD mirrored with an HDD whose drive cache the
//! file turns off, a bitmap, an LV with an ext4 mounted at /srv/data, and a second SSD in the VG
//! with room for a temporary writecache.

use hyraid::config::Desired;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;
use hyraid::sim::blank::{DiskSpec, Media, machine};

pub const TUNE_YAML: &str = "\
version: 1
host: box
disks:
  ssd1: { id: ata-HYRAID_SSD_HYSSD00001 }
  hdd1:
    id: ata-HYRAID_HDD_HYHDD00002
    write_cache: off   # no UPS yet
  ssd2: { id: ata-HYRAID_SSD_HYSSD00003 }
mirrors:
  data0:
    members: [ssd1, hdd1]
    bitmap: { chunk: 64MiB }
volume_groups:
  vg0:
    pvs: [data0, ssd2]
    lvs:
      data:
        size: 200GiB
        pvs: [data0]
        filesystem: { type: ext4, mount: /srv/data }
";

fn disk(media: Media, size: u64) -> DiskSpec {
    DiskSpec {
        media,
        size,
        model: None,
        serial: None,
    }
}

/// The blank machine of [`TUNE_YAML`].
pub fn tune_blank() -> SimHost {
    SimHost::new(machine(
        "box",
        &[
            disk(Media::Ssd, 500_000_000_000),
            disk(Media::Hdd, 1_000_000_000_000),
            disk(Media::Ssd, 240_000_000_000),
        ],
    ))
}

/// [`TUNE_YAML`] applied and its resync finished.
pub fn tune_box() -> (Desired, SimHost) {
    let d = hyraid::config::load_str("hyraid.yaml", TUNE_YAML).unwrap();
    let h = tune_blank();
    super::apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, h)
}
