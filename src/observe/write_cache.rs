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

/// `/sys/block/X/device/scsi_disk/H:C:T:L/cache_type`: `write back` (on), `write through` (off),
/// `none` (no cache), `write back, no read (daft)` (on).
pub fn parse_cache_type(text: &str) -> Option<bool> {
    let t = text.trim();
    if t.starts_with("write back") {
        Some(true)
    } else if t.starts_with("write through") {
        Some(false)
    } else {
        None
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
        assert_eq!(parse_cache_type("none\n"), None);
        let lines = fx("layout-three-arrays/sysfs-cache-type.txt");
        assert!(
            lines
                .lines()
                .all(|l| parse_cache_type(l.rsplit(": ").next().unwrap()) == Some(true))
        );
    }
}
