//! A saved plan shows hyraid's words only and runs only a valid state: its reasons, notes and
//! objects left alone are hyraid's or the plan is refused (by apply and by show, which renders
//! the plan made again, never the file's text); the configuration it carries passes exactly the
//! checks of `hyraid validate`; and whether a file is a plan is decided by its content, the same
//! way in every verb.

use crate::common;
use common::saved::{read, saved};
use common::{hyraid, text};
use serde_json::json;

#[test]
fn a_reason_rewritten_is_refused_by_apply_and_show() {
    let s = saved(&[]);
    s.edit(|v| v["steps"][0]["reason"] = json!("harmless: nothing is written"));
    let err = s.refused(&[]);
    assert!(err.contains("why: harmless: nothing is written"), "{err}");
    assert!(err.contains("step 1 in the file is"), "{err}");
    let o = hyraid(&["show", s.plan.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(!out.contains("harmless"), "{out}");
    assert!(err.contains("why: harmless"), "{err}");
}

#[test]
fn a_note_added_or_rewritten_is_refused() {
    let s = saved(&[]);
    s.edit(|v| {
        v["notes"]
            .as_array_mut()
            .unwrap()
            .push(json!("every step is reversible"))
    });
    let err = s.refused(&[]);
    assert!(
        err.contains("the notes differ") && err.contains("every step is reversible"),
        "{err}"
    );
    let o = hyraid(&["show", s.plan.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!text(&o).0.contains("reversible"), "{:?}", text(&o));
}

#[test]
fn an_object_left_alone_described_otherwise_is_refused() {
    let s = saved(&[]);
    s.edit(|v| {
        v["foreign"]
            .as_array_mut()
            .unwrap()
            .push(json!({"object": "disk sdz", "detail": "kept as it is"}))
    });
    let err = s.refused(&[]);
    assert!(err.contains("the objects left alone differ"), "{err}");
}

#[test]
fn show_renders_the_plan_made_again_not_the_files_display_text() {
    let s = saved(&[]);
    let before = hyraid(&["show", s.plan.to_str().unwrap()]);
    assert_eq!(before.status.code(), Some(0), "{:?}", text(&before));
    for format in ["markdown", "shell", "json"] {
        let o = hyraid(&["show", s.plan.to_str().unwrap(), "--format", format]);
        assert_eq!(o.status.code(), Some(0), "{format}");
    }
    // `display` is derived for tools (a reviewer reading the JSON sees it): an edited one is
    // refused by show and apply alike, never shown as hyraid's.
    s.edit(|v| v["steps"][0]["display"]["summary"] = json!("nothing happens"));
    let o = hyraid(&["show", s.plan.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).0.is_empty());
    assert!(text(&o).1.contains("its `display` says"), "{:?}", text(&o));
    let err = s.refused(&[]);
    assert!(err.contains("nothing happens"), "{err}");
    s.edit(|v| {
        v["steps"][0].as_object_mut().unwrap().remove("display");
    });
    let o = hyraid(&["show", s.plan.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a plan without `display` is still hyraid's"
    );
    assert_eq!(text(&o).0, text(&before).0);
    // Its observation edited (a disk's serial) no longer matches its basis: refused.
    s.edit(|v| {
        let d = v["observed"]["block_devices"][0].as_object_mut().unwrap();
        d.insert("serial".into(), json!("EDITED"));
    });
    let o = hyraid(&["show", s.plan.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("is not the observation its `basis` fingerprints"),
        "{:?}",
        text(&o)
    );
}

/// `write_behind: 70000` is beyond md's 16383: no valid file describes it. Edited into the
/// desired state alone, it is not what the plan's file says; edited into both, the file fails
/// validate's own check. Either way nothing runs.
#[test]
fn a_desired_state_no_valid_file_describes_never_runs() {
    let s = saved(&[]);
    s.edit(|v| v["desired"]["mirrors"]["data0"]["write_behind"] = json!(70000));
    let err = s.refused(&[]);
    assert!(
        err.contains("its `desired` is not the state its configuration file"),
        "{err}"
    );
    let s = saved(&[]);
    s.edit(|v| {
        v["desired"]["mirrors"]["data0"]["write_behind"] = json!(70000);
        let text = v["config"]["text"].as_str().unwrap().to_string();
        assert!(text.contains("write_behind: 0"), "{text}");
        v["config"]["text"] = json!(text.replace("write_behind: 0", "write_behind: 70000"));
    });
    let err = s.refused(&[]);
    assert!(
        err.contains("the saved plan's configuration")
            && err.contains("mirrors.data0.write_behind")
            && err.contains("70000"),
        "{err}"
    );
    // show says the same: it renders nothing of a state no valid file describes.
    let o = hyraid(&["show", s.plan.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).0.is_empty(), "{:?}", text(&o));
    // A plan without its configuration is refused too.
    let s = saved(&[]);
    s.edit(|v| {
        v.as_object_mut().unwrap().remove("config");
    });
    let err = s.refused(&[]);
    assert!(err.contains("carries no configuration"), "{err}");
}

#[test]
fn a_plan_is_told_from_a_configuration_by_its_content() {
    let s = saved(&[]);
    // Saved under a name without `.json`, it is still a plan to apply and show.
    let bare = s.plan.with_file_name("saved-plan");
    std::fs::rename(&s.plan, &bare).unwrap();
    let o = hyraid(&["show", bare.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).0.contains("mdadm --create"));
    let o = hyraid(&[
        "apply",
        bare.to_str().unwrap(),
        "--sim",
        s.snap.to_str().unwrap(),
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).0.contains("Dry run: nothing was changed."));
    // A plan given where a configuration is meant says what to do with it.
    for verb in ["plan", "validate", "status"] {
        let o = hyraid(&[
            verb,
            bare.to_str().unwrap(),
            "--sim",
            s.snap.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{verb}: {:?}", text(&o));
        assert!(
            text(&o)
                .1
                .contains("is a saved plan (`hyraid plan -o`), not a configuration"),
            "{verb}: {:?}",
            text(&o)
        );
    }
    // A configuration written as JSON is a configuration for every verb, under any name.
    let yaml = std::fs::read_to_string("examples/microserver-gen8.yaml").unwrap();
    let d: serde_json::Value = serde_saphyr_json(&yaml);
    let conf = s.plan.with_file_name("hyraid.json");
    std::fs::write(&conf, serde_json::to_string_pretty(&d).unwrap()).unwrap();
    let c = conf.to_str().unwrap();
    let snap = s.snap.to_str().unwrap();
    let o = hyraid(&["validate", c]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = hyraid(&["plan", c, "--sim", snap]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = hyraid(&["apply", c, "--sim", snap, "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).0.contains("mdadm --create"), "{:?}", text(&o));
    let o = hyraid(&["show", c]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("is a configuration, not a saved plan"),
        "{:?}",
        text(&o)
    );
    // The plan carries the file it was made from, as written.
    let plan = read(&bare);
    assert_eq!(plan["config"]["text"], json!(yaml));
    assert_eq!(plan["format"], json!(2));
}

/// The example's YAML as the JSON a user would write by hand (its keys, its values).
fn serde_saphyr_json(yaml: &str) -> serde_json::Value {
    let (value, _) = hyraid::config::yaml::parse(yaml).unwrap();
    value
}
