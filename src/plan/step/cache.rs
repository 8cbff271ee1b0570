//! Steps on a dm-cache (lvmcache) on a cache volume: attach, change its mode, flush and detach.
//! The cache volume itself is created by `CreateCachevol`, as for a writecache.

use super::{Address, Command, StepKind};
use serde::{Deserialize, Serialize};

fn lv_address(vg: &str, lv: &str) -> Address {
    Address::LogicalVolume {
        vg: vg.to_string(),
        lv: lv.to_string(),
    }
}

/// `lvconvert --type cache --cachevol`: lvm2 wipes the cache volume and puts dm-cache over the LV.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachCache {
    pub vg: String,
    pub lv: String,
    pub cachevol: String,
    /// `writethrough` or `writeback`.
    pub mode: String,
}

impl StepKind for AttachCache {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "lvconvert".into(),
            "--yes".into(),
            "--type".into(),
            "cache".into(),
            "--cachevol".into(),
            self.cachevol.clone(),
            "--cachemode".into(),
            self.mode.clone(),
            format!("{}/{}", self.vg, self.lv),
        ])]
    }
    fn symbol(&self) -> char {
        '+'
    }
    fn object(&self) -> Address {
        lv_address(&self.vg, &self.lv)
    }
    fn summary(&self) -> String {
        format!("attach dm-cache {} ({})", self.cachevol, self.mode)
    }
}

/// `lvchange --cachemode`: leaving writeback, lvm2 writes the dirty blocks back first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetCacheMode {
    pub vg: String,
    pub lv: String,
    pub mode: String,
}

impl StepKind for SetCacheMode {
    fn commands(&self) -> Vec<Command> {
        vec![Command::run_owned(vec![
            "lvchange".into(),
            "--yes".into(),
            "--cachemode".into(),
            self.mode.clone(),
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
        format!("dm-cache mode: {}", self.mode)
    }
}

/// Flush and detach (`--splitcache`: a writeback cache is cleaned first, lvm2 polling its dirty
/// blocks), then remove hyraid's own cache volume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetachCache {
    pub vg: String,
    pub lv: String,
    pub remove_cachevol: Option<String>,
}

impl StepKind for DetachCache {
    fn commands(&self) -> Vec<Command> {
        let path = format!("{}/{}", self.vg, self.lv);
        let mut c = vec![Command::run_owned(vec![
            "lvconvert".into(),
            "--yes".into(),
            "--splitcache".into(),
            path,
        ])];
        if let Some(cv) = &self.remove_cachevol {
            c.push(Command::run_owned(vec![
                "lvremove".into(),
                "--yes".into(),
                format!("{}/{cv}", self.vg),
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
        "flush and detach dm-cache (a writeback cache's dirty blocks are written back first)".into()
    }
}
