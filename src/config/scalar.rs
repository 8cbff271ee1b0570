//! What a plain YAML scalar means: the resolution serde_yaml 0.9 applied to hyraid files
//! (YAML 1.2 core schema, with serde_yaml's choices), kept exactly so that no file changes
//! meaning with the parser. `yes`/`no`/`on`/`off`/`y`/`n` are strings (not YAML 1.1 booleans),
//! `~`, `null` and the empty scalar are null, `0x`/`0o`/`0b` prefixes are integers, a leading
//! zero (`0755`) is a string, and numbers beyond u64/i64 are an error, not a float.
//! The helpers follow serde_yaml 0.9.34 `de.rs` (`visit_untagged_scalar`, MIT OR Apache-2.0).

use serde_json::{Number, Value};
use std::num::ParseIntError;

/// A plain scalar that looks like an integer but does not fit in 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange;

/// The value of a plain (unquoted, untagged) scalar.
pub fn resolve_plain(v: &str) -> Result<Value, OutOfRange> {
    if v.is_empty() || matches!(v, "null" | "Null" | "NULL" | "~") {
        return Ok(Value::Null);
    }
    match v {
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        _ => {}
    }
    if let Some(int) = parse_unsigned_int(v, u64::from_str_radix) {
        return Ok(Value::Number(int.into()));
    }
    if let Some(int) = parse_negative_int(v, i64::from_str_radix) {
        return Ok(Value::Number(int.into()));
    }
    if parse_unsigned_int(v, u128::from_str_radix).is_some()
        || parse_negative_int(v, i128::from_str_radix).is_some()
    {
        return Err(OutOfRange);
    }
    if !digits_but_not_number(v)
        && let Some(float) = parse_f64(v)
    {
        // serde_json has no NaN or infinity: they become null, as they did through serde_yaml.
        return Ok(Number::from_f64(float).map_or(Value::Null, Value::Number));
    }
    Ok(Value::String(v.to_string()))
}

/// `.inf`, `-.inf` or `.nan` (in any of YAML's spellings): a float no hyraid setting takes, which
/// the JSON value would only hold as null ("not set").
pub fn is_non_finite(v: &str) -> bool {
    !digits_but_not_number(v) && parse_f64(v).is_some_and(|f| !f.is_finite())
}

fn parse_unsigned_int<T>(
    scalar: &str,
    from_str_radix: fn(&str, radix: u32) -> Result<T, ParseIntError>,
) -> Option<T> {
    let unpositive = scalar.strip_prefix('+').unwrap_or(scalar);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(int) = from_str_radix(rest, radix) {
                return Some(int);
            }
        }
    }
    if unpositive.starts_with(['+', '-']) || digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(unpositive, 10).ok()
}

fn parse_negative_int<T>(
    scalar: &str,
    from_str_radix: fn(&str, radix: u32) -> Result<T, ParseIntError>,
) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = scalar.strip_prefix(prefix)
            && let Ok(int) = from_str_radix(&format!("-{rest}"), radix)
        {
            return Some(int);
        }
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(scalar, 10).ok()
}

fn parse_f64(scalar: &str) -> Option<f64> {
    let unpositive = match scalar.strip_prefix('+') {
        Some(u) if u.starts_with(['+', '-']) => return None,
        Some(u) => u,
        None => scalar,
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = scalar {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = scalar {
        return Some(f64::NAN);
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Leading zero(s) followed by digits is a string in YAML 1.2 (`0755`, `007`).
fn digits_but_not_number(scalar: &str) -> bool {
    let scalar = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
    scalar.len() > 1 && scalar.starts_with('0') && scalar[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Whether the string `s` must be quoted to read back as a string: plain it would be null, a
/// boolean or a number, or it is digits with a leading zero (an octal number to YAML 1.1
/// readers). serde_yaml's rule (`ser.rs` `InferScalarStyle`), used by `hyraid import`.
pub fn needs_quotes(s: &str) -> bool {
    !matches!(resolve_plain(s), Ok(Value::String(_))) || digits_but_not_number(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_1_1_words_and_numbers_mean_what_they_meant() {
        for (text, want) in [
            ("yes", json!("yes")),
            ("no", json!("no")),
            ("on", json!("on")),
            ("off", json!("off")),
            ("y", json!("y")),
            ("true", json!(true)),
            ("False", json!(false)),
            ("~", json!(null)),
            ("", json!(null)),
            ("null", json!(null)),
            ("1T", json!("1T")),
            ("0o17", json!(15)),
            ("0x10", json!(16)),
            ("0b11", json!(3)),
            ("0755", json!("0755")),
            ("-12", json!(-12)),
            ("+7", json!(7)),
            ("1.5", json!(1.5)),
            ("1e3", json!(1000.0)),
            ("2204E6000001", json!("2204E6000001")),
            (".inf", json!(null)),
            ("1_000", json!("1_000")),
            ("64MiB", json!("64MiB")),
            ("18446744073709551615", json!(u64::MAX)),
        ] {
            assert_eq!(resolve_plain(text), Ok(want), "{text}");
        }
        assert_eq!(resolve_plain("18446744073709551616"), Err(OutOfRange));
        assert_eq!(resolve_plain("-9223372036854775809"), Err(OutOfRange));
    }
}
