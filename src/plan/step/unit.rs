//! systemd units hyraid keeps: its check timers enabled and disabled, the release's own check
//! timers switched off when the file says so, and md's monitor restarted to read mdadm.conf.

use super::{Address, Command, StepKind};
use serde::{Deserialize, Serialize};

/// Enable units (their links in `*.wants/`); with `now`, systemd rereads its unit files first
/// and starts them (a machine where systemd does not run gets the links only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnableUnits {
    pub units: Vec<String>,
    pub now: bool,
    /// Enabled units whose files changed: restarted after the reload (a timer re-armed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restart: Vec<String>,
}

impl StepKind for EnableUnits {
    fn commands(&self) -> Vec<Command> {
        let mut c = Vec::new();
        if self.now {
            c.push(Command::run(&["systemctl", "daemon-reload"]));
        }
        if !self.units.is_empty() {
            let mut argv = vec!["systemctl".to_string(), "enable".into()];
            if self.now {
                argv.push("--now".into());
            }
            argv.extend(self.units.iter().cloned());
            c.push(Command::run_owned(argv));
        }
        if !self.restart.is_empty() {
            let mut argv = vec!["systemctl".to_string(), "restart".into()];
            argv.extend(self.restart.iter().cloned());
            c.push(Command::run_owned(argv));
        }
        c
    }
    fn symbol(&self) -> char {
        if self.units.is_empty() { '~' } else { '+' }
    }
    fn object(&self) -> Address {
        Address::Units(self.units.iter().chain(&self.restart).cloned().collect())
    }
    fn summary(&self) -> String {
        match (self.units.is_empty(), self.now) {
            (true, _) => "re-arm with the changed schedule".into(),
            (false, true) if self.restart.is_empty() => "enable and start".into(),
            (false, true) => "enable and start; re-arm the changed".into(),
            (false, false) => "enable (started at the next boot with systemd)".into(),
        }
    }
}

/// Disable units (and stop them where systemd runs), then remove those of their files hyraid
/// wrote (`remove`); the release's own unit files are never removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisableUnits {
    pub units: Vec<String>,
    pub now: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<String>,
}

impl StepKind for DisableUnits {
    fn commands(&self) -> Vec<Command> {
        let mut c = Vec::new();
        if !self.units.is_empty() {
            let mut argv = vec!["systemctl".to_string(), "disable".into()];
            if self.now {
                argv.push("--now".into());
            }
            argv.extend(self.units.iter().cloned());
            c.push(Command::run_owned(argv));
        }
        for f in &self.remove {
            c.push(Command::run_owned(vec![
                "rm".into(),
                "-f".into(),
                f.clone(),
            ]));
        }
        if self.now && !self.remove.is_empty() {
            c.push(Command::run(&["systemctl", "daemon-reload"]));
        }
        c
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        if self.units.is_empty() {
            return Address::Units(
                self.remove
                    .iter()
                    .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
                    .collect(),
            );
        }
        Address::Units(self.units.clone())
    }
    fn summary(&self) -> String {
        match (self.units.is_empty(), self.remove.is_empty()) {
            (false, true) => "disable".into(),
            (false, false) => format!("disable, and remove {}", self.remove.join(", ")),
            (true, _) => format!("remove {}", self.remove.join(", ")),
        }
    }
}

/// Restart a running service (md's monitor reads mdadm.conf only when it starts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartUnit {
    pub unit: String,
}

impl StepKind for RestartUnit {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "systemctl".into(),
            "restart".into(),
            self.unit.clone(),
        ])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Units(vec![self.unit.clone()])
    }
    fn summary(&self) -> String {
        "restart".into()
    }
}
