//! The imported file as a person reads it: commented YAML.

use super::Imported;
use crate::config::scalar::needs_quotes;

/// The imported configuration as a commented YAML file.
pub fn to_yaml(imp: &Imported) -> String {
    let mut out = String::new();
    // Editors with the YAML language server check the file against the installed schema.
    out.push_str(&format!(
        "# yaml-language-server: $schema={}/hyraid.schema.json\n#\n",
        crate::observe::json_schema::INSTALLED_DIR
    ));
    out.push_str("# Written by `hyraid import` from what is on this machine now.\n");
    out.push_str("# Disks got the names hyraid's udev rule gives them, else role names (ssdN, hddN, nvmeN); arrays without a\n# /dev/md/NAME their kernel name (they are adopted by UUID and keep their device): rename them freely,\n# they are only referred to by name (a disk whose drive cache hyraid keeps is renamed in its udev rule too).\n");
    if imp.notes.is_empty() {
        out.push_str("# `hyraid plan` on this file shows no changes.\n");
    }
    for n in &imp.notes {
        out.push_str(&format!("# {n}\n"));
    }
    for s in &imp.skipped {
        out.push_str(&format!("# not imported: {s}\n"));
    }
    for b in &imp.boot {
        out.push_str(&format!("# boot: {b}\n"));
    }
    out.push_str(&at_mirrors(&emit(&imp.config), &imp.at_mirror));
    out
}

/// The emitted file with each mirror's notes as comments right above it.
fn at_mirrors(yaml: &str, notes: &std::collections::BTreeMap<String, Vec<String>>) -> String {
    let mut out = String::with_capacity(yaml.len());
    let mut in_mirrors = false;
    for line in yaml.lines() {
        if !line.starts_with(' ') {
            in_mirrors = line == "mirrors:";
        } else if in_mirrors
            && let Some(name) = line
                .strip_prefix("  ")
                .and_then(|l| l.strip_suffix(':'))
                .filter(|n| !n.starts_with(' '))
        {
            for n in notes.get(name).into_iter().flatten() {
                out.push_str(&format!("  # {n}\n"));
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Block YAML of a serializable value, quoted as hyraid has always written it: a string is
/// plain when it reads back as the same string (`on`, `off`, `2204E6000001`, `ssd0:raid`),
/// in single quotes when plain would read as something else (`'1.0'`, `'true'`, `''`).
pub fn emit<T: serde::Serialize>(value: &T) -> String {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.yaml_12 = true;
    options.no_lang_directive = true;
    let yaml = serde_saphyr::to_string_with_options(value, options).expect("config serializes");
    let mut out = String::with_capacity(yaml.len());
    for line in yaml.lines() {
        out.push_str(&requote(line));
        out.push('\n');
    }
    out
}

/// A line whose value is a quoted scalar, quoted the hyraid way. In double quotes only `\"`
/// and `\\` escapes are undone: a string with control characters stays as it is.
fn requote(line: &str) -> String {
    let (quote, unquote): (char, fn(&str) -> Option<String>) = if line.ends_with('"') {
        ('"', unescape_double)
    } else if line.ends_with('\'') {
        ('\'', unescape_single)
    } else {
        return line.to_string();
    };
    let body = &line[..line.len() - 1];
    for sep in [": ", "- "] {
        let open = format!("{sep}{quote}");
        let mut from = 0;
        while let Some(i) = body[from..].find(&open).map(|i| i + from) {
            if let Some(s) = unquote(&body[i + open.len()..]) {
                return format!("{}{}", &line[..i + sep.len()], scalar(&s));
            }
            from = i + 1;
        }
    }
    line.to_string()
}

/// The text inside a double-quoted scalar, if it has only `\"`/`\\` escapes.
fn unescape_double(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\')) => out.push(e),
                _ => return None,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

/// The text inside a single-quoted scalar (`''` is a quote).
fn unescape_single(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\'' && chars.next() != Some('\'') {
            return None;
        }
        out.push(c);
    }
    Some(out)
}

fn scalar(s: &str) -> String {
    if !needs_quotes(s) && plain_allowed(s) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// Whether libyaml's emitter writes `s` as a plain scalar in block context (its
/// `yaml_emitter_analyze_scalar`): no edge spaces, no indicator that starts a token,
/// no `: ` or ` #`, no document marker, printable characters only.
fn plain_allowed(s: &str) -> bool {
    let b: Vec<char> = s.chars().collect();
    let Some(&first) = b.first() else {
        return false;
    };
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    if first == ' ' || b.last() == Some(&' ') {
        return false;
    }
    let ws = |i: usize| b.get(i).is_none_or(|c| *c == ' ');
    for (i, &c) in b.iter().enumerate() {
        if c.is_control() || c == '\u{feff}' {
            return false;
        }
        let block_indicator = if i == 0 {
            matches!(
                c,
                '#' | ','
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '&'
                    | '*'
                    | '!'
                    | '|'
                    | '>'
                    | '\''
                    | '"'
                    | '%'
                    | '@'
                    | '`'
            ) || (matches!(c, '?' | ':' | '-') && ws(i + 1))
        } else {
            (c == ':' && ws(i + 1)) || (c == '#' && b[i - 1] == ' ')
        };
        if block_indicator {
            return false;
        }
    }
    true
}
