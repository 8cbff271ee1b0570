//! mdadm 4.2 as hyraid runs it: the modes dispatched, and an array's life outside create and
//! manage (`--examine --export`, `--run`, `--readwrite`, `--wait`, `--stop`,
//! `--zero-superblock`), with what a finished resync or recovery leaves.

use super::md_create::create;
use super::md_manage::{add, fail_member, grow, re_add, remove_failed, remove_member, replace};
use crate::host::{CmdOutput, HostError};
use crate::observe::MdArray;
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

/// A resync or recovery run to its end: a hot replacement takes the old member's slot (the old
/// one is left faulty), spares in a slot become in-sync, and the array is idle.
pub fn finish_sync(a: &mut MdArray) {
    // A frozen array makes no progress until someone writes `idle` to sync_action.
    if a.sync_action == "idle" || a.sync_action == "frozen" {
        return;
    }
    // A finished hot replace: the replacement takes the old member's slot, the old one is failed.
    let replaced: Vec<(u32, String)> = a
        .members
        .iter()
        .filter(|m| m.has("want_replacement"))
        .filter_map(|m| Some((m.slot?, m.kname.clone())))
        .collect();
    for (slot, old) in replaced {
        if let Some(new) = a.members.iter_mut().find(|m| m.has("replacement")) {
            new.state.retain(|s| s != "replacement" && s != "spare");
            new.state.insert(0, "in_sync".into());
            new.slot = Some(slot);
        }
        if let Some(o) = a.members.iter_mut().find(|m| m.kname == old) {
            o.state.retain(|s| s == "write_mostly");
            o.state.insert(0, "faulty".into());
            o.slot = None;
        }
    }
    for m in a
        .members
        .iter_mut()
        .filter(|m| !m.faulty() && m.has("spare") && m.slot.is_some())
    {
        m.state.retain(|s| s != "spare");
        m.state.insert(0, "in_sync".into());
    }
    a.degraded = a
        .raid_disks
        .saturating_sub(a.members.iter().filter(|m| m.has("in_sync")).count() as u32);
    a.sync_action = "idle".into();
    a.sync_completed = None;
}

pub(super) fn md_target(st: &SimState, path: &str) -> Result<String, Result<CmdOutput, HostError>> {
    match st.resolve(path) {
        Some(Target::Md(k)) => Ok(k),
        _ => Err(fail(
            1,
            format!("mdadm: error opening {path}: No such file or directory\n"),
        )),
    }
}

/// `mdadm ARGS…`: each mode hyraid uses, to the function that models it.
pub fn mdadm(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    match args {
        ["--create", md, rest @ ..] => create(st, md, rest),
        ["--grow", md, rest @ ..] => grow(st, md, rest),
        ["--examine", "--export", dev] => examine(st, dev),
        ["--examine", dev] => examine_super(st, dev),
        ["-X", dev] | ["--examine-bitmap", dev] => examine_bitmap(st, dev),
        ["--run", md] => start(st, md),
        ["--readwrite", md] => readwrite(st, md),
        ["--wait", md] => wait(st, md),
        ["--stop", md] => stop(st, md),
        ["--zero-superblock", devs @ ..] => zero_superblock(st, devs),
        [md, "--add", rest @ ..] => add(st, md, rest),
        [md, "--re-add", rest @ ..] => re_add(st, md, rest),
        [md, "--replace", old, "--with", new] => replace(st, md, old, new),
        [md, "--fail", dev] => fail_member(st, md, dev),
        [md, "--remove", "failed"] => remove_failed(st, md),
        [md, "--remove", dev] => remove_member(st, md, dev),
        _ => fail(
            2,
            format!(
                "mdadm: the simulated host does not model `mdadm {}`\n",
                args.join(" ")
            ),
        ),
    }
}

/// `mdadm --examine --export DEV`: the superblock on a member disk, as `KEY=value` lines.
fn examine(st: &SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(Target::Block(k)) = st.resolve(dev) else {
        return fail(
            1,
            format!("mdadm: cannot open {dev}: No such file or directory\n"),
        );
    };
    // A disk of an external-metadata container: the container's superblock speaks.
    let arrays = || st.world.arrays.iter().filter(|a| a.member(&k).is_some());
    let Some(a) = arrays().find(|a| a.is_container()).or(arrays().next()) else {
        return fail(1, format!("mdadm: No md superblock detected on {dev}.\n"));
    };
    let uuid = a
        .uuid
        .as_deref()
        .map(crate::observe::names::mdadm_uuid)
        .unwrap_or_default();
    if a.is_container() {
        // export_examine_super_imsm / _ddf
        let meta = a.metadata.as_deref().unwrap_or("external:imsm");
        return out(&format!(
            "MD_METADATA={}\nMD_LEVEL=container\nMD_UUID={uuid}\nMD_DEVICES={}\n",
            meta.trim_start_matches("external:"),
            a.raid_disks
        ));
    }
    // An array made as /dev/mdN without a name carries the number as its name; the host is
    // written before it only when `host:name` fits the superblock's 31 characters.
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| a.kname.trim_start_matches("md").to_string());
    let host = &st.world.hostname;
    let set_name = if host.len() + 1 + name.len() < 32 {
        format!("{host}:{name}")
    } else {
        name.chars().take(31).collect()
    };
    out(&format!(
        "MD_LEVEL={}\nMD_DEVICES={}\nMD_NAME={set_name}\nMD_UUID={uuid}\nMD_EVENTS=20\n",
        a.level, a.raid_disks
    ))
}

/// The array of native metadata a member device belongs to, and the member; or mdadm's error.
fn member_of<'a>(
    st: &'a SimState,
    dev: &str,
) -> Result<(&'a crate::observe::MdArray, &'a crate::observe::MdMember), Result<CmdOutput, HostError>>
{
    let Some(Target::Block(k)) = st.resolve(dev) else {
        return Err(fail(
            1,
            format!("mdadm: cannot open {dev}: No such file or directory\n"),
        ));
    };
    st.world
        .arrays
        .iter()
        .filter(|a| !a.is_container() && a.metadata.is_none())
        .find_map(|a| a.member(&k).map(|m| (a, m)))
        .ok_or_else(|| fail(1, format!("mdadm: No md superblock detected on {dev}.\n")))
}

/// `mdadm --examine DEV`: the member's 1.x superblock as mdadm 4.2 prints it (the lines hyraid
/// reads: magic, UUID, level, the internal bitmap, the write-mostly flag, the role).
fn examine_super(st: &SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let (a, m) = match member_of(st, dev) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let uuid = a
        .uuid
        .as_deref()
        .map(crate::observe::names::mdadm_uuid)
        .unwrap_or_default();
    let bitmap = match &a.bitmap {
        Some(b) if b.kind == crate::observe::BitmapKind::Internal => {
            "Internal Bitmap : 8 sectors from superblock\n"
        }
        _ => "",
    };
    let flags = if m.write_mostly() {
        "          Flags : write-mostly\n"
    } else {
        ""
    };
    let role = match m.slot {
        Some(n) => format!("Active device {n}"),
        None => "spare".into(),
    };
    out(&format!(
        "{dev}:\n          Magic : a92b4efc\n        Version : 1.2\n     Array UUID : {uuid}\n     Raid Level : {}\n   Raid Devices : {}\n\n{bitmap}{flags}   Device Role : {role}\n",
        a.level, a.raid_disks
    ))
}

/// `mdadm -X DEV`: the internal bitmap's superblock on a member (chunk, write-behind), or
/// mdadm's word that it has none (exit 1, as mdadm 4.2).
fn examine_bitmap(st: &SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let (a, _) = match member_of(st, dev) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let Some(b) = a
        .bitmap
        .as_ref()
        .filter(|b| b.kind == crate::observe::BitmapKind::Internal)
    else {
        return fail(1, format!("mdadm: {dev} doesn't have bitmap\n"));
    };
    let chunk = match b.chunk {
        c if c >= 1 << 30 && c % (1 << 30) == 0 => format!("{} GB", c >> 30),
        c if c >= 1 << 20 && c % (1 << 20) == 0 => format!("{} MB", c >> 20),
        c if c >= 1 << 10 && c % (1 << 10) == 0 => format!("{} KB", c >> 10),
        c => format!("{c} B"),
    };
    let mode = match b.backlog {
        0 => "Normal".to_string(),
        n => format!("Allow write behind, max {n}"),
    };
    out(&format!(
        "        Filename : {dev}\n           Magic : 6d746962\n         Version : 4\n       Chunksize : {chunk}\n          Daemon : 5s flush period\n      Write Mode : {mode}\n"
    ))
}

/// `mdadm --run MD`: an assembled, inactive array starts with the members it has (degraded if
/// some are missing), auto-read-only as Debian's md starts arrays.
fn start(st: &mut SimState, md: &str) -> Result<CmdOutput, HostError> {
    let k = match md_target(st, md) {
        Ok(k) => k,
        Err(e) => return e,
    };
    let a = st.array_mut(&k).unwrap();
    if a.array_state != "inactive" {
        return fail(1, format!("mdadm: {md} is already running\n"));
    }
    let mut n = 0;
    for (i, m) in a.members.iter_mut().filter(|m| !m.faulty()).enumerate() {
        m.state.retain(|w| w != "spare");
        m.state.insert(0, "in_sync".into());
        m.slot = Some(i as u32);
        n += 1;
    }
    // Debian's md_mod start_ro=1 (/etc/modprobe.d/mdadm.conf): read-only until the first write.
    a.array_state = "read-auto".into();
    a.degraded = a.raid_disks.saturating_sub(n);
    // A degraded RAID1 has no second copy to resync from.
    if a.degraded > 0 {
        a.resync_pending = false;
    }
    out(&format!("mdadm: started array {md}\n"))
}

/// `mdadm --readwrite MD`: an auto-read-only array becomes writable (and a resync held back
/// until its first write starts).
fn readwrite(st: &mut SimState, md: &str) -> Result<CmdOutput, HostError> {
    let k = match md_target(st, md) {
        Ok(k) => k,
        Err(e) => return e,
    };
    let a = st.array_mut(&k).unwrap();
    // RESTART_ARRAY_RW: EBUSY unless the array is read-only.
    if a.array_state != "read-auto" && a.array_state != "readonly" {
        return fail(
            1,
            format!("mdadm: failed to set writable for {md}: Device or resource busy\n"),
        );
    }
    a.array_state = "clean".into();
    super::md_sysfs::start_held_sync(a);
    out("")
}

/// `mdadm --wait MD`: waits for a resync or recovery to end (exit 1 when none runs).
fn wait(st: &mut SimState, md: &str) -> Result<CmdOutput, HostError> {
    let k = match md_target(st, md) {
        Ok(k) => k,
        Err(e) => return e,
    };
    let a = st.array_mut(&k).unwrap();
    if a.sync_action == "idle" {
        return fail(1, "");
    }
    finish_sync(a);
    out("")
}

/// `mdadm --stop MD`: the array leaves the model (its members no longer held, a PV on it
/// forgotten); refused while an active volume group holds it.
fn stop(st: &mut SimState, md: &str) -> Result<CmdOutput, HostError> {
    let k = match md_target(st, md) {
        Ok(k) => k,
        Err(e) => return e,
    };
    if st.world.pv(&k).is_some_and(|p| p.vg.is_some()) {
        return fail(
            1,
            format!(
                "mdadm: Cannot get exclusive access to {md}:Perhaps a running process, mounted filesystem or active volume group?\n"
            ),
        );
    }
    let a = st.world.arrays.iter().position(|a| a.kname == k).unwrap();
    let arr = st.world.arrays.remove(a);
    for m in &arr.members {
        if let Some(d) = st.dev_mut(&m.kname) {
            d.holders.retain(|h| *h != k);
        }
    }
    st.world.lvm.pvs.retain(|p| p.kname != k);
    out(&format!("mdadm: stopped {md}\n"))
}

/// `mdadm --zero-superblock DEV…`: the md superblock erased from each device, refused on a busy
/// one.
fn zero_superblock(st: &mut SimState, devs: &[&str]) -> Result<CmdOutput, HostError> {
    for dev in devs {
        let Some(Target::Block(k)) = st.resolve(dev) else {
            return fail(
                1,
                format!("mdadm: Couldn't open {dev} for write - not zeroing\n"),
            );
        };
        if st.busy(&Target::Block(k.clone())) {
            return fail(
                1,
                format!("mdadm: Couldn't open {dev} for write - not zeroing\n"),
            );
        }
        let d = st.dev_mut(&k).unwrap();
        d.fstype = None;
        d.signatures = Some(
            d.signatures
                .take()
                .unwrap_or_default()
                .into_iter()
                .filter(|s| s.kind != "linux_raid_member")
                .collect(),
        );
    }
    out("")
}
