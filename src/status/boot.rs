//! What a reboot needs: each array listed in mdadm.conf (and the initramfs that carries it).

use super::{Findings, Severity};
use crate::observe::names::norm_uuid;
use crate::observe::{MdArray, Observed};
use crate::plan::persist;

/// An array mdadm.conf does not list may come up under another name after a reboot.
pub(super) fn mdadm_conf_listing(
    o: &Observed,
    a: &MdArray,
    conf_uuids: &[String],
    object: &str,
    f: &mut Findings,
) {
    if let Some(u) = &a.uuid
        && !conf_uuids.contains(&norm_uuid(u))
    {
        let rebuild = match persist::initramfs_command(&o.boot) {
            Some(cmd) => format!("run `{cmd}`"),
            None => "rebuild the initramfs (no update-initramfs or dracut was found)".into(),
        };
        let fix = format!(
            "add its line from `mdadm --detail --scan` to {} and {rebuild}",
            persist::mdadm_conf_path(&o.boot)
        );
        f.add(
            Severity::Lint,
            object.to_string(),
            "not listed in mdadm.conf".into(),
            "after a reboot it may come up under another name (md127, or NAME_0 from another host)",
            &fix,
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::observe::names::{mdadm_conf_uuids, norm_uuid};

    #[test]
    fn mdadm_conf_uuid_forms_match() {
        let conf = "HOMEHOST <system>\nARRAY /dev/md/data0 metadata=1.2 name=hyraid-vm:data0 UUID=263e1fc9:5e52a71e:0141a8e8:fe8e251e\n# ARRAY commented\n";
        assert_eq!(
            mdadm_conf_uuids(conf),
            vec!["263e1fc95e52a71e0141a8e8fe8e251e"]
        );
        assert_eq!(
            norm_uuid("263e1fc9-5e52-a71e-0141-a8e8fe8e251e"),
            "263e1fc95e52a71e0141a8e8fe8e251e"
        );
        let scan = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/layout-three-arrays/mdadm-detail-scan-three.txt"
        ))
        .unwrap();
        assert_eq!(mdadm_conf_uuids(&scan).len(), 3);
    }
}
