//! `wipefs --all DEV` (util-linux): every signature erased, refused on a busy device.

use crate::host::{CmdOutput, HostError};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

pub fn wipefs_all(st: &mut SimState, dev: &str) -> Result<CmdOutput, HostError> {
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
