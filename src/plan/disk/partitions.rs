//! GPT partitions the file declares: a new table on a blank disk, or new partitions in free space.

use super::*;
use crate::plan::step::{CreatePartitions, WipeSignatures};

impl<'a> Planner<'a> {
    /// GPT partitions the file declares and the disk lacks: a new table on a blank disk, or new
    /// partitions in free space. Existing ones are matched by name, never moved or resized.
    pub(in crate::plan) fn partitions(&mut self) {
        let mut steps = Vec::new();
        for spec in self.d.disks.values().filter(|s| !s.partitions.is_empty()) {
            let Some(dev) = self.disks[&spec.name].dev else {
                continue;
            };
            let object = format!("disk {}", spec.name);
            let path = self.disks[&spec.name].path.clone();
            let children: Vec<&BlockDevice> = self
                .o
                .block_devices
                .iter()
                .filter(|b| b.parent.as_deref() == Some(dev.kname.as_str()))
                .collect();
            let mut new = Vec::new();
            for ps_ in &spec.partitions {
                let key = format!("{}:{}", spec.name, ps_.name);
                let r = &self.disks[&key];
                match (r.part, r.dev) {
                    (Some((number, true)), _) => {
                        let typecode = if self.d.mirrors.values().any(|m| m.members.contains(&key))
                        {
                            "fd00"
                        } else if self
                            .d
                            .volume_groups
                            .values()
                            .any(|v| v.pvs.contains(&DeviceRef::Disk(key.clone())))
                        {
                            "8e00"
                        } else {
                            "8300"
                        };
                        new.push(NewPartition {
                            number,
                            name: ps_.name.clone(),
                            size: ps_.size,
                            typecode: typecode.into(),
                        });
                    }
                    (_, Some(b)) => {
                        if let Some(want) = ps_.size
                            && b.size < want
                        {
                            self.refuse(format!("disk {}", spec.name), format!("partition {} is {}, smaller than the file's {}; hyraid never resizes partitions", ps_.name, human(b.size), human(want)), format!("set partition {}'s size to {} in the file, or resize it by hand", ps_.name, human(b.size)));
                        }
                    }
                    _ => {}
                }
            }
            if new.is_empty() {
                continue;
            }
            let foreign_table = dev.pttype.as_deref().is_some_and(|t| t != "gpt");
            let new_table = children.is_empty() && (dev.pttype.is_none() || foreign_table);
            // An empty GPT (left by an interrupted apply, or made by hand) is not content.
            let content: Vec<String> = if !children.is_empty() {
                vec![]
            } else if dev.pttype.as_deref() == Some("gpt") {
                dev.signatures
                    .iter()
                    .flatten()
                    .filter(|s| s.kind != "gpt" && s.kind != "PMBR")
                    .map(|s| format!("{} at {}", s.kind, s.offset))
                    .collect()
            } else {
                dev.signature_summary()
            };
            let used = 2 << 20;
            let existing: u64 = children.iter().map(|b| b.size).sum();
            let needed: u64 = new.iter().map(|p| p.size.unwrap_or(1 << 20)).sum();
            let refuse = |me: &mut Self, reason: String, fix: &str| {
                me.refused.push(Refusal {
                    object: object.clone(),
                    reason,
                    fix: fix.into(),
                });
                me.blocked_parts.insert(spec.name.clone());
            };
            if foreign_table && !children.is_empty() {
                refuse(
                    self,
                    format!(
                        "{path} has a {} partition table with partitions the file does not name",
                        dev.pttype.clone().unwrap_or_default()
                    ),
                    "hyraid only adds to GPT disks; repartition it by hand, or name its partitions",
                );
                continue;
            }
            if existing + needed + used > dev.size {
                refuse(
                    self,
                    format!(
                        "the new partitions need {} but {} is free",
                        human(needed),
                        human(dev.size.saturating_sub(existing + used))
                    ),
                    "make them smaller, or use `rest` for the last one",
                );
                continue;
            }
            if !content.is_empty() {
                if !self.policy.allow_destroy {
                    refuse(
                        self,
                        format!(
                            "{path} carries {} — partitioning it destroys that",
                            content.join(", ")
                        ),
                        "check the disk holds nothing you need, then run with --allow-destroy",
                    );
                    continue;
                }
                steps.push(ps(
                    Step::WipeSignatures(WipeSignatures {
                        disk: spec.name.clone(),
                        device: path.clone(),
                        found: content.clone(),
                    }),
                    Risk::Destroys,
                    "erases what is on the disk before it is partitioned",
                ));
            }
            steps.push(ps(
                Step::CreatePartitions(CreatePartitions {
                    disk: spec.name.clone(),
                    device: path,
                    new_table: new_table || !content.is_empty(),
                    parts: new,
                }),
                Risk::Safe,
                if new_table {
                    "new GPT on a blank disk"
                } else {
                    "new partitions in free space; existing ones are not touched"
                },
            ));
        }
        self.steps.extend(steps);
    }
}
