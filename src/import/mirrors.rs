//! The mirrors of the imported file: md RAID1 arrays with md's own superblocks, by their
//! /dev/md/NAME or adopted by UUID, and the note on mdadm.conf lines `plan` will add.

use super::disks::{Builder, size};
use crate::config::encryption::default_name;
use crate::config::raw::*;
use crate::observe::{BitmapKind, MdArray, Observed};
use crate::plan::persist;
use std::collections::BTreeMap;

/// How the file names an array: `/dev/md/NAME` by its name; an array without one (made as
/// /dev/mdN, which mdadm names by its number) is adopted by UUID under its kernel name.
fn array_label(a: &MdArray) -> String {
    a.name
        .as_ref()
        .map(|n| format!("/dev/md/{n}"))
        .unwrap_or(format!("/dev/{}", a.kname))
}

fn by_name(a: &MdArray) -> Option<&String> {
    a.name.as_ref().filter(|n| {
        crate::observe::names::md_name_safe(n)
            && n.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && !n.chars().all(|c| c.is_ascii_digit())
    })
}

/// An md UUID mdadm.conf can hold (an array that is not running shows zeros).
fn real_uuid(a: &MdArray) -> Option<String> {
    let u = crate::observe::names::mdadm_uuid(a.uuid.as_deref()?);
    let hex: Vec<char> = u.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (hex.len() == 32 && hex.iter().any(|c| *c != '0') && u.len() == 35).then_some(u)
}

/// An imported mirror as mdadm.conf lists it: (entry — its name or adopted device —, UUID, name).
type ConfEntry = (String, String, String);

/// The mirrors, the mirror each array's kernel name became, and how mdadm.conf lists each.
type Mirrors = (
    BTreeMap<String, RawMirror>,
    BTreeMap<String, String>,
    Vec<ConfEntry>,
);

pub(super) fn mirrors(b: &mut Builder) -> Mirrors {
    let o = b.o;
    let mut mirrors = BTreeMap::new();
    let mut mirror_of = BTreeMap::new();
    let mut conf = Vec::new();
    for a in &o.arrays {
        let label = array_label(a);
        if a.level != "raid1" {
            b.skipped
                .push(format!("{label}: {} (hyraid manages RAID1)", a.level));
            continue;
        }
        let uuid = real_uuid(a);
        let (name, adopted) = match (by_name(a), &uuid) {
            (Some(n), _) => (n.clone(), false),
            (None, Some(_)) => (a.kname.clone(), true),
            (None, None) => {
                b.skipped.push(format!(
                    "{label}: no /dev/md/NAME and no UUID to adopt it by"
                ));
                continue;
            }
        };
        if mirrors.contains_key(&name) {
            b.skipped.push(format!(
                "{label}: another array is already imported as mirror `{name}`"
            ));
            continue;
        }
        let metadata = match a.superblock_version() {
            "1.0" => Some(MdMetadata::V1_0),
            "1.2" => None,
            other => {
                b.skipped.push(format!(
                    "{label}: RAID1 with {other} metadata (hyraid manages 1.0 and 1.2)"
                ));
                continue;
            }
        };
        if let Some(meta) = &a.metadata {
            b.skipped.push(format!(
                "{label}: RAID1 with {meta} metadata (hyraid manages md's own superblocks)"
            ));
            continue;
        }
        if let Some(bm) = a
            .bitmap
            .as_ref()
            .filter(|bm| bm.kind == BitmapKind::Unknown)
        {
            b.skipped.push(format!(
                "{label}: its bitmap is {} (hyraid manages internal bitmaps)",
                bm.describe()
            ));
            continue;
        }
        let saved = b.checkpoint();
        let live: Vec<_> = a.members.iter().filter(|m| !m.faulty()).collect();
        let mut members = Vec::new();
        let mut wm = Vec::new();
        let mut rotational = Vec::new();
        let mut why = None;
        for m in &live {
            let Some(d) = o.device(&m.kname) else {
                why = Some(format!(
                    "member /dev/{} is not a disk or partition",
                    m.kname
                ));
                break;
            };
            match b.device(d) {
                Ok(n) => {
                    if m.write_mostly() {
                        wm.push(n.clone());
                    }
                    let whole = d.parent.as_deref().and_then(|p| o.device(p)).unwrap_or(d);
                    rotational.push((n.clone(), whole.rotational));
                    members.push(n);
                }
                Err(e) => {
                    why = Some(e);
                    break;
                }
            }
        }
        // A degraded array keeps the disks that were its members where they are still here:
        // a failed member, or a disk that carries its superblock out of it (removed by hand, or
        // dropped and not re-added). Named in the file, plan re-adds them on `--re-add`; else the mirror
        // would be left out for want of a second member.
        if why.is_none() {
            for (d, how) in returning_members(o, a) {
                if members.len() >= a.raid_disks.max(2) as usize {
                    break;
                }
                match b.device(d) {
                    Ok(n) => {
                        let whole = d.parent.as_deref().and_then(|p| o.device(p)).unwrap_or(d);
                        rotational.push((n.clone(), whole.rotational));
                        // A failed member says whether it was write-mostly; a disk out of
                        // the array does not: a rotational one is taken as it (`auto`).
                        let fast = a.members.iter().any(|m| {
                            o.device(&m.kname)
                                .map(|x| x.parent.as_deref().and_then(|p| o.device(p)).unwrap_or(x))
                                .is_some_and(|x| !x.rotational)
                        });
                        let was_wm = match a.member(&d.kname) {
                            Some(m) => m.write_mostly(),
                            None => whole.rotational && fast,
                        };
                        if was_wm {
                            wm.push(n.clone());
                        }
                        b.converted.push(format!("{label}: /dev/{} {how}; the file names it as member {n}, and `hyraid plan` refuses it until you choose: name the disk that replaces it (under `disks.{n}`), or, only if the cause was transient (a cable, a power cut) and its SMART is clean, put it back with `--re-add {n}` (a recovery)", d.kname));
                        members.push(n);
                    }
                    Err(_) => continue,
                }
            }
        }
        if why.is_none() && members.len() < 2 {
            why = Some("fewer than two usable members".into());
        }
        if let Some(why) = why {
            b.rollback(saved);
            b.skipped.push(format!("{label}: {why}"));
            continue;
        }
        // `auto` where it is what is there: the rotational members, when a fast one exists.
        let auto: Vec<&String> = if rotational.iter().any(|(_, r)| !r) {
            rotational
                .iter()
                .filter(|(_, r)| *r)
                .map(|(n, _)| n)
                .collect()
        } else {
            vec![]
        };
        let write_mostly = if auto.len() == wm.len() && auto.iter().all(|n| wm.contains(n)) {
            RawWriteMostly::Auto(AutoWord::Auto)
        } else {
            RawWriteMostly::List(wm.clone())
        };
        let write_behind = match a.bitmap.as_ref().map(|b| b.backlog).unwrap_or(0) {
            wb if wb > 0 && wm.is_empty() => {
                b.skipped.push(format!("{label}: write-behind {wb} is set but no member is write-mostly, so it has no effect; imported as 0 (plan will reset it)"));
                0
            }
            wb if wb > 16383 => {
                b.converted.push(format!(
                    "{label}: write-behind {wb} is beyond md's limit of 16383: the file says 16383"
                ));
                16383
            }
            wb => wb,
        };
        if let Some(bm) = a.bitmap.as_ref().filter(|bm| bm.kind == BitmapKind::File) {
            b.converted.push(format!("{label}: its bitmap is {} (deprecated by the kernel, gone from mdadm 4.4): the file asks for an internal bitmap of the same chunk, and `hyraid plan` on it shows the conversion (wait for idle, `--bitmap=none`, then `--bitmap=internal`); the old file can be deleted by hand afterwards", bm.describe()));
        }
        // Slots no disk here can fill: the file lists fewer members than md has slots, and the
        // plan refuses to drop the empty ones until the user chooses (`width.rs`).
        if a.raid_disks as usize > members.len().max(2) {
            let empty = a.raid_disks as usize - members.len();
            let note = format!(
                "mirror {name}: md gives the array {} slots and {} of its disks are here; `hyraid plan` refuses to drop the {empty} empty slot(s) until you choose: add the disk that replaces the lost one to `members` (it is rebuilt into the slot), or plan with --allow-destroy to make {} its full width",
                a.raid_disks,
                members.len(),
                members.len()
            );
            b.converted.push(note.clone());
            b.at_mirror.entry(name.clone()).or_default().push(note);
        }
        let device = adopted.then(|| format!("/dev/{}", a.kname));
        if let Some(u) = &uuid {
            conf.push((
                device.clone().unwrap_or(name.clone()),
                u.clone(),
                name.clone(),
            ));
        }
        let encryption = match super::encryption::encryption(o, &a.kname, &default_name(&name)) {
            Ok(e) => e,
            Err(why) => {
                b.rollback(saved);
                b.skipped.push(format!("{label}: {why}"));
                continue;
            }
        };
        mirror_of.insert(a.kname.clone(), name.clone());
        let encryption = encryption.map(|(e, mapping)| {
            // Its PV is the mapping.
            mirror_of.insert(mapping, name.clone());
            e
        });
        let filesystem = mirror_filesystem(o, a, &name);
        mirrors.insert(
            name,
            RawMirror {
                filesystem,
                encryption,
                uuid: if adopted { uuid } else { None },
                device,
                members,
                write_mostly: Some(write_mostly),
                bitmap: Some(match &a.bitmap {
                    None => RawBitmap::None(NoneWord::None),
                    Some(bm) => RawBitmap::Internal(RawBitmapInternal {
                        chunk: Some(size(bm.chunk)),
                    }),
                }),
                write_behind: Some(write_behind),
                metadata,
                state: None,
                check: None,
            },
        );
    }
    (mirrors, mirror_of, conf)
}

/// The `filesystem:` of an array that carries ext4 or xfs itself (no LVM) and has a line in
/// /etc/fstab, by UUID, /dev/md/NAME or /dev/mdN.
fn mirror_filesystem(
    o: &Observed,
    a: &crate::observe::MdArray,
    name: &str,
) -> Option<crate::config::filesystem::RawFilesystem> {
    let f = o.filesystems.iter().find(|f| f.md && f.kname == a.kname)?;
    let paths = [format!("/dev/md/{name}"), format!("/dev/{}", a.kname)];
    super::lvm::filesystem(o, f, &paths)
}

/// What `plan` on the file will show when mdadm.conf does not list the mirrors as hyraid writes
/// them: exactly that file (and the initramfs that carries it).
pub(super) fn mdadm_conf_note(o: &Observed, conf: &[ConfEntry], converted: bool) -> Option<String> {
    let ours: Vec<(String, String)> = conf
        .iter()
        .map(|(e, u, _)| (e.clone(), u.clone()))
        .collect();
    let cur = o.boot.mdadm_conf.as_deref();
    let new = persist::managed_mdadm_conf(cur, &ours, &[]).ok()?;
    if ours.is_empty() || cur == Some(new.as_str()) {
        return None;
    }
    let listed = cur
        .map(crate::observe::names::mdadm_conf_uuids)
        .unwrap_or_default();
    let missing: Vec<&str> = conf
        .iter()
        .filter(|(_, u, _)| !listed.contains(&crate::observe::names::norm_uuid(u)))
        .map(|(_, _, n)| n.as_str())
        .collect();
    let path = persist::mdadm_conf_path(&o.boot);
    let initramfs = persist::initramfs_command(&o.boot)
        .map(|c| format!(", then `{c}`"))
        .unwrap_or_default();
    let note = if missing.is_empty() {
        format!(
            "mdadm.conf ({path}) lists the arrays under other device names: `hyraid plan` on this file shows only that (hyraid's ARRAY lines replace those{initramfs}); nothing else changes"
        )
    } else {
        format!(
            "mdadm.conf ({path}) has no ARRAY line for {}: `hyraid plan` on this file shows only that (hyraid's ARRAY lines for them{initramfs}); nothing else changes",
            missing.join(", ")
        )
    };
    // With a bitmap conversion planned too, the plan shows more than mdadm.conf.
    Some(if converted {
        note.replace("shows only that", "shows that")
            .replace("; nothing else changes", "")
    } else {
        note
    })
}

/// The disks a degraded array may take back: its failed members, then the disks that carry its
/// superblock and nothing stacked on them, with how they stand.
fn returning_members<'o>(
    o: &'o Observed,
    a: &crate::observe::MdArray,
) -> Vec<(&'o crate::observe::BlockDevice, &'static str)> {
    use crate::observe::names::norm_uuid;
    if a.degraded == 0 {
        return Vec::new();
    }
    let uuid = a.uuid.as_deref().map(norm_uuid);
    let failed = a
        .members
        .iter()
        .filter(|m| m.faulty())
        .filter_map(|m| o.device(&m.kname))
        .map(|d| (d, "is a failed member of the array"));
    let outside = o
        .block_devices
        .iter()
        .filter(|d| a.member(&d.kname).is_none() && d.holders.is_empty())
        .filter(|d| {
            d.signatures.iter().flatten().any(|s| {
                s.kind == "linux_raid_member"
                    && uuid.is_some()
                    && s.uuid.as_deref().map(norm_uuid) == uuid
            })
        })
        .map(|d| (d, "carries the array's superblock but is not in it"));
    failed.chain(outside).collect()
}
