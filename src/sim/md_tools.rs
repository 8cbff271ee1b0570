//! mdadm, md sysfs writes, hdparm and wipefs, as the real tools behave (mdadm 4.2, kernel 6.1).

use super::{SimState, Target, fail, out};
use crate::host::{CmdOutput, HostError};
use crate::observe::{MdArray, MdBitmap, MdMember, Signature, WriteCacheSource};

/// mdadm 4.2 `--bitmap-chunk` parsing: no suffix = KiB; K/M/G/T suffixes.
fn parse_chunk(s: &str) -> Option<u64> {
    let (n, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        'T' | 't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1 << 10),
    };
    n.parse::<u64>()
        .ok()
        .map(|v| v * mult)
        .filter(|v| v.is_power_of_two())
}

/// Data offset (sectors) mdadm 4.2 picks for 1.2 metadata, from the size of the first device
/// it is given (`validate_geometry1` in super1.c: 12 KiB for the superblock and bad-block log,
/// the bitmap space, and a reshape headroom of about 0.1% up to 128 MiB, rounded up to 1 MiB).
fn data_offset(sectors: u64) -> u64 {
    let mut headroom: u64 = 128 * 1024 * 2;
    while (headroom << 10) > sectors && headroom > 0 {
        headroom >>= 1;
    }
    (12 * 2 + bm_space(sectors) + headroom).div_ceil(2048) * 2048
}

/// Sectors mdadm reserves for an internal bitmap (`choose_bm_space` in super1.c).
fn bm_space(sectors: u64) -> u64 {
    if sectors < 64 * 2 {
        0
    } else if sectors - 64 * 2 >= 200 * 1024 * 1024 * 2 {
        128 * 2
    } else if sectors - 4 * 2 > 8 * 1024 * 1024 * 2 {
        64 * 2
    } else {
        4 * 2
    }
}

/// The smallest bitmap chunk (bytes) mdadm 4.2 accepts at create for an array of `sectors`: the
/// bitmap must fit the space `choose_bm_space` left (`add_internal_bitmap1`).
fn min_bitmap_chunk(sectors: u64) -> u64 {
    let max_bits = (bm_space(sectors) * 512).saturating_sub(256) * 8;
    let (mut chunk, mut bits) = (4096u64, sectors * 512 / 4096 + 1);
    while bits > max_bits && max_bits > 0 {
        chunk *= 2;
        bits = bits.div_ceil(2);
    }
    chunk
}

/// The md 1.2 superblock signature a member carries, with its array's UUID.
fn member_signature(uuid: &Option<String>) -> Signature {
    Signature {
        offset: "0x1000".into(),
        kind: "linux_raid_member".into(),
        uuid: uuid.clone(),
    }
}

pub fn finish_sync(a: &mut MdArray) {
    if a.sync_action == "idle" {
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

fn md_target(st: &SimState, path: &str) -> Result<String, Result<CmdOutput, HostError>> {
    match st.resolve(path) {
        Some(Target::Md(k)) => Ok(k),
        _ => Err(fail(
            1,
            format!("mdadm: error opening {path}: No such file or directory\n"),
        )),
    }
}

pub fn mdadm(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    match args {
        ["--create", md, rest @ ..] => create(st, md, rest),
        ["--grow", md, rest @ ..] => grow(st, md, rest),
        ["--examine", "--export", dev] => {
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
            // An array made as /dev/mdN without a name carries the number as its name.
            let name = a
                .name
                .clone()
                .unwrap_or_else(|| a.kname.trim_start_matches("md").to_string());
            out(&format!(
                "MD_LEVEL={}\nMD_DEVICES={}\nMD_NAME={}:{name}\nMD_UUID={uuid}\nMD_EVENTS=20\n",
                a.level, a.raid_disks, st.world.hostname
            ))
        }
        ["--run", md] => {
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
            a.array_state = "clean".into();
            a.degraded = a.raid_disks.saturating_sub(n);
            out(&format!("mdadm: started array {md}\n"))
        }
        ["--readwrite", md] => {
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
            if std::mem::take(&mut a.resync_pending) {
                a.sync_action = "resync".into();
                a.sync_completed = Some((0, a.size_kib * 2));
            }
            out("")
        }
        ["--wait", md] => {
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
        ["--stop", md] => {
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
        ["--zero-superblock", devs @ ..] => {
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

fn create(st: &mut SimState, md: &str, rest: &[&str]) -> Result<CmdOutput, HostError> {
    // `/dev/md/NAME` (udev links it), or `/dev/mdN` as by hand: that minor, and no
    // /dev/md/ link (mdadm 4.2 names the array `N` in the superblock and links nothing).
    let (name, fixed) = match md.strip_prefix("/dev/md/") {
        Some(n) => (Some(n), None),
        None if crate::observe::names::md_kernel_device(md) => (None, Some(md[5..].to_string())),
        None => return fail(2, "mdadm: sim expects /dev/md/NAME or /dev/mdN\n"),
    };
    let taken = match (name, &fixed) {
        (Some(n), _) => st.world.array_named(n).is_some(),
        (None, Some(k)) => st.world.array(k).is_some(),
        _ => false,
    };
    if taken {
        return fail(1, format!("mdadm: {md} is already in use.\n"));
    }
    let (mut level, mut raid_devices, mut bitmap, mut chunk, mut wb, mut run) =
        (None, None, None, None, 0u32, false);
    let mut devices: Vec<(String, bool)> = Vec::new();
    let mut write_mostly = false;
    let mut uuid: Option<String> = None;
    for a in rest {
        if let Some(v) = a.strip_prefix("--level=") {
            level = Some(v.to_string());
        } else if let Some(v) = a.strip_prefix("--raid-devices=") {
            raid_devices = v.parse::<u32>().ok();
        } else if let Some(v) = a.strip_prefix("--bitmap=") {
            bitmap = Some(v.to_string());
        } else if let Some(v) = a.strip_prefix("--bitmap-chunk=") {
            match parse_chunk(v) {
                Some(c) => chunk = Some(c),
                None => return fail(2, format!("mdadm: invalid bitmap chunksize: {v}\n")),
            }
        } else if let Some(v) = a.strip_prefix("--write-behind=") {
            match v.parse::<u32>() {
                Ok(n) if n <= 16383 => wb = n,
                _ => {
                    return fail(
                        2,
                        format!(
                            "mdadm: Invalid value for maximum outstanding write-behind writes: {v}.\n\tMust be between 0 and 16383.\n"
                        ),
                    );
                }
            }
        } else if *a == "--run" {
            run = true;
        } else if *a == "--write-mostly" {
            write_mostly = true;
        } else if let Some(v) = a.strip_prefix("--uuid=") {
            let hex: String = v.chars().filter(|c| c.is_ascii_hexdigit()).collect();
            if hex.len() != 32 {
                return fail(2, format!("mdadm: invalid uuid: {v}\n"));
            }
            uuid = Some(format!(
                "{}-{}-{}-{}-{}",
                &hex[0..8],
                &hex[8..12],
                &hex[12..16],
                &hex[16..20],
                &hex[20..32]
            ));
        } else if a.starts_with("--metadata=")
            || a.starts_with("--name=")
            || a.starts_with("--homehost=")
        {
        } else if a.starts_with("--") {
            return fail(2, format!("mdadm: sim does not model option {a}\n"));
        } else {
            devices.push((a.to_string(), write_mostly));
        }
    }
    if !matches!(level.as_deref(), Some("1") | Some("raid1") | Some("mirror")) {
        return fail(2, "mdadm: sim models RAID1 only\n");
    }
    if raid_devices != Some(devices.len() as u32) {
        return fail(
            2,
            format!(
                "mdadm: {} devices given, but --raid-devices={:?}\n",
                devices.len(),
                raid_devices
            ),
        );
    }
    let mut knames = Vec::new();
    let mut warnings = String::new();
    for (d, _) in &devices {
        let Some(Target::Block(k)) = st.resolve(d) else {
            return fail(
                1,
                format!("mdadm: cannot open {d}: No such file or directory\n"),
            );
        };
        if st.busy(&Target::Block(k.clone())) {
            return fail(
                1,
                format!("mdadm: cannot open {d}: Device or resource busy\n"),
            );
        }
        let dev = st.world.device(&k).unwrap();
        for s in dev.signatures.clone().unwrap_or_default() {
            // mdadm 4.2 only notices ext2/3/4, other md superblocks and partition tables.
            match s.kind.as_str() {
                "ext2" | "ext3" | "ext4" => warnings.push_str(&format!(
                    "mdadm: {d} appears to contain an ext2fs file system\n"
                )),
                "linux_raid_member" => {
                    warnings.push_str(&format!("mdadm: {d} appears to be part of a raid array:\n"))
                }
                "gpt" | "dos" | "PMBR" => {
                    warnings.push_str(&format!("mdadm: partition table exists on {d}\n"))
                }
                _ => {}
            }
        }
        knames.push(k);
    }
    let sizes: Vec<u64> = knames
        .iter()
        .map(|k| st.world.device(k).unwrap().size)
        .collect();
    let (min, max) = (
        *sizes.iter().min().unwrap_or(&0),
        *sizes.iter().max().unwrap_or(&0),
    );
    if max > min + min / 100 {
        warnings.push_str("mdadm: largest drive exceeds size by more than 1%\n");
    }
    if !warnings.is_empty() && !run {
        return fail(
            1,
            format!("{warnings}Continue creating array? mdadm: create aborted.\n"),
        );
    }
    // The first device listed decides the data offset for all; the array is as large as the
    // smallest member's space after it, in KiB rounded down to 64 KiB (Create.c, for RAID1).
    let offset = data_offset(sizes[0] / 512);
    if min / 512 <= offset {
        let small = &devices[sizes.iter().position(|s| *s == min).unwrap_or(0)].0;
        return fail(
            1,
            format!(
                "device {small} is too small ({}K) for required metadata!\nmdadm: {small} is not suitable for this array.\nmdadm: create aborted\n",
                min / 1024
            ),
        );
    }
    let size_kib = ((min / 512 - offset) / 2) & !63;
    if let Some(c) = chunk.filter(|_| bitmap.as_deref() == Some("internal"))
        && c < min_bitmap_chunk(size_kib * 2)
    {
        return fail(1, "mdadm: Given bitmap chunk size not supported.\n");
    }
    let kname = fixed.unwrap_or_else(|| {
        let minor = (0..=127u32)
            .rev()
            .find(|n| st.world.array(&format!("md{n}")).is_none())
            .unwrap_or(0);
        format!("md{minor}")
    });
    let serial = st.next_serial();
    let bitmap = match bitmap.as_deref() {
        Some("internal") => Some(MdBitmap::internal(chunk.unwrap_or(64 << 20), wb)),
        Some("none") => None,
        None if size_kib > 100 << 20 || wb > 0 => {
            Some(MdBitmap::internal(chunk.unwrap_or(64 << 20), wb))
        }
        None => None,
        Some(other) => return fail(2, format!("mdadm: sim does not model --bitmap={other}\n")),
    };
    let members = devices
        .iter()
        .zip(&knames)
        .enumerate()
        .map(|(i, ((_, wm), k))| MdMember {
            kname: k.clone(),
            slot: Some(i as u32),
            state: if *wm {
                vec!["in_sync".into(), "write_mostly".into()]
            } else {
                vec!["in_sync".into()]
            },
        })
        .collect();
    st.world.arrays.push(MdArray {
        kname: kname.clone(),
        name: name.map(str::to_string),
        uuid: Some(uuid.unwrap_or_else(|| format!("{serial:08x}-5e52-a71e-0141-a8e8fe8e251e"))),
        level: "raid1".into(),
        raid_disks: devices.len() as u32,
        size_kib,
        array_state: "clean".into(),
        sync_action: "resync".into(),
        sync_completed: Some((0, size_kib * 2)),
        resync_pending: false,
        degraded: 0,
        bitmap,
        members,
        fstype: None,
        metadata: None,
    });
    let uuid = st.world.array(&kname).unwrap().uuid.clone();
    for k in &knames {
        let d = st.dev_mut(k).unwrap();
        d.holders.push(kname.clone());
        d.fstype = Some("linux_raid_member".into());
        d.signatures = Some(vec![member_signature(&uuid)]);
    }
    Ok(CmdOutput {
        status: 0,
        stdout: String::new(),
        stderr: format!("{warnings}mdadm: array {md} started.\n"),
    })
}

fn grow(st: &mut SimState, md: &str, rest: &[&str]) -> Result<CmdOutput, HostError> {
    let k = match md_target(st, md) {
        Ok(k) => k,
        Err(e) => return e,
    };
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

fn fail_member(st: &mut SimState, md: &str, dev: &str) -> Result<CmdOutput, HostError> {
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

fn remove_member(st: &mut SimState, md: &str, dev: &str) -> Result<CmdOutput, HostError> {
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

fn remove_failed(st: &mut SimState, md: &str) -> Result<CmdOutput, HostError> {
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

fn re_add(st: &mut SimState, md: &str, rest: &[&str]) -> Result<CmdOutput, HostError> {
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
    a.members.push(MdMember {
        kname: dk.clone(),
        slot: free_slot,
        state,
    });
    a.sync_action = "recover".into();
    a.sync_completed = Some((0, a.size_kib * 2));
    st.dev_mut(&dk).unwrap().holders.push(k);
    out(&format!("mdadm: re-added {dev}\n"))
}

fn replace(st: &mut SimState, md: &str, old: &str, new: &str) -> Result<CmdOutput, HostError> {
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
    a.sync_action = "recover".into();
    a.sync_completed = Some((0, a.size_kib * 2));
    out(&format!(
        "mdadm: Marked {old} (device in {md}) for replacement\nmdadm: Marked {new} in {md} as replacement\n"
    ))
}

fn add(st: &mut SimState, md: &str, rest: &[&str]) -> Result<CmdOutput, HostError> {
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
    if st.world.device(&dk).unwrap().size / 1024 < a.size_kib {
        return fail(1, format!("mdadm: {dev} not large enough to join array\n"));
    }
    let free_slot =
        (0..a.raid_disks).find(|s| !a.members.iter().any(|m| m.slot == Some(*s) && !m.faulty()));
    let a = st.array_mut(&k).unwrap();
    let mut state = vec!["spare".to_string()];
    if wm {
        state.insert(0, "write_mostly".into());
    }
    a.members.push(MdMember {
        kname: dk.clone(),
        slot: free_slot,
        state,
    });
    if free_slot.is_some() {
        a.sync_action = "recover".into();
        a.sync_completed = Some((0, a.size_kib * 2));
    }
    let uuid = st.world.array(&k).unwrap().uuid.clone();
    let d = st.dev_mut(&dk).unwrap();
    d.holders.push(k);
    d.fstype = Some("linux_raid_member".into());
    d.signatures = Some(vec![member_signature(&uuid)]);
    out(&format!("mdadm: added {dev}\n"))
}

pub fn sysfs_write(st: &mut SimState, path: &str, value: &str) -> Result<(), HostError> {
    let inval = |detail: &str| {
        Err(HostError::Io {
            path: path.to_string(),
            detail: detail.to_string(),
        })
    };
    let nf = || {
        Err(HostError::NotFound {
            path: path.to_string(),
        })
    };
    // A SCSI rescan (`device/rescan`): the model has no stale view to refresh.
    if let Some(k) = path
        .strip_prefix("/sys/block/")
        .and_then(|r| r.strip_suffix("/device/rescan"))
    {
        return if st.world.device(k).is_some() && value == "1" {
            Ok(())
        } else {
            nf()
        };
    }
    let Some(rest) = path.strip_prefix("/sys/block/") else {
        return nf();
    };
    let Some((md, attr)) = rest.split_once("/md/") else {
        return nf();
    };
    let Some(a) = st.array_mut(md) else {
        return nf();
    };
    if let Some(m) = attr
        .strip_prefix("dev-")
        .and_then(|m| m.strip_suffix("/state"))
    {
        let Some(mem) = a.members.iter_mut().find(|x| x.kname == m) else {
            return nf();
        };
        match value {
            "writemostly" => {
                if !mem.write_mostly() {
                    let pos = mem
                        .state
                        .iter()
                        .position(|s| s != "faulty" && s != "in_sync")
                        .unwrap_or(mem.state.len());
                    mem.state.insert(pos, "write_mostly".into());
                }
            }
            "-writemostly" => mem.state.retain(|s| s != "write_mostly"),
            _ => {
                return inval(
                    "Invalid argument (the simulated host models writemostly/-writemostly)",
                );
            }
        }
        return Ok(());
    }
    if attr == "bitmap/backlog" {
        let Ok(n) = value.parse::<u32>() else {
            return inval("Invalid argument");
        };
        if n > 16383 {
            return inval("Invalid argument");
        }
        if !a.members.iter().any(|m| m.write_mostly()) {
            return inval("Invalid argument (can't set backlog, no write mostly device available)");
        }
        match a.bitmap.as_mut() {
            Some(b) => b.backlog = n,
            None => return nf(),
        }
        return Ok(());
    }
    inval("Permission denied (not modelled by the simulated host)")
}

pub fn hdparm(st: &mut SimState, flag: &str, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(Target::Block(k)) = st.resolve(dev) else {
        return fail(2, format!("{dev}: No such file or directory\n"));
    };
    let d = st.dev_mut(&k).unwrap();
    let ata = matches!(d.tran.as_deref(), Some("sata") | Some("ata"));
    let scsi = matches!(
        d.tran.as_deref(),
        Some("sas") | Some("scsi") | Some("iscsi") | Some("fc")
    );
    let set = match flag {
        "-W" => None,
        "-W0" => Some(false),
        "-W1" => Some(true),
        _ => return fail(1, format!("hdparm: sim does not model {flag}\n")),
    };
    let mut o = format!("\n{dev}:\n");
    if !ata && !scsi {
        if let Some(on) = set {
            let v = on as u8;
            o.push_str(&format!(
                " setting drive write-caching to {v} ({})\n",
                if v == 1 { "on" } else { "off" }
            ));
            return Ok(CmdOutput {
                status: 25,
                stdout: o,
                stderr: " HDIO_DRIVE_CMD(setcache) failed: Inappropriate ioctl for device\n".into(),
            });
        }
        return out(&o);
    }
    if scsi {
        // hdparm cannot switch a SAS/SCSI disk's cache, and still exits 0.
        if let Some(v) = set {
            o.push_str(&format!(
                " setting drive write-caching to {} ({})\n",
                v as u8,
                if v { "on" } else { "off" }
            ));
        }
        o.push_str(" write-caching = not supported\n");
        return out(&o);
    }
    if let Some(v) = set {
        o.push_str(&format!(
            " setting drive write-caching to {} ({})\n",
            v as u8,
            if v { "on" } else { "off" }
        ));
        let source = d
            .write_cache
            .map(|c| c.source)
            .unwrap_or(WriteCacheSource::Hdparm);
        d.write_cache = Some(crate::observe::WriteCacheState {
            enabled: Some(v),
            source,
        });
    }
    match d.write_cache.and_then(|c| c.enabled) {
        Some(on) => o.push_str(&format!(
            " write-caching = {:>2} ({})\n",
            on as u8,
            if on { "on" } else { "off" }
        )),
        None => o.push_str(" write-caching = not supported\n"),
    }
    out(&o)
}

/// `sdparm --set|--clear=WCE DEV`: the caching mode page of a SCSI disk (the kernel's cache_type
/// follows). Prints the device's identification line, as the real tool does.
pub fn sdparm(st: &mut SimState, on: bool, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(Target::Block(k)) = st.resolve(dev) else {
        return fail(1, format!("unable to access {dev}, ENOENT\n"));
    };
    let d = st.dev_mut(&k).unwrap();
    match d.write_cache {
        Some(w) if w.source == WriteCacheSource::ScsiCacheType && w.enabled.is_some() => {
            d.write_cache = Some(crate::observe::WriteCacheState {
                enabled: Some(on),
                source: w.source,
            });
            out(&format!(
                "    {dev}: {:<8}  {:<16}  2.5+\n",
                "HYRAID",
                d.model.clone().unwrap_or_default()
            ))
        }
        _ => fail(5, format!("{dev}: no caching mode page\n")),
    }
}

pub fn wipefs_all(st: &mut SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(t @ Target::Block(_)) = st.resolve(dev) else {
        return fail(
            1,
            format!(
                "wipefs: error: {dev}: probing initialization failed: No such file or directory\n"
            ),
        );
    };
    if st.busy(&t) {
        return fail(
            1,
            format!(
                "wipefs: error: {dev}: probing initialization failed: Device or resource busy\n"
            ),
        );
    }
    let k = SimState::kname(&t);
    let d = st.dev_mut(&k).unwrap();
    let n = d.signatures.as_ref().map(|s| s.len()).unwrap_or(0);
    d.signatures = Some(vec![]);
    d.fstype = None;
    d.pttype = None;
    d.mountpoint = None;
    out(&format!("{k}: {n} signature(s) erased\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_offset_matches_real_arrays() {
        // Captured: 2 GiB member → 2094080 KiB array (offset 6144 sectors); 1.5 GiB → 1570816 KiB.
        let s = 2147483648u64 / 512;
        assert_eq!((s - data_offset(s)) / 2, 2094080);
        assert_eq!(
            data_offset(s),
            6144,
            "mdadm --examine: Data Offset : 6144 sectors"
        );
        let s = 1610612736u64 / 512;
        assert_eq!((s - data_offset(s)) / 2, 1570816);
        // The 256 MiB cache partitions of the three-array capture: 261120 blocks.
        let s = 268435456u64 / 512;
        assert_eq!((s - data_offset(s)) / 2, 261120);
        // Large disks get the familiar 264192-sector offset.
        assert_eq!(data_offset(2_000_000_000_000 / 512), 264192);
    }

    #[test]
    fn chunk_units() {
        assert_eq!(parse_chunk("65536"), Some(64 << 20));
        assert_eq!(parse_chunk("64M"), Some(64 << 20));
        assert_eq!(parse_chunk("3M"), None);
        // A 2 GiB array leaves 4 KiB for the bitmap: 30720 bits, so chunks from 128 KiB.
        assert_eq!(min_bitmap_chunk(4188160), 128 << 10);
        assert_eq!(min_bitmap_chunk(2_000_000_000_000 / 512), 2 << 20);
    }
}
