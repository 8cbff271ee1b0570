//! What the published JSON Schema says beyond the types: the rules `hyraid validate` checks
//! that a schema can express (names, ids, serials, sizes, two members, an id or a serial, the
//! writecache settings, filesystem labels and mount points), so an editor flags them while the
//! file is written. They are added to the schema hyraid publishes (`hyraid schema`), never to
//! the one `hyraid validate` runs first: validate reports each of these with its own message,
//! position and fix (tests/bad), which a schema's "does not match" cannot give. Each rule is
//! no stricter than validate's (tests/it/schema.rs runs every good file through both).

use serde_json::{Value, json};

/// A name hyraid passes to mdadm and LVM (validate's `check_name`), of at most `max` bytes.
fn name(max: usize) -> Value {
    json!({ "pattern": format!("^[A-Za-z0-9][A-Za-z0-9._-]{{0,{}}}$", max - 1) })
}

/// A size as `parse_bytes` and `parse_lv_size` read it: a number with an optional unit,
/// `N%FREE` or `N%VG` (N from 1 to 100), or a partition's `rest`.
const SIZE_TEXT: &str = r"^\s*(([0-9]+\.?[0-9]*|\.[0-9]+)\s*(B|KiB|MiB|GiB|TiB|PiB|kB|KB|MB|GB|TB|PB)?|\+?0*([1-9][0-9]?|100)\s*%\s*(FREE|VG)|rest)\s*$";

/// Merge `add` into the object at `pointer` (which must exist: a renamed type fails the
/// schema test rather than losing a rule).
fn extend(schema: &mut Value, pointer: &str, add: Value) {
    let node = schema
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("schema has no {pointer}"));
    let (Value::Object(n), Value::Object(a)) = (node, add) else {
        panic!("{pointer} is not an object");
    };
    n.extend(a);
}

/// `schema` (the file's, from the types) with the rules above.
pub(super) fn add(schema: &mut Value, writecache_settings: Value) {
    use super::MD_NAME_MAX;
    let r = "/properties";
    extend(schema, &format!("{r}/host"), json!({ "pattern": r"^\S+$" }));
    extend(
        schema,
        &format!("{r}/disks"),
        json!({ "propertyNames": name(64) }),
    );
    extend(
        schema,
        &format!("{r}/mirrors"),
        json!({ "propertyNames": name(MD_NAME_MAX) }),
    );
    extend(
        schema,
        &format!("{r}/volume_groups"),
        json!({ "propertyNames": name(64) }),
    );
    let d = "/$defs";
    extend(
        schema,
        &format!("{d}/RawDisk"),
        json!({
            // (each branch names the key it requires, as ajv's strict mode asks)
            "anyOf": [
                { "properties": { "id": true }, "required": ["id"] },
                { "properties": { "serial": true }, "required": ["serial"] }
            ]
        }),
    );
    // udev's by-id names: letters, digits and `._:+@=,#-`, not starting with `.`.
    extend(
        schema,
        &format!("{d}/RawDisk/properties/id"),
        json!({
            "pattern": "^[A-Za-z0-9_:+@=,#-][A-Za-z0-9._:+@=,#-]*$"
        }),
    );
    // What udev keeps in ID_SERIAL_SHORT (observe::names::rule_safe).
    extend(
        schema,
        &format!("{d}/RawDisk/properties/serial"),
        json!({
            "pattern": "^[A-Za-z0-9#+.:=@_-]+$"
        }),
    );
    extend(
        schema,
        &format!("{d}/RawPartition/properties/name"),
        name(36),
    );
    extend(
        schema,
        &format!("{d}/RawSize/anyOf/0"),
        json!({ "minimum": 1 }),
    );
    extend(
        schema,
        &format!("{d}/RawSize/anyOf/1"),
        json!({ "pattern": SIZE_TEXT }),
    );
    extend(
        schema,
        &format!("{d}/RawMirror"),
        json!({
            "dependentRequired": { "uuid": ["device"], "device": ["uuid"] }
        }),
    );
    extend(
        schema,
        &format!("{d}/RawMirror/properties/members"),
        json!({ "minItems": 2 }),
    );
    // 32 hex digits with `:` or `-` anywhere, as mdadm and blkid print them.
    extend(
        schema,
        &format!("{d}/RawMirror/properties/uuid"),
        json!({
            "pattern": "^[:-]*([0-9a-fA-F][:-]*){32}$"
        }),
    );
    extend(
        schema,
        &format!("{d}/RawMirror/properties/device"),
        json!({
            "pattern": "^/dev/md[0-9]{1,3}$"
        }),
    );
    extend(
        schema,
        &format!("{d}/RawVolumeGroup/properties/pvs"),
        json!({ "minItems": 1 }),
    );
    extend(
        schema,
        &format!("{d}/RawVolumeGroup/properties/lvs"),
        json!({ "propertyNames": name(60) }),
    );
    extend(
        schema,
        &format!("{d}/RawWritecache/properties/settings"),
        writecache_settings,
    );
    // Labels: printable ASCII, ext4 16 bytes, xfs 12; mount points absolute, printable, no `\`;
    // mount options one word without a comma.
    extend(
        schema,
        &format!("{d}/RawFilesystem"),
        json!({
            "if": { "properties": { "type": { "const": "xfs" } } },
            "then": { "properties": { "label": { "type": ["string", "null"], "maxLength": 12 } } }
        }),
    );
    extend(
        schema,
        &format!("{d}/RawFilesystem/properties/label"),
        json!({ "pattern": "^[!-~]{1,16}$" }),
    );
    extend(
        schema,
        &format!("{d}/RawFilesystem/properties/mount"),
        json!({ "pattern": r"^/[!-\[\]-~]*$" }),
    );
    extend(
        schema,
        &format!("{d}/RawFilesystem/properties/options/items"),
        json!({ "pattern": "^[!-+.-~-]+$" }),
    );
}
