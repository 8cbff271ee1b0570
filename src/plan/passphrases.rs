//! Which passphrases a plan's commands read on standard input (`--key-file -`): apply asks
//! them before the first step, the shell script at each command.

use super::{Command, Plan, Step};

/// The objects whose passphrase the plan's commands read, in plan order, each once: whether the
/// plan formats its header (a new passphrase is asked twice).
pub fn needed(p: &Plan) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for s in &p.steps {
        let new = match &s.step {
            Step::FormatLuks(_) => true,
            Step::AddLuksKey(a) => a.key_file == crate::config::encryption::PASSPHRASE,
            _ => false,
        };
        for c in s.step.commands() {
            let Command::Run {
                passphrase_of: Some(o),
                ..
            } = c
            else {
                continue;
            };
            match out.iter_mut().find(|(x, _)| *x == o) {
                Some((_, n)) => *n |= new,
                None => out.push((o, new)),
            }
        }
    }
    out
}
