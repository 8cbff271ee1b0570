//! Names hyraid passes to mdadm and LVM.

/// Names hyraid passes to mdadm and LVM: conservative so nothing reaches a tool unquoted or mangled.
pub(super) fn check_name(name: &str, max: usize) -> Result<(), String> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if name.is_empty() || !ok_chars || !first_ok {
        return Err(format!(
            "name `{name}` is not allowed: use letters, digits, `.`, `_` and `-`, starting with a letter or digit"
        ));
    }
    if name.len() > max {
        return Err(format!("name `{name}` is longer than {max} characters"));
    }
    Ok(())
}

/// LVM reserves these inside LV names for its hidden sub-volumes.
pub(super) const LVM_RESERVED: &[&str] = &[
    "_cdata", "_cmeta", "_corig", "_cpool", "_cvol", "_imeta", "_iorig", "_mimage", "_mlog",
    "_pmspare", "_rimage", "_rmeta", "_tdata", "_tmeta", "_vdata", "_vorigin", "_wcorig",
];

/// A serial as udev keeps it in ID_SERIAL_SHORT, which hyraid's udev rule matches: the first
/// character that could not be there (and would end or change the rule), if any.
pub(super) fn check_serial(serial: &str) -> Result<(), String> {
    if crate::observe::names::rule_safe(serial) {
        return Ok(());
    }
    let bad = serial
        .chars()
        .find(|c| !crate::observe::names::rule_safe(&c.to_string()))
        .map(|c| format!("`{}`", shown(&c.to_string())))
        .unwrap_or_else(|| "nothing".into());
    Err(format!(
        "serial `{}` contains {bad}: udev keeps only letters, digits and `#+-.:=@_` in a serial, and hyraid's udev rule matches it as written",
        shown(serial)
    ))
}

/// `s` with its control characters escaped (`\n`), for a one-line message.
fn shown(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A kernel name (`sdc`, `nvme0n1`, `vda2`): assigned in probe order, so it can name another
/// disk after the next boot or hotplug.
pub(super) fn is_kernel_name(id: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    // `sdc`, `sdc2`, `vda`, `xvdb1`: a prefix, letters, an optional partition number.
    for p in ["xvd", "sd", "hd", "vd"] {
        if let Some(rest) = id.strip_prefix(p) {
            let letters = rest.trim_end_matches(|c: char| c.is_ascii_digit());
            return !letters.is_empty() && letters.chars().all(|c| c.is_ascii_lowercase());
        }
    }
    // `nvme0n1`, `nvme0n1p2`, `mmcblk0p1`, `md127`, `loop0`.
    let without_part = |s: &'_ str| -> String {
        match s.split_once('p') {
            Some((a, b)) if digits(b) => a.to_string(),
            _ => s.to_string(),
        }
    };
    if let Some(rest) = id.strip_prefix("nvme") {
        return rest
            .split_once('n')
            .is_some_and(|(ctrl, ns)| digits(ctrl) && digits(&without_part(ns)));
    }
    if let Some(rest) = id.strip_prefix("mmcblk") {
        return digits(&without_part(rest));
    }
    ["md", "loop", "sr", "nbd", "zram"]
        .iter()
        .any(|p| id.strip_prefix(p).is_some_and(digits))
}

/// Entries every Linux /dev has: `vgcreate` refuses a VG whose /dev/NAME already exists, and a
/// VG named like them would put its LVs among the system's devices.
pub(super) const DEV_ENTRIES: &[&str] = &[
    "block",
    "bsg",
    "bus",
    "char",
    "console",
    "core",
    "cpu",
    "disk",
    "dri",
    "fd",
    "full",
    "fuse",
    "hugepages",
    "input",
    "kmsg",
    "log",
    "mapper",
    "md",
    "mem",
    "mqueue",
    "net",
    "null",
    "port",
    "ptmx",
    "pts",
    "random",
    "rtc",
    "shm",
    "snd",
    "stderr",
    "stdin",
    "stdout",
    "tty",
    "urandom",
    "vfio",
    "zero",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_told_from_by_id_names() {
        for k in [
            "sdc",
            "sdaa",
            "sdc2",
            "hda",
            "vda1",
            "xvdb",
            "nvme0n1",
            "nvme1n2p3",
            "mmcblk0",
            "mmcblk0p1",
            "md127",
            "loop0",
            "sr0",
        ] {
            assert!(is_kernel_name(k), "{k}");
        }
        for i in [
            "ata-SSD_1",
            "wwn-0x5000c500a1b2c3d4",
            "nvme-Samsung_SSD_970_S4EW",
            "nvme-eui.0025388b71b2c3d4",
            "md-uuid-263e1fc9",
            "scsi-SATA_ST500",
            "usb-Generic_0",
            "sd",
            "nvme0",
            "sdC",
        ] {
            assert!(!is_kernel_name(i), "{i}");
        }
    }

    #[test]
    fn serials_are_what_udev_keeps() {
        assert!(check_serial("WD-WCC4M0000001").is_ok());
        assert!(check_serial("S2H7+J9@B#1=a:b").is_ok());
        for bad in [
            "X\", RUN+=\"/bin/sh",
            "X\\",
            "a b",
            "X*",
            "A|B",
            "$devnode",
            "X\u{1b}",
        ] {
            assert!(check_serial(bad).is_err(), "{bad}");
        }
    }
}
