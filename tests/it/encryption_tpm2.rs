//! A TPM2 enrolled beside the passphrase (`tpm2: true`) on the simulated machine: the enrolment
//! between the format and the header backup, crypttab's `tpm2-device=auto`, a machine without a
//! TPM2 refused at plan time, an enrolment added to a built device, one the file does not ask
//! for refused, the file's checks, and the import of the built box.

use crate::common;
use common::luks::refusals;
use common::*;
use hyraid::config::load_str;
use hyraid::observe::tpm2::Tpm2;
use hyraid::plan::Policy;
use hyraid::sim::SimHost;

fn file(tpm2: bool) -> hyraid::config::Desired {
    two_pair_file(
        "data0, data1",
        &format!(
            "{{ home: {{ size: 20GiB, pvs: [data0], filesystem: {{ type: ext4, mount: /home }}, encryption: {{ passphrase: true, tpm2: {tpm2}, header_backup: /root/home.luks-header }} }} }}"
        ),
    )
}

/// The README's blank box, with a TPM2 (`tpm`) or without.
fn machine(tpm: bool) -> SimHost {
    let mut w = example("microserver-gen8").1.world();
    w.boot.tpm2 = Some(Tpm2 {
        devices: if tpm {
            vec!["/dev/tpmrm0".into()]
        } else {
            vec![]
        },
        error: None,
    });
    SimHost::new(w)
}

fn lines(p: &hyraid::plan::Plan) -> Vec<String> {
    p.steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::plan::step::command_line(&c))
        .collect()
}

const ENROL: &str = "PASSWORD=\"$(hyraid_passphrase 'lv vg0/home')\" systemd-cryptenroll --tpm2-device=auto --tpm2-pcrs=7 /dev/vg0/home";

#[test]
fn the_tpm2_is_enrolled_after_the_format_and_before_the_header_backup() {
    let h = machine(true);
    let p = plan_for(&h, &file(true), Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    let o = ops(&p);
    let at = |op: &str| {
        o.iter()
            .position(|x| x == op)
            .unwrap_or_else(|| panic!("{op}: {o:?}"))
    };
    assert!(at("format_luks") < at("enroll_tpm2"), "{o:?}");
    assert!(at("enroll_tpm2") < at("backup_luks_header"), "{o:?}");
    let l = lines(&p);
    assert!(l.iter().any(|x| x == ENROL), "{l:?}");
    let tab = l.iter().find(|x| x.contains("/etc/crypttab")).unwrap();
    assert!(tab.contains(" none luks,tpm2-device=auto\n"), "{tab}");
    // Built and converged: the header holds the passphrase's slot and the TPM2's, and so does
    // its backup.
    apply(&h, &file(true), Policy::default()).unwrap();
    h.finish_syncs();
    let p = plan_for(&h, &file(true), Policy::default());
    assert!(p.steps.is_empty() && p.refused.is_empty(), "{:?}", ops(&p));
    let w = h.world();
    let head = w.luks.iter().find_map(|l| l.header.clone()).unwrap();
    assert_eq!(head.tokens, vec!["systemd-tpm2".to_string()]);
    assert_eq!(head.keyslots, vec![0, 1]);
    assert_eq!(
        w.files["/root/home.luks-header"].header_slots,
        Some(vec![0, 1])
    );
}

#[test]
fn a_machine_without_a_tpm2_is_refused_at_plan_time() {
    let h = machine(false);
    let p = plan_for(&h, &file(true), Policy::default());
    let r = refusals(&p);
    assert!(
        r.contains(
            "the file enrols a TPM2 in /dev/vg0/home, and this machine has none systemd can use"
        ),
        "{r}"
    );
    assert!(r.contains("libtss2-tcti-device0"), "{r}");
    // systemd-cryptenroll missing or without its libraries: its own words.
    let mut w = machine(false).world();
    w.boot.tpm2 = Some(Tpm2 {
        devices: vec![],
        error: Some("TPM2 support is not installed.".into()),
    });
    let p = plan_for(&SimHost::new(w), &file(true), Policy::default());
    assert!(
        refusals(&p).contains("TPM2 support is not installed."),
        "{}",
        refusals(&p)
    );
}

#[test]
fn a_tpm2_is_added_to_a_built_device_and_one_the_file_does_not_ask_for_is_refused() {
    let h = machine(true);
    apply(&h, &file(false), Policy::default()).unwrap();
    h.finish_syncs();
    let p = plan_for(&h, &file(true), Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    assert_eq!(
        ops(&p),
        vec!["enroll_tpm2", "backup_luks_header", "write_file"],
        "{:?}",
        ops(&p)
    );
    apply(&h, &file(true), Policy::default()).unwrap();
    assert!(
        plan_for(&h, &file(true), Policy::default())
            .steps
            .is_empty()
    );
    // The file no longer asks for it: refused, with the way to remove it.
    let p = plan_for(&h, &file(false), Policy::default());
    let r = refusals(&p);
    assert!(
        r.contains("has a TPM2 enrolled (a `systemd-tpm2` token), which the file does not ask for")
            && r.contains("systemd-cryptenroll --wipe-slot=tpm2 /dev/vg0/home"),
        "{r}"
    );
}

#[test]
fn a_tpm2_needs_a_passphrase() {
    let text = "version: 1\nhost: h\ndisks:\n  ssd0: { id: ata-A }\n  hdd0: { id: ata-B }\nmirrors:\n  data0: { members: [ssd0, hdd0], encryption: { key_file: /etc/hyraid/keys/d.key, tpm2: true } }\nvolume_groups:\n  vg0: { pvs: [data0] }\n";
    let err = load_str("tpm.yaml", text).unwrap_err().to_string();
    assert!(
        err.contains("`tpm2: true` needs `passphrase: true`") && err.contains("tpm.yaml:7:"),
        "{err}"
    );
}

#[test]
fn the_built_box_is_imported_with_its_tpm2_and_plans_empty() {
    let h = machine(true);
    apply(&h, &file(true), Policy::default()).unwrap();
    h.finish_syncs();
    let imp = hyraid::import::import(&observe_bare(&h));
    assert!(imp.skipped.is_empty(), "{:?}", imp.skipped);
    let yaml = hyraid::import::to_yaml(&imp);
    assert!(
        yaml.contains("passphrase: true\n") && yaml.contains("tpm2: true\n"),
        "{yaml}"
    );
    let d = load_str("imported.yaml", &yaml).unwrap();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
}

#[test]
fn a_tpm2_enrolled_by_hand_beside_a_key_file_is_noted_not_refused() {
    let h = machine(true);
    let keyed = two_pair_file(
        "data0, data1",
        "{ home: { size: 20GiB, pvs: [data0], filesystem: { type: ext4, mount: /home }, encryption: { key_file: /etc/hyraid/keys/home.key } } }",
    );
    apply(&h, &keyed, Policy::default()).unwrap();
    let mut w = h.world();
    for l in w.luks.iter_mut() {
        if let Some(x) = l.header.as_mut() {
            x.tokens.push("systemd-tpm2".into());
        }
    }
    let p = plan_for(&SimHost::new(w), &keyed, Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("also has a TPM2 enrolled")),
        "{:?}",
        p.notes
    );
}
