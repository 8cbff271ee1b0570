//! Mirrors: members, write-mostly, bitmap and write-behind.

use super::disks::Refs;
use super::names::check_name;
use super::{Ctx, seg, size_bytes};
use crate::config::desired::*;
use crate::config::raw::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// `used_by`: disk → "mirror data0" / "volume group vg0".
pub(super) fn mirrors(
    c: &mut Ctx,
    raw: &RawConfig,
    refs: &Refs,
    used_by: &mut HashMap<String, String>,
) -> BTreeMap<String, MirrorSpec> {
    let mut mirrors = BTreeMap::new();
    let mut adopted_by: HashMap<String, String> = HashMap::new();
    for (name, m) in &raw.mirrors {
        let p = format!("/mirrors/{}", seg(name));
        check_mirror_name(c, &p, name, refs.disks);
        members(c, raw, refs, &p, name, m, used_by);
        let write_mostly = write_mostly(c, &p, name, m);
        let bitmap_chunk = bitmap_chunk(c, &p, m);
        let write_behind = write_behind(c, &p, m, bitmap_chunk, &write_mostly);
        let spec = MirrorSpec {
            name: name.clone(),
            members: m.members.clone(),
            write_mostly,
            bitmap_chunk,
            write_behind,
            absent: m.state == Some(ObjectState::Absent),
            adopted: adopted(c, &p, name, m, &mut adopted_by),
            metadata: m.metadata.unwrap_or_default(),
            filesystem: m
                .filesystem
                .as_ref()
                .map(|f| super::lvm::filesystem(c, &p, f)),
            encryption: m
                .encryption
                .as_ref()
                .map(|e| super::encryption::encryption(c, &p, name, m, e)),
            check: None,
        };
        check_superblock_name(c, &p, name, raw.host.as_deref(), &spec);
        check_inverted_write_mostly(c, &p, name, &spec, refs.disks);
        mirrors.insert(name.clone(), spec);
    }

    mirrors
}

/// A mirror's name: valid for md, and not also a disk's.
fn check_mirror_name(c: &mut Ctx, p: &str, name: &str, disks: &BTreeMap<String, DiskSpec>) {
    if let Err(msg) = check_name(name, MD_NAME_MAX) {
        c.err(p, true, msg, None);
    }
    if disks.contains_key(name) {
        c.err(
            p,
            true,
            format!("`{name}` is both a disk and a mirror"),
            Some("give mirrors and disks distinct names; PV lists refer to either by name".into()),
        );
    }
}

/// The name mdadm writes into a new array's superblock: `HOST:NAME` when it fits in 31
/// characters, and otherwise NAME alone (`init_super1` in super1.c), so the array would not
/// be this host's. With `host:` in the file, the host is known here; without, the plan checks
/// the machine's hostname. Adopted and absent mirrors are never created.
fn check_superblock_name(c: &mut Ctx, p: &str, name: &str, host: Option<&str>, m: &MirrorSpec) {
    let Some(host) = host.filter(|_| m.adopted.is_none() && !m.absent) else {
        return;
    };
    if let Some(msg) = superblock_name_too_long(host, name) {
        c.err(
            p,
            true,
            msg,
            Some(format!(
                "shorten the mirror's name to at most {} characters",
                MD_NAME_MAX.saturating_sub(host.len() + 1)
            )),
        );
    }
}

/// A mirror's members: at least two, each a device of the file (not a mirror), listed once, on
/// different disks, and in no other mirror or volume group.
fn members(
    c: &mut Ctx,
    raw: &RawConfig,
    refs: &Refs,
    p: &str,
    name: &str,
    m: &RawMirror,
    used_by: &mut HashMap<String, String>,
) {
    if m.members.len() < 2 {
        c.err(
            &format!("{p}/members"),
            false,
            format!(
                "mirror `{name}` has {} member(s); a mirror needs at least 2",
                m.members.len()
            ),
            None,
        );
    }
    let mut seen = BTreeSet::new();
    let mut on_disk: HashMap<&str, &String> = HashMap::new();
    for (i, member) in m.members.iter().enumerate() {
        let mp = format!("{p}/members/{i}");
        if raw.mirrors.contains_key(member) {
            c.err(
                &mp,
                false,
                format!("`{member}` is a mirror; the members of a mirror are disks"),
                Some("md RAID1 over other arrays is not supported: list disks here".into()),
            );
            continue;
        }
        if !refs.devices.contains(member) {
            let (msg, hint) = refs.device_error(member);
            c.err(&mp, false, format!("member {msg}"), Some(hint));
            continue;
        }
        if !seen.insert(member.clone()) {
            c.err(
                &mp,
                false,
                format!("`{member}` is listed twice in mirror `{name}`"),
                None,
            );
            continue;
        }
        let disk = split_device(member).0;
        if let Some(first) = on_disk.insert(disk, member) {
            c.err(
                    &mp,
                    false,
                    format!("`{member}` and `{first}` are partitions of the same disk `{disk}`: the mirror would not survive losing it"),
                    Some("mirror partitions of different disks".into()),
                );
        }
        if let Some(other) = used_by.insert(member.clone(), format!("mirror `{name}`")) {
            c.err(
                &mp,
                false,
                format!("disk `{member}` is already used by {other}"),
                Some("a device belongs to one mirror or volume group".into()),
            );
        }
    }
}

/// `write_mostly`: `auto`, or a list of the mirror's members.
fn write_mostly(c: &mut Ctx, p: &str, name: &str, m: &RawMirror) -> WriteMostly {
    match &m.write_mostly {
        None | Some(RawWriteMostly::Auto(_)) => WriteMostly::Auto,
        Some(RawWriteMostly::List(l)) => {
            for (i, w) in l.iter().enumerate() {
                if !m.members.contains(w) {
                    c.err(
                        &format!("{p}/write_mostly/{i}"),
                        false,
                        format!("`{w}` is not a member of mirror `{name}`"),
                        Some(format!("members are: {}", m.members.join(", "))),
                    );
                }
            }
            WriteMostly::List(l.clone())
        }
    }
}

/// The write-intent bitmap's chunk (None for `bitmap: none`): 64MiB unless the file says, a
/// power of two of at least 4KiB.
fn bitmap_chunk(c: &mut Ctx, p: &str, m: &RawMirror) -> Option<u64> {
    match &m.bitmap {
        Some(RawBitmap::None(_)) => None,
        None | Some(RawBitmap::Internal(RawBitmapInternal { chunk: None })) => Some(64 << 20),
        Some(RawBitmap::Internal(RawBitmapInternal { chunk: Some(sz) })) => {
            let cp = format!("{p}/bitmap/chunk");
            match size_bytes(sz) {
                Err(e) => {
                    c.err(&cp, false, e, None);
                    Some(64 << 20)
                }
                Ok(b) if !b.is_power_of_two() || b < 4096 => {
                    c.err(
                        &cp,
                        false,
                        format!("bitmap chunk {b} bytes must be a power of two of at least 4KiB"),
                        Some("e.g. `64MiB` (the default) or `128MiB`".into()),
                    );
                    Some(64 << 20)
                }
                Ok(b) if b > MAX_BITMAP_CHUNK => {
                    c.err(
                        &cp,
                        false,
                        format!("bitmap chunk {} is larger than md takes: mdadm reads `--bitmap-chunk` into a 32-bit count of 512-byte sectors (at most INT_MAX/512, just under 2GiB), and the superblock keeps it in 32 bits", crate::config::size::writable(b)),
                        Some("at most `1GiB`; `64MiB` (the default) or `128MiB` suit a hybrid mirror".into()),
                    );
                    Some(64 << 20)
                }
                Ok(b) => Some(b),
            }
        }
    }
}

/// The largest bitmap chunk: the largest power of two mdadm's sector count holds.
pub const MAX_BITMAP_CHUNK: u64 = 1 << 30;

/// `write_behind`: in md's range, and above 0 only with a bitmap and a write-mostly member.
fn write_behind(
    c: &mut Ctx,
    p: &str,
    m: &RawMirror,
    bitmap_chunk: Option<u64>,
    write_mostly: &WriteMostly,
) -> u32 {
    let write_behind = m.write_behind.unwrap_or(0);
    if write_behind > 16383 {
        c.err(
            &format!("{p}/write_behind"),
            false,
            format!("write_behind {write_behind} is out of range"),
            Some("md allows 0 to 16383 outstanding write-behind writes".into()),
        );
    } else if write_behind > 0 {
        if bitmap_chunk.is_none() {
            c.err(
                &format!("{p}/write_behind"),
                false,
                "write_behind needs a write-intent bitmap",
                Some("remove `bitmap: none`, or set `write_behind: 0`".into()),
            );
        }
        if matches!(write_mostly, WriteMostly::List(l) if l.is_empty()) {
            c.err(&format!("{p}/write_behind"), false, "write_behind > 0 without a write-mostly member", Some("write-behind only applies to write-mostly members: list one in `write_mostly`, or set `write_behind: 0`".into()));
        }
    }
    write_behind
}

/// write_mostly that lists every SSD member and leaves the HDDs out: the wrong way round.
fn check_inverted_write_mostly(
    c: &mut Ctx,
    p: &str,
    name: &str,
    spec: &MirrorSpec,
    disks: &BTreeMap<String, DiskSpec>,
) {
    let media = |n: &str| disks.get(split_device(n).0)?.rotational_override;
    if let Some(fast) = spec.inverted_write_mostly(media) {
        c.err(
                &format!("{p}/write_mostly"),
                false,
                format!(
                    "write_mostly lists every SSD member of mirror `{name}` ({}): md would serve reads from the HDDs",
                    fast.join(", ")
                ),
                Some("write-mostly belongs on the slow members: list the HDDs, or write `write_mostly: auto`".into()),
            );
    }
}

/// `uuid` and `device` of a mirror adopted by UUID: both or neither, a real md UUID, a kernel md
/// device; each names one mirror. `adopted_by`: UUID or device → the mirror that names it.
fn adopted(
    c: &mut Ctx,
    p: &str,
    name: &str,
    m: &RawMirror,
    adopted_by: &mut HashMap<String, String>,
) -> Option<Adopted> {
    let (uuid, device) = match (&m.uuid, &m.device) {
        (None, None) => return None,
        (Some(_), None) => {
            c.err(&format!("{p}/uuid"), true, format!("mirror `{name}` has `uuid` but no `device`"), Some("add the array's kernel device, e.g. `device: /dev/md0` (`cat /proc/mdstat` lists it); hyraid addresses an adopted array by it and never renames it".into()));
            return None;
        }
        (None, Some(_)) => {
            c.err(&format!("{p}/device"), true, format!("mirror `{name}` has `device` but no `uuid`"), Some("add the array's UUID (`mdadm --detail /dev/mdN | grep UUID`): a kernel name alone can name another array after a reboot".into()));
            return None;
        }
        (Some(u), Some(d)) => (u, d),
    };
    let mut ok = true;
    let hex: String = uuid.chars().filter(|ch| ch.is_ascii_hexdigit()).collect();
    let shape = uuid
        .chars()
        .all(|ch| ch.is_ascii_hexdigit() || ch == ':' || ch == '-');
    if hex.len() != 32 || !shape || hex.chars().all(|ch| ch == '0') {
        c.err(&format!("{p}/uuid"), false, format!("`{uuid}` is not an md array UUID"), Some("copy it from `mdadm --detail /dev/mdN` (`UUID : 2a5bd1d0:4b8a6c55:3f1f7d4e:7c9d1c2a`)".into()));
        ok = false;
    }
    if !crate::observe::names::md_kernel_device(device) {
        let hint = match device.strip_prefix("/dev/md/") {
            Some(n) => format!(
                "an array with a /dev/md/NAME link is adopted by its name: call the mirror `{n}` and leave out `uuid` and `device`"
            ),
            None => "write the kernel device, e.g. `/dev/md0` (`cat /proc/mdstat` lists it)".into(),
        };
        c.err(
            &format!("{p}/device"),
            false,
            format!("`{device}` is not an md kernel device (/dev/mdN)"),
            Some(hint),
        );
        ok = false;
    }
    if !ok {
        return None;
    }
    let uuid = crate::observe::names::mdadm_uuid(uuid);
    for (key, field, what) in [(&uuid, "uuid", "UUID"), (device, "device", "device")] {
        if let Some(other) = adopted_by.insert(format!("{field} {key}"), name.to_string()) {
            c.err(
                &format!("{p}/{field}"),
                false,
                format!("{what} `{key}` is already adopted by mirror `{other}`"),
                Some("an array is one mirror of the file".into()),
            );
            ok = false;
        }
    }
    ok.then(|| Adopted {
        uuid,
        device: device.clone(),
    })
}
