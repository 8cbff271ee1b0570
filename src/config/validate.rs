//! Schema and semantic checks of a configuration, with positions and fixes.

use super::desired::*;
use super::position::{Positions, escape_segment};
use super::raw::*;
use super::size::{self, LvSize};
use super::{ConfigError, ConfigErrors, json_schema, path_of};
use jsonschema::error::ValidationErrorKind;
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
        _ => return None,
    })
}

fn allowed_keys(schema: &serde_json::Value, pointer: &str) -> Vec<String> {
    let Some(def) = definition_for(pointer) else {
        return vec![];
    };
    let node = if def == "RawConfig" {
        Some(schema)
    } else {
        schema.get("$defs").and_then(|d| d.get(def))
    };
    node.and_then(|n| n.get("properties"))
        .and_then(|p| p.as_object())
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// What a value at this place must look like, for messages about untagged alternatives.
fn expectation(pointer: &str) -> &'static str {
    let segs: Vec<&str> = pointer.split('/').skip(1).collect();
    let last = segs.last().copied().unwrap_or("");
    let parent = if segs.len() >= 2 {
        segs[segs.len() - 2]
    } else {
        ""
    };
    if segs.is_empty() {
        return "a mapping that starts with `version: 1`";
    }
    if matches!(
        segs.as_slice(),
        ["disks", _] | ["mirrors", _] | ["volume_groups", _] | ["volume_groups", _, "lvs", _]
    ) {
        return "a mapping of settings for this object";
    }
    match (parent, last) {
        ("", "version") => "`1`",
        ("", "disks") => "a mapping of disk names to `{ id: … }`",
        ("", "mirrors") => "a mapping of mirror names to `{ members: […] }`",
        ("", "volume_groups") => "a mapping of VG names to `{ pvs: […], lvs: {…} }`",
        ("", "host") => "a hostname",
        (_, "lvs") => "a mapping of LV names to `{ size: … }`",
        (_, "members") | (_, "pvs") => "a list of names",
        (_, "write_behind") => "a whole number from 0 to 16383",
        (_, "stripes") => "a whole number from 1 to 128",
        (_, "settings") => "a mapping of setting names to values",
        (_, "partitions") => "a list of `{ name, size }`",
        (_, "id") | (_, "serial") | (_, "name") => "a string",
        (_, "write_cache") => "`on` or `off`",
        (_, "write_mostly") => "`auto`, or a list of member names (`[]` for none)",
        (_, "bitmap") => "`none`, or `{ chunk: SIZE }`",
        (_, "size") | (_, "chunk") => {
            "a number of bytes, or a string such as `64MiB`, `1TiB`, `500GB`, `100%FREE`"
        }
        ("settings", _) => "an integer or a string",
        (_, "state") => "`present` or `absent`",
        (_, "media") => "`ssd` or `hdd`",
        _ => "a value of another type",
    }
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

pub(super) fn schema_errors(
    value: &serde_json::Value,
    pos: &Positions,
    file: &str,
) -> Vec<ConfigError> {
    let schema = json_schema();
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
    let mut push =
        |at: super::position::Pos, path: String, message: String, hint: Option<String>| {
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
                let best = allowed
                    .iter()
                    .map(|a| (strsim::damerau_levenshtein(a, key), a))
                    .filter(|(d, a)| *d <= 2.max(a.len() / 3))
                    .min();
                let hint = match best {
                    Some((_, a)) => format!("did you mean `{a}`?"),
                    None if allowed.is_empty() => "remove it".to_string(),
                    None => format!("allowed keys here: {}", allowed.join(", ")),
                };
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
                super::position::Pos { line: 1, col: 1 }
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

/// Names hyraid passes to mdadm and LVM: conservative so nothing reaches a tool unquoted or mangled.
fn check_name(name: &str, max: usize) -> Result<(), String> {
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
const LVM_RESERVED: &[&str] = &[
    "_cdata", "_cmeta", "_corig", "_cpool", "_cvol", "_imeta", "_iorig", "_mimage", "_mlog",
    "_pmspare", "_rimage", "_rmeta", "_tdata", "_tmeta", "_vdata", "_vorigin", "_wcorig",
];

/// dm-writecache settings lvm2 2.03.16 understands, with their value check.
fn check_writecache_setting(key: &str, value: &str) -> Result<(), String> {
    let num = || {
        value
            .parse::<u64>()
            .map_err(|_| format!("`{key}` takes a whole number, not `{value}`"))
    };
    match key {
        "block_size" => match value {
            "512" | "4096" => Ok(()),
            _ => Err(format!("`block_size` must be 512 or 4096, not `{value}`")),
        },
        "high_watermark" | "low_watermark" => {
            if num()? <= 100 {
                Ok(())
            } else {
                Err(format!("`{key}` is a percentage, 0 to 100"))
            }
        }
        "writeback_jobs" | "autocommit_blocks" | "autocommit_time" | "max_age" => num().map(|_| ()),
        "fua" | "nofua" | "cleaner" => match value {
            "0" | "1" => Ok(()),
            _ => Err(format!("`{key}` is 0 or 1")),
        },
        "metadata_only" | "pause_writeback" => Err(format!(
            "`{key}` needs lvm2 2.03.18 or later; lvm2 2.03.16 (Debian 12) asks an unanswerable question and aborts"
        )),
        _ => Err(format!("unknown writecache setting `{key}`")),
    }
}

const WC_KEYS: &[&str] = &[
    "block_size",
    "high_watermark",
    "low_watermark",
    "writeback_jobs",
    "autocommit_blocks",
    "autocommit_time",
    "max_age",
    "fua",
    "nofua",
    "cleaner",
];

struct Ctx<'a> {
    pos: &'a Positions,
    file: &'a str,
    errors: Vec<ConfigError>,
}

impl Ctx<'_> {
    fn err(&mut self, pointer: &str, key: bool, message: impl Into<String>, hint: Option<String>) {
        let p = if key {
            self.pos.key(pointer)
        } else {
            self.pos.value(pointer)
        };
        self.errors.push(ConfigError {
            file: self.file.into(),
            line: p.line,
            col: p.col,
            path: path_of(pointer),
            message: message.into(),
            hint,
        });
    }
}

fn seg(s: &str) -> String {
    escape_segment(s)
}

pub(super) fn semantic(
    raw: &RawConfig,
    pos: &Positions,
    file: &str,
) -> Result<Desired, ConfigErrors> {
    let mut c = Ctx {
        pos,
        file,
        errors: Vec::new(),
    };
    if raw.version != 1 {
        c.err(
            "/version",
            false,
            format!("version {} is not supported", raw.version),
            Some("this hyraid reads `version: 1`".into()),
        );
    }
    if let Some(h) = &raw.host
        && (h.is_empty() || h.contains(char::is_whitespace))
    {
        c.err("/host", false, format!("`{h}` is not a hostname"), None);
    }

    // Disks.
    let mut disks = BTreeMap::new();
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut serials: HashMap<String, String> = HashMap::new();
    for (name, d) in &raw.disks {
        let p = format!("/disks/{}", seg(name));
        if let Err(m) = check_name(name, 64) {
            c.err(&p, true, m, None);
        }
        let id =
            d.id.as_ref()
                .map(|i| i.strip_prefix("/dev/disk/by-id/").unwrap_or(i).to_string());
        if id.is_none() && d.serial.is_none() {
            c.err(&p, true, format!("disk `{name}` has neither `id` nor `serial`"), Some(
                "add `id:` with its name under /dev/disk/by-id (e.g. `ata-MODEL_SERIAL` or `wwn-0x…`), or `serial:`; never a /dev/sdX name".into(),
            ));
        }
        if let Some(i) = &id {
            let pi = format!("{p}/id");
            // udev's by-id names: letters, digits and a few separators; nothing a shell interprets.
            let by_id_chars = i
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "._:+@=,#-".contains(ch));
            if i.is_empty() || i.starts_with('.') || !by_id_chars {
                c.err(
                    &pi,
                    false,
                    format!("`{i}` is not a name under /dev/disk/by-id"),
                    Some(
                        "write only the link name, e.g. `ata-SAMSUNG_HD204UI_S2H7J9BZ000001`"
                            .into(),
                    ),
                );
            } else if ["md-", "dm-", "lvm-pv-uuid-"]
                .iter()
                .any(|pre| i.starts_with(pre))
            {
                c.err(&pi, false, format!("`{i}` names an md or device-mapper device, not a disk"), Some("disks are physical drives; mirrors and LVs are declared under `mirrors:` and `volume_groups:`".into()));
            } else if i.contains("-part")
                && i.rsplit("-part")
                    .next()
                    .is_some_and(|n| n.chars().all(|ch| ch.is_ascii_digit()))
            {
                c.err(
                    &pi,
                    false,
                    format!("`{i}` names a partition, not a whole disk"),
                    Some("name the whole disk; partitions are declared under the disk".into()),
                );
            } else if let Some(other) = ids.insert(i.clone(), name.clone()) {
                c.err(
                    &pi,
                    false,
                    format!("id `{i}` is already used by disk `{other}`"),
                    Some("each physical disk is declared once".into()),
                );
            }
        }
        if let Some(s) = &d.serial {
            if s.trim().is_empty() {
                c.err(&format!("{p}/serial"), false, "empty serial", None);
            } else if let Some(other) = serials.insert(s.clone(), name.clone()) {
                c.err(
                    &format!("{p}/serial"),
                    false,
                    format!("serial `{s}` is already used by disk `{other}`"),
                    None,
                );
            }
        }
        let mut partitions = Vec::new();
        for (i, part) in d.partitions.iter().flatten().enumerate() {
            let pp = format!("{p}/partitions/{i}");
            if let Err(msg) = check_name(&part.name, 36) {
                c.err(
                    &format!("{pp}/name"),
                    false,
                    msg,
                    Some("GPT names are at most 36 characters".into()),
                );
            }
            if partitions
                .iter()
                .any(|x: &PartitionSpec| x.name == part.name)
            {
                c.err(
                    &format!("{pp}/name"),
                    false,
                    format!(
                        "partition `{}` is declared twice on disk `{name}`",
                        part.name
                    ),
                    None,
                );
            }
            let last = i + 1 == d.partitions.as_ref().map(|v| v.len()).unwrap_or(0);
            let size = match &part.size {
                RawSize::Text(t) if t.trim() == "rest" => {
                    if !last {
                        c.err(
                            &format!("{pp}/size"),
                            false,
                            "only the last partition can take `rest`",
                            Some("give this one a size".into()),
                        );
                    }
                    None
                }
                s => match size_bytes(s) {
                    Ok(b) if b < 1 << 20 => {
                        c.err(
                            &format!("{pp}/size"),
                            false,
                            format!("partition of {b} bytes is smaller than 1MiB"),
                            None,
                        );
                        Some(b)
                    }
                    Ok(b) => Some(b),
                    Err(e) => {
                        c.err(
                            &format!("{pp}/size"),
                            false,
                            e,
                            Some("or `rest` for the last partition".into()),
                        );
                        None
                    }
                },
            };
            partitions.push(PartitionSpec {
                name: part.name.clone(),
                size,
            });
        }
        if d.partitions.as_ref().is_some_and(|v| v.is_empty()) {
            c.err(
                &format!("{p}/partitions"),
                true,
                "an empty partition list",
                Some("remove `partitions:` to use the whole disk".into()),
            );
        }
        disks.insert(
            name.clone(),
            DiskSpec {
                name: name.clone(),
                id,
                serial: d.serial.clone(),
                write_cache: d.write_cache.map(OnOff::as_bool),
                rotational_override: d.media.map(|m| m == Media::Hdd),
                partitions,
            },
        );
    }

    // What members and PVs may name: whole disks without partitions, and `disk:partition`.
    let devices: BTreeSet<String> = disks
        .values()
        .flat_map(|d| {
            if d.partitions.is_empty() {
                vec![d.name.clone()]
            } else {
                d.partitions
                    .iter()
                    .map(|p| format!("{}:{}", d.name, p.name))
                    .collect()
            }
        })
        .collect();
    let device_error = |name: &str| -> (String, String) {
        let (disk, part) = split_device(name);
        match (disks.get(disk), part) {
            (Some(d), None) if !d.partitions.is_empty() => (
                format!("disk `{disk}` is partitioned; name one of its partitions"),
                format!(
                    "e.g. {}",
                    d.partitions
                        .iter()
                        .map(|p| format!("`{disk}:{}`", p.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            (Some(d), Some(p)) => (
                format!("disk `{disk}` has no partition `{p}`"),
                if d.partitions.is_empty() {
                    format!("declare it under `disks.{disk}.partitions`")
                } else {
                    format!(
                        "its partitions: {}",
                        d.partitions
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
            ),
            _ => (
                format!("`{name}` is not defined under `disks:`"),
                nearest(name, devices.iter())
                    .map(|n| format!("did you mean `{n}`?"))
                    .unwrap_or_else(|| "declare it under `disks:`".into()),
            ),
        }
    };
    // Mirrors.
    let mut used_by: HashMap<String, String> = HashMap::new(); // disk -> "mirror data0" / "volume group vg0"
    let mut mirrors = BTreeMap::new();
    for (name, m) in &raw.mirrors {
        let p = format!("/mirrors/{}", seg(name));
        if let Err(msg) = check_name(name, 32) {
            c.err(&p, true, msg, None);
        }
        if disks.contains_key(name) {
            c.err(
                &p,
                true,
                format!("`{name}` is both a disk and a mirror"),
                Some(
                    "give mirrors and disks distinct names; PV lists refer to either by name"
                        .into(),
                ),
            );
        }
        if m.members.len() < 2 {
            c.err(
                &format!("{p}/members"),
                false,
                format!(
                    "mirror `{name}` has {} member(s); a mirror needs at least 2",
                    m.members.len()
                ),
                None,
            );
        }
        let mut seen = BTreeSet::new();
        for (i, member) in m.members.iter().enumerate() {
            let mp = format!("{p}/members/{i}");
            if raw.mirrors.contains_key(member) {
                c.err(
                    &mp,
                    false,
                    format!("`{member}` is a mirror; the members of a mirror are disks"),
                    Some("md RAID1 over other arrays is not supported: list disks here".into()),
                );
                continue;
            }
            if !devices.contains(member) {
                let (msg, hint) = device_error(member);
                c.err(&mp, false, format!("member {msg}"), Some(hint));
                continue;
            }
            if !seen.insert(member.clone()) {
                c.err(
                    &mp,
                    false,
                    format!("`{member}` is listed twice in mirror `{name}`"),
                    None,
                );
                continue;
            }
            if let Some(other) = used_by.insert(member.clone(), format!("mirror `{name}`")) {
                c.err(
                    &mp,
                    false,
                    format!("disk `{member}` is already used by {other}"),
                    Some("a device belongs to one mirror or volume group".into()),
                );
            }
        }
        let write_mostly = match &m.write_mostly {
            None | Some(RawWriteMostly::Auto(_)) => WriteMostly::Auto,
            Some(RawWriteMostly::List(l)) => {
                for (i, w) in l.iter().enumerate() {
                    if !m.members.contains(w) {
                        c.err(
                            &format!("{p}/write_mostly/{i}"),
                            false,
                            format!("`{w}` is not a member of mirror `{name}`"),
                            Some(format!("members are: {}", m.members.join(", "))),
                        );
                    }
                }
                WriteMostly::List(l.clone())
            }
        };
        let bitmap_chunk = match &m.bitmap {
            Some(RawBitmap::None(_)) => None,
            None | Some(RawBitmap::Internal(RawBitmapInternal { chunk: None })) => Some(64 << 20),
            Some(RawBitmap::Internal(RawBitmapInternal { chunk: Some(sz) })) => {
                let cp = format!("{p}/bitmap/chunk");
                match size_bytes(sz) {
                    Err(e) => {
                        c.err(&cp, false, e, None);
                        Some(64 << 20)
                    }
                    Ok(b) if !b.is_power_of_two() || b < 4096 => {
                        c.err(
                            &cp,
                            false,
                            format!(
                                "bitmap chunk {b} bytes must be a power of two of at least 4KiB"
                            ),
                            Some("e.g. `64MiB` (the default) or `128MiB`".into()),
                        );
                        Some(64 << 20)
                    }
                    Ok(b) => Some(b),
                }
            }
        };
        let write_behind = m.write_behind.unwrap_or(0);
        if write_behind > 16383 {
            c.err(
                &format!("{p}/write_behind"),
                false,
                format!("write_behind {write_behind} is out of range"),
                Some("md allows 0 to 16383 outstanding write-behind writes".into()),
            );
        } else if write_behind > 0 {
            if bitmap_chunk.is_none() {
                c.err(
                    &format!("{p}/write_behind"),
                    false,
                    "write_behind needs a write-intent bitmap",
                    Some("remove `bitmap: none`, or set `write_behind: 0`".into()),
                );
            }
            if matches!(&write_mostly, WriteMostly::List(l) if l.is_empty()) {
                c.err(&format!("{p}/write_behind"), false, "write_behind > 0 without a write-mostly member", Some("write-behind only applies to write-mostly members: list one in `write_mostly`, or set `write_behind: 0`".into()));
            }
        }
        mirrors.insert(
            name.clone(),
            MirrorSpec {
                name: name.clone(),
                members: m.members.clone(),
                write_mostly,
                bitmap_chunk,
                write_behind,
                absent: m.state == Some(ObjectState::Absent),
            },
        );
    }

    // Volume groups.
    let mut vgs = BTreeMap::new();
    let resolve = |c: &mut Ctx, pointer: &str, name: &str| -> Option<DeviceRef> {
        if mirrors.contains_key(name) {
            Some(DeviceRef::Mirror(name.to_string()))
        } else if devices.contains(name) {
            Some(DeviceRef::Disk(name.to_string()))
        } else if disks.contains_key(split_device(name).0) {
            let (msg, hint) = device_error(name);
            c.err(pointer, false, msg, Some(hint));
            None
        } else {
            let hint = nearest(name, mirrors.keys().chain(devices.iter()))
                .map(|n| format!("did you mean `{n}`?"))
                .unwrap_or_else(|| "PVs are mirror, disk or `disk:partition` names".into());
            c.err(
                pointer,
                false,
                format!("`{name}` is neither a mirror nor a disk"),
                Some(hint),
            );
            None
        }
    };
    for (vg_name, vg) in &raw.volume_groups {
        let p = format!("/volume_groups/{}", seg(vg_name));
        if let Err(msg) = check_name(vg_name, 64) {
            c.err(&p, true, msg, None);
        }
        if vg.pvs.is_empty() {
            c.err(
                &format!("{p}/pvs"),
                false,
                format!("volume group `{vg_name}` has no PVs"),
                None,
            );
        }
        let mut pvs = Vec::new();
        for (i, pv) in vg.pvs.iter().enumerate() {
            let pp = format!("{p}/pvs/{i}");
            let Some(r) = resolve(&mut c, &pp, pv) else {
                continue;
            };
            if pvs.contains(&r) {
                c.err(
                    &pp,
                    false,
                    format!("`{pv}` is listed twice in volume group `{vg_name}`"),
                    None,
                );
                continue;
            }
            if let Some(other) = used_by.get(pv) {
                c.err(
                    &pp,
                    false,
                    format!("`{pv}` is already used by {other}"),
                    Some("a device belongs to one mirror or volume group".into()),
                );
                continue;
            }
            used_by.insert(pv.clone(), format!("volume group `{vg_name}`"));
            pvs.push(r);
        }
        let mut lvs = BTreeMap::new();
        let mut free_pct_lv: Option<String> = None;
        for (lv_name, lv) in &vg.lvs {
            let lp = format!("{p}/lvs/{}", seg(lv_name));
            if let Err(msg) = check_name(lv_name, 60) {
                c.err(&lp, true, msg, None);
            } else if let Some(r) = LVM_RESERVED.iter().find(|r| lv_name.contains(*r)) {
                c.err(
                    &lp,
                    true,
                    format!(
                        "LV name `{lv_name}` contains `{r}`, which LVM reserves for hidden volumes"
                    ),
                    None,
                );
            } else if lv_name == "snapshot"
                || lv_name == "pvmove"
                || lv_name.starts_with("pvmove")
                || lv_name.starts_with("snapshot")
            {
                c.err(
                    &lp,
                    true,
                    format!("LV name `{lv_name}` is reserved by LVM"),
                    None,
                );
            }
            let size = match &lv.size {
                RawSize::Bytes(b) if *b > 0 => LvSize::Bytes(*b),
                RawSize::Bytes(_) => {
                    c.err(&format!("{lp}/size"), false, "size is zero", None);
                    LvSize::Bytes(1)
                }
                RawSize::Text(t) => match size::parse_lv_size(t) {
                    Ok(s) => s,
                    Err(e) => {
                        c.err(&format!("{lp}/size"), false, e.0, None);
                        LvSize::Bytes(1)
                    }
                },
            };
            if matches!(size, LvSize::PercentFree(_)) {
                if let Some(prev) = &free_pct_lv {
                    c.err(&format!("{lp}/size"), false, format!("LV `{prev}` already takes a share of free space in `{vg_name}`"), Some(
                        "only one LV per VG may use N%FREE (the order of creation would decide the sizes); use N%VG or a fixed size".into(),
                    ));
                }
                free_pct_lv = Some(lv_name.clone());
            }
            let placement = lv.pvs.as_ref().map(|l| {
                l.iter()
                    .enumerate()
                    .filter_map(|(i, n)| {
                        let pp = format!("{lp}/pvs/{i}");
                        let r = resolve(&mut c, &pp, n)?;
                        if !pvs.contains(&r) {
                            c.err(
                                &pp,
                                false,
                                format!("`{n}` is not a PV of volume group `{vg_name}`"),
                                Some(format!(
                                    "add it to `volume_groups.{vg_name}.pvs` or pick one of those"
                                )),
                            );
                            return None;
                        }
                        Some(r)
                    })
                    .collect::<Vec<_>>()
            });
            if let Some(s) = lv.stripes {
                let avail = placement.as_ref().map(|p| p.len()).unwrap_or(pvs.len());
                if s == 0 {
                    c.err(
                        &format!("{lp}/stripes"),
                        false,
                        "stripes must be at least 1",
                        None,
                    );
                } else if s as usize > avail {
                    c.err(
                        &format!("{lp}/stripes"),
                        false,
                        format!(
                            "{s} stripes need {s} PVs, but only {avail} are available to this LV"
                        ),
                        None,
                    );
                }
            }
            let writecache = lv.writecache.as_ref().map(|wc| {
                let wp = format!("{lp}/writecache");
                let size = match size_bytes(&wc.size) {
                    Ok(b) => b,
                    Err(e) => {
                        c.err(&format!("{wp}/size"), false, e, None);
                        1
                    }
                };
                if wc.pvs.is_empty() {
                    c.err(&format!("{wp}/pvs"), false, "writecache needs at least one fast PV", None);
                }
                let cache_pvs: Vec<DeviceRef> = wc
                    .pvs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, n)| {
                        let pp = format!("{wp}/pvs/{i}");
                        let r = resolve(&mut c, &pp, n)?;
                        if !pvs.contains(&r) {
                            c.err(&pp, false, format!("`{n}` is not a PV of volume group `{vg_name}`"), Some("the cache volume must be in the same VG as the LV".into()));
                            return None;
                        }
                        if placement.as_ref().is_some_and(|pl| pl.contains(&r)) {
                            c.err(&pp, false, format!("`{n}` also holds the LV's data"), Some("put the writecache on a different, fast PV".into()));
                            return None;
                        }
                        Some(r)
                    })
                    .collect();
                let mut settings = BTreeMap::new();
                for (k, v) in &wc.settings {
                    let v = v.render();
                    if let Err(msg) = check_writecache_setting(k, &v) {
                        let hint = if WC_KEYS.contains(&k.as_str()) {
                            None
                        } else {
                            nearest(k, WC_KEYS.iter()).map(|n| format!("did you mean `{n}`?")).or_else(|| Some(format!("lvm2 2.03.16 knows: {}", WC_KEYS.join(", "))))
                        };
                        c.err(&format!("{wp}/settings/{}", seg(k)), true, msg, hint);
                    }
                    settings.insert(k.clone(), v);
                }
                if settings.get("fua").is_some_and(|v| v == "1") && settings.get("nofua").is_some_and(|v| v == "1") {
                    c.err(&format!("{wp}/settings/nofua"), true, "`fua` and `nofua` exclude each other", Some("set one of them".into()));
                }
                if let (Some(h), Some(l)) = (settings.get("high_watermark"), settings.get("low_watermark"))
                    && let (Ok(h), Ok(l)) = (h.parse::<u64>(), l.parse::<u64>())
                        && l > h {
                            c.err(&format!("{wp}/settings/low_watermark"), true, format!("low_watermark {l} is above high_watermark {h}"), None);
                        }
                let cv = cachevol_name(lv_name);
                if vg.lvs.contains_key(&cv) {
                    c.err(&wp, true, format!("the cache volume of `{lv_name}` is named `{cv}`, which is also an LV in this file"), Some("rename that LV".into()));
                }
                WritecacheSpec { size, pvs: cache_pvs, settings }
            });
            lvs.insert(
                lv_name.clone(),
                LvSpec {
                    name: lv_name.clone(),
                    size,
                    pvs: placement,
                    stripes: lv.stripes,
                    writecache,
                    absent: lv.state == Some(ObjectState::Absent),
                },
            );
        }
        vgs.insert(
            vg_name.clone(),
            VgSpec {
                name: vg_name.clone(),
                pvs,
                lvs,
                absent: vg.state == Some(ObjectState::Absent),
            },
        );
    }

    if c.errors.is_empty() {
        Ok(Desired {
            host: raw.host.clone(),
            disks,
            mirrors,
            volume_groups: vgs,
        })
    } else {
        c.errors.sort_by_key(|e| (e.line, e.col));
        Err(ConfigErrors(c.errors))
    }
}

fn size_bytes(s: &RawSize) -> Result<u64, String> {
    match s {
        RawSize::Bytes(0) => Err("size is zero".into()),
        RawSize::Bytes(b) => Ok(*b),
        RawSize::Text(t) => size::parse_bytes(t).map_err(|e| e.0),
    }
}

fn nearest<'a, I, S>(word: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a S>,
    S: AsRef<str> + 'a + ?Sized,
{
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::damerau_levenshtein(word, c.as_ref()),
                c.as_ref().to_string(),
            )
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min()
        .map(|(_, c)| c)
}
