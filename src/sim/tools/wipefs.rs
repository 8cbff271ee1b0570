//! `wipefs --all DEV` (util-linux): every signature erased, refused on a busy device.

use crate::host::{CmdOutput, HostError};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

pub fn wipefs_all(st: &mut SimState, dev: &str) -> Result<CmdOutput, HostError> {
    if let Some(Target::Lv(vg, lv)) = st.resolve(dev) {
        let at = st
            .world
            .filesystems
            .iter()
            .position(|f| !f.md && f.vg == vg && f.lv == lv);
        return wipe_fs(st, dev, at);
    }
    // A filesystem on an md array (`/dev/md/NAME`, `/dev/mdN`).
    let md = super::fs::fs_at(st, dev)
        .filter(|f| f.md)
        .map(|f| f.kname.clone());
    if let Some(k) = md {
        let at = st
            .world
            .filesystems
            .iter()
            .position(|f| f.md && f.kname == k);
        return wipe_fs(st, dev, at);
    }
    let Some(t @ Target::Block(_)) = st.resolve(dev) else {
        return fail(
            1,
            format!(
                "wipefs: error: {dev}: probing initialization failed: No such file or directory\n"
            ),
        );
    };
    if st.busy(&t) {
        return fail(
            1,
            format!(
                "wipefs: error: {dev}: probing initialization failed: Device or resource busy\n"
            ),
        );
    }
    let k = SimState::kname(&t);
    let d = st.dev_mut(&k).unwrap();
    let n = d.signatures.as_ref().map(|s| s.len()).unwrap_or(0);
    d.signatures = Some(vec![]);
    d.fstype = None;
    d.pttype = None;
    d.mountpoint = None;
    out(&format!("{k}: {n} signature(s) erased\n"))
}

/// `wipefs --all` on an LV or an md array carrying the world's filesystem `at`: its magic erased
/// (wipefs opens the device O_EXCL, so a mounted one is busy), as util-linux prints it:
/// `DEV: N bytes were erased at offset 0x… (TYPE): …`.
fn wipe_fs(st: &mut SimState, dev: &str, at: Option<usize>) -> Result<CmdOutput, HostError> {
    let Some(i) = at else { return out("") };
    if st.world.filesystems[i].mountpoint.is_some() {
        return fail(
            1,
            format!(
                "wipefs: error: {dev}: probing initialization failed: Device or resource busy\n"
            ),
        );
    }
    let f = st.world.filesystems.remove(i);
    let (n, offset, magic) = match f.fstype.as_str() {
        "xfs" => (4, 0, "58 46 53 42"),
        _ => (2, 0x438, "53 ef"),
    };
    out(&format!(
        "{dev}: {n} bytes were erased at offset 0x{offset:08x} ({}): {magic}\n",
        f.fstype
    ))
}
