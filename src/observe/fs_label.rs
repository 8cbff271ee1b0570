//! The label of a filesystem on an LV or an array: ext4's from `dumpe2fs -h` (read with its size), xfs's
//! from `xfs_admin -l DEV` (xfs_db reading the superblock read-only, mounted or not; hyraid
//! changes an xfs label only unmounted, so the superblock on the device is current).

use super::Filesystem;

/// `Filesystem volume name:` of `dumpe2fs -h` (e2p's list_super2: `<none>` for an empty label).
pub fn ext4_label(dumpe2fs: &str) -> Option<String> {
    dumpe2fs
        .lines()
        .find_map(|l| l.strip_prefix("Filesystem volume name:"))
        .map(str::trim)
        .filter(|v| !v.is_empty() && *v != "<none>")
        .map(str::to_string)
}

/// The `label = "…"` line of xfs_db's label command; None for `label = ""`.
pub fn xfs_label(out: &str) -> Option<String> {
    out.lines()
        .find_map(|l| l.strip_prefix("label = \"")?.strip_suffix('"'))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// The argv that reads the label of an xfs.
pub fn xfs_label_argv(f: &Filesystem) -> Vec<String> {
    vec!["xfs_admin".into(), "-l".into(), f.device_path()]
}

/// The labels of the xfs filesystems on the LVs (`vg`, `lv`) and the arrays (`""`, kernel name)
/// `wanted` names (ext4's come with their size from dumpe2fs); `None` where the tool gives no
/// answer.
pub fn probe_xfs_labels(
    host: &dyn crate::host::Host,
    fs: &mut [Filesystem],
    wanted: &[(String, String)],
) {
    for f in fs
        .iter_mut()
        .filter(|f| f.fstype == "xfs" && wanted.contains(&f.key()))
    {
        f.label = host
            .run(&xfs_label_argv(f))
            .ok()
            .filter(|o| o.status == 0)
            .and_then(|o| xfs_label(&o.stdout));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_the_tools() {
        let d = "Filesystem volume name:   nextcloud\nLast mounted on:          <not available>\n";
        assert_eq!(ext4_label(d).as_deref(), Some("nextcloud"));
        assert_eq!(ext4_label("Filesystem volume name:   <none>\n"), None);
        assert_eq!(xfs_label("label = \"media\"\n").as_deref(), Some("media"));
        assert_eq!(xfs_label("label = \"\"\n"), None);
    }
}
