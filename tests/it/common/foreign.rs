//! A machine that answers like the VM capture `fresh-build-built` with foreign objects added from
//! tests/fixtures/foreign (edits of real captures, see the README there). Every answer is data the
//! tests may change further (the fuzzer does).

use hyraid::host::record::Exchange;
use hyraid::host::{CmdOutput, Host, HostError};
use hyraid::observe::capture::Capture;
use std::collections::{BTreeMap, BTreeSet};

pub const BASE: &str = "tests/fixtures/vm/fresh-build-built.json";
const DIR: &str = "tests/fixtures/foreign";

/// Every foreign object with fixtures.
pub const OBJECTS: &[&str] = &[
    "file-bitmap",
    "raid10-far",
    "partitioned-levels",
    "imsm",
    "dev-md-strays",
    "dm-and-loop",
    "signatures",
    "lvm-segtypes",
];

#[derive(Debug, Clone)]
pub struct Machine {
    pub hostname: String,
    pub runs: BTreeMap<Vec<String>, CmdOutput>,
    /// Absent: "no such file".
    pub files: BTreeMap<String, Result<String, HostError>>,
    pub dirs: BTreeMap<String, Vec<String>>,
    pub links: BTreeMap<String, Result<String, HostError>>,
    pub exists: BTreeSet<String>,
}

/// What readlink(2) says of a device node or a regular file.
pub fn einval(path: &str) -> HostError {
    HostError::Io {
        path: path.into(),
        detail: "Invalid argument (os error 22)".into(),
    }
}

pub fn lsblk_argv() -> Vec<String> {
    hyraid::observe::lsblk::argv()
}

pub fn lvm_argv() -> Vec<String> {
    hyraid::observe::lvm::argv()
}

/// The capture, as it was.
pub fn base() -> Machine {
    let cap: Capture = serde_json::from_str(&std::fs::read_to_string(BASE).unwrap()).unwrap();
    let mut m = Machine {
        hostname: cap.hostname.clone(),
        runs: BTreeMap::new(),
        files: BTreeMap::new(),
        dirs: BTreeMap::new(),
        links: BTreeMap::new(),
        exists: BTreeSet::new(),
    };
    for e in cap.exchanges {
        match e {
            Exchange::Run {
                argv,
                status,
                stdout,
                stderr,
            } => {
                // Captured before a column was added (PARTTYPE): the whole-tree lsblk answers the
                // argv hyraid runs now; its JSON lacks the new column, as lsblk's does unasked.
                let argv = match argv.first() {
                    Some(p) if p == "lsblk" && argv.len() == lsblk_argv().len() => lsblk_argv(),
                    _ => argv,
                };
                m.runs.entry(argv).or_insert(CmdOutput {
                    status,
                    stdout,
                    stderr,
                });
            }
            Exchange::Read {
                path,
                content: Some(c),
                ..
            } => {
                m.files.insert(path, Ok(c));
            }
            Exchange::ListDir {
                path,
                entries: Some(v),
                ..
            } => {
                m.dirs.insert(path, v);
            }
            Exchange::ReadLink {
                path,
                target: Some(t),
                ..
            } => {
                m.links.insert(path, Ok(t));
            }
            Exchange::Exists { path, exists: true } => {
                m.exists.insert(path);
            }
            _ => {}
        }
    }
    m
}

/// The capture with these foreign objects added.
pub fn machine(objects: &[&str]) -> Machine {
    let mut m = base();
    for o in objects {
        m.add(o);
    }
    m
}

fn fixture(object: &str, kind: &str) -> Option<String> {
    std::fs::read_to_string(format!("{DIR}/{object}.{kind}")).ok()
}

/// `/proc/mdstat` split into its array stanzas, by kernel name.
pub fn mdstat_stanzas(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for l in text.lines() {
        if l.starts_with("Personalities") || l.starts_with("unused devices") {
            continue;
        }
        if !l.starts_with(char::is_whitespace) && l.contains(" : ") {
            out.push((l.split(' ').next().unwrap().to_string(), String::new()));
        }
        if let Some((_, s)) = out.last_mut() {
            s.push_str(l);
            s.push('\n');
        }
    }
    out
}

pub fn mdstat_text(stanzas: &[(String, String)]) -> String {
    let mut t = String::from(
        "Personalities : [linear] [multipath] [raid0] [raid1] [raid6] [raid5] [raid4] [raid10] \n",
    );
    for (_, s) in stanzas {
        t.push_str(s);
    }
    t.push_str("unused devices: <none>\n");
    t
}

impl Machine {
    pub fn mdstat(&self) -> String {
        match self.files.get("/proc/mdstat") {
            Some(Ok(t)) => t.clone(),
            _ => String::new(),
        }
    }

    pub fn lsblk(&self) -> serde_json::Value {
        serde_json::from_str(&self.runs[&lsblk_argv()].stdout).unwrap()
    }

    pub fn set_lsblk(&mut self, v: &serde_json::Value) {
        self.runs.get_mut(&lsblk_argv()).unwrap().stdout = serde_json::to_string_pretty(v).unwrap();
    }

    /// Add `ls -l DIR` lines: links answer readlink with their target, anything else with EINVAL.
    pub fn add_ls(&mut self, dir: &str, listing: &str) {
        for l in listing.lines().filter(|l| !l.starts_with("total")) {
            let w: Vec<&str> = l.split_whitespace().collect();
            let Some(kind) = l.chars().next() else {
                continue;
            };
            let (name, answer) = match w.iter().position(|x| *x == "->") {
                Some(i) if kind == 'l' => (w[i - 1], Ok(w[i + 1].to_string())),
                _ => {
                    let n = *w.last().unwrap();
                    (n, Err(einval(&format!("{dir}/{n}"))))
                }
            };
            let entries = self.dirs.entry(dir.to_string()).or_default();
            if !entries.iter().any(|e| e == name) {
                entries.push(name.to_string());
                entries.sort();
            }
            self.links.insert(format!("{dir}/{name}"), answer);
        }
    }

    pub fn add(&mut self, object: &str) {
        assert!(OBJECTS.contains(&object), "no fixtures for {object}");
        if let Some(t) = fixture(object, "lsblk.json") {
            let add: serde_json::Value = serde_json::from_str(&t).unwrap();
            let mut v = self.lsblk();
            let list = v["blockdevices"].as_array_mut().unwrap();
            list.extend(add["blockdevices"].as_array().unwrap().iter().cloned());
            self.set_lsblk(&v);
        }
        if let Some(t) = fixture(object, "mdstat.txt") {
            let mut have = mdstat_stanzas(&self.mdstat());
            for (k, s) in mdstat_stanzas(&t) {
                if !have.iter().any(|(h, _)| *h == k) {
                    have.push((k, s));
                }
            }
            have.sort();
            self.files
                .insert("/proc/mdstat".into(), Ok(mdstat_text(&have)));
        }
        if let Some(t) = fixture(object, "sysfs.txt") {
            for l in t.lines() {
                let (path, value) = l
                    .split_once(": ")
                    .unwrap_or_else(|| (l.trim_end_matches(':'), ""));
                self.files.insert(path.into(), Ok(format!("{value}\n")));
            }
        }
        if let Some(t) = fixture(object, "ls-dev-md.txt") {
            self.add_ls("/dev/md", &t);
        }
        if let Some(t) = fixture(object, "ls-disk-by-id.txt") {
            self.add_ls("/dev/disk/by-id", &t);
        }
        if let Some(t) = fixture(object, "fullreport.json") {
            self.runs.insert(lvm_argv(), CmdOutput::ok(t));
        }
        for e in std::fs::read_dir(DIR).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(dev) = name
                .strip_prefix(&format!("{object}.mdadm-examine-export-"))
                .and_then(|r| r.strip_suffix(".txt"))
            {
                let text = std::fs::read_to_string(format!("{DIR}/{name}")).unwrap();
                let argv = ["mdadm", "--examine", "--export", &format!("/dev/{dev}")];
                self.runs.insert(
                    argv.iter().map(|s| s.to_string()).collect(),
                    CmdOutput::ok(text),
                );
                continue;
            }
            let Some(rest) = name.strip_prefix(&format!("{object}.wipefs-")) else {
                continue;
            };
            let text = std::fs::read_to_string(format!("{DIR}/{name}")).unwrap();
            let (dev, out) = match rest.split_once('.') {
                Some((d, "json")) => (d, CmdOutput::ok(text)),
                Some((d, _)) => (d, CmdOutput::fail(1, text)),
                None => continue,
            };
            self.runs
                .insert(hyraid::observe::wipefs::argv(&format!("/dev/{dev}")), out);
        }
    }
}

impl Host for Machine {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        self.runs.get(argv).cloned().ok_or(HostError::Spawn {
            program: argv.join(" "),
            detail: "not in the capture".into(),
        })
    }
    fn read_file(&self, path: &str) -> Result<String, HostError> {
        self.files
            .get(path)
            .cloned()
            .unwrap_or(Err(HostError::NotFound { path: path.into() }))
    }
    fn write_file(&self, path: &str, _content: &str) -> Result<(), HostError> {
        Err(HostError::Io {
            path: path.into(),
            detail: "a capture cannot change".into(),
        })
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
        self.dirs
            .get(path)
            .cloned()
            .ok_or(HostError::NotFound { path: path.into() })
    }
    fn read_link(&self, path: &str) -> Result<String, HostError> {
        self.links
            .get(path)
            .cloned()
            .unwrap_or(Err(HostError::NotFound { path: path.into() }))
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
        self.exists.contains(path)
    }
    fn replace_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        self.write_file(path, content)
    }
}
