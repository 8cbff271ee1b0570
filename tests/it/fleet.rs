//! The fleet artefacts stay true: the cloud-init example is what the VM runs (but for the disk
//! ids) and carries a valid hyraid.yaml; the Ansible module's name and options agree across its
//! code, its documentation, docs/fleets.md and the tested playbook; the CI workflow and cron run
//! the documented commands.

fn yaml(text: &str) -> serde_json::Value {
    hyraid::config::yaml::parse(text).unwrap().0
}

fn user_data(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with("#cloud-config\n"),
        "{path}: cloud-init needs the header"
    );
    yaml(&text)
}

fn hyraid_yaml(ud: &serde_json::Value) -> String {
    let files = ud["write_files"].as_array().unwrap();
    let f = files
        .iter()
        .find(|f| f["path"] == "/etc/hyraid/hyraid.yaml")
        .expect("write_files writes /etc/hyraid/hyraid.yaml");
    assert_eq!(f["permissions"], "0644");
    f["content"].as_str().unwrap().to_string()
}

#[test]
fn cloud_init_example_is_what_the_vm_runs() {
    let ex = user_data("examples/cloud-init/user-data.yaml");
    let vm = user_data("tests/vm/configs/cloud-init-user-data.yaml");
    // The same sequence: runcmd identical, write_files identical but for the disk ids.
    assert_eq!(ex["runcmd"], vm["runcmd"]);
    let runcmd = hyraid::import::emit(&ex["runcmd"]);
    assert!(
        runcmd.contains("- hyraid\n  - apply\n  - /etc/hyraid/hyraid.yaml\n  - --yes"),
        "{runcmd}"
    );
    let (a, b) = (hyraid_yaml(&ex), hyraid_yaml(&vm));
    let ids = |s: &str| {
        s.replace("ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A", "SSD")
            .replace("ata-ST1000LM048-2E7172_WDE00001", "HDD")
            .replace("ata-HYRAID_SSD_HYSSD1", "SSD")
            .replace("ata-HYRAID_HDD_HYHDD1", "HDD")
    };
    assert_eq!(ids(&a), ids(&b));
    // Both carry a valid file.
    for (name, text) in [("example", &a), ("vm", &b)] {
        let d = hyraid::config::load_str(name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(d.mirrors.len(), 1);
    }
}

#[test]
fn the_ansible_module_is_named_and_documented_consistently() {
    let root = "contrib/ansible/ansible_collections/hyraid/storage";
    let galaxy = yaml(&std::fs::read_to_string(format!("{root}/galaxy.yml")).unwrap());
    let fqcn = format!(
        "{}.{}.hyraid",
        galaxy["namespace"].as_str().unwrap(),
        galaxy["name"].as_str().unwrap()
    );
    assert_eq!(fqcn, "hyraid.storage.hyraid");
    let module = std::fs::read_to_string(format!("{root}/plugins/modules/hyraid.py")).unwrap();
    // The options the code accepts are the options its documentation lists.
    let spec = &module[module.find("argument_spec=dict(").unwrap()..];
    let spec = &spec[..spec.find("mutually_exclusive").unwrap()];
    let accepted: std::collections::BTreeSet<&str> = spec
        .lines()
        .filter_map(|l| l.trim().split_once("=dict(").map(|(k, _)| k))
        .filter(|k| *k != "argument_spec")
        .collect();
    let doc = &module[module.find("DOCUMENTATION").unwrap()..module.find("EXAMPLES").unwrap()];
    let doc = yaml(doc.split("\"\"\"").nth(1).unwrap());
    assert_eq!(doc["module"], "hyraid");
    let documented: std::collections::BTreeSet<&str> = doc["options"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(accepted, documented);
    assert_eq!(
        accepted,
        ["allow_destroy", "binary", "config", "content", "sim"].into()
    );
    // Every value the module returns besides Ansible's own (changed, msg) is documented.
    let ret = &module[module.find("RETURN").unwrap()..];
    let (ret, _) = hyraid::config::yaml::parse(ret.split("\"\"\"").nth(1).unwrap()).unwrap();
    let returned: std::collections::BTreeSet<&str> = ret
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        returned,
        ["diff", "plan", "rc", "stderr", "stdout", "steps"].into()
    );
    // docs/fleets.md and the tested playbook call it by that name, and docs/fleets.md names every
    // option.
    let fleets = std::fs::read_to_string("docs/fleets.md").unwrap();
    assert!(fleets.contains(&format!("{fqcn}:")));
    for o in &accepted {
        assert!(
            fleets.contains(&format!("`{o}`")),
            "docs/fleets.md does not name option {o}"
        );
    }
    let playbook = std::fs::read_to_string("contrib/ansible/tests/playbook.yml").unwrap();
    assert!(playbook.matches(&format!("{fqcn}:")).count() >= 5);
}

#[test]
fn the_ci_workflow_and_cron_use_the_documented_commands() {
    let wf = std::fs::read_to_string("examples/ci/hyraid-plan.yml").unwrap();
    let v = yaml(&wf);
    let runs: Vec<&str> = v["jobs"]["plan"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    // Installs the package, runs the tested script on every host, posts the result.
    assert!(
        runs.iter()
            .any(|r| r.contains("apt-get install -y ./hyraid.deb"))
    );
    assert!(
        runs.iter()
            .any(|r| r.contains("ci/plan-all.sh hosts snapshots > plan.md"))
    );
    assert!(
        runs.iter()
            .any(|r| r.contains("gh pr comment") && r.contains("--body-file plan.md"))
    );
    assert_eq!(v["on"]["pull_request"]["paths"][0], "hosts/**");
    let cron = std::fs::read_to_string("examples/ci/drift-check.cron").unwrap();
    assert!(cron.contains("hyraid plan /etc/hyraid/hyraid.yaml --detailed-exitcode"));
    assert!(cron.contains("hyraid observe -o /var/lib/hyraid/snapshot.json"));
}
