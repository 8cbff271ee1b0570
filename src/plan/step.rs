//! The closed set of changes hyraid makes. [`Step::commands`] is the single source of what runs:
//! the shell renderer prints it and the executor runs it.

use serde::{Deserialize, Serialize};

/// How a step can affect data and redundancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Risk {
    Safe,
    /// Redundancy is reduced for a while (resync, recovery, a window without bitmap).
    Degrades,
    /// Acknowledged writes depend on a single device for a while (writecache on a
    /// non-redundant PV, write-behind).
    DataAtRisk,
    /// Destroys what is on a device; needs --allow-destroy.
    Destroys,
}

impl Risk {
    pub fn label(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Degrades => "degrades",
            Risk::DataAtRisk => "data-at-risk",
            Risk::Destroys => "destroys",
        }
    }
}

/// One thing to run: a program (argv, never a shell) or a write of one value to a sysfs file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Command {
    Run {
        argv: Vec<String>,
        /// Exit codes that mean success (mdadm --wait exits 1 when nothing was running).
        ok_exit: Vec<i32>,
    },
    Write {
        path: String,
        value: String,
    },
    /// Replace a configuration file whole (atomically: written beside it, then renamed).
    ReplaceFile {
        path: String,
        content: String,
    },
    /// Wait until the array's `sync_action` is idle (hyraid polls sysfs and shows progress).
    /// `array` is its name under /dev/md/, or its device (`/dev/md0`) when adopted by UUID.
    WaitIdle {
        array: String,
    },
}

impl Command {
    fn run(argv: &[&str]) -> Command {
        Command::Run {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            ok_exit: vec![0],
        }
    }
    fn run_owned(argv: Vec<String>) -> Command {
        Command::Run {
            argv,
            ok_exit: vec![0],
        }
    }
}

/// How an LV size is passed to lvcreate/lvextend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeArg {
    /// `-L <bytes>b`
    Bytes(u64),
    /// `-l N%FREE` / `-l N%VG`, evaluated by LVM when the command runs.
    Extents(String),
}

impl SizeArg {
    fn args(&self) -> [String; 2] {
        match self {
            SizeArg::Bytes(b) => ["-L".into(), format!("{b}b")],
            SizeArg::Extents(e) => ["-l".into(), e.clone()],
        }
    }
}

/// How a drive's write cache is switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CacheTool {
    /// ATA SET FEATURES, for SATA/ATA disks.
    #[default]
    Hdparm,
    /// The caching mode page's WCE bit, for SCSI/SAS disks.
    Sdparm,
}

impl CacheTool {
    /// The argv that switches `device`'s cache (also what hyraid's udev rule runs).
    pub fn argv(self, device: &str, on: bool) -> Vec<String> {
        match self {
            CacheTool::Hdparm => vec![
                "hdparm".into(),
                if on { "-W1" } else { "-W0" }.into(),
                device.into(),
            ],
            CacheTool::Sdparm => vec![
                "sdparm".into(),
                if on { "--set=WCE" } else { "--clear=WCE" }.into(),
                device.into(),
            ],
        }
    }
}

/// One GPT partition to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPartition {
    pub number: u32,
    pub name: String,
    /// Bytes; None = up to the end of the disk.
    pub size: Option<u64>,
    /// sgdisk type code: fd00 (Linux RAID), 8e00 (Linux LVM), 8300 (Linux).
    pub typecode: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayDevice {
    /// Stable path (/dev/disk/by-id/…).
    pub path: String,
    /// Disk name in the file.
    pub disk: String,
    pub write_mostly: bool,
}

/// The path of the array a [`Command::WaitIdle`] names: /dev/md/NAME, or the device itself.
pub fn wait_path(array: &str) -> String {
    if array.starts_with("/dev/") {
        array.to_string()
    } else {
        format!("/dev/md/{array}")
    }
}

/// mdadm `--bitmap-chunk` value: M when whole MiB, else K.
pub fn chunk_arg(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else {
        format!("{}K", bytes >> 10)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    /// Turn a drive's volatile write cache on or off: `hdparm -W1/-W0` (ATA) or
    /// `sdparm --set/--clear=WCE` (SCSI/SAS).
    SetWriteCache {
        disk: String,
        device: String,
        on: bool,
        #[serde(default)]
        tool: CacheTool,
        /// Kernel name: after sdparm the disk is rescanned so the kernel's cache_type (which
        /// decides whether it sends flushes) matches the drive.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kname: Option<String>,
    },
    /// Erase every signature on a device (`wipefs --all`).
    WipeSignatures {
        disk: String,
        device: String,
        found: Vec<String>,
    },
    /// Create a RAID1 array; write-mostly members are listed after `--write-mostly`.
    CreateArray {
        array: String,
        devices: Vec<ArrayDevice>,
        bitmap_chunk: Option<u64>,
        write_behind: u32,
        /// Chosen by hyraid (`--uuid`), so mdadm.conf can name the array before it exists.
        uuid: String,
    },
    /// Write a file hyraid manages (mdadm.conf ARRAY lines, the drive-cache udev rule).
    WriteFile {
        path: String,
        /// Current content; None when the file does not exist.
        old: Option<String>,
        content: String,
        purpose: String,
    },
    /// Regenerate the initramfs so early boot assembles the arrays by the new mdadm.conf.
    RegenerateInitramfs {
        tool: String,
    },
    /// Make udevd read the changed rules.
    ReloadUdev,
    /// Wait until the array's resync/recovery is done (bitmap changes need an idle array).
    WaitIdle {
        array: String,
        /// The device of an array adopted by UUID (`/dev/md0`); None = /dev/md/NAME.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
    },
    /// Take an auto-read-only array (after boot or assembly, until its first write) read-write:
    /// md refuses bitmap changes until then, and a pending resync starts now.
    ReadWrite {
        array: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
    },
    /// Add a member (to a degraded array: it is rebuilt).
    AddMember {
        array: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
        device: ArrayDevice,
    },
    /// Put a former member back (`--re-add`: with a bitmap only changed blocks are copied).
    ReAddMember {
        array: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
        device: ArrayDevice,
    },
    /// Hot replace: add the new disk as a spare, then copy the old member onto it while it serves.
    ReplaceMember {
        array: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
        old: String,
        new: ArrayDevice,
        /// The new disk is already a spare in the array (an earlier apply added it).
        #[serde(default)]
        spare_added: bool,
    },
    /// Remove every failed member (`--remove failed` works even when the device node is gone).
    RemoveFailed {
        array: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
    },
    /// Create GPT partitions (sgdisk, one call; `new_table` first writes a fresh GPT).
    CreatePartitions {
        disk: String,
        device: String,
        new_table: bool,
        parts: Vec<NewPartition>,
    },
    /// Start an array that was assembled but not started (`mdadm --run`), degraded.
    StartArray {
        array: String,
        md: String,
    },
    /// Set or clear write-mostly on a live member (sysfs; mdadm has no command for it).
    SetWriteMostly {
        array: String,
        md: String,
        member: String,
        disk: String,
        on: bool,
    },
    /// Set the write-behind limit of a live array (sysfs bitmap/backlog).
    SetWriteBehind {
        array: String,
        md: String,
        value: u32,
    },
    RemoveBitmap {
        array: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
    },
    AddBitmap {
        array: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
        chunk: u64,
        write_behind: u32,
    },
    CreatePv {
        device: String,
        object: String,
    },
    CreateVg {
        vg: String,
        pvs: Vec<String>,
    },
    ExtendVg {
        vg: String,
        pvs: Vec<String>,
    },
    CreateLv {
        vg: String,
        lv: String,
        size: SizeArg,
        stripes: Option<u32>,
        pvs: Vec<String>,
    },
    ExtendLv {
        vg: String,
        lv: String,
        size: SizeArg,
    },
    /// Create the cache volume of a writecache (a linear LV on the fast PVs).
    CreateCachevol {
        vg: String,
        lv: String,
        cachevol: String,
        size: u64,
        pvs: Vec<String>,
    },
    /// lvconvert needs the cache volume inactive.
    DeactivateLv {
        vg: String,
        lv: String,
    },
    AttachWritecache {
        vg: String,
        lv: String,
        cachevol: String,
        settings: String,
    },
    SetWritecacheSettings {
        vg: String,
        lv: String,
        settings: String,
    },
    /// Flush and detach (`--splitcache`; may take as long as writing the dirty blocks back),
    /// then remove hyraid's own cache volume.
    DetachWritecache {
        vg: String,
        lv: String,
        remove_cachevol: Option<String>,
    },
    RemoveLv {
        vg: String,
        lv: String,
    },
    RemoveVg {
        vg: String,
        pvs: Vec<String>,
    },
    StopArray {
        array: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        md_device: Option<String>,
        members: Vec<String>,
    },
}

impl Step {
    /// The array as mdadm is given it: /dev/md/NAME, or the device of an adopted array.
    fn md_path(array: &str, md_device: &Option<String>) -> String {
        md_device
            .clone()
            .unwrap_or_else(|| format!("/dev/md/{array}"))
    }

    /// `mdadm /dev/md/NAME --add|--re-add [--write-mostly] DEV`
    fn member_cmd(array: &str, md: &Option<String>, op: &str, device: &ArrayDevice) -> Command {
        let mut a = vec!["mdadm".to_string(), Self::md_path(array, md), op.into()];
        if device.write_mostly {
            a.push("--write-mostly".into());
        }
        a.push(device.path.clone());
        Command::run_owned(a)
    }

    /// The exact commands, in order.
    pub fn commands(&self) -> Vec<Command> {
        match self {
            Step::SetWriteCache {
                device,
                on,
                tool,
                kname,
                ..
            } => {
                let mut c = vec![Command::run_owned(tool.argv(device, *on))];
                if let (CacheTool::Sdparm, Some(k)) = (tool, kname) {
                    c.push(Command::Write {
                        path: format!("/sys/block/{k}/device/rescan"),
                        value: "1".into(),
                    });
                }
                c
            }
            Step::WipeSignatures { device, .. } => vec![Command::run(&["wipefs", "--all", device])],
            Step::CreateArray {
                array,
                devices,
                bitmap_chunk,
                write_behind,
                uuid,
            } => {
                let mut a: Vec<String> = vec![
                    "mdadm".into(),
                    "--create".into(),
                    Self::md_path(array, &None),
                    "--metadata=1.2".into(),
                    "--level=1".into(),
                    format!("--raid-devices={}", devices.len()),
                ];
                match bitmap_chunk {
                    Some(c) => {
                        a.push("--bitmap=internal".into());
                        a.push(format!("--bitmap-chunk={}", chunk_arg(*c)));
                        if *write_behind > 0 {
                            a.push(format!("--write-behind={write_behind}"));
                        }
                    }
                    None => a.push("--bitmap=none".into()),
                }
                a.push(format!("--uuid={uuid}"));
                a.push("--run".into());
                a.extend(
                    devices
                        .iter()
                        .filter(|d| !d.write_mostly)
                        .map(|d| d.path.clone()),
                );
                if devices.iter().any(|d| d.write_mostly) {
                    a.push("--write-mostly".into());
                    a.extend(
                        devices
                            .iter()
                            .filter(|d| d.write_mostly)
                            .map(|d| d.path.clone()),
                    );
                }
                vec![Command::run_owned(a), Command::run(&["udevadm", "settle"])]
            }
            Step::WaitIdle { array, md_device } => vec![Command::WaitIdle {
                array: md_device.clone().unwrap_or_else(|| array.clone()),
            }],
            // Misc mode (`--readwrite` first): in manage mode the same word means "clear
            // write-mostly of the following devices".
            Step::ReadWrite { array, md_device } => vec![Command::run_owned(vec![
                "mdadm".into(),
                "--readwrite".into(),
                Self::md_path(array, md_device),
            ])],
            Step::AddMember {
                array,
                device,
                md_device,
            } => vec![Self::member_cmd(array, md_device, "--add", device)],
            Step::ReAddMember {
                array,
                device,
                md_device,
            } => vec![Self::member_cmd(array, md_device, "--re-add", device)],
            Step::ReplaceMember {
                array,
                old,
                new,
                spare_added,
                md_device,
            } => {
                let mut c = Vec::new();
                if !spare_added {
                    c.push(Self::member_cmd(array, md_device, "--add", new));
                }
                c.push(Command::run_owned(vec![
                    "mdadm".into(),
                    Self::md_path(array, md_device),
                    "--replace".into(),
                    old.clone(),
                    "--with".into(),
                    new.path.clone(),
                ]));
                c
            }
            Step::WriteFile { path, content, .. } => vec![Command::ReplaceFile {
                path: path.clone(),
                content: content.clone(),
            }],
            Step::RegenerateInitramfs { tool } => vec![if tool == "dracut" {
                Command::run(&["dracut", "-f", "--mdadmconf"])
            } else {
                Command::run(&["update-initramfs", "-u"])
            }],
            Step::ReloadUdev => vec![Command::run(&["udevadm", "control", "--reload"])],
            Step::CreatePartitions {
                device,
                new_table,
                parts,
                ..
            } => {
                let mut c = Vec::new();
                if *new_table {
                    c.push(Command::run(&["sgdisk", "--clear", device]));
                }
                let mut a = vec!["sgdisk".to_string()];
                for p in parts {
                    let end = p
                        .size
                        .map(|b| format!("+{}K", b.div_ceil(1024)))
                        .unwrap_or_else(|| "0".into());
                    a.push(format!("--new={}:0:{end}", p.number));
                    a.push(format!("--change-name={}:{}", p.number, p.name));
                    a.push(format!("--typecode={}:{}", p.number, p.typecode));
                }
                a.push(device.clone());
                c.push(Command::run_owned(a));
                c.push(Command::run(&["udevadm", "settle"]));
                c
            }
            Step::StartArray { md, .. } => vec![
                Command::run_owned(vec!["mdadm".into(), "--run".into(), format!("/dev/{md}")]),
                Command::run(&["udevadm", "settle"]),
            ],
            Step::RemoveFailed { array, md_device } => vec![Command::run_owned(vec![
                "mdadm".into(),
                Self::md_path(array, md_device),
                "--remove".into(),
                "failed".into(),
            ])],
            Step::SetWriteMostly { md, member, on, .. } => vec![Command::Write {
                path: format!("/sys/block/{md}/md/dev-{member}/state"),
                value: if *on {
                    "writemostly".into()
                } else {
                    "-writemostly".into()
                },
            }],
            Step::SetWriteBehind { md, value, .. } => vec![Command::Write {
                path: format!("/sys/block/{md}/md/bitmap/backlog"),
                value: value.to_string(),
            }],
            Step::RemoveBitmap { array, md_device } => vec![Command::run_owned(vec![
                "mdadm".into(),
                "--grow".into(),
                Self::md_path(array, md_device),
                "--bitmap=none".into(),
            ])],
            Step::AddBitmap {
                array,
                chunk,
                write_behind,
                md_device,
            } => vec![Command::run_owned(vec![
                "mdadm".into(),
                "--grow".into(),
                Self::md_path(array, md_device),
                "--bitmap=internal".into(),
                format!("--bitmap-chunk={}", chunk_arg(*chunk)),
                format!("--write-behind={write_behind}"),
            ])],
            Step::CreatePv { device, .. } => vec![Command::run(&["pvcreate", device])],
            Step::CreateVg { vg, pvs } => vec![Command::run_owned(
                [vec!["vgcreate".into(), vg.clone()], pvs.clone()].concat(),
            )],
            Step::ExtendVg { vg, pvs } => vec![Command::run_owned(
                [vec!["vgextend".into(), vg.clone()], pvs.clone()].concat(),
            )],
            Step::CreateLv {
                vg,
                lv,
                size,
                stripes,
                pvs,
            } => {
                let mut a: Vec<String> =
                    vec!["lvcreate".into(), "--yes".into(), "-n".into(), lv.clone()];
                a.extend(size.args());
                if let Some(s) = stripes.filter(|s| *s > 1) {
                    a.push("-i".into());
                    a.push(s.to_string());
                }
                a.push(vg.clone());
                a.extend(pvs.iter().cloned());
                vec![Command::run_owned(a)]
            }
            Step::ExtendLv { vg, lv, size } => {
                let [f, v] = size.args();
                vec![Command::run_owned(vec![
                    "lvextend".into(),
                    f,
                    v,
                    format!("{vg}/{lv}"),
                ])]
            }
            Step::CreateCachevol {
                vg,
                cachevol,
                size,
                pvs,
                ..
            } => {
                let mut a: Vec<String> = vec![
                    "lvcreate".into(),
                    "--yes".into(),
                    "-n".into(),
                    cachevol.clone(),
                    "-L".into(),
                    format!("{size}b"),
                    "--addtag".into(),
                    crate::config::CACHEVOL_TAG.into(),
                    vg.clone(),
                ];
                a.extend(pvs.iter().cloned());
                vec![Command::run_owned(a)]
            }
            Step::DeactivateLv { vg, lv } => vec![Command::run_owned(vec![
                "lvchange".into(),
                "--activate".into(),
                "n".into(),
                format!("{vg}/{lv}"),
            ])],
            Step::AttachWritecache {
                vg,
                lv,
                cachevol,
                settings,
            } => {
                let mut a: Vec<String> = vec![
                    "lvconvert".into(),
                    "--yes".into(),
                    "--type".into(),
                    "writecache".into(),
                    "--cachevol".into(),
                    cachevol.clone(),
                ];
                if !settings.is_empty() {
                    a.push("--cachesettings".into());
                    a.push(settings.clone());
                }
                a.push(format!("{vg}/{lv}"));
                vec![Command::run_owned(a)]
            }
            Step::SetWritecacheSettings { vg, lv, settings } => {
                vec![Command::run_owned(vec![
                    "lvchange".into(),
                    "--yes".into(),
                    "--cachesettings".into(),
                    settings.clone(),
                    format!("{vg}/{lv}"),
                ])]
            }
            Step::DetachWritecache {
                vg,
                lv,
                remove_cachevol,
            } => {
                let mut c = vec![Command::run_owned(vec![
                    "lvconvert".into(),
                    "--yes".into(),
                    "--splitcache".into(),
                    format!("{vg}/{lv}"),
                ])];
                if let Some(cv) = remove_cachevol {
                    c.push(Command::run_owned(vec![
                        "lvremove".into(),
                        "--yes".into(),
                        format!("{vg}/{cv}"),
                    ]));
                }
                c
            }
            Step::RemoveLv { vg, lv } => vec![Command::run_owned(vec![
                "lvremove".into(),
                "--yes".into(),
                format!("{vg}/{lv}"),
            ])],
            Step::RemoveVg { vg, pvs } => {
                let mut c = vec![Command::run(&["vgremove", "--yes", vg])];
                c.extend(pvs.iter().map(|p| Command::run(&["pvremove", "--yes", p])));
                c
            }
            Step::StopArray {
                array,
                members,
                md_device,
            } => {
                let mut c = vec![Command::run_owned(vec![
                    "mdadm".into(),
                    "--stop".into(),
                    Self::md_path(array, md_device),
                ])];
                c.push(Command::run_owned(
                    [
                        vec!["mdadm".to_string(), "--zero-superblock".into()],
                        members.clone(),
                    ]
                    .concat(),
                ));
                c
            }
        }
    }

    /// `+` create, `~` change, `-` remove.
    pub fn symbol(&self) -> char {
        match self {
            Step::CreateArray { .. }
            | Step::CreatePartitions { .. }
            | Step::AddMember { .. }
            | Step::ReAddMember { .. }
            | Step::AddBitmap { .. }
            | Step::CreatePv { .. }
            | Step::CreateVg { .. }
            | Step::CreateLv { .. }
            | Step::CreateCachevol { .. }
            | Step::AttachWritecache { .. } => '+',
            Step::WipeSignatures { .. }
            | Step::RemoveFailed { .. }
            | Step::RemoveBitmap { .. }
            | Step::DetachWritecache { .. }
            | Step::RemoveLv { .. }
            | Step::RemoveVg { .. }
            | Step::StopArray { .. } => '-',
            _ => '~',
        }
    }

    /// The object the step changes, for display.
    pub fn object(&self) -> String {
        match self {
            Step::WriteFile { path, .. } => format!("file {path}"),
            Step::CreatePartitions { disk, .. } => format!("disk {disk}"),
            Step::RegenerateInitramfs { .. } => "initramfs".into(),
            Step::ReloadUdev => "udev".into(),
            Step::SetWriteCache { disk, .. } | Step::WipeSignatures { disk, .. } => {
                format!("disk {disk}")
            }
            Step::CreateArray { array, .. }
            | Step::WaitIdle { array, .. }
            | Step::ReadWrite { array, .. }
            | Step::AddMember { array, .. }
            | Step::ReAddMember { array, .. }
            | Step::ReplaceMember { array, .. }
            | Step::RemoveFailed { array, .. }
            | Step::StartArray { array, .. }
            | Step::SetWriteMostly { array, .. }
            | Step::SetWriteBehind { array, .. }
            | Step::RemoveBitmap { array, .. }
            | Step::AddBitmap { array, .. }
            | Step::StopArray { array, .. } => {
                format!("mirror {array}")
            }
            Step::CreatePv { device, .. } => format!("pv {device}"),
            Step::CreateVg { vg, .. } | Step::ExtendVg { vg, .. } | Step::RemoveVg { vg, .. } => {
                format!("vg {vg}")
            }
            Step::CreateLv { vg, lv, .. }
            | Step::ExtendLv { vg, lv, .. }
            | Step::CreateCachevol { vg, lv, .. }
            | Step::AttachWritecache { vg, lv, .. }
            | Step::SetWritecacheSettings { vg, lv, .. }
            | Step::DetachWritecache { vg, lv, .. }
            | Step::RemoveLv { vg, lv } => format!("lv {vg}/{lv}"),
            Step::DeactivateLv { vg, lv } => format!("lv {vg}/{lv}"),
        }
    }

    /// Short description of the change.
    pub fn summary(&self) -> String {
        use crate::config::size::human;
        match self {
            Step::WriteFile { old, purpose, .. } => format!(
                "{} ({purpose})",
                if old.is_some() { "update" } else { "create" }
            ),
            Step::RegenerateInitramfs { tool } => format!("regenerate with {tool}"),
            Step::CreatePartitions {
                new_table, parts, ..
            } => format!(
                "{}partitions {}",
                if *new_table { "new GPT; " } else { "" },
                parts
                    .iter()
                    .map(|p| format!(
                        "{} {} ({})",
                        p.number,
                        p.name,
                        p.size.map(human).unwrap_or_else(|| "rest".into())
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Step::ReloadUdev => "reload udev rules".into(),
            Step::SetWriteCache { on, .. } => {
                format!("drive write cache {}", if *on { "on" } else { "off" })
            }
            Step::WipeSignatures { device, found, .. } => {
                format!("wipe {} on {device}", found.join(", "))
            }
            Step::CreateArray {
                devices,
                bitmap_chunk,
                write_behind,
                ..
            } => {
                let members: Vec<String> = devices
                    .iter()
                    .map(|d| {
                        if d.write_mostly {
                            format!("{} (write-mostly)", d.disk)
                        } else {
                            d.disk.clone()
                        }
                    })
                    .collect();
                let bm = bitmap_chunk
                    .map(|c| format!("bitmap chunk {}", human(c)))
                    .unwrap_or_else(|| "no bitmap".into());
                format!(
                    "create RAID1 of {}; {bm}; write-behind {write_behind}",
                    members.join(", ")
                )
            }
            Step::WaitIdle { .. } => "wait for resync/recovery to finish".into(),
            Step::ReadWrite { .. } => "switch from auto-read-only to read-write".into(),
            Step::ReAddMember { device, .. } => format!(
                "re-add {}{}",
                device.disk,
                if device.write_mostly {
                    " (write-mostly)"
                } else {
                    ""
                }
            ),
            Step::ReplaceMember { old, new, .. } => format!(
                "replace {old} with {}{}",
                new.disk,
                if new.write_mostly {
                    " (write-mostly)"
                } else {
                    ""
                }
            ),
            Step::RemoveFailed { .. } => "remove failed members".into(),
            Step::StartArray { .. } => "start it degraded (a member is missing)".into(),
            Step::AddMember { device, .. } => format!(
                "add {}{}",
                device.disk,
                if device.write_mostly {
                    " (write-mostly)"
                } else {
                    ""
                }
            ),
            Step::SetWriteMostly { disk, on, .. } => format!(
                "{} write-mostly on {disk}",
                if *on { "set" } else { "clear" }
            ),
            Step::SetWriteBehind { value, .. } => format!("write-behind = {value}"),
            Step::RemoveBitmap { .. } => "remove write-intent bitmap".into(),
            Step::AddBitmap {
                chunk,
                write_behind,
                ..
            } => format!(
                "add internal bitmap, chunk {}, write-behind {write_behind}",
                human(*chunk)
            ),
            Step::CreatePv { object, .. } => format!("initialize PV on {object}"),
            Step::CreateVg { pvs, .. } => format!("create VG on {}", pvs.join(", ")),
            Step::ExtendVg { pvs, .. } => format!("extend VG with {}", pvs.join(", ")),
            Step::CreateLv { size, stripes, .. } => format!(
                "create LV, {}{}",
                match size {
                    SizeArg::Bytes(b) => format!("{b} bytes ({})", human(*b)),
                    SizeArg::Extents(e) => e.clone(),
                },
                stripes
                    .filter(|s| *s > 1)
                    .map(|s| format!(", {s} stripes"))
                    .unwrap_or_default()
            ),
            Step::ExtendLv { size, .. } => match size {
                SizeArg::Bytes(b) => format!("grow LV to {b} bytes ({})", human(*b)),
                SizeArg::Extents(e) => format!("grow LV to {e}"),
            },
            Step::CreateCachevol { cachevol, size, .. } => format!(
                "create cache volume {cachevol}, {size} bytes ({})",
                human(*size)
            ),
            Step::DeactivateLv { lv, .. } => {
                format!("deactivate {lv} (writecache attach needs it inactive)")
            }
            Step::AttachWritecache {
                cachevol, settings, ..
            } => {
                format!(
                    "attach writecache {cachevol}{}",
                    if settings.is_empty() {
                        String::new()
                    } else {
                        format!(" ({settings})")
                    }
                )
            }
            Step::SetWritecacheSettings { settings, .. } => {
                format!("writecache settings: {settings}")
            }
            Step::DetachWritecache { .. } => {
                "flush and detach writecache (may take long: dirty blocks are written back)".into()
            }
            Step::RemoveLv { .. } => "remove LV".into(),
            Step::RemoveVg { .. } => "remove VG and its PV labels".into(),
            Step::StopArray { .. } => "stop array and erase member superblocks".into(),
        }
    }
}
