//! The boot-mirror example with its system on the mirror, as after the copy docs/booting.md
//! describes: what the loaders' tests and crash cases start from.

use super::*;
use hyraid::observe::Observed;

/// The boot-mirror example built and idle, with `/` on vg0/root.
pub fn system_on_the_mirror() -> (Desired, Observed) {
    let (d, h) = example("boot-mirror");
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    let mut w = h.world();
    let lv = w
        .lvm
        .lvs
        .iter()
        .position(|l| l.vg == "vg0" && l.name == "root")
        .unwrap();
    w.filesystems.push(hyraid::observe::Filesystem {
        vg: "vg0".into(),
        lv: "root".into(),
        kname: format!("dm-{lv}"),
        fstype: "ext4".into(),
        mountpoint: Some("/".into()),
        ..Default::default()
    });
    (d, w)
}
