//! e2label (e2fsprogs 1.47.0) and xfs_admin -l/-L (xfsprogs 6.1, through xfs_db), as they
//! behave on an LV of the simulated machine: the label goes into the world, where dumpe2fs and
//! xfs_admin -l report it.

use super::fs::fs_at;
use crate::host::{CmdOutput, HostError};
use crate::sim::world::SimState;
use crate::sim::{fail, out};

fn quoted(label: &Option<String>) -> String {
    format!("label = \"{}\"\n", label.as_deref().unwrap_or(""))
}

/// `e2label DEV LABEL`: silent; on anything but an ext2/3/4, libext2fs's bad magic.
pub(in crate::sim) fn e2label(
    st: &mut SimState,
    dev: &str,
    label: &str,
) -> Result<CmdOutput, HostError> {
    match fs_at(st, dev).filter(|f| f.fstype == "ext4") {
        Some(f) => {
            f.label = Some(label.chars().take(16).collect());
            out("")
        }
        None => fail(
            1,
            format!(
                "e2label: Bad magic number in super-block while trying to open {dev}\nCouldn't find valid filesystem superblock.\n"
            ),
        ),
    }
}

/// `xfs_admin -l DEV` and `xfs_admin -L LABEL DEV` (xfs_db's label command: read-only for -l;
/// -L refuses a mounted filesystem, as xfs_db does).
pub(in crate::sim) fn xfs_admin(
    st: &mut SimState,
    set: Option<&str>,
    dev: &str,
) -> Result<CmdOutput, HostError> {
    let Some(f) = fs_at(st, dev).filter(|f| f.fstype == "xfs") else {
        return fail(
            1,
            format!(
                "xfs_db: {dev} is not a valid XFS filesystem (unexpected SB magic number 0x00000000)\nUse -F to force a read attempt.\n"
            ),
        );
    };
    match set {
        None => out(&quoted(&f.label)),
        Some(_) if f.mountpoint.is_some() => fail(
            1,
            format!(
                "xfs_db: {dev} contains a mounted filesystem\n\nfatal error -- couldn't initialize XFS library\n"
            ),
        ),
        Some(l) => {
            f.label = Some(l.into());
            out(&format!("writing all SBs\nnew label = \"{l}\"\n"))
        }
    }
}
