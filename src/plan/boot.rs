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
        // md's monitor reports to hyraid when the file has alerts (and hyraid is installed).
        let monitor = self
            .d
            .alerts
            .as_ref()
            .zip(self.o.boot.monitoring.hyraid_path.clone());
        if ours.is_empty() && gone.is_empty() && monitor.is_none() {
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
        let arrays_changed = b.mdadm_conf.as_deref() != Some(new.as_str());
        let cur = b.mdadm_conf.clone().unwrap_or_default();
        let (new, monitor_changed) = match &monitor {
            Some((a, program)) => {
                let mail = a.email.as_ref().map(|e| e.to.join(", "));
                let mon = monitoring::text::monitor_lines(&new, program, mail.as_deref());
                let changed =
                    monitoring::text::monitor_lines(&cur, program, mail.as_deref()) != cur;
                (mon, changed)
            }
            None => (new, false),
        };
        let restart = monitor.is_some()
            && b.systemd
            && (monitor_changed || b.monitoring.mdmonitor.as_deref() != Some("active"));
        if b.mdadm_conf.as_deref() == Some(new.as_str()) {
            self.restart_monitor(restart);
            return;
        }
        let (old, tool) = (b.mdadm_conf.clone(), b.initramfs_tool.clone());
        let (purpose, why) = match (arrays_changed, monitor_changed) {
            (true, true) => (
                "ARRAY lines of the mirrors in the file, and md's monitor reporting to hyraid",
                "without ARRAY lines the arrays come up as /dev/md127 (or NAME_0) after a reboot; with PROGRAM md's monitor tells hyraid of every failure, which sends it where `alerts:` says",
            ),
            (false, true) => (
                "md's monitor reporting to hyraid (PROGRAM, MAILADDR)",
                "with PROGRAM md's monitor tells hyraid of every failure, which sends it where `alerts:` says (MAILADDR root alone reaches no one on most home servers)",
            ),
            _ => (
                "ARRAY lines of the mirrors in the file",
                "without ARRAY lines the arrays come up as /dev/md127 (or NAME_0) after a reboot",
            ),
        };
        self.steps.push(ps(
            Step::WriteFile(WriteFile {
                path,
                old,
                content: new,
                purpose: purpose.into(),
            }),
            Risk::Safe,
            why,
        ));
        self.restart_monitor(restart);
        if !arrays_changed {
            return;
        }
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

    /// md's monitor reads mdadm.conf only when it starts: restarted after its lines change, or
    /// started when it does not run.
    fn restart_monitor(&mut self, restart: bool) {
        if restart {
            self.steps.push(ps(
                Step::RestartUnit(crate::plan::step::RestartUnit {
                    unit: "mdmonitor.service".into(),
                }),
                Risk::Safe,
                "md's monitor (`mdadm --monitor --scan`) reads PROGRAM and MAILADDR only when it starts",
            ));
        }
    }
}
