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
            let v: serde_json::Value =
                serde_yaml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", p.display());
            hyraid::config::load_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            n += 1;
        }
    }
    assert!(n >= 3);
    // And the schema rejects what hyraid rejects structurally.
    let bad: serde_json::Value =
        serde_yaml::from_str("version: 1\nmirrors: { m: { members: [a, b], write_mosty: auto } }")
            .unwrap();
    assert!(!validator.is_valid(&bad));
}
