//! Steps on an md RAID1 array: create, start, stop, members (add, re-add, replace, remove,
//! write-mostly), the write-intent bitmap and write-behind, read-write, waiting for resync.

use super::{Command, StepKind};
use crate::config::raw::MdMetadata;
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayDevice {
    /// Stable path (/dev/disk/by-id/…).
    pub path: String,
    /// Disk name in the file.
    pub disk: String,
    pub write_mostly: bool,
}

/// mdadm `--bitmap-chunk` value: M when whole MiB, else K.
pub fn chunk_arg(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else {
        format!("{}K", bytes >> 10)
    }
}

/// The array as mdadm is given it: /dev/md/NAME, or the device of an adopted array.
pub(super) fn md_path(array: &str, md_device: &Option<String>) -> String {
    md_device
        .clone()
        .unwrap_or_else(|| format!("/dev/md/{array}"))
}

/// `mdadm /dev/md/NAME --add|--re-add [--write-mostly] DEV`
fn member_cmd(array: &str, md: &Option<String>, op: &str, device: &ArrayDevice) -> Command {
    let mut a = vec!["mdadm".to_string(), md_path(array, md), op.into()];
    if device.write_mostly {
        a.push("--write-mostly".into());
    }
    a.push(device.path.clone());
    Command::run_owned(a)
}

/// Create a RAID1 array; write-mostly members are listed after `--write-mostly`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateArray {
    pub array: String,
    pub devices: Vec<ArrayDevice>,
    pub bitmap_chunk: Option<u64>,
    pub write_behind: u32,
    /// Chosen by hyraid (`--uuid`), so mdadm.conf can name the array before it exists.
    pub uuid: String,
    /// Superblock format (`--metadata=`); 1.2 when absent (plans saved before it was a choice).
    #[serde(default, skip_serializing_if = "MdMetadata::is_default")]
    pub metadata: MdMetadata,
}

impl StepKind for CreateArray {
    fn commands(&self) -> Vec<Command> {
        let CreateArray {
            array,
            devices,
            bitmap_chunk,
            write_behind,
            uuid,
            metadata,
        } = self;
        let mut a: Vec<String> = vec![
            "mdadm".into(),
            "--create".into(),
            md_path(array, &None),
            format!("--metadata={}", metadata.as_str()),
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
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        use crate::config::size::human;
        let CreateArray {
            devices,
            bitmap_chunk,
            write_behind,
            metadata,
            ..
        } = self;
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
        // The default format is left unsaid, as before it was a choice.
        let sb = match metadata {
            MdMetadata::V1_2 => String::new(),
            m => format!("; metadata {} (superblock at the end)", m.as_str()),
        };
        format!(
            "create RAID1 of {}; {bm}; write-behind {write_behind}{sb}",
            members.join(", ")
        )
    }
}

/// Wait until the array's resync/recovery is done (bitmap changes need an idle array).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitIdle {
    pub array: String,
    /// The device of an array adopted by UUID (`/dev/md0`); None = /dev/md/NAME.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
}

impl StepKind for WaitIdle {
    fn commands(&self) -> Vec<Command> {
        vec![Command::WaitIdle {
            array: self.md_device.clone().unwrap_or_else(|| self.array.clone()),
        }]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        "wait for resync/recovery to finish".into()
    }
}

/// Take an auto-read-only array (after boot or assembly, until its first write) read-write:
/// md refuses bitmap changes until then, and a pending resync starts now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadWrite {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
}

impl StepKind for ReadWrite {
    // Misc mode (`--readwrite` first): in manage mode the same word means "clear
    // write-mostly of the following devices".
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "mdadm".into(),
            "--readwrite".into(),
            md_path(&self.array, &self.md_device),
        ])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        "switch from auto-read-only to read-write".into()
    }
}

/// `add sdb` / `re-add sdb (write-mostly)`.
fn member_summary(verb: &str, device: &ArrayDevice) -> String {
    let flag = if device.write_mostly {
        " (write-mostly)"
    } else {
        ""
    };
    format!("{verb} {}{flag}", device.disk)
}

/// Add a member (to a degraded array: it is rebuilt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddMember {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    pub device: ArrayDevice,
}

impl StepKind for AddMember {
    fn commands(&self) -> Vec<Command> {
        vec![member_cmd(
            &self.array,
            &self.md_device,
            "--add",
            &self.device,
        )]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        member_summary("add", &self.device)
    }
}

/// Put a former member back (`--re-add`: with a bitmap only changed blocks are copied).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReAddMember {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    pub device: ArrayDevice,
}

impl StepKind for ReAddMember {
    fn commands(&self) -> Vec<Command> {
        vec![member_cmd(
            &self.array,
            &self.md_device,
            "--re-add",
            &self.device,
        )]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        member_summary("re-add", &self.device)
    }
}

/// Hot replace: add the new disk as a spare, then copy the old member onto it while it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaceMember {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    pub old: String,
    pub new: ArrayDevice,
    /// The new disk is already a spare in the array (an earlier apply added it).
    #[serde(default)]
    pub spare_added: bool,
}

impl StepKind for ReplaceMember {
    fn commands(&self) -> Vec<Command> {
        let ReplaceMember {
            array,
            old,
            new,
            spare_added,
            md_device,
        } = self;
        let mut c = Vec::new();
        if !spare_added {
            c.push(member_cmd(array, md_device, "--add", new));
        }
        c.push(Command::run_owned(vec![
            "mdadm".into(),
            md_path(array, md_device),
            "--replace".into(),
            old.clone(),
            "--with".into(),
            new.path.clone(),
        ]));
        c
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        let ReplaceMember { old, new, .. } = self;
        format!(
            "replace {old} with {}{}",
            new.disk,
            if new.write_mostly {
                " (write-mostly)"
            } else {
                ""
            }
        )
    }
}

/// Remove every failed member (`--remove failed` works even when the device node is gone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveFailed {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
}

impl StepKind for RemoveFailed {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "mdadm".into(),
            md_path(&self.array, &self.md_device),
            "--remove".into(),
            "failed".into(),
        ])]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        "remove failed members".into()
    }
}

/// Start an array that was assembled but not started (`mdadm --run`), degraded when a member
/// is missing, and read-write (`array_state` = active).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartArray {
    pub array: String,
    pub md: String,
    /// Members it runs without.
    #[serde(default)]
    pub missing: u32,
}

impl StepKind for StartArray {
    fn commands(&self) -> Vec<Command> {
        vec![
            Command::run_owned(vec![
                "mdadm".into(),
                "--run".into(),
                format!("/dev/{}", self.md),
            ]),
            // Debian starts md arrays auto-read-only (md_mod start_ro=1): md holds a rebuild
            // onto an added member and refuses bitmap changes until the first write. `active`
            // makes it read-write, and is taken as it is by an array that already is.
            Command::Write {
                path: format!("/sys/block/{}/md/array_state", self.md),
                value: "active".into(),
            },
            Command::run(&["udevadm", "settle"]),
        ]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        match self.missing {
            0 => "start it (every member is present)".into(),
            n => format!("start it degraded ({n} member(s) missing)"),
        }
    }
}

/// Set or clear write-mostly on a live member (sysfs; mdadm has no command for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetWriteMostly {
    pub array: String,
    pub md: String,
    pub member: String,
    pub disk: String,
    pub on: bool,
}

impl StepKind for SetWriteMostly {
    fn commands(&self) -> Vec<Command> {
        let SetWriteMostly { md, member, on, .. } = self;
        vec![Command::Write {
            path: format!("/sys/block/{md}/md/dev-{member}/state"),
            value: if *on {
                "writemostly".into()
            } else {
                "-writemostly".into()
            },
        }]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        format!(
            "{} write-mostly on {}",
            if self.on { "set" } else { "clear" },
            self.disk
        )
    }
}

/// Set the write-behind limit of a live array (sysfs bitmap/backlog).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetWriteBehind {
    pub array: String,
    pub md: String,
    pub value: u32,
}

impl StepKind for SetWriteBehind {
    fn commands(&self) -> Vec<Command> {
        vec![Command::Write {
            path: format!("/sys/block/{}/md/bitmap/backlog", self.md),
            value: self.value.to_string(),
        }]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        format!("write-behind = {}", self.value)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveBitmap {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    /// The file of a file bitmap (deprecated by the kernel); md stops using it, the file stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl StepKind for RemoveBitmap {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "mdadm".into(),
            "--grow".into(),
            md_path(&self.array, &self.md_device),
            "--bitmap=none".into(),
        ])]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        match &self.file {
            Some(f) => format!("remove write-intent bitmap in the file {f} (the file stays)"),
            None => "remove write-intent bitmap".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddBitmap {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    pub chunk: u64,
    pub write_behind: u32,
}

impl StepKind for AddBitmap {
    fn commands(&self) -> Vec<Command> {
        let AddBitmap {
            array,
            chunk,
            write_behind,
            md_device,
        } = self;
        vec![Command::run_owned(vec![
            "mdadm".into(),
            "--grow".into(),
            md_path(array, md_device),
            "--bitmap=internal".into(),
            format!("--bitmap-chunk={}", chunk_arg(*chunk)),
            format!("--write-behind={write_behind}"),
        ])]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        use crate::config::size::human;
        format!(
            "add internal bitmap, chunk {}, write-behind {}",
            human(self.chunk),
            self.write_behind
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopArray {
    pub array: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_device: Option<String>,
    pub members: Vec<String>,
}

impl StepKind for StopArray {
    fn commands(&self) -> Vec<Command> {
        let mut c = vec![Command::run_owned(vec![
            "mdadm".into(),
            "--stop".into(),
            md_path(&self.array, &self.md_device),
        ])];
        c.push(Command::run_owned(
            [
                vec!["mdadm".to_string(), "--zero-superblock".into()],
                self.members.clone(),
            ]
            .concat(),
        ));
        c
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::Mirror(self.array.clone())
    }
    fn summary(&self) -> String {
        "stop array and erase member superblocks".into()
    }
}
