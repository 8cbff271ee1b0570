//! One apply at a time: an exclusive flock, released by the kernel when the process ends
//! (also when it crashes). The holder's pid is written into the file for the error message.

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another hyraid apply (pid {pid}) holds {path}; wait for it to finish (hyraid never runs two applies at once)"
    )]
    Held { path: PathBuf, pid: String },
    #[error("cannot open lock file {path}: {detail}")]
    Io { path: PathBuf, detail: String },
}

pub struct Lock {
    _flock: Flock<File>,
}

/// The lock of a simulated machine: one per snapshot file, kept in the temporary directory
/// (`$TMPDIR`, else /tmp) under a hash of the snapshot's absolute path, so an apply on a
/// snapshot leaves nothing beside it in the user's tree.
pub fn for_snapshot(snapshot: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let abs = std::fs::canonicalize(snapshot).unwrap_or_else(|_| snapshot.to_path_buf());
    let digest = Sha256::digest(abs.as_os_str().as_encoded_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    std::env::temp_dir().join(format!("hyraid-sim-{hex}.lock"))
}

impl Lock {
    /// The pid of a running apply that holds the lock, if any (does not take the lock).
    pub fn holder(path: &Path) -> Option<String> {
        let file = File::open(path).ok()?;
        match Flock::lock(file, FlockArg::LockSharedNonblock) {
            Ok(_) => None,
            Err((mut f, Errno::EWOULDBLOCK)) => {
                let mut pid = String::new();
                let _ = f.read_to_string(&mut pid);
                Some(pid.trim().to_string())
            }
            Err(_) => None,
        }
    }

    pub fn acquire(path: &Path) -> Result<Lock, LockError> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let io = |e: std::io::Error| LockError::Io {
            path: path.to_path_buf(),
            detail: e.to_string(),
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut f) => {
                f.set_len(0).map_err(io)?;
                f.rewind().map_err(io)?;
                writeln!(f, "{}", std::process::id()).map_err(io)?;
                Ok(Lock { _flock: f })
            }
            Err((mut f, Errno::EWOULDBLOCK)) => {
                let mut pid = String::new();
                let _ = f.read_to_string(&mut pid);
                Err(LockError::Held {
                    path: path.to_path_buf(),
                    pid: pid.trim().to_string(),
                })
            }
            Err((_, e)) => Err(LockError::Io {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }),
        }
    }
}
