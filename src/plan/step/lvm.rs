//! Steps on LVM: PVs, VGs, LVs and their writecache (cache volume, attach, settings, detach).

use super::{Command, StepKind};
use crate::plan::address::Address;
use serde::{Deserialize, Serialize};

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

fn lv_address(vg: &str, lv: &str) -> Address {
    Address::LogicalVolume {
        vg: vg.to_string(),
        lv: lv.to_string(),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatePv {
    pub device: String,
    pub object: String,
}

impl StepKind for CreatePv {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run(&["pvcreate", &self.device])]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::PhysicalVolume(self.device.clone())
    }
    fn summary(&self) -> String {
        format!("initialize PV on {}", self.object)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateVg {
    pub vg: String,
    pub pvs: Vec<String>,
}

impl StepKind for CreateVg {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(
            [vec!["vgcreate".into(), self.vg.clone()], self.pvs.clone()].concat(),
        )]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        Address::VolumeGroup(self.vg.clone())
    }
    fn summary(&self) -> String {
        format!("create VG on {}", self.pvs.join(", "))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtendVg {
    pub vg: String,
    pub pvs: Vec<String>,
}

impl StepKind for ExtendVg {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(
            [vec!["vgextend".into(), self.vg.clone()], self.pvs.clone()].concat(),
        )]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        Address::VolumeGroup(self.vg.clone())
    }
    fn summary(&self) -> String {
        format!("extend VG with {}", self.pvs.join(", "))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateLv {
    pub vg: String,
    pub lv: String,
    pub size: SizeArg,
    pub stripes: Option<u32>,
    /// Bytes (`-I`, given in KiB), with 2 stripes or more; None = LVM's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_size: Option<u64>,
    pub pvs: Vec<String>,
    /// `--addtag` each (hyraid's scratch LV of a tune run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

impl StepKind for CreateLv {
    fn commands(&self) -> Vec<Command> {
        let CreateLv {
            vg,
            lv,
            size,
            stripes,
            stripe_size,
            pvs,
            tags,
        } = self;
        let mut a: Vec<String> = vec!["lvcreate".into(), "--yes".into(), "-n".into(), lv.clone()];
        for t in tags {
            a.push("--addtag".into());
            a.push(t.clone());
        }
        a.extend(size.args());
        if let Some(s) = stripes.filter(|s| *s > 1) {
            a.push("-i".into());
            a.push(s.to_string());
            if let Some(b) = stripe_size {
                a.push("-I".into());
                a.push(format!("{}k", b >> 10));
            }
        }
        a.push(vg.clone());
        a.extend(pvs.iter().cloned());
        vec![Command::run_owned(a)]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        use crate::config::size::human;
        format!(
            "create LV, {}{}{}",
            match &self.size {
                SizeArg::Bytes(b) => format!("{b} bytes ({})", human(*b)),
                SizeArg::Extents(e) => e.clone(),
            },
            self.stripes
                .filter(|s| *s > 1)
                .map(|s| format!(", {s} stripes"))
                .unwrap_or_default(),
            self.stripe_size
                .map(|b| format!(" of {}", human(b)))
                .unwrap_or_default()
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtendLv {
    pub vg: String,
    pub lv: String,
    pub size: SizeArg,
}

impl StepKind for ExtendLv {
    fn commands(&self) -> Vec<Command> {
        let [f, v] = self.size.args();
        vec![Command::run_owned(vec![
            "lvextend".into(),
            f,
            v,
            format!("{}/{}", self.vg, self.lv),
        ])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        use crate::config::size::human;
        match &self.size {
            SizeArg::Bytes(b) => format!("grow LV to {b} bytes ({})", human(*b)),
            SizeArg::Extents(e) => format!("grow LV to {e}"),
        }
    }
}

/// Create the cache volume of a writecache (a linear LV on the fast PVs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateCachevol {
    pub vg: String,
    pub lv: String,
    pub cachevol: String,
    pub size: u64,
    pub pvs: Vec<String>,
}

impl StepKind for CreateCachevol {
    fn commands(&self) -> Vec<Command> {
        let CreateCachevol {
            vg,
            cachevol,
            size,
            pvs,
            ..
        } = self;
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
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        use crate::config::size::human;
        format!(
            "create cache volume {}, {} bytes ({})",
            self.cachevol,
            self.size,
            human(self.size)
        )
    }
}

/// lvconvert needs the cache volume inactive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeactivateLv {
    pub vg: String,
    pub lv: String,
}

impl StepKind for DeactivateLv {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "lvchange".into(),
            "--activate".into(),
            "n".into(),
            format!("{}/{}", self.vg, self.lv),
        ])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        format!(
            "deactivate {} (writecache attach needs it inactive)",
            self.lv
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachWritecache {
    pub vg: String,
    pub lv: String,
    pub cachevol: String,
    pub settings: String,
}

impl StepKind for AttachWritecache {
    fn commands(&self) -> Vec<Command> {
        let AttachWritecache {
            vg,
            lv,
            cachevol,
            settings,
        } = self;
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
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        format!(
            "attach writecache {}{}",
            self.cachevol,
            if self.settings.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.settings)
            }
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetWritecacheSettings {
    pub vg: String,
    pub lv: String,
    pub settings: String,
}

impl StepKind for SetWritecacheSettings {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "lvchange".into(),
            "--yes".into(),
            "--cachesettings".into(),
            self.settings.clone(),
            format!("{}/{}", self.vg, self.lv),
        ])]
    }
    fn symbol(&self) -> char {
        '~'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        format!("writecache settings: {}", self.settings)
    }
}

/// Flush and detach (`--splitcache`; may take as long as writing the dirty blocks back),
/// then remove hyraid's own cache volume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetachWritecache {
    pub vg: String,
    pub lv: String,
    pub remove_cachevol: Option<String>,
}

impl StepKind for DetachWritecache {
    fn commands(&self) -> Vec<Command> {
        let DetachWritecache {
            vg,
            lv,
            remove_cachevol,
        } = self;
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
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        "flush and detach writecache (may take long: dirty blocks are written back)".into()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveLv {
    pub vg: String,
    pub lv: String,
}

impl StepKind for RemoveLv {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "lvremove".into(),
            "--yes".into(),
            format!("{}/{}", self.vg, self.lv),
        ])]
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        "remove LV".into()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveVg {
    pub vg: String,
    pub pvs: Vec<String>,
}

impl StepKind for RemoveVg {
    fn commands(&self) -> Vec<Command> {
        let mut c = vec![Command::run(&["vgremove", "--yes", &self.vg])];
        c.extend(
            self.pvs
                .iter()
                .map(|p| Command::run(&["pvremove", "--yes", p])),
        );
        c
    }
    fn symbol(&self) -> char {
        '-'
    }
    fn object(&self) -> Address {
        Address::VolumeGroup(self.vg.clone())
    }
    fn summary(&self) -> String {
        "remove VG and its PV labels".into()
    }
}
