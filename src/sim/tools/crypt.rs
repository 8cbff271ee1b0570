//! cryptsetup 2.6 as hyraid runs it (luksFormat of a blank array, luksHeaderBackup, open), and
//! the file tools of a key file and a header backup (install, dd, chmod, mv, rm, stat): the
//! machine's secret files are kept by path with their mode, owner and size, never a content.

use crate::host::{CmdOutput, HostError};
use crate::observe::OtherDevice;
use crate::observe::luks::LUKS2_DATA_OFFSET;
use crate::observe::luks::{LUKS_FSTYPE, Luks, Mapping, SecretFile};
use crate::observe::luks_dump::LuksHeader;
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

/// Whether `path` is a file the model keeps (a key file, a header backup, or one being made).
pub fn is_secret(st: &SimState, path: &str) -> bool {
    st.world.files.contains_key(path)
        || path.ends_with(".key")
        || path.ends_with(".hyraid-new")
        || path.contains("luks-header")
}

/// Prefix of a key typed as a passphrase (`--key-file -`), in the model's key slots.
const TYPED: &str = "passphrase:";

/// The key a passphrase given on stdin stands for in the model.
pub fn typed(passphrase: &str) -> String {
    format!("{TYPED}{passphrase}")
}

/// The arguments after `--pbkdf KIND --pbkdf-force-iterations N`, as cryptsetup checks them
/// (PBKDF2 takes 1000 iterations at least); the model does not time its slots.
fn after_pbkdf<'a, 'b>(rest: &'a [&'b str]) -> Result<&'a [&'b str], String> {
    match rest {
        ["--pbkdf", kind, "--pbkdf-force-iterations", n, rest @ ..] => {
            let n: u32 = n.parse().map_err(|_| format!("Invalid number: {n}.\n"))?;
            match *kind {
                "pbkdf2" if n < 1000 => {
                    Err("Forced iteration count is too low for pbkdf2 (minimum is 1000).\n".into())
                }
                "pbkdf2" | "argon2i" | "argon2id" => Ok(rest),
                _ => Err(format!("Unknown PBKDF type {kind}.\n")),
            }
        }
        _ => Ok(rest),
    }
}

fn key_ok(st: &SimState, key: &str) -> bool {
    match key.strip_prefix(TYPED) {
        Some(p) => !p.is_empty(),
        None => st.world.files.get(key).is_some_and(|k| k.size > 0),
    }
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
            let rest = match after_pbkdf(rest) {
                Ok(r) => r,
                Err(e) => return fail(1, e),
            };
            let (cipher, dev) = match rest {
                ["--cipher", c, dev] => (Some(*c), *dev),
                [dev] => (None, *dev),
                _ => return unsupported(args),
            };
            format(st, uuid, key, cipher, dev)
        }
        ["luksHeaderBackup", dev, "--header-backup-file", file] => {
            let Some((_, i)) = header(st, dev) else {
                return fail(1, format!("Device {dev} is not a valid LUKS device.\n"));
            };
            let header_uuid = st.world.luks[i].uuid.clone();
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
                    header_uuid,
                    header_slots: st.world.luks[i].header.as_ref().map(|h| h.keyslots.clone()),
                },
            );
            out("")
        }
        ["open", "--type", "luks", "--key-file", key, rest @ ..] => {
            let (dev, name) = match rest {
                [dev, name] | ["--allow-discards", dev, name] => (*dev, *name),
                _ => return unsupported(args),
            };
            open(st, key, dev, name)
        }
        ["luksDump", "--dump-json-metadata", file] if st.world.files.contains_key(*file) => {
            match st.world.files[*file].header_slots.clone() {
                Some(keyslots) => out(&dump_json(&LuksHeader {
                    keyslots,
                    ..default_header()
                })),
                None => fail(1, format!("Device {file} is not a valid LUKS device.\n")),
            }
        }
        ["resize", "--key-file", key, name] => resize(st, key, name),
        ["luksAddKey", "--batch-mode", "--key-file", with, rest @ ..] => match after_pbkdf(rest) {
            Ok([dev, new]) => add_key(st, with, dev, new),
            Ok(_) => unsupported(args),
            Err(e) => fail(1, e),
        },
        ["luksRemoveKey", "--batch-mode", dev, key] => remove_key(st, dev, key),
        ["open", "--test-passphrase", "--key-file", key, dev] => match header(st, dev) {
            Some((_, i)) if opens(st, i, key) => out(""),
            Some(_) => fail(2, "No key available with this passphrase.\n"),
            None => fail(1, format!("Device {dev} is not a valid LUKS device.\n")),
        },
        ["luksDump", "--dump-json-metadata", dev] => match header(st, dev) {
            Some((_, i)) => {
                let h = st.world.luks[i]
                    .header
                    .clone()
                    .unwrap_or_else(default_header);
                out(&dump_json(&h))
            }
            None => fail(1, format!("Device {dev} is not a valid LUKS device.\n")),
        },
        ["luksUUID", path] => match st
            .world
            .files
            .get(*path)
            .and_then(|f| f.header_uuid.clone())
        {
            Some(u) => out(&format!("{u}\n")),
            None => fail(1, format!("Device {path} is not a valid LUKS device.\n")),
        },
        _ => unsupported(args),
    }
}

fn unsupported(args: &[&str]) -> Result<CmdOutput, HostError> {
    let mut argv = vec!["cryptsetup".to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    crate::sim::unsupported(&argv)
}

/// cryptsetup 2.6's LUKS2 defaults: aes-xts-plain64, data after 16 MiB, the key in slot 0.
pub(super) fn default_header() -> LuksHeader {
    LuksHeader {
        cipher: "aes-xts-plain64".into(),
        data_offset: LUKS2_DATA_OFFSET,
        keyslots: vec![0],
        tokens: vec![],
    }
}

/// The JSON area as cryptsetup 2.6 prints it (`--dump-json-metadata`), of the fields hyraid reads
/// and their neighbours.
fn dump_json(h: &LuksHeader) -> String {
    use serde_json::json;
    let slots: serde_json::Map<String, serde_json::Value> = h
        .keyslots
        .iter()
        .map(|k| {
            (
                k.to_string(),
                json!({"type": "luks2", "key_size": 64, "af": {"type": "luks1", "stripes": 4000, "hash": "sha256"},
                       "area": {"type": "raw", "offset": "32768", "size": "258048", "encryption": "aes-xts-plain64", "key_size": 64},
                       "kdf": {"type": "argon2id", "time": 4, "memory": 1048576, "cpus": 2, "salt": "c2FsdA=="}}),
            )
        })
        .collect();
    let digest_slots: Vec<String> = h.keyslots.iter().map(|k| k.to_string()).collect();
    // A TPM2 token holds the last slot (the one systemd-cryptenroll added).
    let tokens: serde_json::Map<String, serde_json::Value> = h
        .tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let slot = h.keyslots.last().copied().unwrap_or(0).to_string();
            (
                i.to_string(),
                json!({"type": t, "keyslots": [slot], "tpm2-blob": "YmxvYg==", "tpm2-pcrs": [7], "tpm2-pcr-bank": "sha256", "tpm2-primary-alg": "ecc", "tpm2-policy-hash": "00", "tpm2-pin": false}),
            )
        })
        .collect();
    json!({
        "keyslots": slots,
        "tokens": tokens,
        "segments": {"0": {"type": "crypt", "offset": h.data_offset.to_string(), "size": "dynamic", "iv_tweak": "0", "encryption": h.cipher, "sector_size": 512}},
        "digests": {"0": {"type": "pbkdf2", "keyslots": digest_slots, "segments": ["0"], "hash": "sha256", "iterations": 100000, "salt": "c2FsdA==", "digest": "ZGlnZXN0"}},
        "config": {"json_size": "12288", "keyslots_size": "16744448"}
    })
    .to_string()
}

/// The model's name of the array or LV `dev` names (an LV as `vg/lv`).
fn crypt_dev(st: &SimState, dev: &str) -> Option<Target> {
    st.resolve(dev)
        .filter(|t| matches!(t, Target::Md(_) | Target::Lv(..)))
}

/// The array or LV `dev` names and its header, if it has one.
pub(super) fn header(st: &SimState, dev: &str) -> Option<(String, usize)> {
    let k = SimState::kname(&crypt_dev(st, dev)?);
    let i = st.world.luks.iter().position(|l| l.device == k)?;
    Some((k, i))
}

/// Whether something stands on the array or LV `t` (a mapping, a PV of a VG, a filesystem).
fn in_use(st: &SimState, t: &Target) -> bool {
    let k = SimState::kname(t);
    let stacked = st
        .world
        .other_devices
        .iter()
        .any(|o| o.parents.contains(&k));
    stacked
        || match t {
            Target::Lv(vg, lv) => st.world.filesystems.iter().any(|f| {
                !f.md && f.mapper.is_none() && f.vg == *vg && f.lv == *lv && f.mountpoint.is_some()
            }),
            _ => st.busy(t),
        }
}

/// The open mapping /dev/mapper/NAME.
pub fn mapping<'a>(st: &'a SimState, name: &str) -> Option<&'a OtherDevice> {
    st.world
        .other_devices
        .iter()
        .find(|o| o.kind == "crypt" && o.name.as_deref() == Some(name))
}

fn format(
    st: &mut SimState,
    uuid: &str,
    key: &str,
    cipher: Option<&str>,
    dev: &str,
) -> Result<CmdOutput, HostError> {
    let Some(t) = crypt_dev(st, dev) else {
        return fail(
            4,
            format!("Device {dev} does not exist or access denied.\n"),
        );
    };
    let k = SimState::kname(&t);
    if !key_ok(st, key) {
        return fail(1, format!("Failed to open key file {key}.\n"));
    }
    if in_use(st, &t) {
        return fail(5, format!("Cannot format device {dev} in use.\n"));
    }
    // --batch-mode: cryptsetup overwrites without asking; hyraid formats only blank arrays.
    st.world.luks.retain(|l| l.device != k);
    st.world.luks.push(Luks {
        device: k.clone(),
        uuid: Some(uuid.to_string()),
        mapping: None,
        opens_with: Default::default(),
        same_key: None,
        header: Some(LuksHeader {
            cipher: cipher.unwrap_or("aes-xts-plain64").to_string(),
            ..default_header()
        }),
    });
    st.world
        .key_slots
        .insert(uuid.to_string(), [(0, key.to_string())].into());
    if let Some(a) = st.array_mut(&k) {
        a.fstype = Some(LUKS_FSTYPE.into());
    }
    // The header overwrites what the LV carried (lsblk then shows crypto_LUKS on it).
    if let Target::Lv(vg, lv) = &t {
        st.world
            .filesystems
            .retain(|f| f.md || f.mapper.is_some() || f.vg != *vg || f.lv != *lv);
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
    if !opens(st, i, key) {
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
    let size = match k.split_once('/') {
        Some((vg, lv)) => st.world.lv(vg, lv).map(|l| l.size),
        None => st.world.array(&k).map(|a| a.size_kib * 1024),
    }
    .unwrap_or(0);
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
    // The alerts' token files and program: a file (an executable one), as the model says.
    if let ["test", "-f" | "-x", path] = args {
        let there = st.world.boot.monitoring.alert_files.get(*path).copied();
        return Some(if there == Some(true) {
            out("")
        } else {
            fail(1, "")
        });
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
                    header_uuid: None,
                    header_slots: None,
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
                header_uuid: None,
                header_slots: None,
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
        // Files hold no content here: two paths hold the same key only when they are one file.
        ["cmp", "-s", "--", a, b] => match (files.contains_key(*a), files.contains_key(*b)) {
            (true, true) if a == b => out(""),
            (true, true) => fail(1, ""),
            _ => fail(2, format!("cmp: {a}: No such file or directory\n")),
        },
        ["test", "!", "-s", path] => match files.get(*path) {
            Some(f) if f.size > 0 => fail(1, ""),
            _ => out(""),
        },
        _ => return None,
    })
}

/// `cryptsetup resize --key-file KEY NAME`: the mapping spans its device less the header.
fn resize(st: &mut SimState, key: &str, name: &str) -> Result<CmdOutput, HostError> {
    let Some(m) = mapping(st, name).cloned() else {
        return fail(4, format!("Device {name} is not active.\n"));
    };
    let Some(i) = m
        .parents
        .first()
        .and_then(|p| st.world.luks.iter().position(|l| l.device == *p))
    else {
        return fail(1, format!("Device {name} is not a valid LUKS device.\n"));
    };
    if !opens(st, i, key) {
        return fail(2, "No key available with this passphrase.\n");
    }
    let k = &st.world.luks[i].device;
    let size = match k.split_once('/') {
        Some((vg, lv)) => st.world.lv(vg, lv).map(|l| l.size),
        None => st.world.array(k).map(|a| a.size_kib * 1024),
    }
    .unwrap_or(0);
    if let Some(o) = st
        .world
        .other_devices
        .iter_mut()
        .find(|o| o.name.as_deref() == Some(name))
    {
        o.size = size.saturating_sub(LUKS2_DATA_OFFSET);
    }
    out("")
}

/// /dev/mapper/NAME of an open mapping.
pub fn resolve_mapper(st: &SimState, name: &str) -> Option<String> {
    mapping(st, name).map(|o| o.kname.clone())
}

/// Whether key file `key` opens header `i`: its key is in a slot (a header made outside the
/// simulator, with no slots recorded, opens with any key file there).
pub(super) fn opens(st: &SimState, i: usize, key: &str) -> bool {
    let slots = st.world.luks[i]
        .uuid
        .as_ref()
        .and_then(|u| st.world.key_slots.get(u));
    key_ok(st, key) && slots.is_none_or(|s| s.values().any(|k| k == key))
}

/// `luksAddKey --key-file WITH DEV NEW`: NEW's key into the lowest free slot.
fn add_key(st: &mut SimState, with: &str, dev: &str, new: &str) -> Result<CmdOutput, HostError> {
    let Some((_, i)) = header(st, dev) else {
        return fail(1, format!("Device {dev} is not a valid LUKS device.\n"));
    };
    if !opens(st, i, with) {
        return fail(2, "No key available with this passphrase.\n");
    }
    if !key_ok(st, new) {
        return fail(1, format!("Failed to open key file {new}.\n"));
    }
    let uuid = st.world.luks[i].uuid.clone().unwrap_or_default();
    let slots = st.world.key_slots.entry(uuid).or_default();
    let free = (0..32).find(|n| !slots.contains_key(n)).unwrap_or(31);
    slots.insert(free, new.to_string());
    let list: Vec<u32> = slots.keys().copied().collect();
    st.world.luks[i]
        .header
        .get_or_insert_with(default_header)
        .keyslots = list;
    out("")
}

/// `luksRemoveKey DEV KEY`: the slot KEY's key is in is wiped.
fn remove_key(st: &mut SimState, dev: &str, key: &str) -> Result<CmdOutput, HostError> {
    let Some((_, i)) = header(st, dev) else {
        return fail(1, format!("Device {dev} is not a valid LUKS device.\n"));
    };
    let uuid = st.world.luks[i].uuid.clone().unwrap_or_default();
    let Some(slots) = st.world.key_slots.get_mut(&uuid) else {
        return fail(2, "No key available with this passphrase.\n");
    };
    let Some(n) = slots.iter().find(|(_, k)| *k == key).map(|(n, _)| *n) else {
        return fail(2, "No key available with this passphrase.\n");
    };
    slots.remove(&n);
    let list: Vec<u32> = slots.keys().copied().collect();
    st.world.luks[i]
        .header
        .get_or_insert_with(default_header)
        .keyslots = list;
    out("")
}
