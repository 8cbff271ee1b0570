//! Boot: the ARRAY lines of mdadm.conf for the file's mirrors, and the initramfs that carries a copy.

use super::*;
use crate::plan::step::{RegenerateInitramfs, WriteFile};

impl<'a> Planner<'a> {
    /// mdadm.conf lists the mirrors (by the UUID hyraid gave new ones), then the initramfs follows.
    pub(in crate::plan) fn mdadm_conf(&mut self) {
        let mut ours = Vec::new();
        let mut superblocks = BTreeMap::new();
        for m in self
            .d
            .mirrors
            .values()
            .filter(|m| !m.absent && !self.blocked.contains(&m.name))
        {
            let uuid = self
                .creating
                .get(&m.name)
                .cloned()
                .or_else(|| self.array_of(m).and_then(|a| a.uuid.clone()));
            if let Some(u) = uuid {
                // An existing array keeps the format it has (a different one is refused).
                let sb = match self
                    .array_of(m)
                    .filter(|_| !self.creating.contains_key(&m.name))
                {
                    Some(a) => a.superblock_version().to_string(),
                    None => m.metadata.as_str().to_string(),
                };
                if sb != "1.2" {
                    superblocks.insert(Self::conf_entry(m), sb);
                }
                ours.push((Self::conf_entry(m), u));
            }
        }
        let gone: Vec<(String, Option<String>)> = if self.policy.allow_destroy {
            self.d
                .mirrors
                .values()
                .filter(|m| m.absent)
                .map(|m| {
                    (
                        Self::conf_entry(m),
                        self.array_of(m).and_then(|a| a.uuid.clone()),
                    )
                })
                .collect()
        } else {
            vec![]
        };
        if ours.is_empty() && gone.is_empty() {
            return;
        }
        let b = &self.o.boot;
        let path = b.mdadm_conf_path.clone().unwrap_or_else(|| {
            if b.initramfs_tool.as_deref() == Some("dracut") {
                "/etc/mdadm.conf"
            } else {
                "/etc/mdadm/mdadm.conf"
            }
            .into()
        });
        let new = match persist::managed_mdadm_conf_of(
            b.mdadm_conf.as_deref(),
            &ours,
            &gone,
            &superblocks,
        ) {
            Ok(text) => text,
            Err(e) => {
                let fix = "check the array with `mdadm --detail`; hyraid lists arrays in mdadm.conf only by a name and UUID it can write safely";
                self.refuse(format!("file {path}"), e.to_string(), fix);
                return;
            }
        };
        if b.mdadm_conf.as_deref() == Some(new.as_str()) {
            return;
        }
        let (old, tool) = (b.mdadm_conf.clone(), b.initramfs_tool.clone());
        self.steps.push(ps(
            Step::WriteFile(WriteFile {
                path,
                old,
                content: new,
                purpose: "ARRAY lines of the mirrors in the file".into(),
            }),
            Risk::Safe,
            "without ARRAY lines the arrays come up as /dev/md127 (or NAME_0) after a reboot",
        ));
        match tool {
            Some(t) => self.steps.push(ps(
                Step::RegenerateInitramfs(RegenerateInitramfs { tool: t }),
                Risk::Safe,
                "early boot assembles arrays by the mdadm.conf inside the initramfs",
            )),
            None => self.notes.push(
                "no update-initramfs or dracut found: the initramfs keeps its old mdadm.conf"
                    .into(),
            ),
        }
    }
}
