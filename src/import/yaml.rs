//! The imported file as a person reads it: commented YAML.

use super::Imported;

/// The imported configuration as a commented YAML file.
pub fn to_yaml(imp: &Imported) -> String {
    let mut out = String::new();
    // Editors with the YAML language server check the file against the installed schema.
    out.push_str(&format!(
        "# yaml-language-server: $schema={}/hyraid.schema.json\n#\n",
        crate::observe::json_schema::INSTALLED_DIR
    ));
    out.push_str("# Written by `hyraid import` from what is on this machine now.\n");
    out.push_str("# Disks got role names (ssdN, hddN, nvmeN), arrays without a /dev/md/NAME their kernel name\n# (they are adopted by UUID and keep their device): rename them freely, they are only referred to by name.\n");
    if imp.notes.is_empty() {
        out.push_str("# `hyraid plan` on this file shows no changes.\n");
    }
    for n in &imp.notes {
        out.push_str(&format!("# {n}\n"));
    }
    for s in &imp.skipped {
        out.push_str(&format!("# not imported: {s}\n"));
    }
    let yaml = serde_yaml::to_string(&imp.config).expect("config serializes");
    // `on`/`off` as a person writes them (serde_yaml quotes them for YAML 1.1 readers).
    for line in yaml.lines() {
        let line = match line.trim_start().strip_prefix("write_cache: ") {
            Some("'on'") => line.replace("'on'", "on"),
            Some("'off'") => line.replace("'off'", "off"),
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}
