//! A cache (dm-writecache or dm-cache) is refused on media no faster than the LV it caches,
//! unless the file accepts it, and what the plan says about speed names the media observed.

use crate::common;
use common::*;
use hyraid::config::load_str;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

/// Two SSDs and two HDDs, blank, as `hyraid sim new` makes them.
fn blank() -> SimHost {
    let dir = tempfile::tempdir().unwrap();
    let box_ = dir.path().join("box.json");
    let b = box_.to_str().unwrap();
    let o = hyraid(&[
        "sim",
        "new",
        "-o",
        b,
        "--disk",
        "ssd:500GB",
        "--disk",
        "ssd:500GB",
        "--disk",
        "hdd:1TB",
        "--disk",
        "hdd:1TB",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    SimHost::from_json(&std::fs::read_to_string(&box_).unwrap()).unwrap()
}

const DISKS: &str = "version: 1
disks:
  ssd1: { id: ata-HYRAID_SSD_HYSSD00001 }
  ssd2: { id: ata-HYRAID_SSD_HYSSD00002 }
  hdd1: { id: ata-HYRAID_HDD_HYHDD00003 }
  hdd2: { id: ata-HYRAID_HDD_HYHDD00004 }
mirrors:
  fast: { members: [ssd1, ssd2], bitmap: { chunk: 64MiB } }
  slow: { members: [hdd1, hdd2], bitmap: { chunk: 64MiB } }
volume_groups:
  vg0:
    pvs: [fast, slow]
    lvs:
";

fn file(kind: &str, cache_on: &str, lv_on: &str, accept: &str) -> hyraid::config::Desired {
    let cache = match kind {
        "writecache" => format!("writecache: {{ size: 1GiB, pvs: [{cache_on}] }}"),
        _ => format!("cache: {{ size: 1GiB, pvs: [{cache_on}], mode: writethrough }}"),
    };
    let text = format!("{DISKS}      data: {{ size: 10GiB, pvs: [{lv_on}], {cache} }}\n{accept}");
    load_str("hyraid.yaml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn a_cache_on_hdds_in_front_of_an_lv_on_ssds_is_refused() {
    for kind in ["writecache", "dm-cache"] {
        let h = blank();
        let p = plan_for(&h, &file(kind, "slow", "fast", ""), Policy::default());
        let r = p
            .refused
            .iter()
            .find(|r| r.object == "lv vg0/data")
            .unwrap_or_else(|| panic!("{kind}: {:#?}", p.refused));
        assert!(
            r.reason.contains("on a mirror of HDDs")
                && r.reason.contains("LV is on a mirror of SSDs"),
            "{kind}: {}",
            r.reason
        );
        assert!(r.fix.contains("cache-not-faster"), "{kind}: {}", r.fix);
        // Accepted in the file, it is planned, and the plan notes it.
        let p = plan_for(
            &h,
            &file(
                kind,
                "slow",
                "fast",
                "accept:\n  lv vg0/data: [cache-not-faster]\n",
            ),
            Policy::default(),
        );
        assert!(p.refused.is_empty(), "{kind}: {:#?}", p.refused);
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("accepted in the file: cache-not-faster")),
            "{kind}: {:?}",
            p.notes
        );
    }
}

#[test]
fn a_cache_on_ssds_in_front_of_hdds_says_so() {
    for kind in ["writecache", "dm-cache"] {
        let h = blank();
        let p = plan_for(&h, &file(kind, "fast", "slow", ""), Policy::default());
        assert!(p.refused.is_empty(), "{kind}: {:#?}", p.refused);
        let attach = p
            .steps
            .iter()
            .find(|s| {
                matches!(
                    s.step,
                    hyraid::plan::Step::AttachWritecache(_) | hyraid::plan::Step::AttachCache(_)
                )
            })
            .unwrap();
        assert!(
            attach.reason.contains("a mirror of SSDs"),
            "{kind}: {}",
            attach.reason
        );
        assert!(
            !attach.reason.contains("fast mirror"),
            "{kind}: {}",
            attach.reason
        );
    }
}

#[test]
fn accept_naming_an_object_the_file_lacks_is_an_error_with_the_objects() {
    let text = format!(
        "{DISKS}      data: {{ size: 10GiB }}\naccept:\n  lv vg0/dta: [cache-not-faster]\n  mirror fsat: [no-bitmap]\n"
    );
    let e = load_str("hyraid.yaml", &text).unwrap_err().to_string();
    assert!(
        e.contains("`lv vg0/dta` is not in this file") && e.contains("lv vg0/data"),
        "{e}"
    );
    assert!(
        e.contains("`mirror fsat` is not in this file") && e.contains("mirror fast, mirror slow"),
        "{e}"
    );
}
