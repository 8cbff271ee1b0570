//! A small machine for the filesystem tests: the microserver running systemd with a
//! distribution's fstab, and a file with one LV and its `filesystem:`.

use super::*;
use hyraid::config::load_str;

pub const FSTAB: &str = "# /etc/fstab: static file system information.\nUUID=6a1e2b7c-93f1-4a57-9d62-0c2a5b8f1e01 / ext4 errors=remount-ro 0 1\n/dev/sr0        /media/cdrom0   udf,iso9660 user,noauto     0       0\n";

pub fn file(fs: &str, wc: bool) -> Desired {
    let wc = if wc {
        ", writecache: { size: 32GiB, pvs: [cache0] }"
    } else {
        ""
    };
    load_str(
        "fs.yaml",
        &format!(
            r#"version: 1
disks:
  ssd0: {{ id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A }}
  hdd0: {{ id: ata-ST1000LM048-2E7172_WDE00001 }}
  cache0: {{ id: ata-KINGSTON_SA400S37240G_50026B7782000001 }}
mirrors:
  data0: {{ members: [ssd0, hdd0] }}
volume_groups:
  vg0:
    pvs: [data0, cache0]
    lvs:
      nextcloud: {{ size: 100GiB, pvs: [data0]{wc}, filesystem: {fs} }}
"#
        ),
    )
    .unwrap()
}

/// The microserver, running systemd, with a distribution's fstab.
/// A mirror used without LVM (`backup`, of the example's first SSD and HDD) that carries the
/// filesystem `fs`.
pub fn mirror_file(fs: &str) -> Desired {
    load_str("mfs.yaml", &mirror_file_text(fs)).unwrap()
}

/// The text of [`mirror_file`].
pub fn mirror_file_text(fs: &str) -> String {
    format!(
        r#"version: 1
disks:
  ssd0: {{ id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A }}
  hdd0: {{ id: ata-ST1000LM048-2E7172_WDE00001 }}
mirrors:
  backup: {{ members: [ssd0, hdd0], filesystem: {fs} }}
"#
    )
}

pub fn machine() -> SimHost {
    let mut w: Observed = example("microserver-gen8").1.world();
    w.boot.fstab = Some(FSTAB.into());
    w.boot.systemd = true;
    SimHost::new(w)
}

pub fn sized(fs: &str, bytes: u64) -> Desired {
    let mut d = file(if fs == "none" { "{ type: ext4 }" } else { fs }, false);
    nextcloud(&mut d).size = hyraid::config::size::LvSize::Bytes(bytes);
    if fs == "none" {
        nextcloud(&mut d).filesystem = None;
    }
    d
}
