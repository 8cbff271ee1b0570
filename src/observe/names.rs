//! How md arrays are named and identified, in the forms mdadm, sysfs and mdadm.conf write them.

/// `2a5bd1d0-4b8a-…` or `2a5bd1d0:4b8a6c55:…` → mdadm's `xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx`.
pub fn mdadm_uuid(u: &str) -> String {
    let h: String = u
        .chars()
        .filter(|c| c.is_ascii_hexdigit())
        .collect::<String>()
        .to_lowercase();
    if h.len() != 32 {
        return u.to_string();
    }
    format!("{}:{}:{}:{}", &h[0..8], &h[8..16], &h[16..24], &h[24..32])
}

/// An array name that is one word of mdadm.conf and one /dev/md/ entry: mdadm's portable
/// filename characters (letters, digits, `.`, `_`, `-`), no leading `-`, at most 32 bytes.
pub fn md_name_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name != "."
        && name != ".."
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// A kernel md device, `/dev/mdN`: how an array made by hand without a name is addressed.
pub fn md_kernel_device(path: &str) -> bool {
    path.strip_prefix("/dev/md")
        .is_some_and(|n| !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit()))
}

/// UUIDs of the ARRAY lines of an mdadm.conf, as 32 lowercase hex digits.
pub fn mdadm_conf_uuids(conf: &str) -> Vec<String> {
    conf.lines()
        .filter(|l| l.trim_start().starts_with("ARRAY"))
        .filter_map(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix("UUID=").or_else(|| w.strip_prefix("uuid=")))
        })
        .map(norm_uuid)
        .collect()
}

/// `2a5bd1d0:4b8a6c55:…` (mdadm) and `2a5bd1d0-4b8a-…` (sysfs) → the same 32 hex digits.
pub fn norm_uuid(u: &str) -> String {
    u.chars()
        .filter(|c| c.is_ascii_hexdigit())
        .collect::<String>()
        .to_lowercase()
}

/// Why a value is refused in the udev rule.
pub const UDEV_SAFE: &str = "a value in hyraid's udev rule is letters, digits and `#+-.:=@_` (what udev keeps in ID_SERIAL_SHORT); a quote, backslash, space or control character would end or change the rule, and `*?[]|$%` are patterns and substitutions in udev";

/// Values that mean themselves inside a double-quoted udev match (`ENV{ID_SERIAL_SHORT}=="…"`):
/// the characters udev itself keeps in ID_SERIAL_SHORT (`udev_replace_chars`: letters, digits
/// and `#+-.:=@_`; its `/` is left out, as is the `\x` hex escaping). udev's parser ends a value at
/// `"` and a rule at a newline, turns `\"` into `"`, and matches values as globs (`*?[]`) with
/// `|` alternatives, after `$`/`%` substitution: none of those can appear.
pub fn rule_safe(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "#+-.:=@_".contains(c))
}
