//! What a step runs, and how a command reads as a shell line: the executor runs the commands
//! and logs their lines, the shell renderer prints the same lines.

use serde::{Deserialize, Serialize};

/// One thing to run: a program (argv, never a shell) or a write of one value to a sysfs file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Command {
    Run {
        argv: Vec<String>,
        /// Exit codes that mean success (mdadm --wait exits 1 when nothing was running).
        ok_exit: Vec<i32>,
        /// Whose passphrase goes to its standard input (`mirror data0`), as the person typed it
        /// (no newline); the command reads it as `--key-file -`. Never written in a plan.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        passphrase_of: Option<String>,
        /// The environment variable the passphrase goes to instead of stdin (`PASSWORD`, which
        /// systemd-cryptenroll reads and erases: it cannot read a key file from a pipe).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        passphrase_env: Option<String>,
    },
    Write {
        path: String,
        value: String,
    },
    /// Replace a configuration file whole (atomically: written beside it, then renamed).
    ReplaceFile {
        path: String,
        content: String,
    },
    /// Wait until the array's `sync_action` is idle (hyraid polls sysfs and shows progress).
    /// `array` is its name under /dev/md/, or its device (`/dev/md0`) when adopted by UUID.
    WaitIdle {
        array: String,
    },
    /// Wait until no pvmove is left in the VG (hyraid polls `lvs -a` and shows `copy_percent`).
    WaitMove {
        vg: String,
    },
}

impl Command {
    pub(super) fn run(argv: &[&str]) -> Command {
        Command::Run {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            ok_exit: vec![0],
            passphrase_of: None,
            passphrase_env: None,
        }
    }
    pub(super) fn run_owned(argv: Vec<String>) -> Command {
        Command::Run {
            argv,
            ok_exit: vec![0],
            passphrase_of: None,
            passphrase_env: None,
        }
    }
    /// A program whose success is one of `codes` (and not 0, unless listed). Without 0, success
    /// is also that it printed nothing: a probe that found nothing (`blkid -p`).
    pub(super) fn run_expecting(argv: &[&str], codes: &[i32]) -> Command {
        Command::Run {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            ok_exit: codes.to_vec(),
            passphrase_of: None,
            passphrase_env: None,
        }
    }
    /// A program that reads the passphrase of `of` from the environment variable `var`.
    pub(super) fn with_passphrase_env(
        argv: Vec<String>,
        of: &impl std::fmt::Display,
        var: &str,
    ) -> Command {
        Command::Run {
            argv,
            ok_exit: vec![0],
            passphrase_of: Some(of.to_string()),
            passphrase_env: Some(var.to_string()),
        }
    }
    /// A cryptsetup command: one that names the key `-` reads the passphrase of `of` on stdin.
    pub(super) fn crypt(argv: Vec<String>, of: &impl std::fmt::Display) -> Command {
        let passphrase_of = argv
            .iter()
            .any(|a| a == crate::config::encryption::PASSPHRASE)
            .then(|| of.to_string());
        Command::Run {
            argv,
            ok_exit: vec![0],
            passphrase_of,
            passphrase_env: None,
        }
    }
}

/// The path of the array a [`Command::WaitIdle`] names: /dev/md/NAME, or the device itself.
pub fn wait_path(array: &str) -> String {
    if array.starts_with("/dev/") {
        array.to_string()
    } else {
        format!("/dev/md/{array}")
    }
}

/// The shell function a script's passphrase commands call: it asks at the terminal, without
/// echo (given back on an interrupt too), and writes the passphrase without a newline (as
/// `hyraid apply` gives it).
pub const PASSPHRASE_FUNCTION: &str = "hyraid_passphrase() { printf 'Passphrase of %s: ' \"$1\" >/dev/tty; trap 'stty echo </dev/tty' EXIT INT TERM; stty -echo </dev/tty; IFS= read -r p </dev/tty; stty echo </dev/tty; trap - EXIT INT TERM; echo >/dev/tty; printf '%s' \"$p\"; }";

/// Quote one word for a POSIX shell (single quotes; plain words stay bare).
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// One command as a shell line, exactly as the executor runs it.
pub fn command_line(c: &Command) -> String {
    match c {
        Command::Run {
            argv,
            ok_exit,
            passphrase_of,
            passphrase_env,
        } => {
            let mut line = argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ");
            // The shell script defines the function (`PASSPHRASE_FUNCTION`); apply reads the
            // passphrase at the terminal once, before the first step, and gives it alike.
            match (passphrase_of, passphrase_env) {
                (Some(of), Some(var)) => {
                    line = format!("{var}=\"$(hyraid_passphrase {})\" {line}", quote(of))
                }
                (Some(of), None) => line = format!("hyraid_passphrase {} | {line}", quote(of)),
                _ => {}
            }
            // Success is not 0 (`blkid -p` finding nothing exits 2): it is that exit and nothing
            // printed (a device it could not open exits 2 too, with an error), each checked on a
            // line of its own (`set -e` ignores a failure on the left of `&&`).
            if !ok_exit.contains(&0) {
                let codes: Vec<String> = ok_exit.iter().map(i32::to_string).collect();
                return format!(
                    "r=0; o=$({line} 2>&1) || r=$?\ncase $r in {}) ;; *) false ;; esac\n[ -z \"$o\" ]",
                    codes.join("|")
                );
            }
            let extra: Vec<String> = ok_exit
                .iter()
                .filter(|c| **c != 0)
                .map(|c| format!("[ $? -eq {c} ]"))
                .collect();
            if extra.is_empty() {
                line
            } else {
                format!("{line} || {}", extra.join(" || "))
            }
        }
        Command::Write { path, value } => {
            format!("printf '%s\\n' {} > {}", quote(value), quote(path))
        }
        Command::ReplaceFile { path, content } => {
            let mut marker = String::from("HYRAID_EOF");
            while content.contains(&marker) {
                marker.push('_');
            }
            format!(
                "cat > {}.hyraid-new <<'{marker}' && mv {0}.hyraid-new {0}\n{content}{marker}",
                quote(path)
            )
        }
        // hyraid polls the same files (and shows progress) instead of running a loop: busy while
        // sync_action is not idle, or a resync is pending (resync_start) on a writable array.
        Command::WaitIdle { array } => format!(
            "md=/sys/block/$(basename \"$(readlink -f {})\")/md; while [ \"$(cat $md/sync_action)\" != idle ] || {{ [ \"$(cat $md/resync_start)\" != none ] && ! grep -qx -e read-auto -e readonly $md/array_state; }}; do sleep 1; done",
            wait_path(array)
        ),
        // A pvmove LV's attr starts with `p`; it is gone once the move is finished.
        Command::WaitMove { vg } => format!(
            "while lvs -a --noheadings -o lv_attr {} | grep -q '^ *p'; do sleep 1; done",
            quote(vg)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote("/dev/md/data0"), "/dev/md/data0");
        assert_eq!(
            quote("high_watermark=50 writeback_jobs=1024"),
            "'high_watermark=50 writeback_jobs=1024'"
        );
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(reboot)"), "'$(reboot)'");
        assert_eq!(quote(""), "''");
    }
}
