//! A saved plan runs only what hyraid itself would plan: every edit made to a plan file after
//! review is refused before anything runs, with the first differing step named.

use crate::common;
use common::saved::{read, saved};
use common::{hyraid, text};

use serde_json::{Value, json};

fn step_index(v: &Value, op: &str) -> usize {
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s["op"] == op)
        .unwrap()
}

#[test]
fn the_unedited_plan_applies_and_converges() {
    let s = saved(&[]);
    let o = s.apply(&[]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = hyraid(&[
        "plan",
        "examples/microserver-gen8.yaml",
        "--sim",
        s.snap.to_str().unwrap(),
        "--detailed-exitcode",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

#[test]
fn a_step_added_on_another_disk_is_refused() {
    let s = saved(&[]);
    s.edit(|v| {
        let steps = v["steps"].as_array_mut().unwrap();
        steps.insert(
            0,
            json!({
                "op": "wipe_signatures",
                "disk": "cache0",
                "device": "/dev/disk/by-id/ata-KINGSTON_SA400S37240G_50026B7782000001",
                "found": [],
                "risk": "safe",
                "reason": "housekeeping"
            }),
        );
    });
    let err = s.refused(&[]);
    assert!(
        err.contains("is not what hyraid plans") && err.contains("step 1 in the file is"),
        "{err}"
    );
    assert!(
        err.contains("wipefs"),
        "the added step's command is shown: {err}"
    );
}

#[test]
fn a_step_relabelled_safe_is_refused() {
    let s = saved(&[]);
    s.edit(|v| {
        let i = step_index(v, "attach_writecache");
        assert_eq!(v["steps"][i]["risk"], "data-at-risk");
        v["steps"][i]["risk"] = json!("safe");
    });
    let err = s.refused(&[]);
    assert!(err.contains("step 22 in the file is"), "{err}");
    assert!(
        err.contains("[safe]") && err.contains("[data-at-risk]"),
        "{err}"
    );
}

#[test]
fn a_managed_file_moved_elsewhere_is_refused() {
    let s = saved(&[]);
    s.edit(|v| {
        let i = step_index(v, "write_file");
        v["steps"][i]["path"] = json!("/etc/cron.d/x");
    });
    let err = s.refused(&[]);
    assert!(err.contains("/etc/cron.d/x"), "{err}");
    assert!(err.contains("step 3 in the file is"), "{err}");
}

#[test]
fn a_changed_bitmap_chunk_is_refused() {
    let s = saved(&[]);
    s.edit(|v| {
        let i = step_index(v, "create_array");
        v["steps"][i]["bitmap_chunk"] = json!(4096);
    });
    let err = s.refused(&[]);
    assert!(err.contains("step 5 in the file is"), "{err}");
    assert!(
        err.contains("--bitmap-chunk=4K") || err.contains("4096"),
        "the commands show the difference: {err}"
    );
}

#[test]
fn a_removed_step_and_an_edited_refusal_list_are_refused() {
    let s = saved(&[]);
    s.edit(|v| {
        v["steps"].as_array_mut().unwrap().pop();
    });
    let err = s.refused(&[]);
    assert!(err.contains("the file ends after step 21"), "{err}");
    let s = saved(&[]);
    s.edit(|v| {
        v["refused"] = json!([{ "object": "disk x", "reason": "r", "fix": "f" }]);
    });
    let err = s.refused(&[]);
    assert!(err.contains("the refusals differ"), "{err}");
}

#[test]
fn policy_comes_from_the_command_line_not_the_file() {
    // The file claims --allow-destroy; the command line does not give it.
    let s = saved(&[]);
    s.edit(|v| v["policy"]["allow_destroy"] = json!(true));
    let o = s.apply(&[]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

#[test]
fn a_stale_plan_says_what_changed() {
    let s = saved(&[]);
    let mut w = read(&s.snap);
    let i = w["block_devices"]
        .as_array()
        .unwrap()
        .iter()
        .position(|d| d["kname"] == "sdc")
        .unwrap();
    w["block_devices"][i]["serial"] = json!("WDE99999");
    std::fs::write(&s.snap, serde_json::to_string(&w).unwrap()).unwrap();
    let err = s.refused(&[]);
    assert!(err.contains("plan is stale"), "{err}");
    assert!(
        err.contains("device sdc: serial \"WDE00001\" → \"WDE99999\""),
        "{err}"
    );
}

#[test]
fn another_format_is_refused_by_show_and_apply() {
    let s = saved(&[]);
    s.edit(|v| v["format"] = json!(99));
    let err = s.refused(&[]);
    assert!(err.contains("the plan file is format 99"), "{err}");
    let o = hyraid(&["show", s.plan.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("the plan file is format 99"),
        "{:?}",
        text(&o)
    );
}
