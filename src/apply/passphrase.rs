//! Passphrases a plan's cryptsetup commands read on standard input (`--key-file -`): asked at
//! the terminal once per device after the plan is confirmed and before its first command (twice
//! for a header the plan makes), or read from `--passphrase-file`. An apply that has neither (no
//! terminal, `--yes`) is refused before anything runs.

use super::ApplyError;
use crate::plan::Plan;
use crate::plan::passphrases::needed;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use zeroize::Zeroizing;

/// Where an apply gets the passphrases its plan needs.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum PassphraseSource {
    /// Nowhere: a plan that needs one is refused (`--yes`, or no terminal).
    #[default]
    None,
    /// Typed at the terminal (`/dev/tty`), without echo.
    Terminal,
    /// The first line of a file (`--passphrase-file`), for every device that needs one.
    File(std::path::PathBuf),
    /// Given by a library caller, for every device that needs one.
    Given(Zeroizing<String>),
}

impl std::fmt::Debug for PassphraseSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PassphraseSource::None => write!(f, "None"),
            PassphraseSource::Terminal => write!(f, "Terminal"),
            PassphraseSource::File(p) => write!(f, "File({})", p.display()),
            PassphraseSource::Given(_) => write!(f, "Given"),
        }
    }
}

/// The passphrases of an apply, by the object whose header they open (`mirror data0`); one
/// apply's rounds share them, so each is asked once.
#[derive(Clone, Default)]
pub struct Passphrases {
    pub source: PassphraseSource,
    got: Arc<Mutex<BTreeMap<String, Zeroizing<String>>>>,
    /// The line `--passphrase-file` gave, read once: a pipe or /dev/stdin has it only once.
    from_file: Arc<Mutex<Option<Zeroizing<String>>>>,
}

impl std::fmt::Debug for Passphrases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the passphrases themselves.
        write!(f, "Passphrases({:?}, {} held)", self.source, self.held())
    }
}

impl Passphrases {
    pub fn new(source: PassphraseSource) -> Passphrases {
        Passphrases {
            source,
            got: Default::default(),
            from_file: Default::default(),
        }
    }
    fn held(&self) -> usize {
        self.got.lock().map(|m| m.len()).unwrap_or(0)
    }
    /// The passphrase of `object`, when it was gathered.
    pub fn of(&self, object: &str) -> Option<Zeroizing<String>> {
        self.got.lock().ok()?.get(object).cloned()
    }

    /// Refuse a plan that needs a passphrase this apply cannot get, before it is confirmed.
    pub fn check(&self, p: &Plan) -> Result<(), ApplyError> {
        let missing: Vec<String> = needed(p)
            .into_iter()
            .map(|(o, _)| o)
            .filter(|o| self.of(o).is_none())
            .collect();
        if missing.is_empty() || self.source != PassphraseSource::None {
            return Ok(());
        }
        Err(ApplyError::NoPassphrase {
            objects: missing.join(", "),
        })
    }

    /// Get every passphrase the plan needs and this apply does not hold yet.
    pub fn gather(&self, p: &Plan) -> Result<(), ApplyError> {
        self.check(p)?;
        for (object, new) in needed(p) {
            if self.of(&object).is_some() {
                continue;
            }
            let pass = self.read(&object, new)?;
            if let Ok(mut m) = self.got.lock() {
                m.insert(object, pass);
            }
        }
        Ok(())
    }

    fn read(&self, object: &str, new: bool) -> Result<Zeroizing<String>, ApplyError> {
        let fail = |detail: String| ApplyError::Passphrase {
            object: object.to_string(),
            detail,
        };
        let pass = match &self.source {
            PassphraseSource::None => return Err(fail("no terminal to ask on".into())),
            PassphraseSource::Given(p) => p.clone(),
            PassphraseSource::File(path) => {
                let mut once = self
                    .from_file
                    .lock()
                    .map_err(|_| fail("the passphrase file's lock was poisoned".into()))?;
                if once.is_none() {
                    let text = Zeroizing::new(
                        std::fs::read_to_string(path)
                            .map_err(|e| fail(format!("{}: {e}", path.display())))?,
                    );
                    *once = Some(Zeroizing::new(
                        text.lines().next().unwrap_or_default().to_string(),
                    ));
                }
                once.clone().unwrap_or_default()
            }
            PassphraseSource::Terminal => {
                let ask = |prompt: &str| {
                    rpassword::prompt_password(prompt)
                        .map(Zeroizing::new)
                        .map_err(|e| fail(format!("reading the terminal: {e}")))
                };
                let first = ask(&format!("Passphrase of {object}: "))?;
                if new && *ask(&format!("Passphrase of {object} again: "))? != *first {
                    return Err(fail("the two passphrases differ".into()));
                }
                first
            }
        };
        if pass.is_empty() {
            return Err(fail("the passphrase is empty".into()));
        }
        Ok(pass)
    }
}
