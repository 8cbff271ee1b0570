//! `hyraid import` writes YAML exactly as it always has: the files below were written by the
//! serde_yaml 0.9 serializer (libyaml's emitter) from the imported configurations next to them,
//! and every string is quoted as libyaml quoted it.

use hyraid::config::raw::RawConfig;

#[test]
fn imported_files_are_byte_identical() {
    let mut n = 0;
    for e in std::fs::read_dir("tests/fixtures/import-yaml").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let config: RawConfig =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let want = std::fs::read_to_string(p.with_extension("yaml")).unwrap();
        assert_eq!(hyraid::import::emit(&config), want, "{}", p.display());
        n += 1;
    }
    assert!(n >= 19);
}

/// A string → what follows `k:` in the file (serde_yaml 0.9.34's output).
const QUOTING: &[(&str, &str)] = &[
    ("", " ''"),
    ("on", " on"),
    ("off", " off"),
    ("yes", " yes"),
    ("no", " no"),
    ("y", " y"),
    ("n", " n"),
    ("true", " 'true'"),
    ("False", " 'False'"),
    ("null", " 'null'"),
    ("~", " '~'"),
    ("1.0", " '1.0'"),
    ("1.2", " '1.2'"),
    ("0.90", " '0.90'"),
    ("0755", " '0755'"),
    ("00", " '00'"),
    ("2204E6000001", " 2204E6000001"),
    ("12:30", " 12:30"),
    ("2024-01-01", " 2024-01-01"),
    ("1_000", " 1_000"),
    ("0o17", " '0o17'"),
    ("0x1F", " '0x1F'"),
    (".inf", " '.inf'"),
    (".", " ."),
    ("---", " '---'"),
    ("-", " '-'"),
    ("- a", " '- a'"),
    ("-a", " -a"),
    ("a: b", " 'a: b'"),
    ("a:b", " a:b"),
    ("a #b", " 'a #b'"),
    ("a#b", " a#b"),
    ("#a", " '#a'"),
    ("ssd0:raid", " ssd0:raid"),
    ("/dev/md127", " /dev/md127"),
    (
        "299ac1e1:b48af26d:b272044d:c4cd2cc2",
        " 299ac1e1:b48af26d:b272044d:c4cd2cc2",
    ),
    ("WD-WCC4N1234567", " WD-WCC4N1234567"),
    ("100%FREE", " 100%FREE"),
    ("%x", " '%x'"),
    ("@x", " '@x'"),
    ("*x", " '*x'"),
    ("&x", " '&x'"),
    ("!x", " '!x'"),
    ("|x", " '|x'"),
    (">x", " '>x'"),
    ("[x]", " '[x]'"),
    ("{x}", " '{x}'"),
    ("x,y", " x,y"),
    ("?x", " ?x"),
    ("? x", " '? x'"),
    (" x", " ' x'"),
    ("x ", " 'x '"),
    ("it's", " it's"),
    ("say \"hi\"", " say \"hi\""),
    ("a\tb", " \"a\\tb\""),
    ("18446744073709551616", " '18446744073709551616'"),
    ("1e3", " '1e3'"),
    ("+1", " '+1'"),
    ("-1", " '-1'"),
];

#[test]
fn strings_are_quoted_as_libyaml_quoted_them() {
    for (s, want) in QUOTING {
        let m: std::collections::BTreeMap<&str, &str> = [("k", *s)].into();
        assert_eq!(hyraid::import::emit(&m), format!("k:{want}\n"), "{s:?}");
        let l: std::collections::BTreeMap<&str, Vec<&str>> = [("k", vec![*s])].into();
        assert_eq!(
            hyraid::import::emit(&l),
            format!("k:\n- {}\n", want.trim_start()),
            "{s:?}"
        );
        // And each reads back as the same string.
        let (v, _) = hyraid::config::yaml::parse(&format!("k:{want}\n")).unwrap();
        assert_eq!(v["k"], *s, "{s:?}");
    }
}
