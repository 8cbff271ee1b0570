//! Sizes in the file: exact bytes after parsing. `1TiB` is 2^40, `1TB` is 10^12.

use std::fmt;

/// A logical volume size: exact bytes, or a share of the VG taken at creation time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LvSize {
    Bytes(u64),
    /// `N%FREE`: N percent of the VG's free space when the LV is created.
    PercentFree(u8),
    /// `N%VG`: N percent of the VG's total size (grown when the VG grows).
    PercentVg(u8),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError(pub String);

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("PiB", 1 << 50),
    ("kB", 1_000),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("PB", 1_000_000_000_000_000),
];

pub const UNIT_HELP: &str = "write bytes as an integer, or a number with one of B, KiB, MiB, GiB, TiB, PiB (powers of 1024) or kB, MB, GB, TB, PB (powers of 1000), e.g. `1TiB` or `500GB`";

/// Parse `64MiB`, `1.5TiB`, `500 GB`, `4096`. The result must be a whole number of bytes.
pub fn parse_bytes(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(SizeError(format!("empty size; {UNIT_HELP}")));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    if num.is_empty() && t.starts_with('-') {
        return Err(SizeError(format!(
            "size `{text}` is negative; a size is a number of bytes, zero or more"
        )));
    }
    if num.is_empty() {
        return Err(SizeError(format!(
            "size `{text}` has no number; {UNIT_HELP}"
        )));
    }
    let factor = if unit.is_empty() {
        1
    } else {
        match UNITS.iter().find(|(u, _)| *u == unit) {
            Some((_, f)) => *f,
            None => {
                let hint = UNITS
                    .iter()
                    .map(|(u, _)| *u)
                    .find(|u| u.eq_ignore_ascii_case(unit));
                return Err(SizeError(match hint {
                    Some(u) => {
                        format!("unknown unit `{unit}` in size `{text}`: did you mean `{u}`?")
                    }
                    None => format!("unknown unit `{unit}` in size `{text}`; {UNIT_HELP}"),
                }));
            }
        }
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return Err(SizeError(format!(
            "`{num}` is not a number in size `{text}`"
        )));
    }
    let overflow = || {
        SizeError(format!(
            "size `{text}` is too large (more than 2^64-1 bytes)"
        ))
    };
    let int_val: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| overflow())?
    };
    let mut bytes = int_val.checked_mul(factor).ok_or_else(overflow)?;
    if !frac.is_empty() {
        if frac.len() > 18 {
            return Err(SizeError(format!("too many decimals in size `{text}`")));
        }
        let frac_val: u128 = frac.parse().map_err(|_| overflow())?;
        let denom = 10u128.pow(frac.len() as u32);
        let scaled = frac_val * factor as u128;
        if !scaled.is_multiple_of(denom) {
            return Err(SizeError(format!(
                "size `{text}` is not a whole number of bytes; use a smaller unit"
            )));
        }
        bytes = bytes
            .checked_add(u64::try_from(scaled / denom).map_err(|_| overflow())?)
            .ok_or_else(overflow)?;
    }
    if bytes == 0 {
        return Err(SizeError(format!("size `{text}` is zero")));
    }
    Ok(bytes)
}

/// Parse a logical volume size: bytes, `N%FREE` or `N%VG`.
pub fn parse_lv_size(text: &str) -> Result<LvSize, SizeError> {
    let t = text.trim();
    if let Some((n, what)) = t.split_once('%') {
        let pct: u8 = n
            .trim()
            .parse()
            .ok()
            .filter(|p| (1..=100).contains(p))
            .ok_or_else(|| {
                SizeError(format!(
                    "percentage in `{text}` must be a whole number from 1 to 100"
                ))
            })?;
        return match what.trim() {
            "FREE" => Ok(LvSize::PercentFree(pct)),
            "VG" => Ok(LvSize::PercentVg(pct)),
            other => Err(SizeError(format!(
                "`%{other}` in `{text}` is not supported: use `N%FREE` (share of free space at creation) or `N%VG` (share of the whole VG)"
            ))),
        };
    }
    parse_bytes(t).map(LvSize::Bytes)
}

/// An exact size as the file takes it: the largest binary unit it is a whole number of
/// (`381472MiB`, `900GiB`), else bytes. What a fix tells the user to write.
pub fn writable(bytes: u64) -> String {
    const UNITS: [(&str, u32); 5] = [
        ("PiB", 50),
        ("TiB", 40),
        ("GiB", 30),
        ("MiB", 20),
        ("KiB", 10),
    ];
    UNITS
        .iter()
        .find(|(_, shift)| bytes >= 1 << shift && bytes.is_multiple_of(1 << shift))
        .map(|(unit, shift)| format!("{}{unit}", bytes >> shift))
        .unwrap_or_else(|| bytes.to_string())
}

/// Human form for display next to exact bytes: `1.00 TiB`.
pub fn human(bytes: u64) -> String {
    const IEC: &[&str] = &["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < IEC.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.2} {}", IEC[i])
    }
}

impl fmt::Display for LvSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LvSize::Bytes(b) => write!(f, "{b} bytes ({})", human(*b)),
            LvSize::PercentFree(p) => write!(f, "{p}%FREE"),
            LvSize::PercentVg(p) => write!(f, "{p}%VG"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_exact() {
        assert_eq!(parse_bytes("1TiB"), Ok(1 << 40));
        assert_eq!(parse_bytes("1TB"), Ok(1_000_000_000_000));
        assert_eq!(parse_bytes("64MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_bytes("500 GB"), Ok(500_000_000_000));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("4096B"), Ok(4096));
    }

    #[test]
    fn bad_sizes_say_why() {
        assert!(
            parse_bytes("12 parsecs")
                .unwrap_err()
                .0
                .contains("unknown unit `parsecs`")
        );
        assert!(
            parse_bytes("1gib")
                .unwrap_err()
                .0
                .contains("did you mean `GiB`")
        );
        assert!(parse_bytes("0").unwrap_err().0.contains("zero"));
        assert!(parse_bytes("16384PiB").unwrap_err().0.contains("too large"));
        assert!(
            parse_bytes("99999999999999999999999")
                .unwrap_err()
                .0
                .contains("too large")
        );
        assert!(
            parse_bytes("1.0000001KiB")
                .unwrap_err()
                .0
                .contains("whole number of bytes")
        );
        assert!(parse_bytes("-5GiB").unwrap_err().0.contains("is negative"));
        assert!(
            parse_bytes("1.2.3GiB")
                .unwrap_err()
                .0
                .contains("not a number")
        );
    }

    #[test]
    fn lv_sizes() {
        assert_eq!(parse_lv_size("100%FREE"), Ok(LvSize::PercentFree(100)));
        assert_eq!(parse_lv_size("40%VG"), Ok(LvSize::PercentVg(40)));
        assert_eq!(parse_lv_size("1TiB"), Ok(LvSize::Bytes(1 << 40)));
        assert!(parse_lv_size("0%FREE").is_err());
        assert!(parse_lv_size("101%VG").is_err());
        assert!(
            parse_lv_size("50%PVS")
                .unwrap_err()
                .0
                .contains("not supported")
        );
    }

    #[test]
    fn human_form() {
        assert_eq!(human(1 << 40), "1.00 TiB");
        assert_eq!(human(512), "512 B");
    }
}
