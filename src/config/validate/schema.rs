//! Schema errors: what the JSON Schema says is wrong, at the right place, in the user's words.

use super::super::position::{Pos, Positions, escape_segment};
use super::super::{ConfigError, path_of, structural_schema};
use jsonschema::error::ValidationErrorKind;

/// Which schema definition describes the object at a JSON pointer (for "did you mean").
fn definition_for(pointer: &str) -> Option<&'static str> {
    let segs: Vec<&str> = pointer.split('/').skip(1).collect();
    Some(match segs.as_slice() {
        [] => "RawConfig",
        ["disks", _] => "RawDisk",
        ["disks", _, "partitions", _] => "RawPartition",
        ["mirrors", _] => "RawMirror",
        ["mirrors", _, "bitmap"] => "RawBitmapInternal",
        ["volume_groups", _] => "RawVolumeGroup",
        ["volume_groups", _, "lvs", _] => "RawLogicalVolume",
        ["volume_groups", _, "lvs", _, "writecache"] => "RawWritecache",
        ["volume_groups", _, "lvs", _, "cache"] => "RawCache",
        _ => return None,
    })
}

/// `n` with its `$ref` followed and an optional value's `anyOf: [X, null]` taken as X.
fn resolved<'a>(
    schema: &'a serde_json::Value,
    mut n: &'a serde_json::Value,
) -> &'a serde_json::Value {
    for _ in 0..8 {
        if let Some(def) = n
            .get("$ref")
            .and_then(|r| r.as_str())
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|r| schema.get("$defs")?.get(r))
        {
            n = def;
            continue;
        }
        let alternatives = n
            .get("anyOf")
            .or_else(|| n.get("oneOf"))
            .and_then(|a| a.as_array());
        let not_null: Vec<&serde_json::Value> = alternatives
            .into_iter()
            .flatten()
            .filter(|a| a.get("type").and_then(|t| t.as_str()) != Some("null"))
            .collect();
        match not_null.as_slice() {
            [one] if alternatives.is_some() => n = one,
            _ => return n,
        }
    }
    n
}

/// The schema of the value at a JSON pointer, and the property that names it (which carries the
/// key's description).
fn schema_at<'a>(
    schema: &'a serde_json::Value,
    pointer: &str,
) -> Option<(&'a serde_json::Value, Option<&'a serde_json::Value>)> {
    let mut n = resolved(schema, schema);
    let mut property = None;
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        let next = match n.get("properties").and_then(|p| p.get(&seg)) {
            Some(p) => p,
            None => match (n.get("additionalProperties"), n.get("items")) {
                (Some(a), _) if a.is_object() => a,
                (_, Some(i)) => i,
                _ => return None,
            },
        };
        property = Some(next);
        n = resolved(schema, next);
    }
    Some((n, property))
}

/// What the schema says a value at `pointer` is: its type or its values, and the first sentence
/// of the key's description.
fn schema_expectation(pointer: &str) -> Option<String> {
    let schema = structural_schema();
    let (n, property) = schema_at(&schema, pointer)?;
    let values: Vec<String> = (n
        .get("enum")
        .and_then(|e| e.as_array())
        .into_iter()
        .flatten())
    .filter_map(|v| v.as_str().map(|s| format!("`{s}`")))
    .collect();
    let what = if let Some((last, rest)) = values.split_last() {
        match rest {
            [] => last.clone(),
            _ => format!("{} or {last}", rest.join(", ")),
        }
    } else {
        // `["string", "null"]` for an optional value.
        let ty = match n.get("type")? {
            serde_json::Value::Array(a) => {
                a.iter().filter_map(|t| t.as_str()).find(|t| *t != "null")
            }
            t => t.as_str(),
        };
        match ty? {
            "string" => "a string".into(),
            "integer" => "a whole number".into(),
            "number" => "a number".into(),
            "boolean" => "`true` or `false`".into(),
            "array" => "a list".into(),
            "object" => "a mapping".into(),
            _ => return None,
        }
    };
    let about = (property.into_iter().chain([n]))
        .find_map(|x| x.get("description").and_then(|d| d.as_str()))
        .map(|d| d.replace('\n', " "))
        .map(|d| {
            // The first sentence: up to a `. ` before a capital (`e.g. ` is not an end).
            let end = (d.match_indices(". "))
                .find(|(i, _)| d[i + 2..].starts_with(|c: char| c.is_uppercase()))
                .map_or(d.len(), |(i, _)| i);
            d[..end].trim().trim_end_matches('.').to_string()
        })
        .filter(|d| !d.is_empty());
    Some(match about {
        Some(d) => format!("{what} ({d})"),
        None => what,
    })
}

fn allowed_keys(schema: &serde_json::Value, pointer: &str) -> Vec<String> {
    let node = match definition_for(pointer) {
        Some("RawConfig") => Some(schema),
        Some(def) => schema.get("$defs").and_then(|d| d.get(def)),
        None => schema_at(schema, pointer).map(|(n, _)| n),
    };
    node.and_then(|n| n.get("properties"))
        .and_then(|p| p.as_object())
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// What a value at this place must look like, for messages about untagged alternatives.
fn expectation(pointer: &str) -> String {
    match known_expectation(pointer) {
        Some(e) => e.into(),
        None => schema_expectation(pointer).unwrap_or_else(|| "a value of another type".into()),
    }
}

/// The words for the keys people get wrong most.
fn known_expectation(pointer: &str) -> Option<&'static str> {
    let segs: Vec<&str> = pointer.split('/').skip(1).collect();
    let last = segs.last().copied().unwrap_or("");
    let parent = if segs.len() >= 2 {
        segs[segs.len() - 2]
    } else {
        ""
    };
    if segs.is_empty() {
        return Some("a mapping that starts with `version: 1`");
    }
    if matches!(
        segs.as_slice(),
        ["disks", _] | ["mirrors", _] | ["volume_groups", _] | ["volume_groups", _, "lvs", _]
    ) {
        return Some("a mapping of settings for this object");
    }
    Some(match (parent, last) {
        ("", "version") => "`1`",
        ("", "disks") => "a mapping of disk names to `{ id: … }`",
        ("", "mirrors") => "a mapping of mirror names to `{ members: […] }`",
        ("", "volume_groups") => "a mapping of VG names to `{ pvs: […], lvs: {…} }`",
        ("", "host") => "a hostname",
        (_, "lvs") => "a mapping of LV names to `{ size: … }`",
        (_, "members") | (_, "pvs") => "a list of names",
        (_, "write_behind") => "a whole number from 0 to 16383",
        (_, "stripes") => "a whole number from 1 to 128",
        (_, "metadata") => "`\"1.0\"` or `\"1.2\"`, quoted",
        (_, "settings") => "a mapping of setting names to values",
        (_, "partitions") => "a list of `{ name, size }`",
        (_, "id") | (_, "serial") | (_, "name") => "a string",
        (_, "write_cache") => "`on` or `off`",
        (_, "write_mostly") => "`auto`, or a list of member names (`[]` for none)",
        (_, "bitmap") => "`none`, or `{ chunk: SIZE }`",
        (_, "size") | (_, "chunk") | (_, "stripe_size") => {
            "a number of bytes, or a string such as `64MiB`, `1TiB`, `500GB`, `100%FREE`"
        }
        ("settings", _) => "an integer or a string",
        (_, "state") => "`present` or `absent`",
        (_, "media") => "`ssd` or `hdd`",
        ("cache", "mode") => "`writethrough` or `writeback`",
        (_, "cache") => "`{ mode, size, pvs }`",
        ("filesystem", "type") => "`ext4` or `xfs`",
        ("filesystem", "label") | ("filesystem", "mount") => "a string",
        ("filesystem", "options") => "a list of mount options (`[noatime]`)",
        (_, "filesystem") => "`{ type: ext4|xfs, label: …, mount: /path, options: […] }`",
        _ => return None,
    })
}

/// Whether the JSON pointer is a mirror's `bitmap`.
fn is_bitmap(pointer: &str) -> bool {
    matches!(
        pointer.split('/').skip(1).collect::<Vec<_>>().as_slice(),
        ["mirrors", _, "bitmap"]
    )
}

/// Why a write-intent bitmap in a file is refused, and the fix: the kernel deprecated file
/// bitmaps (drivers/md/Kconfig, commit "md: deprecate bitmap file support") and mdadm 4.4
/// removed the option (mdadm.c `set_bitmap_value`, commit 581ba134 "mdadm: remove bitmap file
/// support", first released in mdadm-4.4).
fn file_bitmap_refused() -> (String, String) {
    (
        "a write-intent bitmap in a file is deprecated by the kernel (drivers/md/Kconfig: `config MD_BITMAP_FILE`, bool \"MD bitmap file support (deprecated)\", commit \"md: deprecate bitmap file support\"; md logs \"using deprecated bitmap file support\") and mdadm 4.4 no longer creates one (\"Custom write-intent bitmap file option is not supported.\")".into(),
        "use an internal bitmap: `bitmap: { chunk: SIZE }` (or leave `bitmap` out for 64MiB); an array that has a file bitmap is converted to an internal one by the plan".into(),
    )
}

fn invalid_value(v: &serde_json::Value, pointer: &str) -> String {
    format!(
        "invalid value {}: expected {}",
        short(v),
        expectation(pointer)
    )
}

fn short(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

pub(in crate::config) fn schema_errors(
    value: &serde_json::Value,
    pos: &Positions,
    file: &str,
) -> Vec<ConfigError> {
    let schema = structural_schema();
    let validator = jsonschema::validator_for(&schema).expect("generated schema is valid");
    let mut out: Vec<ConfigError> = Vec::new();
    for e in validator.iter_errors(value) {
        convert(&e, &schema, pos, file, &mut out);
    }
    out.sort_by_key(|e| (e.line, e.col));
    out.dedup();
    out
}

/// One schema error → positioned errors. For alternatives (`anyOf`: an optional object, a size
/// that is a number or a string) the branch whose type matched says what is really wrong.
fn convert(
    e: &jsonschema::ValidationError,
    schema: &serde_json::Value,
    pos: &Positions,
    file: &str,
    out: &mut Vec<ConfigError>,
) {
    let pointer = e.instance_path().to_string();
    let instance = e.instance();
    let mut push = |at: Pos, path: String, message: String, hint: Option<String>| {
        out.push(ConfigError {
            file: file.into(),
            line: at.line,
            col: at.col,
            path,
            message,
            hint,
        });
    };
    match e.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed = allowed_keys(schema, &pointer);
            for key in unexpected {
                if key == "file" && is_bitmap(&pointer) {
                    let kp = format!("{pointer}/file");
                    let (message, hint) = file_bitmap_refused();
                    push(pos.key(&kp), path_of(&kp), message, Some(hint));
                    continue;
                }
                let best = allowed
                    .iter()
                    .map(|a| (strsim::damerau_levenshtein(a, key), a))
                    .filter(|(d, a)| *d <= 2.max(a.len() / 3))
                    .min();
                let mut hint = match best {
                    Some((_, a)) => format!("did you mean `{a}`?"),
                    None if allowed.is_empty() => "remove it".to_string(),
                    None => format!("allowed keys here: {}", allowed.join(", ")),
                };
                // A top-level block of shared settings for merge keys has no place of its own.
                if pointer.is_empty() && best.is_none() {
                    hint.push_str("; to share settings, anchor one object (`hdd0: &hdd { … }`) and merge it into the others (`hdd1: { <<: *hdd, id: … }`)");
                }
                let kp = format!("{pointer}/{}", escape_segment(key));
                push(
                    pos.key(&kp),
                    path_of(&kp),
                    format!("unknown key `{key}`"),
                    Some(hint),
                );
            }
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            let type_mismatch = |errs: &Vec<jsonschema::ValidationError<'static>>| {
                errs.iter().any(|x| {
                    x.instance_path().to_string() == pointer
                        && matches!(
                            x.kind(),
                            ValidationErrorKind::Type { .. }
                                | ValidationErrorKind::Enum { .. }
                                | ValidationErrorKind::Constant { .. }
                        )
                })
            };
            match context
                .iter()
                .find(|branch| !branch.is_empty() && !type_mismatch(branch))
            {
                Some(branch) => {
                    for x in branch {
                        convert(x, schema, pos, file, out);
                    }
                }
                None if is_bitmap(&pointer)
                    && instance.as_str().is_some_and(|v| v.contains('/')) =>
                {
                    // mdadm's own spelling, `--bitmap=/path`: a file bitmap.
                    let (message, hint) = file_bitmap_refused();
                    push(pos.value(&pointer), path_of(&pointer), message, Some(hint))
                }
                None => push(
                    pos.value(&pointer),
                    path_of(&pointer),
                    invalid_value(instance, &pointer),
                    None,
                ),
            }
        }
        ValidationErrorKind::Required { property } => {
            let at = if pointer.is_empty() {
                Pos { line: 1, col: 1 }
            } else {
                pos.value(&pointer)
            };
            let key = property.as_str().unwrap_or("?");
            let hint = (key == "version").then(|| "start the file with `version: 1`".to_string());
            push(
                at,
                path_of(&pointer),
                format!("missing required key `{key}`"),
                hint,
            );
        }
        ValidationErrorKind::Type { .. } | ValidationErrorKind::Enum { .. } => push(
            pos.value(&pointer),
            path_of(&pointer),
            invalid_value(instance, &pointer),
            None,
        ),
        ValidationErrorKind::Minimum { limit } | ValidationErrorKind::Maximum { limit } => {
            let hint = match pointer.as_str() {
                "/version" => Some("this hyraid reads `version: 1`".to_string()),
                p if p.ends_with("/write_behind") => {
                    Some("md allows 0 to 16383 outstanding write-behind writes".to_string())
                }
                _ => None,
            };
            push(
                pos.value(&pointer),
                path_of(&pointer),
                format!("{} is out of range (limit {limit})", short(instance)),
                hint,
            )
        }
        _ => push(pos.value(&pointer), path_of(&pointer), e.to_string(), None),
    }
}
