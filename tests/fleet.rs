//! The fleet artefacts stay true: the cloud-init example is what the VM runs (but for the disk
//! ids) and carries a valid hyraid.yaml; the Ansible module and the CI script exist where the
//! README says.

fn user_data(path: &str) -> serde_yaml::Value {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with("#cloud-config\n"),
        "{path}: cloud-init needs the header"
    );
    serde_yaml::from_str(&text).unwrap()
}

fn hyraid_yaml(ud: &serde_yaml::Value) -> String {
    let files = ud["write_files"].as_sequence().unwrap();
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
    let runcmd = serde_yaml::to_string(&ex["runcmd"]).unwrap();
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
fn the_ansible_collection_and_ci_example_are_in_place() {
    for p in [
        "contrib/ansible/ansible_collections/hyraid/storage/galaxy.yml",
        "contrib/ansible/ansible_collections/hyraid/storage/plugins/modules/hyraid.py",
        "contrib/ansible/tests/run.sh",
        "examples/ci/hyraid-plan.yml",
        "examples/ci/plan-all.sh",
        "examples/ci/drift-check.cron",
    ] {
        assert!(std::path::Path::new(p).is_file(), "{p}");
    }
    // The workflow runs the script the README describes, on every host file.
    let wf = std::fs::read_to_string("examples/ci/hyraid-plan.yml").unwrap();
    let v: serde_yaml::Value = serde_yaml::from_str(&wf).unwrap();
    assert!(v["jobs"]["plan"]["steps"].as_sequence().unwrap().len() >= 4);
    assert!(wf.contains("ci/plan-all.sh hosts snapshots"));
}
