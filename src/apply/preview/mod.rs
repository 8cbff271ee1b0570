//! Before and after, per object, of a plan: the plan is run on a simulated copy of the observed
//! machine (never on the machine), the copy is observed again, and both states of every object
//! the plan touches are described the same way. For Ansible's diff mode and reviews.

mod describe;

use crate::config::Desired;
use crate::observe::Observed;
use crate::plan::step::WriteFile;
use crate::plan::{Plan, PlanError, Policy, Step, plan};
use crate::sim::SimHost;
use describe::describe;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectState {
    pub object: String,
    /// As observed now (files: their content; `None` when the file does not exist).
    pub before: Option<String>,
    /// After the plan, as the simulated run leaves it.
    pub after: Option<String>,
}

/// `hyraid plan`'s verb: the plan of `d` on the machine as observed, carrying the normalized
/// observation (so a stale saved plan can say what changed since) and, as notes, the field's lints
/// (bitmap, write-behind, write-mostly, writecache redundancy) on the machine as the plan leaves it,
/// as `status` would report them afterwards.
pub fn review(d: &Desired, obs: &Observed, policy: Policy) -> Result<Plan, PlanError> {
    let mut p = plan(d, obs, policy)?;
    if p.refused.is_empty()
        && let Some(after) = after_state(&p, obs)
    {
        let conf = after.boot.mdadm_conf.clone();
        for f in crate::status::status(&after, Some(d), conf.as_deref())
            .into_iter()
            .filter(|f| f.severity == crate::status::Severity::Lint)
        {
            p.notes.push(format!(
                "lint, after this plan: {}: {} — {} (fix: {})",
                f.object, f.message, f.reason, f.fix
            ));
        }
    }
    // The observation itself (the basis fingerprints it normalized): `hyraid show` plans
    // again from it, and a stale saved plan says what changed since.
    p.observed = Some(obs.clone());
    Ok(p)
}

/// The machine as the plan leaves it: the plan run on a simulated copy of `obs`, observed
/// again (a plan without steps leaves it as observed). `None` when the simulated run cannot
/// complete the plan.
pub fn after_state(p: &Plan, obs: &Observed) -> Option<Observed> {
    if p.steps.is_empty() {
        return Some(obs.clone());
    }
    // The key files and header backups observation found (`stat`, `luksUUID`, `luksDump` of
    // them) are the copy's files: the copy must not report them missing after the plan.
    let mut world = obs.clone();
    for (path, f) in &obs.boot.secret_files {
        world.files.entry(path.clone()).or_insert_with(|| f.clone());
    }
    let sim = SimHost::new(world);
    // The executor `apply` runs, with no journal and no output.
    let opts = super::ExecOptions::default();
    super::execute_report(
        &sim,
        p,
        obs,
        &super::Journal::default(),
        &mut std::io::sink(),
        &opts,
    )
    .ok()?;
    super::observe_for(&sim, Some(&p.desired)).ok()
}

/// The objects the plan touches, in plan order, with their state before and after. `None` when
/// the simulated run cannot complete the plan (the preview is then not shown, never guessed).
pub fn object_states(p: &Plan, obs: &Observed) -> Option<Vec<ObjectState>> {
    let after = after_state(p, obs)?;
    let mut out: Vec<ObjectState> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in &p.steps {
        let object = s.step.object();
        if !seen.insert(object.clone()) {
            continue;
        }
        let state = match &s.step {
            Step::WriteFile(WriteFile { old, content, .. }) => ObjectState {
                object: object.to_string(),
                before: old.clone(),
                after: Some(content.clone()),
            },
            _ => {
                let before = describe(obs, &p.desired, &object);
                let after_text = describe(&after, &p.desired, &object);
                if before.is_none() && after_text.is_none() {
                    continue; // udev, initramfs: actions without state
                }
                ObjectState {
                    object: object.to_string(),
                    before,
                    after: after_text,
                }
            }
        };
        out.push(state);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Policy, plan};

    fn example(name: &str) -> (crate::config::Desired, SimHost) {
        let root = env!("CARGO_MANIFEST_DIR");
        let d = crate::config::load_file(std::path::Path::new(&format!(
            "{root}/examples/{name}.yaml"
        )))
        .unwrap();
        let snap =
            std::fs::read_to_string(format!("{root}/examples/snapshots/{name}.json")).unwrap();
        (d, SimHost::from_json(&snap).unwrap())
    }

    #[test]
    fn before_and_after_of_every_touched_object() {
        let (d, h) = example("microserver-gen8");
        let obs = crate::machine::observe_for(&h, Some(&d)).unwrap();
        let p = plan(&d, &obs, Policy::default()).unwrap();
        let states = object_states(&p, &obs).unwrap();
        let get = |o: &str| {
            states
                .iter()
                .find(|s| s.object == o)
                .unwrap_or_else(|| panic!("{o}"))
        };
        let hdd = get("disk hdd0");
        assert!(
            hdd.before
                .as_ref()
                .unwrap()
                .contains("drive write cache: off")
        );
        assert!(
            hdd.after
                .as_ref()
                .unwrap()
                .contains("drive write cache: on")
        );
        assert!(
            hdd.after
                .as_ref()
                .unwrap()
                .contains("used by: mirror data0 (md")
        );
        let m = get("mirror data0");
        assert_eq!(m.before.as_deref(), Some("mirror data0: absent\n"));
        let after = m.after.as_ref().unwrap();
        assert!(
            after.contains("member hdd0 (sdc) slot 1, write-mostly"),
            "{after}"
        );
        assert!(after.contains("member ssd0 (sda) slot 0\n"), "{after}");
        assert!(
            after.contains("bitmap: internal, chunk 64.00 MiB"),
            "{after}"
        );
        let conf = get("file /etc/mdadm/mdadm.conf");
        assert!(
            conf.after
                .as_ref()
                .unwrap()
                .contains("ARRAY /dev/md/data0 metadata=1.2 UUID=")
        );
        let lv = get("lv vg0/nextcloud");
        assert!(
            lv.after
                .as_ref()
                .unwrap()
                .contains("800.00 GiB, writecache, active")
        );
        let cv = get("lv vg0/nextcloud_wc");
        assert!(
            cv.after
                .as_ref()
                .unwrap()
                .contains("attached as the writecache of vg0/nextcloud")
        );
        // Actions without state are not objects; nothing is listed twice.
        assert!(
            states
                .iter()
                .all(|s| s.object != "udev" && s.object != "initramfs")
        );
        let mut names: Vec<&str> = states.iter().map(|s| s.object.as_str()).collect();
        names.dedup();
        assert_eq!(names.len(), states.len());
        // The preview ran on a copy: the machine is untouched.
        assert_eq!(
            h.world(),
            SimHost::from_json(
                &std::fs::read_to_string(format!(
                    "{}/examples/snapshots/microserver-gen8.json",
                    env!("CARGO_MANIFEST_DIR")
                ))
                .unwrap()
            )
            .unwrap()
            .world()
        );
        assert!(h.commands().iter().all(|c| !c[0].starts_with("mdadm")));
    }

    /// Runs `p` on the simulated machine, as apply does (no journal, no output).
    fn run(h: &SimHost, p: &crate::plan::Plan, obs: &Observed) {
        crate::apply::execute(
            h,
            p,
            obs,
            &crate::apply::Journal { path: None },
            &mut std::io::sink(),
        )
        .unwrap();
    }

    #[test]
    fn a_matching_machine_has_no_objects_to_show() {
        let (d, h) = example("single-pair");
        let obs = crate::machine::observe_for(&h, Some(&d)).unwrap();
        let p = plan(&d, &obs, Policy::default()).unwrap();
        run(&h, &p, &obs);
        let obs = crate::machine::observe_for(&h, Some(&d)).unwrap();
        let p = plan(&d, &obs, Policy::default()).unwrap();
        assert_eq!(object_states(&p, &obs), Some(vec![]));
    }

    /// The basis is taken only when read: the text plan of a converged machine does not serialize
    /// and hash the observation; the JSON, the shell script and a new array's UUID read it, and it
    /// is the observation's fingerprint however it was taken.
    #[test]
    fn the_basis_is_taken_only_where_it_is_read() {
        use crate::plan::fingerprint::fingerprint;
        use crate::render::{Format, render};
        let (d, h) = example("microserver-gen8");
        let fresh = crate::machine::observe_for(&h, Some(&d)).unwrap();
        let p = review(&d, &fresh, Policy::default()).unwrap();
        assert!(
            p.steps.iter().any(|s| s.step.symbol() == '+'),
            "a fresh machine has arrays to create"
        );
        assert!(
            p.basis.is_taken(),
            "a new array's UUID is seeded by the basis"
        );
        assert_eq!(p.basis.as_str(), fingerprint(&fresh));
        run(&h, &p, &fresh);
        let obs = crate::machine::observe_for(&h, Some(&d)).unwrap();
        let p = review(&d, &obs, Policy::default()).unwrap();
        assert!(p.is_empty() && p.refused.is_empty());
        for format in [Format::Text, Format::Markdown] {
            render(&p, format, false);
        }
        assert!(
            !p.basis.is_taken(),
            "printing a converged plan reads no basis"
        );
        assert!(
            render(&p, Format::Shell, false).contains(&format!("# basis {}\n", fingerprint(&obs)))
        );
        assert!(p.basis.is_taken());
        let p = review(&d, &obs, Policy::default()).unwrap();
        assert_eq!(
            p.observed,
            Some(obs.clone()),
            "the saved plan carries the observation it was planned from (show plans again from it)"
        );
        assert_eq!(fingerprint(p.observed.as_ref().unwrap()), p.basis.as_str());
        let saved = crate::plan::planfile::json(&p);
        let v: serde_json::Value = serde_json::from_str(&saved).unwrap();
        assert_eq!(v["basis"], fingerprint(&obs));
        let back: crate::plan::Plan = serde_json::from_str(&saved).unwrap();
        assert_eq!(back.basis, p.basis);
        assert_ne!(back.basis, *fingerprint(&fresh));
    }
}
