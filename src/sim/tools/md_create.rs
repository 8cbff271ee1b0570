//! `mdadm --create` (mdadm 4.2, metadata 1.2 or 1.0): the options hyraid passes, the warnings
//! that abort a create without `--run`, the data offset and array size mdadm picks, and the
//! smallest internal bitmap chunk it accepts.

use crate::host::{CmdOutput, HostError};
use crate::observe::{BitmapKind, MdArray, MdBitmap, MdMember, Signature};
use crate::sim::fail;
use crate::sim::world::{SimState, Target};

/// mdadm 4.2 `--bitmap-chunk` parsing: no suffix = KiB; K/M/G/T suffixes.
pub(super) fn parse_chunk(s: &str) -> Option<u64> {
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
pub(super) fn bm_space(sectors: u64) -> u64 {
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

/// Sectors of a member of `sectors` that 1.0 metadata leaves for data (`validate_geometry1`,
/// case 0: the superblock at least 8 KiB from the end on a 4 KiB boundary, 4 KiB of bad-block
/// log and the bitmap space before it); None when the member cannot hold them.
fn avail_1_0(sectors: u64) -> Option<u64> {
    (sectors & !7).checked_sub(8 * 2 + 8 + bm_space(sectors))
}

/// Byte offset of a member's superblock: 4 KiB in for 1.2; for 1.0, `sb_offset` of
/// `init_super1`'s write-out (`dsize - 16` sectors, rounded down to 4 KiB).
pub(super) fn superblock_offset(superblock: Option<&str>, bytes: u64) -> u64 {
    match superblock {
        Some("1.0") => ((bytes / 512).saturating_sub(16) & !7) * 512,
        _ => 0x1000,
    }
}

/// The md superblock signature a member carries at `offset`, with its array's UUID.
pub(super) fn member_signature(uuid: &Option<String>, offset: u64) -> Signature {
    Signature {
        offset: format!("{offset:#x}"),
        kind: "linux_raid_member".into(),
        uuid: uuid.clone(),
    }
}

/// mdadm's answer when it refuses, returned as it is.
type Refusal = Result<CmdOutput, HostError>;

/// What `mdadm --create` was asked for.
struct CreateArgs {
    level: Option<String>,
    raid_devices: Option<u32>,
    bitmap: Option<String>,
    chunk: Option<u64>,
    write_behind: u32,
    run: bool,
    /// Each device, with whether a `--write-mostly` came before it.
    devices: Vec<(String, bool)>,
    uuid: Option<String>,
    /// `--metadata=`: `1.0` or `1.2` (the default).
    metadata: Option<String>,
}

/// The array `mdadm --create MD` makes, as (name, fixed kernel name): `/dev/md/NAME` (udev links
/// it), or `/dev/mdN` as by hand: that minor, and no /dev/md/ link (mdadm 4.2 names the array
/// `N` in the superblock and links nothing). Refused when the name or the minor is in use.
fn create_target<'a>(
    st: &SimState,
    md: &'a str,
) -> Result<(Option<&'a str>, Option<String>), Refusal> {
    let (name, fixed) = match md.strip_prefix("/dev/md/") {
        Some(n) => (Some(n), None),
        None if crate::observe::names::md_kernel_device(md) => (None, Some(md[5..].to_string())),
        None => return Err(fail(2, "mdadm: sim expects /dev/md/NAME or /dev/mdN\n")),
    };
    let taken = match (name, &fixed) {
        (Some(n), _) => st.world.array_named(n).is_some(),
        (None, Some(k)) => st.world.array(k).is_some(),
        _ => false,
    };
    if taken {
        return Err(fail(1, format!("mdadm: {md} is already in use.\n")));
    }
    Ok((name, fixed))
}

/// The options and devices of `mdadm --create`, refused as mdadm 4.2 refuses them (the
/// simulator models RAID1 only).
fn parse_create(rest: &[&str]) -> Result<CreateArgs, Refusal> {
    let mut c = CreateArgs {
        level: None,
        raid_devices: None,
        bitmap: None,
        chunk: None,
        write_behind: 0,
        run: false,
        devices: Vec::new(),
        uuid: None,
        metadata: None,
    };
    let mut write_mostly = false;
    for a in rest {
        if let Some(v) = a.strip_prefix("--level=") {
            c.level = Some(v.to_string());
        } else if let Some(v) = a.strip_prefix("--raid-devices=") {
            c.raid_devices = v.parse::<u32>().ok();
        } else if let Some(v) = a.strip_prefix("--bitmap=") {
            c.bitmap = Some(v.to_string());
        } else if let Some(v) = a.strip_prefix("--bitmap-chunk=") {
            match parse_chunk(v) {
                Some(ch) => c.chunk = Some(ch),
                None => return Err(fail(2, format!("mdadm: invalid bitmap chunksize: {v}\n"))),
            }
        } else if let Some(v) = a.strip_prefix("--write-behind=") {
            match v.parse::<u32>() {
                Ok(n) if n <= 16383 => c.write_behind = n,
                _ => {
                    return Err(fail(
                        2,
                        format!(
                            "mdadm: Invalid value for maximum outstanding write-behind writes: {v}.\n\tMust be between 0 and 16383.\n"
                        ),
                    ));
                }
            }
        } else if *a == "--run" {
            c.run = true;
        } else if *a == "--write-mostly" {
            write_mostly = true;
        } else if let Some(v) = a.strip_prefix("--uuid=") {
            let hex: String = v.chars().filter(|c| c.is_ascii_hexdigit()).collect();
            if hex.len() != 32 {
                return Err(fail(2, format!("mdadm: invalid uuid: {v}\n")));
            }
            c.uuid = Some(format!(
                "{}-{}-{}-{}-{}",
                &hex[0..8],
                &hex[8..12],
                &hex[12..16],
                &hex[16..20],
                &hex[20..32]
            ));
        } else if let Some(v) = a.strip_prefix("--metadata=") {
            c.metadata = Some(match v {
                "1" | "1.2" | "default" => "1.2".to_string(),
                "1.0" => "1.0".to_string(),
                _ => {
                    return Err(fail(
                        2,
                        format!("mdadm: sim models metadata 1.0 and 1.2, not {v}\n"),
                    ));
                }
            });
        } else if a.starts_with("--name=") || a.starts_with("--homehost=") {
        } else if a.starts_with("--") {
            return Err(fail(2, format!("mdadm: sim does not model option {a}\n")));
        } else {
            c.devices.push((a.to_string(), write_mostly));
        }
    }
    if !matches!(
        c.level.as_deref(),
        Some("1") | Some("raid1") | Some("mirror")
    ) {
        return Err(fail(2, "mdadm: sim models RAID1 only\n"));
    }
    if c.raid_devices != Some(c.devices.len() as u32) {
        return Err(fail(
            2,
            format!(
                "mdadm: {} devices given, but --raid-devices={:?}\n",
                c.devices.len(),
                c.raid_devices
            ),
        ));
    }
    Ok(c)
}

/// The members' knames, each device opened as mdadm opens it (missing or busy: refused), with
/// the warnings about what the devices already hold.
fn open_members(
    st: &SimState,
    devices: &[(String, bool)],
) -> Result<(Vec<String>, String), Refusal> {
    let mut knames = Vec::new();
    let mut warnings = String::new();
    for (d, _) in devices {
        let Some(Target::Block(k)) = st.resolve(d) else {
            return Err(fail(
                1,
                format!("mdadm: cannot open {d}: No such file or directory\n"),
            ));
        };
        if st.busy(&Target::Block(k.clone())) {
            return Err(fail(
                1,
                format!("mdadm: cannot open {d}: Device or resource busy\n"),
            ));
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
    Ok((knames, warnings))
}

/// The array's size (KiB) over the members `knames`, adding the warning about members of unequal
/// size to `warnings`. Refused when there are warnings and no `--run` (mdadm would ask), when the
/// smallest member has no room after the metadata, or when the bitmap chunk is too small.
fn array_size(
    st: &SimState,
    c: &CreateArgs,
    knames: &[String],
    warnings: &mut String,
) -> Result<u64, Refusal> {
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
    if !warnings.is_empty() && !c.run {
        return Err(fail(
            1,
            format!("{warnings}Continue creating array? mdadm: create aborted.\n"),
        ));
    }
    // 1.2: the first device listed decides the data offset for all; the array is as large as
    // the smallest member's space after it. 1.0: each member's space before its superblock.
    // In KiB rounded down to 64 KiB (Create.c, for RAID1).
    let offset = data_offset(sizes[0] / 512);
    let avail = if c.metadata.as_deref() == Some("1.0") {
        sizes
            .iter()
            .map(|b| avail_1_0(b / 512))
            .collect::<Option<Vec<u64>>>()
            .and_then(|v| v.into_iter().min())
            .filter(|a| *a > 0)
    } else {
        (min / 512).checked_sub(offset).filter(|a| *a > 0)
    };
    let Some(avail) = avail else {
        let small = &c.devices[sizes.iter().position(|s| *s == min).unwrap_or(0)].0;
        return Err(fail(
            1,
            format!(
                "device {small} is too small ({}K) for required metadata!\nmdadm: {small} is not suitable for this array.\nmdadm: create aborted\n",
                min / 1024
            ),
        ));
    };
    let size_kib = (avail / 2) & !63;
    if let Some(ch) = c.chunk.filter(|_| c.bitmap.as_deref() == Some("internal"))
        && ch < min_bitmap_chunk(size_kib * 2)
    {
        return Err(fail(1, "mdadm: Given bitmap chunk size not supported.\n"));
    }
    Ok(size_kib)
}

/// The bitmap the new array gets: as asked, else an internal one when the array is over
/// 100 GiB or write-behind is asked for (mdadm 4.2's default).
fn create_bitmap(c: &CreateArgs, size_kib: u64) -> Result<Option<MdBitmap>, Refusal> {
    let (chunk, wb) = (c.chunk, c.write_behind);
    Ok(match c.bitmap.as_deref() {
        Some("internal") => Some(MdBitmap::internal(chunk.unwrap_or(64 << 20), wb)),
        Some("none") => None,
        None if size_kib > 100 << 20 || wb > 0 => {
            Some(MdBitmap::internal(chunk.unwrap_or(64 << 20), wb))
        }
        None => None,
        // A bitmap file (mdadm 4.2 `CreateBitmap`; 4.5 refuses the option): without
        // `--bitmap-chunk`, 4 KiB doubled until the array has at most 2^20 chunks.
        Some(path) if path.contains('/') => {
            let mut ch = chunk.unwrap_or(4096);
            while chunk.is_none() && size_kib * 2 > ch << 11 {
                ch <<= 1;
            }
            Some(MdBitmap {
                kind: BitmapKind::File,
                file: Some(path.to_string()),
                ..MdBitmap::internal(ch, wb)
            })
        }
        Some(other) => {
            return Err(fail(
                2,
                format!("mdadm: sim does not model --bitmap={other}\n"),
            ));
        }
    })
}

/// `mdadm --create MD --level=1 --raid-devices=N [options] DEV…`: a RAID1 array with 1.2
/// metadata that starts resyncing at once.
pub(super) fn create(st: &mut SimState, md: &str, rest: &[&str]) -> Result<CmdOutput, HostError> {
    let (name, fixed) = match create_target(st, md) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let c = match parse_create(rest) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let (knames, mut warnings) = match open_members(st, &c.devices) {
        Ok(m) => m,
        Err(e) => return e,
    };
    let size_kib = match array_size(st, &c, &knames, &mut warnings) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let kname = fixed.unwrap_or_else(|| {
        let minor = (0..=127u32)
            .rev()
            .find(|n| st.world.array(&format!("md{n}")).is_none())
            .unwrap_or(0);
        format!("md{minor}")
    });
    let serial = st.next_serial();
    let bitmap = match create_bitmap(&c, size_kib) {
        Ok(b) => b,
        Err(e) => return e,
    };
    // Every member gets the data offset the first one decided (1.2); 1.0 data starts at 0.
    let first = knames
        .first()
        .and_then(|k| st.world.device(k))
        .map(|d| d.size / 512)
        .unwrap_or(0);
    let offset = if c.metadata.as_deref() == Some("1.0") {
        0
    } else {
        data_offset(first)
    };
    let members = c
        .devices
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
            data_offset: Some(offset),
        })
        .collect();
    st.world.arrays.push(MdArray {
        kname: kname.clone(),
        name: name.map(str::to_string),
        uuid: Some(
            c.uuid
                .unwrap_or_else(|| format!("{serial:08x}-5e52-a71e-0141-a8e8fe8e251e")),
        ),
        level: "raid1".into(),
        raid_disks: c.devices.len() as u32,
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
        superblock: c.metadata.filter(|m| m != "1.2"),
        mismatch_cnt: 0,
        sync_min: 0,
        sync_speed_max: None,
        superblock_read: false,
    });
    let a = st.world.array(&kname).unwrap();
    let (uuid, superblock) = (a.uuid.clone(), a.superblock.clone());
    for k in &knames {
        let d = st.dev_mut(k).unwrap();
        d.holders.push(kname.clone());
        d.fstype = Some("linux_raid_member".into());
        let at = superblock_offset(superblock.as_deref(), d.size);
        d.signatures = Some(vec![member_signature(&uuid, at)]);
    }
    Ok(CmdOutput {
        status: 0,
        stdout: String::new(),
        stderr: format!("{warnings}mdadm: array {md} started.\n"),
    })
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
