//! A LUKS2 layer whose key is a passphrase (`passphrase: true`) on the simulated machine: the
//! commands that read it on stdin, crypttab's `none`, an apply that has no passphrase refused
//! before anything runs, a wrong one stopping at the command that reads it, convergence, a
//! stopped apply completed, no key file made or checked, the file's checks, the refusal to turn
//! one kind of key into the other, the shell script, and the import of the built box.

use crate::common;
use common::luks::refusals;
use common::*;
use hyraid::apply::ApplyError;
use hyraid::config::load_str;
use hyraid::plan::Policy;
use hyraid::sim::{Fault, SimHost};

const PASS: &str = "correct horse battery staple";

fn home(key: &str) -> String {
    format!(
        "{{ home: {{ size: 20GiB, pvs: [data0], filesystem: {{ type: ext4, mount: /home }}, encryption: {{ {key}, header_backup: /root/home.luks-header }} }} }}"
    )
}

fn file(key: &str) -> hyraid::config::Desired {
    two_pair_file("data0, data1", &home(key))
}

fn lines(p: &hyraid::plan::Plan) -> Vec<String> {
    p.steps
        .iter()
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::plan::step::command_line(&c))
        .collect()
}

fn crypttab(h: &SimHost) -> String {
    h.world().boot.crypttab.unwrap_or_default()
}

fn built() -> (hyraid::config::Desired, SimHost) {
    let (_, h) = example("microserver-gen8");
    let d = file("passphrase: true");
    apply_with_passphrase(&h, &d, PASS).unwrap();
    h.finish_syncs();
    (d, h)
}

#[test]
fn the_plan_reads_the_passphrase_on_stdin_and_crypttab_asks_at_boot() {
    let (_, h) = example("microserver-gen8");
    let p = plan_for(&h, &file("passphrase: true"), Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    let o = ops(&p);
    assert!(!o.contains(&"create_key_file".to_string()), "{o:?}");
    let l = lines(&p);
    let format = l
        .iter()
        .find(|x| x.contains("luksFormat"))
        .expect("a format");
    // A passphrase a person chose keeps cryptsetup's timed Argon2 (no light key derivation).
    assert!(!format.contains("--pbkdf"), "{format}");
    assert!(
        format.starts_with("hyraid_passphrase 'lv vg0/home' | cryptsetup luksFormat --batch-mode --type luks2 --uuid ")
            && format.ends_with(" --key-file - /dev/vg0/home"),
        "{format}"
    );
    assert!(
        l.iter().any(|x| x
            == "hyraid_passphrase 'lv vg0/home' | cryptsetup open --type luks --key-file - /dev/vg0/home vg0-home_crypt"),
        "{l:?}"
    );
    // The header backup reads no key.
    assert!(
        l.iter()
            .any(|x| x.starts_with("cryptsetup luksHeaderBackup /dev/vg0/home")),
        "{l:?}"
    );
    let tab = l.iter().find(|x| x.contains("/etc/crypttab")).unwrap();
    assert!(
        tab.contains("\nvg0-home_crypt UUID=") && tab.contains(" none luks\n"),
        "{tab}"
    );
    let text = hyraid::render::text(&p, false);
    assert!(
        text.contains("open as /dev/mapper/vg0-home_crypt with its passphrase"),
        "{text}"
    );
    // The script defines what its lines call, and still reads nothing else from stdin.
    let sh = hyraid::render::shell(&p);
    assert!(sh.contains("\nhyraid_passphrase() { "), "{sh}");
    assert!(sh.contains("exec </dev/null\n"), "{sh}");
    // A saved plan names the key `-`: what reads it, never a passphrase.
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("\"op\":\"format_luks\",\"vg\":\"vg0\",\"lv\":\"home\",\"device\":\"/dev/vg0/home\",\"uuid\":\"c68c0404-46a9-590b-a562-93eac5f6a89d\",\"key_file\":\"-\""), "{json}");
}

#[test]
fn an_apply_without_a_passphrase_is_refused_before_anything_runs() {
    let (_, h) = example("microserver-gen8");
    h.clear_log();
    let d = file("passphrase: true");
    let e = apply_with_passphrase(&h, &d, "").unwrap_err();
    assert!(
        matches!(&e, ApplyError::NoPassphrase { objects } if objects == "lv vg0/home"),
        "{e}"
    );
    let msg = e.to_string();
    assert!(msg.contains("--passphrase-file FILE"), "{msg}");
    let ran: Vec<_> = h
        .commands()
        .into_iter()
        .filter(|c| ["lvcreate", "cryptsetup", "mkfs.ext4"].contains(&c[0].as_str()))
        .collect();
    assert!(ran.is_empty(), "{ran:?}");
}

#[test]
fn a_passphrase_lv_is_built_converges_and_opens_only_with_that_passphrase() {
    let (d, h) = built();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty() && p.refused.is_empty(), "{:?}", ops(&p));
    assert!(
        !h.world()
            .boot
            .secret_files
            .keys()
            .any(|k| k.ends_with(".key"))
    );
    assert!(crypttab(&h).contains(" none luks\n"), "{}", crypttab(&h));
    let fs = h
        .world()
        .filesystems
        .into_iter()
        .find(|f| f.mapper.is_some());
    assert!(fs.is_some_and(|f| f.mountpoint.as_deref() == Some("/home")));
    // The header opens with the passphrase, and with no other.
    let dev = "/dev/vg0/home";
    let test = |p: &str| {
        h.run_input(
            &[
                "cryptsetup",
                "open",
                "--test-passphrase",
                "--key-file",
                "-",
                dev,
            ]
            .map(String::from),
            p,
            &[],
            std::time::Duration::from_secs(5),
        )
        .unwrap()
        .status
    };
    use hyraid::host::Host;
    assert_eq!(test(PASS), 0);
    assert_eq!(test("Tr0ub4dor&3"), 2);
}

/// The built box with the mapping closed by hand.
fn closed(h: &SimHost) -> SimHost {
    let mut w = h.world();
    w.filesystems.retain(|f| f.mapper.is_none());
    w.other_devices.retain(|o| o.kind != "crypt");
    for l in w.luks.iter_mut() {
        l.mapping = None;
    }
    SimHost::new(w)
}

#[test]
fn a_closed_mapping_is_opened_with_the_passphrase_and_a_wrong_one_stops_there() {
    let (d, h) = built();
    let h = closed(&h);
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(ops(&p), vec!["open_luks".to_string()], "{:?}", ops(&p));
    let e = apply_with_passphrase(&h, &d, "wrong").unwrap_err();
    assert!(
        matches!(&e, ApplyError::StepFailed { stderr, .. } if stderr.contains("No key available")),
        "{e}"
    );
    // The right one opens it, and what is inside is mounted in the same apply.
    apply_with_passphrase(&h, &d, PASS).unwrap();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
}

#[test]
fn an_apply_stopped_at_any_cryptsetup_command_is_completed_by_the_next() {
    let (_, fresh) = example("microserver-gen8");
    let d = file("passphrase: true");
    let p = plan_for(&fresh, &d, Policy::default());
    let needles: Vec<String> = lines(&p)
        .into_iter()
        .filter(|l| l.contains("cryptsetup"))
        .map(|l| l.split(" | ").last().unwrap().to_string())
        .collect();
    assert!(needles.len() >= 3, "{needles:?}");
    for needle in needles {
        let (_, h) = example("microserver-gen8");
        h.inject_fault(Fault {
            needle: needle.clone(),
            status: 1,
            stderr: "injected\n".into(),
        });
        assert!(apply_with_passphrase(&h, &d, PASS).is_err(), "{needle}");
        apply_with_passphrase(&h, &d, PASS).unwrap_or_else(|e| panic!("{needle}: {e}"));
        h.finish_syncs();
        let p = plan_for(&h, &d, Policy::default());
        assert!(p.steps.is_empty(), "{needle}: {:?}", ops(&p));
    }
}

#[test]
fn the_file_gives_one_key() {
    for (key, want) in [
        (
            "key_file: /etc/hyraid/keys/home.key, passphrase: true",
            "`key_file` and `passphrase: true` are both given",
        ),
        (
            "passphrase: false",
            "no key: `encryption` needs `key_file` or `passphrase: true`",
        ),
    ] {
        let text = format!(
            "version: 1\nhost: h\ndisks:\n  ssd0: {{ id: ata-A }}\n  hdd0: {{ id: ata-B }}\nmirrors:\n  data0: {{ members: [ssd0, hdd0] }}\nvolume_groups:\n  vg0:\n    pvs: [data0]\n    lvs: {}\n",
            home(key).replace("pvs: [data0], ", "")
        );
        let err = load_str("key.yaml", &text).unwrap_err().to_string();
        assert!(err.contains(want), "{key}: {err}");
    }
}

#[test]
fn one_kind_of_key_is_not_turned_into_the_other() {
    // Built with a key file; the file now says passphrase.
    let (_, h) = example("microserver-gen8");
    apply(
        &h,
        &file("key_file: /etc/hyraid/keys/home.key"),
        Policy::default(),
    )
    .unwrap();
    let p = plan_for(&h, &file("passphrase: true"), Policy::default());
    let r = refusals(&p);
    assert!(
        r.contains("hyraid does not turn a key file into a passphrase"),
        "{r}"
    );
    assert!(
        r.contains("cryptsetup luksAddKey --key-file /etc/hyraid/keys/home.key /dev/vg0/home"),
        "{r}"
    );
    // Built with a passphrase; the file now names a key file that is not there.
    let (_, h) = built();
    let p = plan_for(
        &h,
        &file("key_file: /etc/hyraid/keys/home.key"),
        Policy::default(),
    );
    let r = refusals(&p);
    assert!(
        r.contains("hyraid does not turn a passphrase into a key file"),
        "{r}"
    );
    assert!(
        !ops(&p).contains(&"create_key_file".to_string()),
        "{:?}",
        ops(&p)
    );
}

#[test]
fn the_built_box_is_imported_with_its_passphrase_and_plans_empty() {
    let (_, h) = built();
    let obs = observe_bare(&h);
    let imp = hyraid::import::import(&obs);
    assert!(imp.skipped.is_empty(), "{:?}", imp.skipped);
    let yaml = hyraid::import::to_yaml(&imp);
    assert!(
        yaml.contains("        encryption:\n          passphrase: true\n"),
        "{yaml}"
    );
    let d = load_str("imported.yaml", &yaml).unwrap();
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{}", refusals(&p));
    assert!(p.steps.is_empty(), "{:?}", ops(&p));
}

#[test]
fn status_checks_no_key_file_for_a_passphrase() {
    let (d, h) = built();
    let obs = observe(&h, &d);
    let s = hyraid::status::status(&obs, Some(&d), None);
    let text = format!("{s:?}");
    assert!(!text.contains("key file"), "{text}");
}

#[test]
fn the_command_line_refuses_yes_without_a_passphrase_and_reads_passphrase_file() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("box.json");
    std::fs::copy("examples/snapshots/microserver-gen8.json", &snap).unwrap();
    let yaml = dir.path().join("hyraid.yaml");
    let file = std::fs::read_to_string("examples/microserver-gen8-encrypted.yaml").unwrap();
    let file = file.replace("key_file: /etc/hyraid/keys/data0.key", "passphrase: true");
    assert!(file.contains("passphrase: true"), "{file}");
    std::fs::write(&yaml, &file).unwrap();
    let (snap, yaml) = (snap.to_str().unwrap(), yaml.to_str().unwrap());
    let o = hyraid(&["apply", "--sim", snap, "--yes", "--sim-write", yaml]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the plan reads the passphrase of mirror data0 from the terminal"),
        "{err}"
    );
    // Nothing was run, so nothing was written back.
    assert_eq!(
        std::fs::read_to_string(snap).unwrap(),
        std::fs::read_to_string("examples/snapshots/microserver-gen8.json").unwrap()
    );
    let pass = dir.path().join("pass");
    std::fs::write(&pass, format!("{PASS}\n")).unwrap();
    let o = hyraid(&[
        "apply",
        "--sim",
        snap,
        "--yes",
        "--sim-write",
        "--passphrase-file",
        pass.to_str().unwrap(),
        yaml,
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(!out.contains(PASS) && !err.contains(PASS), "{out}{err}");
    assert!(
        out.contains("hyraid_passphrase 'mirror data0' | cryptsetup luksFormat"),
        "{out}"
    );
    // The newline ends the passphrase: what the header holds is the line's text.
    let w = std::fs::read_to_string(snap).unwrap();
    assert!(
        w.contains(&format!("\"passphrase:{PASS}\"")),
        "the model's key slot"
    );
    let o = hyraid(&["plan", "--sim", snap, "--detailed-exitcode", yaml]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).0);
}

#[test]
fn the_format_runs_only_when_blkid_finds_nothing_on_the_device() {
    let (_, h) = example("microserver-gen8");
    let d = file("passphrase: true");
    let p = plan_for(&h, &d, Policy::default());
    let l = lines(&p);
    let at = |pre: &str| l.iter().position(|x| x.contains(pre)).unwrap();
    assert_eq!(
        l[at("blkid -p /dev/vg0/home")],
        "r=0; o=$(blkid -p /dev/vg0/home 2>&1) || r=$?\ncase $r in 2) ;; *) false ;; esac\n[ -z \"$o\" ]"
    );
    assert_eq!(at("blkid -p /dev/vg0/home") + 1, at("luksFormat"), "{l:?}");
    // A signature udev never recorded: blkid finds it (exit 0), and the apply stops there.
    h.inject_fault(Fault {
        needle: "blkid -p /dev/vg0/home".into(),
        status: 0,
        stderr: String::new(),
    });
    h.clear_log();
    let e = apply_with_passphrase(&h, &d, PASS).unwrap_err();
    assert!(
        matches!(&e, ApplyError::StepFailed { command, status: 0, .. } if command.contains("blkid -p /dev/vg0/home")),
        "{e}"
    );
    assert!(
        !h.commands()
            .iter()
            .any(|c| c.iter().any(|a| a == "luksFormat")),
        "{:?}",
        h.commands()
    );
}

#[test]
fn blkid_exiting_2_with_an_error_is_not_a_blank_device() {
    // libblkid exits 2 also when it could not open or read the device: with its error printed.
    let (_, h) = example("microserver-gen8");
    let d = file("passphrase: true");
    h.inject_fault(Fault {
        needle: "blkid -p /dev/vg0/home".into(),
        status: 2,
        stderr: "error: /dev/vg0/home: Input/output error\n".into(),
    });
    let e = apply_with_passphrase(&h, &d, PASS).unwrap_err();
    assert!(
        matches!(&e, ApplyError::StepFailed { status: 2, stderr, .. } if stderr.contains("Input/output error")),
        "{e}"
    );
    assert!(
        !h.commands()
            .iter()
            .any(|c| c.iter().any(|a| a == "luksFormat"))
    );
}

#[test]
fn an_open_device_crypttab_does_not_list_is_proven_to_open_with_the_passphrase_first() {
    let (d, h) = built();
    // hyraid's crypttab line gone (a box set up by hand, or the line removed).
    let mut w = h.world();
    w.boot.crypttab = None;
    let h = SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    assert_eq!(
        ops(&p),
        vec!["test_luks_key".to_string(), "write_file".to_string()],
        "{:?}",
        ops(&p)
    );
    assert!(
        lines(&p).contains(&"hyraid_passphrase 'lv vg0/home' | cryptsetup open --test-passphrase --key-file - /dev/vg0/home".to_string()),
        "{:?}",
        lines(&p)
    );
    // A wrong one stops before crypttab names `none`.
    assert!(apply_with_passphrase(&h, &d, "wrong").is_err());
    assert!(crypttab(&h).is_empty(), "{}", crypttab(&h));
    apply_with_passphrase(&h, &d, PASS).unwrap();
    assert!(crypttab(&h).contains(" none luks\n"), "{}", crypttab(&h));
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn passphrase_file_from_a_pipe_serves_every_device() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("box.json");
    std::fs::copy("examples/snapshots/microserver-gen8.json", &snap).unwrap();
    let yaml = dir.path().join("hyraid.yaml");
    let file = std::fs::read_to_string("examples/microserver-gen8-encrypted.yaml").unwrap();
    let file = file
        .replace("key_file: /etc/hyraid/keys/data0.key", "passphrase: true")
        .replace("key_file: /etc/hyraid/keys/data1.key", "passphrase: true");
    std::fs::write(&yaml, &file).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hyraid"))
        .args(["apply", "--sim"])
        .arg(&snap)
        .args(["--yes", "--sim-write", "--passphrase-file", "/dev/stdin"])
        .arg(&yaml)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{PASS}\n").as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("hyraid_passphrase 'mirror data1' | cryptsetup luksFormat"),
        "{out}"
    );
    let w = std::fs::read_to_string(&snap).unwrap();
    assert_eq!(
        w.matches(&format!("\"passphrase:{PASS}\"")).count(),
        2,
        "both headers"
    );
}

/// After a reboot nobody typed the passphrase at: the LV's header is closed and its filesystem
/// not mounted. Status says so, degraded, with the way to open it; it is not "healthy".
#[test]
fn status_says_a_closed_header_and_how_to_open_it() {
    let (d, h) = built();
    let healthy = hyraid::status::check(&observe(&h, &d), Some(&d), None).0;
    assert!(
        !healthy.iter().any(|f| f.message.contains("is not open")),
        "{healthy:?}"
    );
    let h = closed(&h);
    let (f, _) = hyraid::status::check(&observe(&h, &d), Some(&d), None);
    let closed = f
        .iter()
        .find(|f| f.object == "lv vg0/home" && f.message.contains("is not open"))
        .unwrap_or_else(|| panic!("{f:#?}"));
    assert_eq!(closed.severity, hyraid::status::Severity::Degraded);
    assert!(
        closed.message.contains("no /dev/mapper/vg0-home_crypt"),
        "{closed:?}"
    );
    assert!(
        closed.reason.contains("a passphrase typed on the console"),
        "{closed:?}"
    );
    assert!(
        closed
            .fix
            .contains("`hyraid apply FILE` opens it (it asks the passphrase)"),
        "{closed:?}"
    );
    assert_eq!(hyraid::status::exit_code(&f), 2);
}
