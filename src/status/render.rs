//! `hyraid status` as text: one block per finding (what, why, fix), then the counts.

use super::{Finding, Severity};

pub fn render_text(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "Healthy: no findings.\n".into();
    }
    let mut o = String::new();
    if findings.iter().all(|f| f.severity == Severity::Info) {
        o.push_str("Healthy: nothing to fix.\n\n");
    }
    for x in findings {
        let tag = match x.severity {
            Severity::Error => "ERROR",
            Severity::Degraded => "DEGRADED",
            Severity::Refused => "REFUSED",
            Severity::Lint => "lint",
            Severity::Info => "info",
        };
        o.push_str(&format!(
            "{tag:>8}  {}: {}\n          why: {}\n          fix: {}\n",
            x.object, x.message, x.reason, x.fix
        ));
        if let (Severity::Lint, Some(name)) = (x.severity, x.lint) {
            o.push_str(&format!(
                "          or, chosen with open eyes, accept it in the file: `accept: {{ {}: [{name}] }}`\n",
                x.object
            ));
        }
    }
    let count = |s| findings.iter().filter(|f| f.severity == s).count();
    o.push_str(&format!(
        "\n{} error(s), {} degraded, {} refused, {} lint(s), {} info.\n",
        count(Severity::Error),
        count(Severity::Degraded),
        count(Severity::Refused),
        count(Severity::Lint),
        count(Severity::Info)
    ));
    o
}
