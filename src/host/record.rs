//! Recording and replaying what a host answered. `hyraid observe --capture FILE` wraps the real
//! host in a [`Recorder`] and saves every request with its answer next to the observed state
//! (the file format is `observe::capture::Capture`); [`Replay`] answers the same requests from
//! such a file, so tests parse real captures exactly as the observer received them, and can
//! compare the simulated host's answers against them.

use super::{CmdOutput, Host, HostError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Exchange {
    Run {
        argv: Vec<String>,
        status: i32,
        stdout: String,
        stderr: String,
    },
    /// `content`/`entries`/`target` None: no such file; `error`: it could not be read (a
    /// device node under /dev/md answers readlink with EINVAL).
    Read {
        path: String,
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    ListDir {
        path: String,
        entries: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    ReadLink {
        path: String,
        target: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    Exists {
        path: String,
        exists: bool,
    },
}

pub struct Recorder<'a> {
    inner: &'a dyn Host,
    exchanges: Mutex<Vec<Exchange>>,
}

impl<'a> Recorder<'a> {
    pub fn new(inner: &'a dyn Host) -> Recorder<'a> {
        Recorder {
            inner,
            exchanges: Mutex::new(Vec::new()),
        }
    }

    /// The exchanges recorded so far, in the order they were answered; the record is emptied.
    pub fn take_exchanges(&self) -> Vec<Exchange> {
        std::mem::take(&mut *self.exchanges.lock().unwrap())
    }
}

/// (answer, error): a missing file is no answer and no error; other failures are recorded, so
/// a replay fails the same way.
fn found<T: Clone>(r: &Result<T, HostError>) -> (Option<T>, Option<String>) {
    match r {
        Ok(v) => (Some(v.clone()), None),
        Err(HostError::NotFound { .. }) => (None, None),
        Err(HostError::Io { detail, .. }) => (None, Some(detail.clone())),
        Err(e) => (None, Some(e.to_string())),
    }
}

/// The error a replay gives for a recorded failure.
fn replayed<T>(path: &str, error: &Option<String>) -> Result<T, HostError> {
    Err(match error {
        Some(detail) => HostError::Io {
            path: path.into(),
            detail: detail.clone(),
        },
        None => HostError::NotFound { path: path.into() },
    })
}

impl Host for Recorder<'_> {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        let out = self.inner.run(argv)?;
        self.exchanges.lock().unwrap().push(Exchange::Run {
            argv: argv.to_vec(),
            status: out.status,
            stdout: out.stdout.clone(),
            stderr: out.stderr.clone(),
        });
        Ok(out)
    }
    fn read_file(&self, path: &str) -> Result<String, HostError> {
        let r = self.inner.read_file(path);
        let (content, error) = found(&r);
        self.exchanges.lock().unwrap().push(Exchange::Read {
            path: path.into(),
            content,
            error,
        });
        r
    }
    fn write_file(&self, path: &str, _content: &str) -> Result<(), HostError> {
        Err(HostError::Io {
            path: path.into(),
            detail: "a capture only observes".into(),
        })
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
        let r = self.inner.list_dir(path);
        let (entries, error) = found(&r);
        self.exchanges.lock().unwrap().push(Exchange::ListDir {
            path: path.into(),
            entries,
            error,
        });
        r
    }
    fn read_link(&self, path: &str) -> Result<String, HostError> {
        let r = self.inner.read_link(path);
        let (target, error) = found(&r);
        self.exchanges.lock().unwrap().push(Exchange::ReadLink {
            path: path.into(),
            target,
            error,
        });
        r
    }
    fn hostname(&self) -> String {
        self.inner.hostname()
    }
    fn is_root(&self) -> bool {
        self.inner.is_root()
    }
    fn is_simulated(&self) -> bool {
        self.inner.is_simulated()
    }
    fn sleep(&self, d: std::time::Duration) {
        self.inner.sleep(d)
    }
    fn exists(&self, path: &str) -> bool {
        let e = self.inner.exists(path);
        self.exchanges.lock().unwrap().push(Exchange::Exists {
            path: path.into(),
            exists: e,
        });
        e
    }
    fn replace_file(&self, path: &str, _content: &str) -> Result<(), HostError> {
        Err(HostError::Io {
            path: path.into(),
            detail: "a capture only observes".into(),
        })
    }
}

/// Answers requests from a capture; a request that was not captured is an error. When a
/// request was captured more than once, the first answer is given.
pub struct Replay {
    hostname: String,
    exchanges: Vec<Exchange>,
    /// The first exchange of each request, by (kind, path or argv).
    index: HashMap<(u8, String), usize>,
}

fn request_key(e: &Exchange) -> (u8, String) {
    match e {
        Exchange::Run { argv, .. } => (0, argv.join("\0")),
        Exchange::Read { path, .. } => (1, path.clone()),
        Exchange::ListDir { path, .. } => (2, path.clone()),
        Exchange::ReadLink { path, .. } => (3, path.clone()),
        Exchange::Exists { path, .. } => (4, path.clone()),
    }
}

impl Replay {
    /// Replay the `exchanges` a host named `hostname` answered.
    pub fn new(hostname: String, exchanges: Vec<Exchange>) -> Replay {
        let mut index = HashMap::new();
        for (i, e) in exchanges.iter().enumerate() {
            index.entry(request_key(e)).or_insert(i);
        }
        Replay {
            hostname,
            exchanges,
            index,
        }
    }

    fn answer(&self, kind: u8, key: String) -> Option<&Exchange> {
        self.index.get(&(kind, key)).map(|&i| &self.exchanges[i])
    }

    /// An lsblk asked for more columns than a capture made by an earlier hyraid has (a column
    /// added since, such as PARTTYPE): the captured answer, whose JSON lacks the new columns, as
    /// lsblk's own output lacks a column it was not asked for. Everything but `-o` must match.
    fn older_lsblk(&self, argv: &[String]) -> Option<&Exchange> {
        let o = argv.iter().position(|a| a == "-o")?;
        let want: Vec<&str> = argv.get(o + 1)?.split(',').collect();
        self.exchanges.iter().find(|e| match e {
            Exchange::Run { argv: got, .. } => {
                got.len() == argv.len()
                    && got[0] == "lsblk"
                    && got
                        .iter()
                        .zip(argv)
                        .enumerate()
                        .all(|(i, (g, a))| i == o + 1 || g == a)
                    && got[o + 1].split(',').all(|c| want.contains(&c))
            }
            _ => false,
        })
    }
}

impl Host for Replay {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        let captured = self.answer(0, argv.join("\0"));
        let captured = match captured {
            None if argv.first().is_some_and(|p| p == "lsblk") => self.older_lsblk(argv),
            c => c,
        };
        match captured {
            Some(Exchange::Run {
                status,
                stdout,
                stderr,
                ..
            }) => Ok(CmdOutput {
                status: *status,
                stdout: stdout.clone(),
                stderr: stderr.clone(),
            }),
            _ => Err(HostError::Spawn {
                program: argv.join(" "),
                detail: "not in the capture".into(),
            }),
        }
    }
    fn read_file(&self, path: &str) -> Result<String, HostError> {
        match self.answer(1, path.into()) {
            Some(Exchange::Read {
                content: Some(c), ..
            }) => Ok(c.clone()),
            Some(Exchange::Read { error, .. }) => replayed(path, error),
            _ => Err(HostError::NotFound { path: path.into() }),
        }
    }
    fn write_file(&self, path: &str, _content: &str) -> Result<(), HostError> {
        Err(HostError::Io {
            path: path.into(),
            detail: "a replayed capture cannot change".into(),
        })
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
        match self.answer(2, path.into()) {
            Some(Exchange::ListDir {
                entries: Some(v), ..
            }) => Ok(v.clone()),
            Some(Exchange::ListDir { error, .. }) => replayed(path, error),
            _ => Err(HostError::NotFound { path: path.into() }),
        }
    }
    fn read_link(&self, path: &str) -> Result<String, HostError> {
        match self.answer(3, path.into()) {
            Some(Exchange::ReadLink {
                target: Some(t), ..
            }) => Ok(t.clone()),
            Some(Exchange::ReadLink { error, .. }) => replayed(path, error),
            _ => Err(HostError::NotFound { path: path.into() }),
        }
    }
    fn hostname(&self) -> String {
        self.hostname.clone()
    }
    fn is_root(&self) -> bool {
        true
    }
    fn is_simulated(&self) -> bool {
        true
    }
    fn sleep(&self, _d: std::time::Duration) {}
    fn exists(&self, path: &str) -> bool {
        matches!(
            self.answer(4, path.into()),
            Some(Exchange::Exists { exists: true, .. })
        )
    }
    fn replace_file(&self, path: &str, _content: &str) -> Result<(), HostError> {
        Err(HostError::Io {
            path: path.into(),
            detail: "a replayed capture cannot change".into(),
        })
    }
}
