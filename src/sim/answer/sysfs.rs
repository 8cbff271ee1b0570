//! Reads of sysfs: md array and member attributes under /sys/block/MD/md/, and a SCSI disk's
//! cache_type.

use crate::observe::{BitmapKind, Observed, WriteCacheSource};

pub fn sysfs_read(w: &Observed, path: &str) -> Option<String> {
    let rest = path.strip_prefix("/sys/block/")?;
    let (dev, attr) = rest.split_once('/')?;
    if let Some(a) = attr.strip_prefix("md/").and(w.array(dev)) {
        let attr = attr.strip_prefix("md/").unwrap();
        if let Some(m) = attr.strip_prefix("dev-") {
            let (k, file) = m.split_once('/')?;
            let mem = a.member(k)?;
            return match file {
                "state" => Some(format!("{}\n", mem.state.join(","))),
                "slot" => Some(format!(
                    "{}\n",
                    mem.slot
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "none".into())
                )),
                "offset" => mem.data_offset.map(|o| format!("{o}\n")),
                _ => None,
            };
        }
        let inactive = a.array_state == "inactive";
        // What kernel 6.1 shows for an array that is not running (captured in the VM).
        if inactive && attr == "uuid" {
            return Some("00000000-0000-0000-0000-000000000000\n".into());
        }
        if inactive
            && matches!(
                attr,
                "level" | "raid_disks" | "degraded" | "sync_action" | "sync_completed"
            )
        {
            return Some("\n".into());
        }
        if inactive && attr.starts_with("bitmap/") {
            return None;
        }
        // Only personalities with redundancy have these (md_redundancy_group).
        if !a.bitmap_applies()
            && matches!(
                attr,
                "degraded" | "sync_action" | "sync_completed" | "sync_speed"
            )
        {
            return None;
        }
        if let Some(v) = crate::sim::tools::md_check::read(a, attr) {
            return Some(format!("{v}\n"));
        }
        let v = match attr {
            "level" => a.level.clone(),
            "raid_disks" => a.raid_disks.to_string(),
            "array_state" => a.array_state.clone(),
            "sync_action" => a.sync_action.clone(),
            "sync_completed" => a
                .sync_completed
                .map(|(d, t)| format!("{d} / {t}"))
                .unwrap_or_else(|| "none".into()),
            "degraded" => a.degraded.to_string(),
            // RAID1: every member's used size is the array's (KiB).
            "component_size" if a.level == "raid1" => a.size_kib.to_string(),
            "resync_start" => {
                if a.resync_pending {
                    "0".into()
                } else {
                    "none".into()
                }
            }
            "sync_speed" => {
                if a.sync_completed.is_some() {
                    "100000".into()
                } else {
                    "none".into()
                }
            }
            "uuid" => a.uuid.clone()?,
            "bitmap/location" => match a.bitmap.as_ref().map(|b| b.kind) {
                // 1.0: the bitmap ends just before the bad-block log under the superblock, in
                // whole 4 KiB blocks (`add_internal_bitmap1`, offset 0 at create).
                Some(BitmapKind::Internal) if a.superblock.as_deref() == Some("1.0") => {
                    let chunk = a.bitmap.as_ref().map(|b| b.chunk.max(1)).unwrap_or(1);
                    let bits = a.size_kib * 1024 / chunk + 1;
                    format!("-{}", (bits.div_ceil(8) + 256).div_ceil(4096) * 8 + 8)
                }
                Some(BitmapKind::Internal) => "+8".into(),
                Some(BitmapKind::File) => "file".into(),
                // A location no kernel hyraid knows prints.
                Some(BitmapKind::Unknown) => "unknown".into(),
                None => "none".into(),
            },
            "metadata_version" => a
                .metadata
                .clone()
                .unwrap_or_else(|| a.superblock_version().into()),
            "bitmap/chunksize" => a.bitmap.as_ref().map(|b| b.chunk).unwrap_or(0).to_string(),
            "bitmap/backlog" => a
                .bitmap
                .as_ref()
                .map(|b| b.backlog)
                .unwrap_or(0)
                .to_string(),
            _ => return None,
        };
        return Some(format!("{v}\n"));
    }
    let d = w.device(dev)?;
    let wc = d
        .write_cache
        .filter(|c| c.source == WriteCacheSource::ScsiCacheType)?;
    if attr.starts_with("device/scsi_disk/") && attr.ends_with("/cache_type") {
        return Some(match wc.enabled {
            Some(true) => "write back\n".into(),
            Some(false) => "write through\n".into(),
            // The kernel always prints one of its four words; a state the simulator does not
            // know reads back as unknown (an empty attribute), never as `none` (which is off).
            None => "\n".into(),
        });
    }
    None
}
