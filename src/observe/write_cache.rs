//! The drive's volatile write cache: `hdparm -W` and the scsi_disk `cache_type` attribute.

/// `hdparm -W DEV`: Some(Some(on)) when reported, Some(None) when "not supported",
/// None when no `write-caching =` line was printed (virtio, loop: unknown).
/// hdparm's exit code is not trusted (the SCSI "not supported" case exits 0).
pub fn parse_hdparm_w(text: &str) -> Option<Option<bool>> {
    for l in text.lines() {
        let t = l.trim();
        let Some(rest) = t.strip_prefix("write-caching") else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(v) = rest.strip_prefix('=') else {
            continue;
        };
        let v = v.trim();
        if v.starts_with("not supported") {
            return Some(None);
        }
        let on = v.split_whitespace().next()?;
        return match on {
            "1" => Some(Some(true)),
            "0" => Some(Some(false)),
            _ => None,
        };
    }
    None
}

/// `/sys/block/X/device/scsi_disk/H:C:T:L/cache_type`: whether the drive's write cache is on.
/// The kernel prints one of four strings, from the WCE and RCD bits of the caching mode page
/// (Documentation/scsi/sd-parameters.rst; `sd_cache_types[]` in drivers/scsi/sd.c):
///
/// | cache_type                   | WCE | RCD | write cache | read cache |
/// |------------------------------|-----|-----|-------------|------------|
/// | `write through`              | 0   | 0   | off         | on         |
/// | `none`                       | 0   | 1   | off         | off        |
/// | `write back`                 | 1   | 0   | on          | on         |
/// | `write back, no read (daft)` | 1   | 1   | on          | off        |
///
/// Anything else (an empty file, a future kernel's word) is unknown: `None`, never guessed.
pub fn parse_cache_type(text: &str) -> Option<bool> {
    match text.trim() {
        "write back" | "write back, no read (daft)" => Some(true),
        "write through" | "none" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fx(name: &str) -> String {
        crate::observe::parse_util::fixture(name)
    }

    #[test]
    fn hdparm_outputs() {
        assert_eq!(
            parse_hdparm_w(&fx("hdparm-W-sata-hdd-initial.txt")),
            Some(Some(true))
        );
        assert_eq!(
            parse_hdparm_w(&fx("hdparm-W-sata-hdd-after-W0.txt")),
            Some(Some(false))
        );
        assert_eq!(
            parse_hdparm_w(&fx("hdparm-W0-sata-hdd.txt")),
            Some(Some(false))
        );
        assert_eq!(
            parse_hdparm_w(&fx("hdparm-W1-sata-ssd.txt")),
            Some(Some(true))
        );
        assert_eq!(parse_hdparm_w(&fx("hdparm-W-scsi-hdd.txt")), Some(None));
        assert_eq!(parse_hdparm_w(&fx("hdparm-W-virtio.txt")), None);
        assert_eq!(parse_hdparm_w(""), None);
    }

    #[test]
    fn cache_type_values() {
        assert_eq!(
            parse_cache_type(&fx("sysfs-cache_type-sata-hdd.txt")),
            Some(true)
        );
        assert_eq!(
            parse_cache_type(&fx("sysfs-cache_type-scsi-hdd-after-clear.txt")),
            Some(false)
        );
        assert_eq!(parse_cache_type("write back, no read (daft)\n"), Some(true));
        assert_eq!(parse_cache_type("none\n"), Some(false));
        assert_eq!(parse_cache_type(""), None);
        assert_eq!(parse_cache_type("write around\n"), None);
        let lines = fx("layout-three-arrays/sysfs-cache-type.txt");
        assert!(
            lines
                .lines()
                .all(|l| parse_cache_type(l.rsplit(": ").next().unwrap()) == Some(true))
        );
    }
}
