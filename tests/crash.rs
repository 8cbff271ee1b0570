//! Crash at every point: for each example and for changes to a machine holding data, apply is
//! interrupted after every single command (the process dies; the machine keeps what the commands
//! did), or a command fails; the next apply must converge to an empty plan without a destroying
//! command, and every array and LV that held data before still exists, no smaller.
//! `cargo test --test crash -- --nocapture` prints the scenario table.

mod common;
mod crash_cases;
use common::*;
use crash_cases::{Case, cases};
use hyraid::config::Desired;
use hyraid::host::Host;
use hyraid::plan::{Command, Policy};
use hyraid::render::command_line;
use hyraid::sim::{Fault, SimHost};

fn flat(h: &SimHost, d: &Desired, policy: Policy) -> Vec<Command> {
    plan_for(h, d, policy.clone())
        .steps
        .iter()
        .flat_map(|s| s.step.commands())
        .collect()
}

fn run_cmd(h: &SimHost, c: &Command) {
    match c {
        // Waiting is time passing until the array is idle.
        Command::WaitIdle { .. } | Command::WaitMove { .. } => h.finish_syncs(),
        Command::ReplaceFile { path, content } => h.replace_file(path, content).unwrap(),
        Command::Run { argv, ok_exit } => {
            let o = h.run(argv).unwrap();
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
    assert!(
        plan_for(h, &case.desired, case.policy.clone())
            .steps
            .is_empty(),
        "{}: {what}: residue",
        case.name
    );
    let removing = [
        "wipefs --all",
        "lvremove",
        "vgremove",
        "pvremove",
        "--zero-superblock",
        "mdadm --stop",
        "lvreduce",
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
    assert!(
        plan_for(h, &case.desired, case.policy.clone())
            .steps
            .is_empty(),
        "{}: {what}: residue after the resync",
        case.name
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
    for (uuid, size) in holdings(&case.before) {
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
    let mut total = 0;
    for case in cases() {
        let cmds = flat(
            &SimHost::new(case.before.clone()),
            &case.desired,
            case.policy.clone(),
        );
        assert!(!cmds.is_empty(), "{}", case.name);
        for k in 0..=cmds.len() {
            let h = SimHost::new(case.before.clone());
            // The process dies after k commands: the machine keeps their effects.
            for c in &cmds[..k] {
                run_cmd(&h, c);
            }
            apply(&h, &case.desired, case.policy.clone()).unwrap_or_else(|e| {
                panic!(
                    "{}: killed after {k} commands, re-apply failed: {e}",
                    case.name
                )
            });
            check_outcome(&case, &h, &format!("killed after {k} commands"));
            total += 1;
        }
        eprintln!(
            "| {} | {} | {} | converged, no data lost |",
            case.name,
            cmds.len(),
            cmds.len() + 1
        );
    }
    eprintln!("{total} interrupted applies converged");
}

#[test]
fn a_failing_command_stops_apply_and_a_rerun_converges() {
    let mut total = 0;
    for case in cases() {
        let cmds = flat(
            &SimHost::new(case.before.clone()),
            &case.desired,
            case.policy.clone(),
        );
        for (j, c) in cmds.iter().enumerate() {
            let h = SimHost::new(case.before.clone());
            let needle = match c {
                Command::Run { argv, .. } => argv.join(" "),
                Command::Write { path, .. } => path.clone(),
                // a wait runs no command that could fail
                Command::WaitIdle { .. } | Command::WaitMove { .. } => continue,
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
            total += 1;
        }
    }
    eprintln!("{total} failed-command runs recovered");
}
