//! The one boundary to the machine. [`RealHost`] runs the real tools; the simulated machine
//! (`SimHost`, in the `sim` wing beside this one) models disks, md, LVM and write caches and
//! answers the same requests in the real tools' formats.

pub mod real;
pub mod record;

pub use real::RealHost;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdOutput {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl CmdOutput {
    pub fn ok(stdout: impl Into<String>) -> CmdOutput {
        CmdOutput {
            status: 0,
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }
    pub fn fail(status: i32, stderr: impl Into<String>) -> CmdOutput {
        CmdOutput {
            status,
            stdout: String::new(),
            stderr: stderr.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("{path}: no such file or directory")]
    NotFound { path: String },
    #[error("{path}: {detail}")]
    Io { path: String, detail: String },
    #[error("cannot run `{program}`: {detail}")]
    Spawn { program: String, detail: String },
}

/// Everything hyraid does to or reads from a machine goes through this trait. `Sync`, so that
/// observation can ask a real machine several things at once.
pub trait Host: Sync {
    /// Run a program (argv, never a shell) with stdin from /dev/null and LC_ALL=C.
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError>;
    fn read_file(&self, path: &str) -> Result<String, HostError>;
    /// Write a whole file (sysfs attributes take one write).
    fn write_file(&self, path: &str, content: &str) -> Result<(), HostError>;
    /// Entry names of a directory, sorted.
    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError>;
    fn read_link(&self, path: &str) -> Result<String, HostError>;
    fn hostname(&self) -> String;
    fn is_root(&self) -> bool;
    fn is_simulated(&self) -> bool;
    /// Let time pass (waiting for a resync). The simulated host advances its syncs instead.
    fn sleep(&self, d: std::time::Duration);
    /// Does a file exist (a tool's binary)?
    fn exists(&self, path: &str) -> bool;
    /// Replace a configuration file whole: written beside it, then renamed over it.
    fn replace_file(&self, path: &str, content: &str) -> Result<(), HostError>;
    /// Whether observation runs its independent reads side by side (lsblk, the LVM report and
    /// the sysfs reads). Only a real machine does: the simulated, recorded and replayed hosts
    /// are asked in one order, so a test and a capture see the same sequence on every run.
    fn concurrent(&self) -> bool {
        false
    }
}
