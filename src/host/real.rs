//! The real machine: std::process for tools, std::fs for sysfs and /proc.

use super::{CmdOutput, Host, HostError, Started};
use std::process::{Command, Stdio};

#[derive(Debug, Default)]
pub struct RealHost;

fn io_err(path: &str, e: std::io::Error) -> HostError {
    if e.kind() == std::io::ErrorKind::NotFound {
        HostError::NotFound {
            path: path.to_string(),
        }
    } else {
        HostError::Io {
            path: path.to_string(),
            detail: e.to_string(),
        }
    }
}

/// Run a program with stdin from /dev/null, LC_ALL=C, in a process group of its own.
fn run_program(argv: &[String]) -> Result<CmdOutput, HostError> {
    let (program, args) = argv.split_first().ok_or(HostError::Spawn {
        program: String::new(),
        detail: "empty command".into(),
    })?;
    use std::os::unix::process::CommandExt;
    let out = Command::new(program)
        .args(args)
        .process_group(0)
        .stdin(Stdio::null())
        .env("LC_ALL", "C")
        .env("LVM_SUPPRESS_FD_WARNINGS", "1")
        .output()
        .map_err(|e| HostError::Spawn {
            program: program.clone(),
            detail: if e.kind() == std::io::ErrorKind::NotFound {
                "not installed (not found in PATH)".into()
            } else {
                e.to_string()
            },
        })?;
    Ok(CmdOutput {
        status: out.status.code().unwrap_or(128),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Run a program with `input` on stdin and `env` added, killed after `timeout`.
fn run_with_input(
    argv: &[String],
    input: &str,
    env: &[(String, String)],
    timeout: std::time::Duration,
) -> Result<CmdOutput, HostError> {
    use std::io::{Read, Write};
    use std::os::unix::process::CommandExt;
    let (program, args) = argv.split_first().ok_or(HostError::Spawn {
        program: String::new(),
        detail: "empty command".into(),
    })?;
    let spawn_err = |e: std::io::Error| HostError::Spawn {
        program: program.clone(),
        detail: if e.kind() == std::io::ErrorKind::NotFound {
            "not found".into()
        } else {
            e.to_string()
        },
    };
    let mut child = Command::new(program)
        .args(args)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("LC_ALL", "C")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .spawn()
        .map_err(spawn_err)?;
    // A program that does not read its input must not block us: written from a thread.
    let mut stdin = child.stdin.take();
    let data = input.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&data);
        }
    });
    // And its output read as it comes, so that a full pipe never stalls it.
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait().map_err(spawn_err)? {
            Some(st) => break st,
            None if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(HostError::Spawn {
                    program: program.clone(),
                    detail: format!("did not end within {} s; killed", timeout.as_secs()),
                });
            }
            None => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    };
    let _ = writer.join();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(CmdOutput {
        status: status.code().unwrap_or(128),
        stdout,
        stderr,
    })
}

impl Host for RealHost {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        run_program(argv)
    }

    fn run_input(
        &self,
        argv: &[String],
        input: &str,
        env: &[(String, String)],
        timeout: std::time::Duration,
    ) -> Result<CmdOutput, HostError> {
        run_with_input(argv, input, env, timeout)
    }

    fn start(&self, argv: &[String]) -> Started {
        let argv = argv.to_vec();
        Started::running(std::thread::spawn(move || run_program(&argv)))
    }

    fn read_file(&self, path: &str) -> Result<String, HostError> {
        std::fs::read_to_string(path).map_err(|e| io_err(path, e))
    }

    fn write_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        use std::io::Write;
        // sysfs attributes must get one write() of the whole value; no create, no truncate dance.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        f.write_all(content.as_bytes()).map_err(|e| io_err(path, e))
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
        let mut v: Vec<String> = std::fs::read_dir(path)
            .map_err(|e| io_err(path, e))?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        v.sort();
        Ok(v)
    }

    fn read_link(&self, path: &str) -> Result<String, HostError> {
        std::fs::read_link(path)
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| io_err(path, e))
    }

    fn hostname(&self) -> String {
        nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn is_root(&self) -> bool {
        nix::unistd::geteuid().is_root()
    }
    fn is_simulated(&self) -> bool {
        false
    }
    fn concurrent(&self) -> bool {
        true
    }

    fn sleep(&self, d: std::time::Duration) {
        std::thread::sleep(d)
    }

    fn exists(&self, path: &str) -> bool {
        std::path::Path::new(path).exists()
    }

    fn replace_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        use std::io::Write;
        let p = std::path::Path::new(path);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io_err(path, e))?;
        }
        let tmp = format!("{path}.hyraid-new");
        let mut f = std::fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
        f.write_all(content.as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| io_err(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| io_err(path, e))
    }
}
