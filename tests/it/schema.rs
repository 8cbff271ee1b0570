//! The checked-in JSON Schema is the one generated from the file-format types, and every example
//! validates against it with an independent JSON-Schema validator.

#[test]
fn checked_in_schema_is_current() {
    let generated = serde_json::to_string_pretty(&hyraid::config::json_schema()).unwrap() + "\n";
    let on_disk = std::fs::read_to_string("schemas/hyraid.schema.json").unwrap();
    assert!(
        generated == on_disk,
        "schemas/hyraid.schema.json is stale: run `cargo run -- schema > schemas/hyraid.schema.json`"
    );
}

#[test]
fn examples_validate_against_the_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/hyraid.schema.json").unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut n = 0;
    for e in std::fs::read_dir("examples").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            let (v, _) =
                hyraid::config::yaml::parse(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", p.display());
            hyraid::config::load_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            n += 1;
        }
    }
    assert!(n >= 3);
    // And the schema rejects what hyraid rejects structurally.
    let (bad, _) = hyraid::config::yaml::parse(
        "version: 1\nmirrors: { m: { members: [a, b], write_mosty: auto } }",
    )
    .unwrap();
    assert!(!validator.is_valid(&bad));
}

/// Every key path of the schema: `disks.NAME.id`, `disks.NAME.partitions.[].name`, …
fn schema_keys(schema: &serde_json::Value) -> std::collections::BTreeSet<String> {
    fn resolve<'a>(
        root: &'a serde_json::Value,
        mut n: &'a serde_json::Value,
    ) -> &'a serde_json::Value {
        while let Some(r) = n.get("$ref").and_then(|r| r.as_str()) {
            n = &root["$defs"][r.rsplit('/').next().unwrap()];
        }
        n
    }
    fn walk(
        root: &serde_json::Value,
        n: &serde_json::Value,
        path: &str,
        out: &mut std::collections::BTreeSet<String>,
    ) {
        let n = resolve(root, n);
        for alt in ["anyOf", "oneOf"] {
            for a in n[alt].as_array().into_iter().flatten() {
                walk(root, a, path, out);
            }
        }
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        if let Some(props) = n["properties"].as_object() {
            for (k, v) in props {
                out.insert(join(k));
                walk(root, v, &join(k), out);
            }
        }
        if n["additionalProperties"].is_object() {
            walk(root, &n["additionalProperties"], &join("NAME"), out);
        }
        if n["items"].is_object() {
            walk(root, &n["items"], &join("[]"), out);
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(schema, schema, "", &mut out);
    out
}

#[test]
fn the_reference_lists_exactly_the_schema_keys() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/hyraid.schema.json").unwrap())
            .unwrap();
    let reference = std::fs::read_to_string("docs/configuration.md").unwrap();
    let section = reference
        .split("\n## Reference\n")
        .nth(1)
        .expect("docs/configuration.md has a `## Reference` section")
        .split("\n## ")
        .next()
        .unwrap();
    let documented: std::collections::BTreeSet<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect();
    let keys = schema_keys(&schema);
    assert!(
        keys.len() >= 28,
        "the walk found the schema's keys: {keys:?}"
    );
    let missing: Vec<_> = keys.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&keys).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "the reference in docs/configuration.md is out of date.\n  not documented: {missing:?}\n  not in the schema: {extra:?}"
    );
    // Every row says something.
    for l in section.lines().filter(|l| l.starts_with("| `")) {
        assert!(
            l.split('|').nth(2).is_some_and(|m| m.trim().len() > 10),
            "{l}"
        );
    }
}
