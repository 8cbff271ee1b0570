//! mdadm's manage and grow modes on an array that runs: members added, re-added, hot-replaced,
//! failed and removed; the internal bitmap added or removed (a file bitmap removed) and the number
//! of slots changed, with `--grow`.

use super::md_create::{member_signature, parse_chunk, superblock_offset};
use super::mdadm::md_target;
use crate::host::{CmdOutput, HostError};
use crate::observe::{BitmapKind, MdBitmap, MdMember};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

pub(super) fn grow(st: &mut SimState, md: &str, rest: &[&str]) -> Result<CmdOutput, HostError> {
    let k = match md_target(st, md) {
        Ok(k) => k,
        Err(e) => return e,
    };
    if let [n] = rest
        && let Some(n) = n.strip_prefix("--raid-devices=")
    {
        return raid_devices(st, md, &k, n);
    }
    if rest == ["--size=max"] {
        return super::md_size::grow_size(st, md, &k);
    }
    let (mut bitmap, mut chunk, mut wb) = (None, None, 0u32);
    for a in rest {
        if let Some(v) = a.strip_prefix("--bitmap=") {
            bitmap = Some(v.to_string());
        } else if let Some(v) = a.strip_prefix("--bitmap-chunk=") {
            chunk = parse_chunk(v);
            if chunk.is_none() {
                return fail(2, format!("mdadm: invalid bitmap chunksize: {v}\n"));
            }
        } else if let Some(v) = a.strip_prefix("--write-behind=") {
            wb = match v.parse() {
                Ok(n) if n <= 16383 => n,
                _ => {
                    return fail(
                        2,
                        "mdadm: Invalid value for maximum outstanding write-behind writes\n",
                    );
                }
            };
        } else {
            return fail(2, format!("mdadm: sim does not model --grow option {a}\n"));
        }
    }
    let a = st.array_mut(&k).unwrap();
    // An auto-read-only array refuses bitmap changes (seen on the real kernel, on every re-run).
    let read_only = a.array_state == "read-auto" || a.array_state == "readonly";
    match bitmap.as_deref() {
        Some("none") => {
            if a.bitmap.is_none() {
                return fail(1, format!("mdadm: no bitmap found on {md}\n"));
            }
            if let Some(f) = a.bitmap.as_ref().filter(|b| b.kind == BitmapKind::File) {
                // mdadm 4.2 `Grow_addbitmap`: SET_BITMAP_FILE -1. md_ioctl refuses it on a
                // read-only array and turns an auto-read-only one read-write; set_bitmap_file
                // refuses it while a sync thread runs (EBUSY).
                let file = f.file.clone().unwrap_or_default();
                if a.sync_action != "idle" || a.array_state == "readonly" {
                    return fail(1, format!("mdadm: failed to remove bitmap {file}\n"));
                }
                a.bitmap = None;
                if a.array_state == "read-auto" {
                    a.array_state = "clean".into();
                    if std::mem::take(&mut a.resync_pending) {
                        a.sync_action = "resync".into();
                        a.sync_completed = Some((0, a.size_kib * 2));
                    }
                }
                return out("");
            }
            if a.sync_action != "idle" || read_only {
                return fail(1, "mdadm: failed to remove internal bitmap.\n");
            }
            a.bitmap = None;
            out("")
        }
        Some("internal") => {
            if a.bitmap.is_some() {
                return fail(1, format!("mdadm: bitmap already present on {md}\n"));
            }
            if read_only {
                return fail(1, "mdadm: failed to set internal bitmap.\n");
            }
            if a.sync_action != "idle" {
                return fail(
                    1,
                    "mdadm: Cannot add bitmap while array is resyncing or reshaping etc.\nmdadm: failed to set internal bitmap.\n",
                );
            }
            a.bitmap = Some(MdBitmap::internal(chunk.unwrap_or(64 << 20), wb));
            out("")
        }
        _ => fail(1, "mdadm: no changes to --grow\n"),
    }
}

/// `mdadm --grow MD --raid-devices=N` on RAID1 (SET_ARRAY_INFO, the kernel's raid1_reshape):
/// refused while a resync or recovery runs, and when shrinking below the members still in the
/// array (failed ones count until removed); the members keep their order in slots 0…, and
/// spares fill the new slots by recovery.
fn raid_devices(st: &mut SimState, md: &str, k: &str, n: &str) -> Result<CmdOutput, HostError> {
    let Ok(n) = n.parse::<u32>() else {
        return fail(2, format!("mdadm: invalid number of raid devices: {n}\n"));
    };
    let busy = format!("mdadm: Cannot set raid-devices for {md}: Device or resource busy\n");
    let a = st.array_mut(k).unwrap();
    let held = a
        .members
        .iter()
        .filter(|m| m.slot.is_some() || m.faulty())
        .count() as u32;
    if n == 0 || a.sync_action != "idle" || held > n {
        return fail(1, busy);
    }
    let mut slotted: Vec<&mut MdMember> =
        a.members.iter_mut().filter(|m| m.slot.is_some()).collect();
    slotted.sort_by_key(|m| m.slot);
    let mut next = 0;
    for m in slotted {
        m.slot = Some(next);
        next += 1;
    }
    a.raid_disks = n;
    for m in a.members.iter_mut() {
        if next < n && !m.faulty() && m.slot.is_none() && m.has("spare") && !m.has("replacement") {
            m.slot = Some(next);
            next += 1;
            if a.sync_action != "frozen" {
                a.sync_action = "recover".into();
            }
            a.sync_completed = Some((0, a.size_kib * 2));
        }
    }
    a.degraded = n.saturating_sub(a.members.iter().filter(|m| m.has("in_sync")).count() as u32);
    out("")
}

fn member_target(
    st: &SimState,
    md: &str,
    dev: &str,
) -> Result<(String, String), Result<CmdOutput, HostError>> {
    let k = md_target(st, md)?;
    match st.resolve(dev) {
        Some(Target::Block(d)) if st.world.array(&k).unwrap().member(&d).is_some() => Ok((k, d)),
        _ => Err(fail(1, format!("mdadm: {dev} is not a member of {md}\n"))),
    }
}

pub(super) fn fail_member(st: &mut SimState, md: &str, dev: &str) -> Result<CmdOutput, HostError> {
    let (k, d) = match member_target(st, md, dev) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let a = st.array_mut(&k).unwrap();
    let others_in_sync = a
        .members
        .iter()
        .filter(|m| m.kname != d && m.has("in_sync") && !m.faulty())
        .count();
    if others_in_sync == 0 {
        // Kernel 6.1 (MD_BROKEN): the last in-sync leg cannot be failed.
        return fail(
            1,
            format!("mdadm: set device faulty failed for {dev}:  Device or resource busy\n"),
        );
    }
    let m = a.members.iter_mut().find(|m| m.kname == d).unwrap();
    m.state.retain(|w| w == "write_mostly");
    m.state.insert(0, "faulty".into());
    m.slot = None;
    a.degraded = a
        .raid_disks
        .saturating_sub(a.members.iter().filter(|m| m.has("in_sync")).count() as u32);
    out(&format!("mdadm: set {dev} faulty in {md}\n"))
}

pub(super) fn remove_member(
    st: &mut SimState,
    md: &str,
    dev: &str,
) -> Result<CmdOutput, HostError> {
    let (k, d) = match member_target(st, md, dev) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let a = st.array_mut(&k).unwrap();
    if !a.member(&d).unwrap().faulty() && !a.member(&d).unwrap().has("spare") {
        return fail(
            1,
            format!("mdadm: hot remove failed for {dev}: Device or resource busy\n"),
        );
    }
    a.members.retain(|m| m.kname != d);
    if let Some(dv) = st.dev_mut(&d) {
        dv.holders.retain(|h| *h != k);
    }
    out(&format!("mdadm: hot removed {dev} from {md}\n"))
}

pub(super) fn remove_failed(st: &mut SimState, md: &str) -> Result<CmdOutput, HostError> {
    let k = match md_target(st, md) {
        Ok(k) => k,
        Err(e) => return e,
    };
    let gone: Vec<String> = st
        .world
        .array(&k)
        .unwrap()
        .members
        .iter()
        .filter(|m| m.faulty())
        .map(|m| m.kname.clone())
        .collect();
    st.array_mut(&k).unwrap().members.retain(|m| !m.faulty());
    for d in &gone {
        if let Some(dv) = st.dev_mut(d) {
            dv.holders.retain(|h| *h != k);
        }
    }
    out(&gone
        .iter()
        .map(|d| format!("mdadm: hot removed {d} from {md}\n"))
        .collect::<String>())
}

/// `mdadm MD --add|--re-add [--write-mostly] DEV` → (array kname, write-mostly, DEV, DEV kname).
fn member_args<'a>(
    st: &SimState,
    md: &str,
    rest: &[&'a str],
    op: &str,
) -> Result<(String, bool, &'a str, String), Result<CmdOutput, HostError>> {
    let k = md_target(st, md)?;
    let (wm, dev) = match rest {
        ["--write-mostly", dev] => (true, *dev),
        [dev] => (false, *dev),
        _ => {
            return Err(fail(
                2,
                format!("mdadm: sim models `{op} [--write-mostly] DEV`\n"),
            ));
        }
    };
    match st.resolve(dev) {
        Some(Target::Block(dk)) => Ok((k, wm, dev, dk)),
        _ => Err(fail(1, format!("mdadm: {dev} does not exist\n"))),
    }
}

pub(super) fn re_add(st: &mut SimState, md: &str, rest: &[&str]) -> Result<CmdOutput, HostError> {
    let (k, wm, dev, dk) = match member_args(st, md, rest, "--re-add") {
        Ok(x) => x,
        Err(e) => return e,
    };
    let a = st.world.array(&k).unwrap().clone();
    let d = st.world.device(&dk).unwrap().clone();
    let ours = d
        .signatures
        .iter()
        .flatten()
        .any(|s| s.kind == "linux_raid_member" && s.uuid.is_some() && s.uuid == a.uuid);
    let free_slot =
        (0..a.raid_disks).find(|s| !a.members.iter().any(|m| m.slot == Some(*s) && !m.faulty()));
    if !ours || a.bitmap.is_none() || free_slot.is_none() || st.busy(&Target::Block(dk.clone())) {
        return fail(
            1,
            format!("mdadm: --re-add for {dev} to {md} is not possible\n"),
        );
    }
    let was_wm = wm;
    let mut state = vec!["spare".to_string()];
    if was_wm {
        state.insert(0, "write_mostly".into());
    }
    let a = st.array_mut(&k).unwrap();
    let data_offset = a.members.iter().find_map(|m| m.data_offset);
    a.members.push(MdMember {
        kname: dk.clone(),
        slot: free_slot,
        state,
        data_offset,
    });
    // A frozen array starts no recovery (the kernel's MD_RECOVERY_FROZEN).
    if a.sync_action != "frozen" {
        a.sync_action = "recover".into();
    }
    a.sync_completed = Some((0, a.size_kib * 2));
    st.dev_mut(&dk).unwrap().holders.push(k);
    out(&format!("mdadm: re-added {dev}\n"))
}

pub(super) fn replace(
    st: &mut SimState,
    md: &str,
    old: &str,
    new: &str,
) -> Result<CmdOutput, HostError> {
    let (k, o) = match member_target(st, md, old) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let (_, n) = match member_target(st, md, new) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let a = st.array_mut(&k).unwrap();
    let old_ok = a
        .member(&o)
        .is_some_and(|m| m.has("in_sync") && !m.faulty());
    let new_spare = a
        .member(&n)
        .is_some_and(|m| m.has("spare") && m.slot.is_none());
    if !old_ok || !new_spare {
        return fail(
            1,
            format!("mdadm: Marking {old} for replacement with {new} failed\n"),
        );
    }
    for m in a.members.iter_mut() {
        if m.kname == o {
            m.state.push("want_replacement".into());
        } else if m.kname == n {
            m.state.push("replacement".into());
        }
    }
    // A frozen array starts no recovery (the kernel's MD_RECOVERY_FROZEN).
    if a.sync_action != "frozen" {
        a.sync_action = "recover".into();
    }
    a.sync_completed = Some((0, a.size_kib * 2));
    out(&format!(
        "mdadm: Marked {old} (device in {md}) for replacement\nmdadm: Marked {new} in {md} as replacement\n"
    ))
}

pub(super) fn add(st: &mut SimState, md: &str, rest: &[&str]) -> Result<CmdOutput, HostError> {
    let (k, wm, dev, dk) = match member_args(st, md, rest, "--add") {
        Ok(x) => x,
        Err(e) => return e,
    };
    if st.busy(&Target::Block(dk.clone())) {
        return fail(
            1,
            format!("mdadm: Cannot open {dev}: Device or resource busy\n"),
        );
    }
    let a = st.world.array(&k).unwrap();
    // mdadm 4.2 (Manage_add): the device's room after the members' data offset (1.0: before
    // the superblock at its end) against the component size.
    let sectors = st.world.device(&dk).unwrap().size / 512;
    let avail = a.join_avail_sectors(sectors).unwrap_or(sectors);
    if avail < a.size_kib * 2 {
        return fail(1, format!("mdadm: {dev} not large enough to join array\n"));
    }
    let free_slot =
        (0..a.raid_disks).find(|s| !a.members.iter().any(|m| m.slot == Some(*s) && !m.faulty()));
    let a = st.array_mut(&k).unwrap();
    let mut state = vec!["spare".to_string()];
    if wm {
        state.insert(0, "write_mostly".into());
    }
    let data_offset = a.members.iter().find_map(|m| m.data_offset);
    a.members.push(MdMember {
        kname: dk.clone(),
        slot: free_slot,
        state,
        data_offset,
    });
    // md holds the rebuild of an auto-read-only array until its first write.
    let held = a.array_state == "read-auto" || a.array_state == "readonly";
    if free_slot.is_some() && !held {
        if a.sync_action != "frozen" {
            a.sync_action = "recover".into();
        }
        a.sync_completed = Some((0, a.size_kib * 2));
    }
    let a = st.world.array(&k).unwrap();
    let (uuid, superblock) = (a.uuid.clone(), a.superblock.clone());
    let d = st.dev_mut(&dk).unwrap();
    d.holders.push(k);
    d.fstype = Some("linux_raid_member".into());
    let at = superblock_offset(superblock.as_deref(), d.size);
    d.signatures = Some(vec![member_signature(&uuid, at)]);
    out(&format!("mdadm: added {dev}\n"))
}
