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
