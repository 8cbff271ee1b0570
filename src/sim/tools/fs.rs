//! mkfs.ext4, dumpe2fs, e2fsck and resize2fs (e2fsprogs 1.47.0), mkfs.xfs, xfs_info and
//! xfs_growfs (xfsprogs 6.1), mkdir, `systemctl daemon-reload` and mount as they behave on an
//! LV or an md array of the simulated machine: the filesystem and its mount point go into the
//! world, where lsblk reports them.

use crate::host::{CmdOutput, HostError};
use crate::observe::Filesystem;
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

/// The device a filesystem tool is given: an LV (/dev/VG/LV) or an md array (/dev/md/NAME,
/// /dev/mdN).
#[derive(Clone, PartialEq)]
enum FsDev {
    Lv(String, String),
    Md(String),
    /// An open LUKS mapping (/dev/mapper/NAME), by name.
    Mapper(String),
}

fn fs_dev(st: &SimState, dev: &str) -> Option<FsDev> {
    match st.resolve(dev) {
        Some(Target::Lv(vg, lv)) => Some(FsDev::Lv(vg, lv)),
        Some(Target::Md(k)) => Some(FsDev::Md(k)),
        Some(Target::Mapper(_)) => Some(FsDev::Mapper(dev.strip_prefix("/dev/mapper/")?.into())),
        _ => None,
    }
}

impl FsDev {
    fn holds(&self, f: &Filesystem) -> bool {
        match self {
            FsDev::Lv(vg, lv) => !f.md && f.mapper.is_none() && f.vg == *vg && f.lv == *lv,
            FsDev::Md(k) => f.md && f.kname == *k,
            FsDev::Mapper(n) => f.mapper.as_deref() == Some(n.as_str()),
        }
    }
    /// Bytes of the device, in whole 4 KiB blocks.
    fn size(&self, st: &SimState) -> u64 {
        let bytes = match self {
            FsDev::Lv(vg, lv) => st.world.lv(vg, lv).map(|l| l.size),
            FsDev::Md(k) => st.world.array(k).map(|a| a.size_kib * 1024),
            FsDev::Mapper(n) => crate::sim::tools::crypt::mapping(st, n).map(|o| o.size),
        };
        bytes.unwrap_or(0) / 4096 * 4096
    }
    fn of(f: &Filesystem) -> FsDev {
        match (&f.mapper, f.md) {
            (Some(n), _) => FsDev::Mapper(n.clone()),
            (None, true) => FsDev::Md(f.kname.clone()),
            (None, false) => FsDev::Lv(f.vg.clone(), f.lv.clone()),
        }
    }
}

/// What the array carries besides a filesystem the world models: a PV's label (`LVM2_member`).
fn md_signature(st: &SimState, target: &FsDev) -> Option<Filesystem> {
    let FsDev::Md(k) = target else { return None };
    let a = st.world.array(k)?;
    Some(Filesystem::on_array(k, a.fstype.clone()?))
}

fn option<'a>(args: &[&'a str], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| *a == flag)
        .and_then(|i| args.get(i + 1).copied())
}

/// `mkfs.ext4 [-b N] [-U UUID] [-L LABEL] [-F] DEV` or `mkfs.xfs [-b size=N] [-m uuid=UUID] [-L LABEL] [-f] DEV`.
pub(in crate::sim) fn mkfs(
    st: &mut SimState,
    fstype: &str,
    args: &[&str],
) -> Result<CmdOutput, HostError> {
    let dev = args.last().copied().unwrap_or("");
    let prog = format!("mkfs.{fstype}");
    // Filesystems are modelled on LVs and arrays only: on anything else mkfs is a command the
    // simulated machine does not know.
    let Some(target) = fs_dev(st, dev) else {
        return Err(HostError::Spawn {
            program: format!("{prog} {}", args.join(" ")),
            detail: "the simulated host models filesystems on LVs and md arrays only".into(),
        });
    };
    let force = args.contains(&if fstype == "xfs" { "-f" } else { "-F" });
    if let FsDev::Md(k) = &target
        && st.world.pv(k).is_some_and(|p| p.vg.is_some())
    {
        // A PV of a VG: device-mapper holds the array open.
        return match fstype {
            "xfs" => fail(
                1,
                format!(
                    "mkfs.xfs: cannot open {dev}: Device or resource busy
"
                ),
            ),
            _ => fail(
                1,
                format!(
                    "mke2fs 1.47.0 (5-Feb-2023)
{dev} is apparently in use by the system; will not make a filesystem here!
"
                ),
            ),
        };
    }
    let existing = st
        .world
        .filesystems
        .iter()
        .find(|f| target.holds(f))
        .cloned()
        .or_else(|| md_signature(st, &target));
    if let Some(e) = &existing {
        if e.mountpoint.is_some() {
            return fail(1, format!("{prog}: {dev} contains a mounted filesystem\n"));
        }
        if !force {
            return match fstype {
                "xfs" => fail(
                    1,
                    format!(
                        "mkfs.xfs: {dev} appears to contain an existing filesystem ({}).\nmkfs.xfs: Use the -f option to force overwrite.\n",
                        e.fstype
                    ),
                ),
                // stdin is /dev/null: mke2fs's "Proceed anyway?" reads EOF and gives up.
                _ => fail(
                    1,
                    format!(
                        "mke2fs 1.47.0 (5-Feb-2023)\n{dev} contains a {} file system\nProceed anyway? (y,N) ",
                        e.fstype
                    ),
                ),
            };
        }
    }
    let uuid = match fstype {
        "xfs" => option(args, "-m").and_then(|m| m.strip_prefix("uuid=")),
        _ => option(args, "-U"),
    }
    .map(str::to_string)
    .unwrap_or_else(|| {
        let n = st.next_serial();
        format!("{n:08x}-0000-4000-8000-000000000000")
    });
    let size = target.size(st);
    let (vg, lv, kname) = match &target {
        FsDev::Lv(vg, lv) => {
            let i = st
                .world
                .lvm
                .lvs
                .iter()
                .position(|l| l.vg == *vg && l.name == *lv);
            (vg.clone(), lv.clone(), format!("dm-{}", i.unwrap_or(0)))
        }
        FsDev::Md(k) => {
            // The new superblock overwrites an orphan PV's label.
            st.world.lvm.pvs.retain(|p| p.kname != *k);
            if let Some(a) = st.array_mut(k) {
                a.fstype = Some(fstype.into());
            }
            (String::new(), String::new(), k.clone())
        }
        FsDev::Mapper(n) => {
            let o = crate::sim::tools::crypt::mapping(st, n);
            let (vg, lv) = o
                .and_then(|o| o.parents.first()?.split_once('/'))
                .map(|(v, l)| (v.to_string(), l.to_string()))
                .unwrap_or_default();
            (vg, lv, o.map(|o| o.kname.clone()).unwrap_or_default())
        }
    };
    st.world.filesystems.retain(|f| !target.holds(f));
    st.world.filesystems.push(Filesystem {
        md: matches!(target, FsDev::Md(_)),
        vg,
        lv,
        kname,
        fstype: fstype.into(),
        uuid: Some(uuid.clone()),
        mountpoint: None,
        size: Some(size),
        min_size: None,
        label: option(args, "-L").map(str::to_string),
        // hyraid's mkfs asks 4096 (ext4 -b 4096, xfs -s size=4096): the simulator's default.
        block_size: None,
        mapper: match &target {
            FsDev::Mapper(n) => Some(n.clone()),
            _ => None,
        },
    });
    let blocks = size / 4096;
    match fstype {
        // hyraid's mkfs.xfs asks 4096-byte sectors (-s size=4096).
        "xfs" => out(&xfs_geometry(dev, blocks, 4096)),
        _ => Ok(CmdOutput {
            status: 0,
            stdout: format!(
                "Creating filesystem with {blocks} 4k blocks and {} inodes\nFilesystem UUID: {uuid}\nAllocating group tables: done                            \nWriting inode tables: done                            \nCreating journal (8192 blocks): done\nWriting superblocks and filesystem accounting information: done\n\n",
                blocks / 4
            ),
            stderr: "mke2fs 1.47.0 (5-Feb-2023)\n".into(),
        }),
    }
}

/// `mount MOUNTPOINT`: by its /etc/fstab line, as util-linux's mount does.
pub(in crate::sim) fn mount(st: &mut SimState, mp: &str) -> Result<CmdOutput, HostError> {
    let fstab = st.world.boot.fstab.clone().unwrap_or_default();
    let line = fstab.lines().find(|l| {
        let l = l.trim();
        !l.starts_with('#') && l.split_whitespace().nth(1) == Some(mp)
    });
    let Some(line) = line else {
        return fail(1, format!("mount: {mp}: can't find in /etc/fstab.\n"));
    };
    let source = line.split_whitespace().next().unwrap_or("");
    let uuid = source.strip_prefix("UUID=").unwrap_or(source);
    let Some(f) = st
        .world
        .filesystems
        .iter_mut()
        .find(|f| f.uuid.as_deref() == Some(uuid))
    else {
        return fail(
            32,
            format!("mount: {mp}: special device {source} does not exist.\n"),
        );
    };
    if f.mountpoint.is_some() {
        return fail(
            32,
            format!("mount: {mp}: {source} already mounted or mount point busy.\n"),
        );
    }
    f.mountpoint = Some(mp.to_string());
    out("")
}

/// The geometry mkfs.xfs and xfs_info print (libfrog's xfs_report_geom), for 4 KiB blocks.
fn xfs_geometry(name: &str, blocks: u64, sectsz: u64) -> String {
    format!(
        "meta-data={name:<22} isize=512    agcount=4, agsize={} blks\n         =                       sectsz={sectsz:<5} attr=2, projid32bit=1\n         =                       crc=1        finobt=1, sparse=1, rmapbt=0\n         =                       reflink=1    bigtime=1 inobtcount=1 nrext64=0\ndata     =                       bsize=4096   blocks={blocks}, imaxpct=25\n         =                       sunit=0      swidth=0 blks\nnaming   =version 2              bsize=4096   ascii-ci=0, ftype=1\nlog      =internal log           bsize=4096   blocks=16384, version=2\n         =                       sectsz=512   sunit=0 blks, lazy-count=1\nrealtime =none                   extsz=4096   blocks=0, rtextents=0\n",
        blocks.div_ceil(4)
    )
}

/// The filesystem on the LV or array `dev` names, or the one mounted at `dev`.
pub(super) fn fs_at<'a>(st: &'a mut SimState, dev: &str) -> Option<&'a mut Filesystem> {
    let target = fs_dev(st, dev);
    st.world.filesystems.iter_mut().find(|f| match &target {
        Some(t) => t.holds(f),
        None => f.mountpoint.as_deref() == Some(dev),
    })
}

/// Bytes of the device under a filesystem, in whole 4 KiB blocks.
fn lv_size(st: &SimState, f: &Filesystem) -> u64 {
    FsDev::of(f).size(st)
}

/// `dumpe2fs -h DEV` and `xfs_info DEV|MOUNTPOINT`: the superblock's geometry.
pub(in crate::sim) fn fs_info(
    st: &mut SimState,
    prog: &str,
    dev: &str,
) -> Result<CmdOutput, HostError> {
    let Some(f) = fs_at(st, dev).cloned() else {
        return match prog {
            "dumpe2fs" => fail(
                1,
                format!(
                    "dumpe2fs 1.47.0 (5-Feb-2023)\ndumpe2fs: Bad magic number in super-block while trying to open {dev}\nCouldn't find valid filesystem superblock.\n"
                ),
            ),
            _ => fail(
                1,
                format!(
                    "{dev}: is not a valid XFS filesystem (unexpected SB magic number 0x00000000)\n"
                ),
            ),
        };
    };
    // What libblkid would report (BLOCK_SIZE): hyraid makes both with 4096 (ext4 -b 4096, xfs
    // -s size=4096); a machine's own may say otherwise.
    let bs = f.block_size.unwrap_or(4096);
    let blocks = f.size.unwrap_or(0) / bs.max(1);
    match (prog, f.fstype.as_str()) {
        ("dumpe2fs", "ext4") => Ok(CmdOutput {
            status: 0,
            stdout: format!(
                "Filesystem volume name:   {}\nLast mounted on:          <not available>\nFilesystem UUID:          {}\nFilesystem magic number:  0xEF53\nFilesystem revision #:    1 (dynamic)\nFilesystem state:         clean\nInode count:              {}\nBlock count:              {blocks}\nReserved block count:     {}\nFree blocks:              {}\nFirst block:              0\nBlock size:               {bs}\nFragment size:            {bs}\n",
                f.label.as_deref().unwrap_or("<none>"),
                f.uuid.clone().unwrap_or_default(),
                blocks / 4,
                blocks / 20,
                blocks * 9 / 10
            ),
            stderr: "dumpe2fs 1.47.0 (5-Feb-2023)\n".into(),
        }),
        ("xfs_info", "xfs") => out(&xfs_geometry(dev, f.size.unwrap_or(0) / 4096, bs)),
        ("dumpe2fs", _) => fail(
            1,
            format!(
                "dumpe2fs 1.47.0 (5-Feb-2023)\ndumpe2fs: Bad magic number in super-block while trying to open {dev}\n"
            ),
        ),
        _ => fail(
            1,
            format!(
                "{dev}: is not a valid XFS filesystem (unexpected SB magic number 0x58465342)\n"
            ),
        ),
    }
}

/// `resize2fs DEV` (online when mounted; an unmounted one must have been checked by `e2fsck -f`
/// since it was last mounted, which the simulator does not track) and `xfs_growfs MOUNTPOINT`
/// (xfs grows only mounted): to the size of the LV.
pub(in crate::sim) fn grow(
    st: &mut SimState,
    prog: &str,
    dev: &str,
) -> Result<CmdOutput, HostError> {
    let Some(f) = fs_at(st, dev).cloned() else {
        return fail(1, format!("{prog}: {dev}: no such filesystem\n"));
    };
    let to = lv_size(st, &f);
    let from = f.size.unwrap_or(0);
    if prog == "xfs_growfs" && f.mountpoint.as_deref() != Some(dev) {
        return fail(
            1,
            format!("xfs_growfs: {dev} is not a mounted XFS filesystem\n"),
        );
    }
    if let Some(x) = fs_at(st, dev) {
        x.size = Some(to.max(from));
    }
    match prog {
        "resize2fs" if to <= from => Ok(CmdOutput {
            status: 0,
            stdout: String::new(),
            stderr: format!(
                "resize2fs 1.47.0 (5-Feb-2023)\nThe filesystem is already {} (4k) blocks long.  Nothing to do!\n\n",
                from / 4096
            ),
        }),
        "resize2fs" => Ok(CmdOutput {
            status: 0,
            stdout: format!(
                "{}The filesystem on {dev} is now {} (4k) blocks long.\n\n",
                if f.mountpoint.is_some() {
                    format!(
                        "Filesystem at {dev} is mounted on {}; on-line resizing required\nold_desc_blocks = 1, new_desc_blocks = 1\n",
                        f.mountpoint.clone().unwrap_or_default()
                    )
                } else {
                    String::new()
                },
                to / 4096
            ),
            stderr: "resize2fs 1.47.0 (5-Feb-2023)\n".into(),
        }),
        _ => out(&format!(
            "{}data blocks changed from {} to {}\n",
            xfs_geometry(dev, from / 4096, f.block_size.unwrap_or(4096)),
            from / 4096,
            to / 4096
        )),
    }
}

/// `umount MOUNTPOINT`.
pub(in crate::sim) fn umount(st: &mut SimState, mp: &str) -> Result<CmdOutput, HostError> {
    match st
        .world
        .filesystems
        .iter_mut()
        .find(|f| f.mountpoint.as_deref() == Some(mp))
    {
        Some(f) => {
            f.mountpoint = None;
            out("")
        }
        None => fail(32, format!("umount: {mp}: not mounted.\n")),
    }
}

/// The simulated ext4's smallest size in 4 KiB blocks: the world's `min_size` (what a test puts
/// there: the data and metadata it holds), else 1/16 of the filesystem.
fn min_blocks(f: &Filesystem) -> u64 {
    f.min_size.unwrap_or(f.size.unwrap_or(0) / 16) / 4096
}

/// `resize2fs -P DEV`: the estimate of the smallest size, in blocks (read-only; mounted or not).
pub(in crate::sim) fn resize2fs_min(st: &mut SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(f) = fs_at(st, dev).cloned() else {
        return fail(
            1,
            format!(
                "resize2fs 1.47.0 (5-Feb-2023)\nresize2fs: Bad magic number in super-block while trying to open {dev}\n"
            ),
        );
    };
    Ok(CmdOutput {
        status: 0,
        stdout: format!(
            "Estimated minimum size of the filesystem: {}\n",
            min_blocks(&f)
        ),
        stderr: "resize2fs 1.47.0 (5-Feb-2023)\n".into(),
    })
}

/// `resize2fs DEV SIZE` with SIZE in KiB (`262144K`): an ext4 shrinks only unmounted, and never
/// beyond its device.
pub(in crate::sim) fn resize2fs_to(
    st: &mut SimState,
    dev: &str,
    size: &str,
) -> Result<CmdOutput, HostError> {
    let Some(f) = fs_at(st, dev).cloned() else {
        return fail(
            1,
            format!(
                "resize2fs 1.47.0 (5-Feb-2023)\nresize2fs: Bad magic number in super-block while trying to open {dev}\n"
            ),
        );
    };
    let Some(kib) = size.strip_suffix('K').and_then(|k| k.parse::<u64>().ok()) else {
        return fail(1, format!("resize2fs: Invalid new size: {size}\n"));
    };
    let to = kib * 1024 / 4096 * 4096;
    let from = f.size.unwrap_or(0);
    if to > lv_size(st, &f) {
        return fail(
            1,
            format!(
                "resize2fs 1.47.0 (5-Feb-2023)\nThe containing partition (or device) is only {} (4k) blocks.\nYou requested a new size of {} blocks.\n\n",
                lv_size(st, &f) / 4096,
                to / 4096
            ),
        );
    }
    let min = min_blocks(&f);
    if to / 4096 < min {
        return fail(
            1,
            format!(
                "resize2fs 1.47.0 (5-Feb-2023)\nresize2fs: New size smaller than minimum ({min})\n\n"
            ),
        );
    }
    if to < from && f.mountpoint.is_some() {
        return fail(
            1,
            format!(
                "resize2fs 1.47.0 (5-Feb-2023)\nFilesystem at {dev} is mounted on {}; on-line resizing required\nresize2fs: On-line shrinking not supported\n",
                f.mountpoint.clone().unwrap_or_default()
            ),
        );
    }
    if let Some(x) = fs_at(st, dev) {
        x.size = Some(to);
    }
    if to == from {
        return Ok(CmdOutput {
            status: 0,
            stdout: String::new(),
            stderr: format!(
                "resize2fs 1.47.0 (5-Feb-2023)\nThe filesystem is already {} (4k) blocks long.  Nothing to do!\n\n",
                to / 4096
            ),
        });
    }
    Ok(CmdOutput {
        status: 0,
        stdout: format!(
            "Resizing the filesystem on {dev} to {} (4k) blocks.\nThe filesystem on {dev} is now {} (4k) blocks long.\n\n",
            to / 4096,
            to / 4096
        ),
        stderr: "resize2fs 1.47.0 (5-Feb-2023)\n".into(),
    })
}
