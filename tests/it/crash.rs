//! Crash at every point: for each example and for changes to a machine holding data, apply is
//! interrupted after every single command (the process dies; the machine keeps what the commands
//! did), or a command fails; the next apply must converge to an empty plan without a destroying
//! command, and every array and LV that held data before still exists, no smaller.
//! `cargo test --test it crash:: -- --nocapture` prints the scenario table.

use crate::common;
#[path = "crash_cases/mod.rs"]
mod crash_cases;
use common::*;
use crash_cases::{Case, cases};
use hyraid::config::Desired;
use hyraid::host::Host;
use hyraid::plan::{Command, Policy, StepKindName};
use hyraid::render::command_line;
use hyraid::sim::{Fault, SimHost};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use strum::IntoEnumIterator;

/// One command of a plan, with the kind of step it belongs to and its place in that step.
struct Point {
    command: Command,
    kind: &'static str,
    /// 1-based place of the command in its step, and how many the step has.
    nth: usize,
    of: usize,
}

/// The plan's commands in order, each with its step's kind and its place in the step.
fn points(h: &SimHost, d: &Desired, policy: Policy) -> Vec<Point> {
    let mut out = Vec::new();
    for s in plan_for(h, d, policy).steps {
        let cmds = s.step.commands();
        let of = cmds.len();
        for (i, command) in cmds.into_iter().enumerate() {
            out.push(Point {
                command,
                kind: s.step.kind_name(),
                nth: i + 1,
                of,
            });
        }
    }
    out
}

/// Which step kinds were interrupted, at which command boundaries inside them, and how often.
#[derive(Default)]
struct Coverage {
    /// kind → the boundaries (after command n of m) an interruption was tested at.
    boundaries: BTreeMap<&'static str, BTreeSet<(usize, usize)>>,
    runs: usize,
}

impl Coverage {
    fn add(&mut self, p: &Point) {
        self.boundaries
            .entry(p.kind)
            .or_default()
            .insert((p.nth, p.of));
    }

    /// Every kind of the vocabulary: interrupted after each of its commands, or named.
    fn report(&self, what: &str) {
        let all: Vec<&'static str> = StepKindName::iter().map(|k| k.into()).collect();
        let missing: Vec<&&str> = all
            .iter()
            .filter(|k| !self.boundaries.contains_key(**k))
            .collect();
        let points: usize = self.boundaries.values().map(BTreeSet::len).sum();
        eprintln!(
            "crash matrix ({what}): step kinds covered {}/{}; distinct command boundaries inside steps {points}; runs {}",
            all.len() - missing.len(),
            all.len(),
            self.runs
        );
        for (k, b) in &self.boundaries {
            // A step of m commands is interrupted after each of them, in some case.
            let of = b.iter().map(|(_, m)| *m).max().unwrap_or(0);
            let seen: BTreeSet<usize> = b
                .iter()
                .filter(|(_, m)| *m == of)
                .map(|(n, _)| *n)
                .collect();
            assert_eq!(
                seen.len(),
                of,
                "{what}: step kind `{k}` ({of} commands) was interrupted only after commands {seen:?}"
            );
        }
        assert!(
            missing.is_empty(),
            "{what}: no case plans these step kinds, so no interruption of them is tested: {missing:?}; add a change that plans them to tests/it/crash_cases"
        );
    }
}

fn run_cmd(h: &SimHost, c: &Command) {
    match c {
        // Waiting is time passing until the array is idle.
        Command::WaitIdle { .. } | Command::WaitMove { .. } => h.finish_syncs(),
        Command::ReplaceFile { path, content } => h.replace_file(path, content).unwrap(),
        Command::Run {
            argv,
            ok_exit,
            passphrase_of,
            passphrase_env,
        } => {
            let p = common::TEST_PASSPHRASE;
            let o = match (passphrase_of, passphrase_env) {
                (None, _) => h.run(argv).unwrap(),
                (Some(_), None) => h.run_input(argv, p, &[], Duration::from_secs(5)).unwrap(),
                (Some(_), Some(var)) => h
                    .run_input(argv, "", &[(var.clone(), p.into())], Duration::from_secs(5))
                    .unwrap(),
            };
            assert!(
                ok_exit.contains(&o.status),
                "{}: {}",
                argv.join(" "),
                o.stderr
            );
        }
        Command::Write { path, value } => h.write_file(path, value).unwrap(),
    }
}

/// Arrays and visible LVs that existed before, by uuid, with their sizes.
fn holdings(w: &hyraid::observe::Observed) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = w
        .arrays
        .iter()
        .filter_map(|a| Some((a.uuid.clone()?, a.size_kib * 1024)))
        .collect();
    v.extend(
        w.lvm
            .lvs
            .iter()
            .filter(|l| !l.hidden)
            .map(|l| (l.uuid.clone(), l.size)),
    );
    v
}

fn check_outcome(case: &Case, h: &SimHost, what: &str) {
    let p = plan_for(h, &case.desired, case.policy.clone());
    assert!(
        p.steps.is_empty() && p.refused.is_empty(),
        "{}: {what}: residue\n{}",
        case.name,
        hyraid::render::text(&p, false)
    );
    let removing = [
        "wipefs --all",
        "lvremove",
        "vgremove",
        "pvremove",
        "--zero-superblock",
        "mdadm --stop",
        "lvreduce",
        "luksRemoveKey",
    ];
    for c in changes(h) {
        if removing.iter().any(|r| c.contains(r)) && !case.allowed_removals.contains(&c) {
            panic!("{}: {what}: destroying command `{c}`", case.name);
        }
    }
    let foreign = |w: &hyraid::observe::Observed| {
        hyraid::plan::plan(&case.desired, w, case.policy.clone())
            .unwrap()
            .foreign
    };
    assert_eq!(
        foreign(&observe(h, &case.desired)),
        foreign(&case.before.normalized()),
        "{}: {what}: leftovers",
        case.name
    ); // Time passes: every resync and copy finishes; one more apply; the final shape holds.
    h.finish_syncs();
    apply(h, &case.desired, case.policy.clone())
        .unwrap_or_else(|e| panic!("{}: {what}: apply after the resync: {e}", case.name));
    let p = plan_for(h, &case.desired, case.policy.clone());
    assert!(
        p.steps.is_empty() && p.refused.is_empty(),
        "{}: {what}: residue after the resync\n{}",
        case.name,
        hyraid::render::text(&p, false)
    );
    if let Some(f) = case.finally {
        assert!(
            f(&h.world()),
            "{}: {what}: final state {:?}",
            case.name,
            h.world().arrays
        );
    }
    let now = h.world();
    let after = holdings(&now);
    // An LV the change asked to shrink (its lvreduce allowed) must still exist, smaller.
    let may_shrink: Vec<&String> = case
        .before
        .lvm
        .lvs
        .iter()
        .filter(|l| {
            case.allowed_removals.iter().any(|c| {
                c.starts_with("lvreduce ") && c.ends_with(&format!(" {}/{}", l.vg, l.name))
            })
        })
        .map(|l| &l.uuid)
        .collect();
    // What the file removes (`state: absent`, allowed) is gone on purpose.
    let d = &case.desired;
    let mut removed: Vec<&String> = case
        .before
        .arrays
        .iter()
        .filter(|a| {
            a.name
                .as_ref()
                .and_then(|n| d.mirrors.get(n))
                .is_some_and(|m| m.absent)
        })
        .filter_map(|a| a.uuid.as_ref())
        .collect();
    removed.extend(
        case.before
            .lvm
            .lvs
            .iter()
            .filter(|l| {
                d.volume_groups
                    .get(&l.vg)
                    .is_some_and(|g| g.absent || g.lvs.get(&l.name).is_some_and(|x| x.absent))
            })
            .map(|l| &l.uuid),
    );
    // A tune run's scratch LV the file does not declare holds only fio's test data.
    removed.extend(
        case.before
            .lvm
            .lvs
            .iter()
            .filter(|l| {
                l.name == hyraid::config::TUNE_LV
                    && l.tags.iter().any(|t| t == hyraid::config::TUNE_TAG)
                    && !d
                        .volume_groups
                        .get(&l.vg)
                        .is_some_and(|g| g.lvs.contains_key(&l.name))
            })
            .map(|l| &l.uuid),
    );
    for (uuid, size) in holdings(&case.before) {
        if removed.contains(&&uuid) {
            continue;
        }
        let got = after.iter().find(|(u, _)| *u == uuid).map(|(_, s)| *s);
        assert!(
            got.is_some_and(|s| s >= size || may_shrink.contains(&&uuid)),
            "{}: {what}: {uuid} ({size} bytes) lost or shrunk: {got:?}",
            case.name
        );
    }
}

#[test]
fn interrupted_after_every_command_then_converges() {
    eprintln!("| scenario | commands | interrupted points | result |\n|---|---|---|---|");
    let mut cov = Coverage::default();
    for case in cases() {
        let pts = points(
            &SimHost::new(case.before.clone()),
            &case.desired,
            case.policy.clone(),
        );
        assert!(!pts.is_empty(), "{}", case.name);
        for k in 0..=pts.len() {
            let h = SimHost::new(case.before.clone());
            // The process dies after k commands: the machine keeps their effects.
            for p in &pts[..k] {
                run_cmd(&h, &p.command);
            }
            // The next apply, with the same flags as the first.
            apply(&h, &case.desired, case.policy.clone()).unwrap_or_else(|e| {
                panic!(
                    "{}: killed after {k} commands, re-apply failed: {e}",
                    case.name
                )
            });
            check_outcome(&case, &h, &format!("killed after {k} commands"));
            if k > 0 {
                cov.add(&pts[k - 1]);
            }
            cov.runs += 1;
        }
        eprintln!(
            "| {} | {} | {} | converged, no data lost |",
            case.name,
            pts.len(),
            pts.len() + 1
        );
    }
    eprintln!("{} interrupted applies converged", cov.runs);
    cov.report("killed after a command");
}

#[test]
fn a_failing_command_stops_apply_and_a_rerun_converges() {
    let mut cov = Coverage::default();
    for case in cases() {
        let pts = points(
            &SimHost::new(case.before.clone()),
            &case.desired,
            case.policy.clone(),
        );
        for (j, p) in pts.iter().enumerate() {
            let h = SimHost::new(case.before.clone());
            let c = &p.command;
            let needle = match c {
                Command::Run { argv, .. } => argv.join(" "),
                Command::Write { path, .. } => path.clone(),
                // a wait runs no command that could fail: it is only interrupted
                Command::WaitIdle { .. } | Command::WaitMove { .. } => {
                    cov.add(p);
                    continue;
                }
                Command::ReplaceFile { path, .. } => path.clone(),
            };
            h.inject_fault(Fault {
                needle: needle.clone(),
                status: 5,
                stderr: "  simulated failure\n".into(),
            });
            let e = apply(&h, &case.desired, case.policy.clone())
                .expect_err(&format!("{}: command {j} fails", case.name))
                .to_string();
            assert!(
                e.contains(&command_line(c)) || e.contains(&needle),
                "{}: error names the command: {e}",
                case.name
            );
            assert!(
                e.contains("simulated failure") && e.contains("run apply again"),
                "{e}"
            );
            h.clear_faults();
            apply(&h, &case.desired, case.policy.clone())
                .unwrap_or_else(|e| panic!("{}: after a failure at command {j}: {e}", case.name));
            check_outcome(&case, &h, &format!("failure at command {j}"));
            cov.add(p);
            cov.runs += 1;
        }
    }
    eprintln!("{} failed-command runs recovered", cov.runs);
    cov.report("a command failed");
}

/// A key rotation killed after any command leaves a box that boots: the key file crypttab names
/// for the mapping opens its header at every point (crypttab names the new key before the old
/// key's slot is removed), and the next apply removes the old key's slot even when crypttab
/// already named the new key when the apply was killed.
#[test]
fn a_key_rotation_killed_anywhere_leaves_crypttab_naming_a_key_that_opens() {
    let (mut d, h) = crash_cases::converged("microserver-gen8-encrypted");
    let (old, new) = (
        "/etc/hyraid/keys/data0.key",
        "/etc/hyraid/keys/data0-new.key",
    );
    d.mirrors
        .get_mut("data0")
        .unwrap()
        .encryption
        .as_mut()
        .unwrap()
        .key_file = new.into();
    let before = h.world();
    let pts = points(&h, &d, Policy::default());
    let opens = |w: &hyraid::observe::Observed| -> (String, bool, bool) {
        let tab = w.boot.crypttab.clone().unwrap_or_default();
        let line = hyraid::plan::crypttab::hyraid_lines(&tab)
            .into_iter()
            .find(|l| l.name == "data0_crypt")
            .unwrap();
        let uuid = line.device.trim_start_matches("UUID=");
        let slots: Vec<&String> = w.key_slots[uuid].values().collect();
        let key = line.key.unwrap();
        (
            key.clone(),
            slots.contains(&&key),
            slots.contains(&&old.to_string()),
        )
    };
    let mut removed_after_crypttab = false;
    for k in 0..=pts.len() {
        let h = SimHost::new(before.clone());
        for p in &pts[..k] {
            run_cmd(&h, &p.command);
        }
        let (key, boots, old_left) = opens(&h.world());
        assert!(
            boots,
            "killed after {k} commands: crypttab names {key}, which opens no slot"
        );
        removed_after_crypttab |= key == new && old_left;
        apply(&h, &d, Policy::default()).unwrap_or_else(|e| panic!("after {k}: {e}"));
        let (key, _, old_left) = opens(&h.world());
        assert_eq!(key, new, "after {k}");
        assert!(
            !old_left,
            "killed after {k} commands: the old key's slot is left"
        );
        assert!(
            plan_for(&h, &d, Policy::default()).steps.is_empty(),
            "after {k}"
        );
    }
    assert!(
        removed_after_crypttab,
        "no point had crypttab naming the new key while the old slot was still there"
    );
}
