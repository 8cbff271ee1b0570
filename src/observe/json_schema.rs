//! The JSON Schemas hyraid publishes (the file's and the snapshot's), made portable: schemars
//! marks integers with Rust's widths as `format` (`uint32`, `uint64`, `double`), which are not
//! formats of the JSON Schema specification, so validators in strict mode (ajv) reject the
//! schema. Here each such format becomes the bounds it stands for, and the schema gets its
//! `$id`: the path the Debian package installs it at.

use serde_json::Value;

/// Where the package installs the schemas (`$id` of each).
pub const INSTALLED_DIR: &str = "/usr/share/hyraid";

/// `schema` with standard keywords only and `$id` = file:///usr/share/hyraid/`file_name`.
pub fn published(schema: schemars::Schema, file_name: &str) -> Value {
    let mut v = serde_json::to_value(schema).expect("schema serializes");
    portable(&mut v);
    if let Value::Object(m) = &mut v {
        m.insert(
            "$id".into(),
            format!("file://{INSTALLED_DIR}/{file_name}").into(),
        );
    }
    v
}

/// Replace the integer and float `format`s schemars writes by the bounds they stand for.
fn portable(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let bounds: Option<(i64, Option<u64>)> = match m.get("format").and_then(Value::as_str) {
                Some("uint8") => Some((0, Some(u8::MAX.into()))),
                Some("uint16") => Some((0, Some(u16::MAX.into()))),
                Some("uint32") => Some((0, Some(u32::MAX.into()))),
                // A u64's maximum is beyond a JSON number's exact range: only the minimum.
                Some("uint64" | "uint") => Some((0, None)),
                Some("int32") => Some((i32::MIN.into(), Some(i32::MAX as u64))),
                Some("int64" | "int" | "double" | "float") => None,
                _ => {
                    m.values_mut().for_each(portable);
                    return;
                }
            };
            m.remove("format");
            if let Some((min, max)) = bounds {
                m.entry("minimum").or_insert(min.into());
                if let Some(max) = max {
                    m.entry("maximum").or_insert(max.into());
                }
            }
            m.values_mut().for_each(portable);
        }
        Value::Array(a) => a.iter_mut().for_each(portable),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_formats_become_bounds() {
        let mut v = serde_json::json!({
            "a": { "type": "integer", "format": "uint32", "minimum": 0 },
            "b": { "anyOf": [{ "type": "integer", "format": "uint64", "minimum": 0 }] },
            "c": { "type": "number", "format": "double" },
            "d": { "type": "string", "format": "date-time" }
        });
        portable(&mut v);
        assert_eq!(
            v,
            serde_json::json!({
                "a": { "type": "integer", "minimum": 0, "maximum": 4294967295u64 },
                "b": { "anyOf": [{ "type": "integer", "minimum": 0 }] },
                "c": { "type": "number" },
                "d": { "type": "string", "format": "date-time" }
            })
        );
    }
}
