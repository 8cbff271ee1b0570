//! GPT partitions the file declares: a new table on a blank disk, or new partitions in free space.

use super::*;
use crate::config::boot::PartitionRole;
use crate::plan::step::{CreatePartitions, RegisterPartitions, WipeSignatures};

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
            let (new, register) = self.partition_changes(spec, dev, &path, &mut steps);
            if (!register.add.is_empty() || !register.update.is_empty())
                && !self.tool_missing(
                    &object,
                    "partx",
                    "the kernel must be told of partitions in the table",
                )
            {
                steps.push(ps(
                    Step::RegisterPartitions(register),
                    Risk::Safe,
                    "the table on the disk has partitions the kernel does not know yet (its re-read failed while the disk was in use)",
                ));
            }
            if new.is_empty() {
                continue;
            }
            let in_use = children.iter().any(|c| self.is_open(c));
            if in_use
                && self.tool_missing(&object, "partx", "other partitions of the disk are in use, so the kernel must be told of the new ones with partx")
            {
                self.blocked_parts.insert(spec.name.clone());
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
                    in_use,
                }),
                Risk::Safe,
                if new_table {
                    "new GPT on a blank disk"
                } else if in_use {
                    "new partitions in free space; the disk's other partitions are in use and untouched, so the kernel is told of the new ones with partx"
                } else {
                    "new partitions in free space; existing ones are not touched"
                },
            ));
        }
        self.steps.extend(steps);
    }

    /// What the file's partitions of one disk need: the ones to create, and the ones the table
    /// has that the kernel lacks or knows at another size; existing ones may grow (into `steps`).
    fn partition_changes(
        &mut self,
        spec: &'a DiskSpec,
        dev: &'a BlockDevice,
        path: &str,
        steps: &mut Vec<PlannedStep>,
    ) -> (Vec<NewPartition>, RegisterPartitions) {
        let mut new = Vec::new();
        let o = self.o;
        let table = o.partition_tables.get(&dev.kname);
        let in_table = |n: u32, name: &str| {
            table.is_some_and(|t| {
                t.iter()
                    .any(|e| e.number == n && e.name.as_deref() == Some(name))
            })
        };
        let mut register = RegisterPartitions {
            disk: spec.name.clone(),
            device: path.to_string(),
            add: vec![],
            update: vec![],
        };
        for ps_ in &spec.partitions {
            let key = format!("{}:{}", spec.name, ps_.name);
            let r = &self.disks[&key];
            match (r.part, r.dev) {
                (Some((number, true)), _) if in_table(number, &ps_.name) => {
                    register.add.push(number);
                }
                (Some((number, true)), _) => {
                    let typecode = if ps_.role == PartitionRole::Esp {
                        "ef00"
                    } else if ps_.role == PartitionRole::BiosBoot {
                        "ef02"
                    } else if self.d.mirrors.values().any(|m| m.members.contains(&key)) {
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
                    let entry = table
                        .and_then(|t| t.iter().find(|e| Some(e.number) == part_number(&b.kname)));
                    match entry {
                        Some(e) if e.sectors * 512 != b.size => register.update.push(e.number),
                        _ => steps.extend(self.grow_partition(spec, ps_, dev, b, table)),
                    }
                }
                _ => {}
            }
        }
        (new, register)
    }
}
