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

/// A program [`Host::start`]ed and not yet waited for. Dropped unwaited (an error, a bad file
/// say, ended the command first), it is not waited for: the error is reported at once, and the
/// program, which only reads and runs in a process group of its own, ends by itself.
pub struct Started(Pending);

enum Pending {
    /// Run already, where it was started (a host that answers in one order).
    Done(Result<CmdOutput, HostError>),
    /// Running beside the caller (a real machine).
    Running(std::thread::JoinHandle<Result<CmdOutput, HostError>>),
}

impl Started {
    /// What a host that runs nothing side by side answered at once.
    pub fn done(r: Result<CmdOutput, HostError>) -> Started {
        Started(Pending::Done(r))
    }
    /// A program running in a thread of its own.
    pub fn running(h: std::thread::JoinHandle<Result<CmdOutput, HostError>>) -> Started {
        Started(Pending::Running(h))
    }
    /// Wait for the program to end; its output, as [`Host::run`] gives it.
    pub fn wait(self) -> Result<CmdOutput, HostError> {
        match self.0 {
            Pending::Done(r) => r,
            Pending::Running(h) => h.join().unwrap_or_else(|_| {
                Err(HostError::Spawn {
                    program: String::new(),
                    detail: "the thread running it panicked".into(),
                })
            }),
        }
    }
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
    /// Whether alerts leave this host (mail, HTTP, a program). A simulated machine sends none:
    /// its sinks say what they would have sent.
    fn sends_alerts(&self) -> bool {
        !self.is_simulated()
    }
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
    /// Run a program with `input` on its standard input and `env` added to its environment
    /// (a mail transport, an alert program), for at most `timeout`. Hosts that cannot say so.
    fn run_input(
        &self,
        argv: &[String],
        _input: &str,
        _env: &[(String, String)],
        _timeout: std::time::Duration,
    ) -> Result<CmdOutput, HostError> {
        Err(HostError::Spawn {
            program: argv.join(" "),
            detail: "this host runs no program with input".into(),
        })
    }
    /// Start a program as [`Host::run`] would run it and go on; [`Started::wait`] gives its
    /// output. A host that is not [`Host::concurrent`] runs it here and now, so its requests keep
    /// one order.
    fn start(&self, argv: &[String]) -> Started {
        Started::done(self.run(argv))
    }
}
