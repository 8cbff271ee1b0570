//! cryptsetup 2.6 as hyraid runs it (luksFormat of a blank array, luksHeaderBackup, open), and
//! the file tools of a key file and a header backup (install, dd, chmod, mv, rm, stat): the
//! machine's secret files are kept by path with their mode, owner and size, never a content.

use crate::host::{CmdOutput, HostError};
use crate::observe::OtherDevice;
use crate::observe::luks::LUKS2_DATA_OFFSET;
use crate::observe::luks::{LUKS_FSTYPE, Luks, Mapping, SecretFile};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

/// Whether `path` is a file the model keeps (a key file, a header backup, or one being made).
pub fn is_secret(st: &SimState, path: &str) -> bool {
    st.world.files.contains_key(path)
        || path.ends_with(".key")
        || path.ends_with(".hyraid-new")
        || path.contains("luks-header")
}

fn key_ok(st: &SimState, key: &str) -> bool {
    st.world.files.get(key).is_some_and(|k| k.size > 0)
}

pub fn cryptsetup(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    match args {
        [
            "luksFormat",
            "--batch-mode",
            "--type",
            "luks2",
            "--uuid",
            uuid,
            "--key-file",
            key,
            rest @ ..,
        ] => {
            let dev = rest.last().copied().unwrap_or_default();
            format(st, uuid, key, dev)
        }
        ["luksHeaderBackup", dev, "--header-backup-file", file] => {
            if header(st, dev).is_none() {
                return fail(1, format!("Device {dev} is not a valid LUKS device.\n"));
            }
            if st.world.files.contains_key(*file) {
                return fail(
                    1,
                    format!("Requested header backup file {file} already exists.\n"),
                );
            }
            st.world.files.insert(
                file.to_string(),
                SecretFile {
                    mode: 0o600,
                    uid: 0,
                    size: LUKS2_DATA_OFFSET,
                },
            );
            out("")
        }
        ["open", "--type", "luks", "--key-file", key, rest @ ..] => {
            let (dev, name) = match rest {
                [dev, name] | ["--allow-discards", dev, name] => (*dev, *name),
                _ => {
                    return crate::sim::unsupported(
                        &args.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                    );
                }
            };
            open(st, key, dev, name)
        }
        _ => crate::sim::unsupported(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
    }
}

/// The array `dev` names and its header, if it has one.
fn header(st: &SimState, dev: &str) -> Option<(String, usize)> {
    let Some(Target::Md(k)) = st.resolve(dev) else {
        return None;
    };
    let i = st.world.luks.iter().position(|l| l.device == k)?;
    Some((k, i))
}

fn format(st: &mut SimState, uuid: &str, key: &str, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(Target::Md(k)) = st.resolve(dev) else {
        return fail(
            4,
            format!("Device {dev} does not exist or access denied.\n"),
        );
    };
    let t = Target::Md(k.clone());
    if !key_ok(st, key) {
        return fail(1, format!("Failed to open key file {key}.\n"));
    }
    if st.busy(&t)
        || st
            .world
            .other_devices
            .iter()
            .any(|o| o.parents.contains(&k))
    {
        return fail(5, format!("Cannot format device {dev} in use.\n"));
    }
    // --batch-mode: cryptsetup overwrites without asking; hyraid formats only blank arrays.
    st.world.luks.retain(|l| l.device != k);
    st.world.luks.push(Luks {
        device: k.clone(),
        uuid: Some(uuid.to_string()),
        mapping: None,
    });
    if let Some(a) = st.array_mut(&k) {
        a.fstype = Some(LUKS_FSTYPE.into());
    }
    out("")
}

fn open(st: &mut SimState, key: &str, dev: &str, name: &str) -> Result<CmdOutput, HostError> {
    let Some((k, i)) = header(st, dev) else {
        return fail(1, format!("Device {dev} is not a valid LUKS device.\n"));
    };
    if st.world.luks[i].mapping.is_some()
        || st
            .world
            .other_devices
            .iter()
            .any(|o| o.name.as_deref() == Some(name))
    {
        return fail(5, format!("Device {name} already exists.\n"));
    }
    if !key_ok(st, key) {
        return fail(2, "No key available with this passphrase.\n");
    }
    // LVs are dm-0… in the simulated lsblk; mappings take numbers from 100.
    let minor = (100..)
        .find(|m| {
            !st.world
                .other_devices
                .iter()
                .any(|o| o.kname == format!("dm-{m}"))
        })
        .unwrap_or(100);
    let kname = format!("dm-{minor}");
    let size = st.world.array(&k).map(|a| a.size_kib * 1024).unwrap_or(0);
    st.world.other_devices.push(OtherDevice {
        kname: kname.clone(),
        kind: "crypt".into(),
        maj_min: format!("253:{minor}"),
        size: size.saturating_sub(LUKS2_DATA_OFFSET),
        fstype: None,
        mountpoint: None,
        name: Some(name.into()),
        parents: vec![k],
    });
    st.world.luks[i].mapping = Some(Mapping {
        name: name.into(),
        kname,
    });
    out("")
}

/// `install -m 0400 -o root -g root /dev/null PATH`, `dd … of=PATH`, `chmod MODE PATH`,
/// `mv -f FROM TO`, `rm -f PATH` and `stat` of the files the model keeps.
pub fn file_tool(st: &mut SimState, args: &[&str]) -> Option<Result<CmdOutput, HostError>> {
    if let ["rm", "-f", path] = args {
        if !is_secret(st, path) {
            return None;
        }
        st.world.files.remove(*path);
        return Some(out(""));
    }
    let files = &mut st.world.files;
    Some(match args {
        [
            "install",
            "-m",
            mode,
            "-o",
            "root",
            "-g",
            "root",
            "/dev/null",
            path,
        ] => {
            let mode = u32::from_str_radix(mode, 8).ok()?;
            files.insert(
                path.to_string(),
                SecretFile {
                    mode,
                    uid: 0,
                    size: 0,
                },
            );
            out("")
        }
        ["dd", "if=/dev/urandom", of, bs, "count=1", ..] => {
            let path = of.strip_prefix("of=")?;
            let size: u64 = bs.strip_prefix("bs=")?.parse().ok()?;
            let f = files.entry(path.to_string()).or_insert(SecretFile {
                mode: 0o644,
                uid: 0,
                size: 0,
            });
            f.size = f.size.max(size);
            out("")
        }
        ["chmod", mode, path] => match files.get_mut(*path) {
            Some(f) => {
                f.mode = u32::from_str_radix(mode, 8).ok()?;
                out("")
            }
            None => fail(
                1,
                format!("chmod: cannot access '{path}': No such file or directory\n"),
            ),
        },
        ["mv", "-f", from, to] => match files.remove(*from) {
            Some(f) => {
                files.insert(to.to_string(), f);
                out("")
            }
            None => fail(
                1,
                format!("mv: cannot stat '{from}': No such file or directory\n"),
            ),
        },
        ["stat", "--format=%a %u %s", "--", path] => match files.get(*path) {
            Some(f) => out(&format!("{:o} {} {}\n", f.mode, f.uid, f.size)),
            None => fail(
                1,
                format!("stat: cannot statx '{path}': No such file or directory\n"),
            ),
        },
        ["mkdir", "-p", "-m", _, _] => out(""),
        _ => return None,
    })
}

/// /dev/mapper/NAME of an open mapping.
pub fn resolve_mapper(st: &SimState, name: &str) -> Option<String> {
    st.world
        .other_devices
        .iter()
        .find(|o| o.kind == "crypt" && o.name.as_deref() == Some(name))
        .map(|o| o.kname.clone())
}
