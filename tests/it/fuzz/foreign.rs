//! Foreign objects and odd but real values, put into a machine in the tools' own formats: the
//! mutations of `the_whole_observer_never_fails_on_foreign_objects` (tests/it/fuzz_parsers.rs).

use crate::common::foreign::{Machine, einval, lvm_argv, mdstat_stanzas, mdstat_text};
use hyraid::host::{CmdOutput, HostError};
use proptest::prelude::*;

/// A foreign object, or an odd but real value, put into the machine in the tools' own format.
#[derive(Debug, Clone)]
pub enum Foreign {
    /// The level word of the n-th array in /proc/mdstat.
    Level(usize, &'static str),
    /// The n-th array's bitmap lives in a file (mdstat line and `bitmap/location`).
    FileBitmap(usize),
    /// The n-th array shows no bitmap line.
    NoBitmapLine(usize),
    /// The word after `super` on the n-th array's blocks line.
    Super(usize, &'static str),
    /// The n-th array is assembled but does not run.
    Inactive(usize),
    /// The n-th sysfs file holds an odd value, is gone, or cannot be read.
    Sysfs(usize, &'static str),
    SysfsGone(usize),
    SysfsUnreadable(usize),
    /// The n-th LVM segment has another segment type.
    Segtype(usize, &'static str),
    /// The n-th lsblk node has another FSTYPE, or another TYPE.
    Fstype(usize, &'static str),
    Kind(usize, &'static str),
    /// An entry in /dev/md: a device node, a file, a dangling link, one that vanishes, a second
    /// link to a running array.
    DevMd(&'static str, u8),
    /// The n-th wipefs probe finds a signature nobody names, or fails.
    Signature(usize, &'static str),
    ProbeFails(usize),
    /// /dev/md or /dev/disk/by-id cannot be listed.
    Unlistable(&'static str),
}

const LEVELS: &[&str] = &[
    "raid0",
    "raid1",
    "raid4",
    "raid5",
    "raid6",
    "raid10",
    "linear",
    "multipath",
    "faulty",
];
const SUPERS: &[&str] = &[
    "1.0",
    "1.1",
    "1.2",
    "0.90",
    "external:imsm",
    "external:ddf",
    "external:/md127/0",
    "non-persistent",
];
const ODD: &[&str] = &[
    "file",
    "none",
    "+8",
    "-16",
    "",
    "4 (3)",
    "unknown",
    "reshape",
    "frozen",
    "delayed",
    "12 / 0",
    "external:imsm",
    "container",
    "inactive",
    "read-auto",
    "faulty,blocked,write_error",
    "18446744073709551616",
    "-1",
    "write back, no read (daft)",
    "lockless",
];
const SEGTYPES: &[&str] = &[
    "raid1",
    "raid5",
    "raid6",
    "raid10",
    "thin-pool",
    "thin",
    "snapshot",
    "cache",
    "cache-pool",
    "vdo",
    "vdo-pool",
    "mirror",
    "error",
    "zero",
    "integrity",
    "writecache",
    "striped",
    "linear",
    "",
];
const FSTYPES: &[&str] = &[
    "zfs_member",
    "crypto_LUKS",
    "bcache",
    "ceph",
    "swap",
    "VMFS_volume_member",
    "isw_raid_member",
    "ddf_raid_member",
    "linux_raid_member",
    "LVM2_member",
    "btrfs",
    "",
];
const KINDS: &[&str] = &[
    "crypt", "dm", "mpath", "loop", "raid0", "raid5", "raid10", "linear", "md", "rom", "lvm",
    "part", "disk", "vdo", "zram",
];

pub fn foreign() -> impl Strategy<Value = Foreign> {
    let n = any::<usize>;
    let pick = |v: &'static [&'static str]| prop::sample::select(v.to_vec());
    prop_oneof![
        (n(), pick(LEVELS)).prop_map(|(i, l)| Foreign::Level(i, l)),
        n().prop_map(Foreign::FileBitmap),
        n().prop_map(Foreign::NoBitmapLine),
        (n(), pick(SUPERS)).prop_map(|(i, s)| Foreign::Super(i, s)),
        n().prop_map(Foreign::Inactive),
        (n(), pick(ODD)).prop_map(|(i, v)| Foreign::Sysfs(i, v)),
        n().prop_map(Foreign::SysfsGone),
        n().prop_map(Foreign::SysfsUnreadable),
        (n(), pick(SEGTYPES)).prop_map(|(i, s)| Foreign::Segtype(i, s)),
        (n(), pick(FSTYPES)).prop_map(|(i, f)| Foreign::Fstype(i, f)),
        (n(), pick(KINDS)).prop_map(|(i, k)| Foreign::Kind(i, k)),
        (
            pick(&["stale", "md0", "1", "data0_0", "legacy", "imsm0"]),
            0u8..5
        )
            .prop_map(|(name, k)| Foreign::DevMd(name, k)),
        (n(), pick(FSTYPES)).prop_map(|(i, s)| Foreign::Signature(i, s)),
        n().prop_map(Foreign::ProbeFails),
        pick(&["/dev/md", "/dev/disk/by-id"]).prop_map(Foreign::Unlistable),
    ]
}

fn count_nodes(list: &serde_json::Value) -> usize {
    list.as_array().map_or(0, |v| {
        v.iter()
            .map(|n| 1 + n.get("children").map_or(0, count_nodes))
            .sum()
    })
}

/// Set `key` of the n-th node of an lsblk tree (depth first).
fn set_nth(list: &mut serde_json::Value, n: &mut usize, key: &str, value: &str) {
    for node in list.as_array_mut().into_iter().flatten() {
        if *n == 0 {
            node[key] = value.into();
        }
        *n = n.wrapping_sub(1);
        if let Some(c) = node.get_mut("children") {
            set_nth(c, n, key, value);
        }
    }
}

/// Edit the lines of the i-th array of /proc/mdstat; returns its kernel name.
fn edit_mdstat(m: &mut Machine, i: usize, edit: impl Fn(&str, &mut Vec<String>)) -> Option<String> {
    let mut stanzas = mdstat_stanzas(&m.mdstat());
    let n = stanzas.len();
    let (k, s) = stanzas.get_mut(i % n.max(1))?;
    let mut lines: Vec<String> = s.lines().map(str::to_string).collect();
    edit(k, &mut lines);
    *s = lines.iter().map(|l| format!("{l}\n")).collect();
    let k = k.clone();
    m.files
        .insert("/proc/mdstat".into(), Ok(mdstat_text(&stanzas)));
    Some(k)
}

pub fn put(m: &mut Machine, f: &Foreign) {
    let sysfs: Vec<String> = m
        .files
        .keys()
        .filter(|k| k.starts_with("/sys/block/"))
        .cloned()
        .collect();
    let probes: Vec<Vec<String>> = m
        .runs
        .keys()
        .filter(|a| a[0] == "wipefs")
        .cloned()
        .collect();
    match f {
        Foreign::Level(i, level) => {
            edit_mdstat(m, *i, |_, l| {
                let mut w: Vec<String> = l[0].split(' ').map(str::to_string).collect();
                let at = if w.get(3).is_some_and(|x| x.starts_with('(')) {
                    4
                } else {
                    3
                };
                if w[2] == "active" && w.get(at).is_some_and(|x| !x.contains('[')) {
                    w[at] = level.to_string();
                }
                l[0] = w.join(" ");
            });
        }
        Foreign::FileBitmap(i) => {
            let k = edit_mdstat(m, *i, |_, l| {
                match l.iter_mut().find(|x| x.trim_start().starts_with("bitmap:")) {
                    Some(b) => b.push_str(", file: /mnt/ssd\\040junk/fuzz.bitmap"),
                    None => l.insert(
                        2,
                        "      bitmap: 1/1 pages [4KB], 4KB chunk, file: /srv/b".into(),
                    ),
                }
            });
            if let Some(k) = k {
                m.files.insert(
                    format!("/sys/block/{k}/md/bitmap/location"),
                    Ok("file\n".into()),
                );
            }
        }
        Foreign::NoBitmapLine(i) => {
            edit_mdstat(m, *i, |_, l| l.retain(|x| !x.contains("bitmap:")));
        }
        Foreign::Super(i, sup) => {
            edit_mdstat(m, *i, |_, l| {
                if let Some(b) = l.get_mut(1)
                    && let Some((head, rest)) = b.split_once(" super ")
                {
                    let tail = rest.split_once(' ').map(|(_, t)| t).unwrap_or("");
                    *b = format!("{head} super {sup} {tail}");
                }
            });
        }
        Foreign::Inactive(i) => {
            edit_mdstat(m, *i, |k, l| {
                let members: Vec<String> = l[0]
                    .split(' ')
                    .filter(|w| w.contains('['))
                    .map(|w| format!("{}(S)", w.split('(').next().unwrap()))
                    .collect();
                l[0] = format!("{k} : inactive {}", members.join(" "));
                l.retain(|x| !x.contains("bitmap:") && !x.contains('%'));
            });
        }
        Foreign::Sysfs(i, v) if !sysfs.is_empty() => {
            m.files
                .insert(sysfs[i % sysfs.len()].clone(), Ok(format!("{v}\n")));
        }
        Foreign::SysfsGone(i) if !sysfs.is_empty() => {
            m.files.remove(&sysfs[i % sysfs.len()]);
        }
        Foreign::SysfsUnreadable(i) if !sysfs.is_empty() => {
            let p = sysfs[i % sysfs.len()].clone();
            let detail = "Input/output error (os error 5)".to_string();
            m.files
                .insert(p.clone(), Err(HostError::Io { path: p, detail }));
        }
        Foreign::Segtype(i, seg) => {
            let out = m.runs.get_mut(&lvm_argv()).unwrap();
            let mut v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
            let mut segs: Vec<&mut serde_json::Value> = v["report"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .flat_map(|s| s["seg"].as_array_mut().unwrap().iter_mut())
                .collect();
            let k = segs.len().max(1);
            if let Some(s) = segs.get_mut(i % k) {
                s["segtype"] = (*seg).into();
            }
            out.stdout = v.to_string();
        }
        Foreign::Fstype(i, value) | Foreign::Kind(i, value) => {
            let key = if matches!(f, Foreign::Fstype(..)) {
                "fstype"
            } else {
                "type"
            };
            let mut v = m.lsblk();
            let mut n = i % count_nodes(&v["blockdevices"]).max(1);
            set_nth(&mut v["blockdevices"], &mut n, key, value);
            m.set_lsblk(&v);
        }
        Foreign::DevMd(name, kind) => {
            let path = format!("/dev/md/{name}");
            let answer = match kind {
                0 | 1 => Err(einval(&path)),
                2 => Ok("../md9".to_string()),
                3 => Err(HostError::NotFound { path: path.clone() }),
                _ => Ok("../md127".to_string()),
            };
            let e = m.dirs.entry("/dev/md".into()).or_default();
            if !e.iter().any(|x| x == name) {
                e.push(name.to_string());
                e.sort();
            }
            m.links.insert(path, answer);
        }
        Foreign::Signature(i, kind) if !probes.is_empty() => {
            let argv = &probes[i % probes.len()];
            let dev = argv.last().unwrap().trim_start_matches("/dev/");
            let sig = serde_json::json!({"signatures": [{"device": dev, "offset": "0x1000", "type": kind, "uuid": null, "label": null}]});
            m.runs.insert(
                argv.clone(),
                CmdOutput::ok(serde_json::to_string_pretty(&sig).unwrap()),
            );
        }
        Foreign::ProbeFails(i) if !probes.is_empty() => {
            let argv = &probes[i % probes.len()];
            let err = format!(
                "wipefs: error: {}: probing initialization failed: Permission denied\n",
                argv.last().unwrap()
            );
            m.runs.insert(argv.clone(), CmdOutput::fail(1, err));
        }
        Foreign::Unlistable(dir) => {
            m.dirs.remove(*dir);
        }
        _ => {}
    }
}
