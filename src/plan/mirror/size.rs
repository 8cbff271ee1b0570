//! A mirror grown into the space its member partitions gain: growpart on every member (the
//! kernel's view follows, as for any partition), `mdadm --grow --size=max`, a wait for the
//! resync of the new region, then the PV on the mirror (`pvresize`). All members grow or none
//! does: md grows a mirror only as far as its smallest member.

use super::*;
use crate::observe::MdMember;
use crate::plan::step::{GrowArraySize, GrowPartition, ResizePv, WaitIdle};

/// Growth below 1 MiB (in sectors) is none: growpart's own fudge, and more than md's rounding
/// of a new array to 64 KiB.
const SLACK: u64 = 2048;

/// An in-sync member of an array, in sectors: its device now, and after this plan's growpart.
struct Member<'s> {
    kname: String,
    /// The device's bytes now.
    bytes: u64,
    now: u64,
    after: u64,
    grow: Option<&'s GrowPartition>,
}

/// What md gives a member of `sectors` when its size is set to the most (the kernel's
/// `super_1_rdev_size_change`): 1.1/1.2 everything after the data offset.
fn avail(m: &MdMember, sectors: u64) -> Option<u64> {
    Some(sectors.saturating_sub(m.data_offset?))
}

impl<'a> Planner<'a> {
    /// Every mirror of the file whose members can grow, or whose PV lags its array; a member's
    /// growth left over (its array is not one of the file's) is refused as before.
    pub(in crate::plan) fn mirror_sizes(&mut self) {
        let mirrors: Vec<&MirrorSpec> = self.d.mirrors.values().filter(|m| !m.absent).collect();
        for m in mirrors {
            let steps = self.mirror_size(m);
            self.steps.extend(steps);
        }
        for (kname, g) in std::mem::take(&mut self.member_growth) {
            let md = self
                .ix
                .array_of_member(&kname)
                .map(|a| a.name.clone().unwrap_or(a.kname.clone()))
                .unwrap_or_default();
            self.refuse(
                format!("disk {}", g.disk),
                format!("partition {} could grow by {} into the free space after it, but it is a member of /dev/md/{md}, which the file does not name as a mirror and which would not follow", g.partition, human(g.to - g.from)),
                format!("give partition {} a size of {} in the file to keep it, or name the array as a mirror of the file", g.partition, human(g.from)),
            );
        }
    }

    /// One mirror: its members' growth, the array's, and what is on it following.
    fn mirror_size(&mut self, m: &MirrorSpec) -> Vec<PlannedStep> {
        let Some(a) = self.array_of(m) else {
            return vec![];
        };
        let growth = std::mem::take(&mut self.member_growth);
        let (mine, others): (BTreeMap<_, _>, BTreeMap<_, _>) =
            growth.into_iter().partition(|(k, _)| a.member(k).is_some());
        self.member_growth = others;
        // A mirror refused already: its refusal stands, nothing grows.
        if self.blocked.contains(&m.name) {
            return vec![];
        }
        let members: Vec<Member> = a
            .members
            .iter()
            .filter(|x| x.slot.is_some() && !x.faulty())
            .filter_map(|x| {
                let bytes = self.o.device(&x.kname)?.size;
                let now = bytes / 512;
                let grow = mine.get(&x.kname);
                let after = grow.map(|g| g.to / 512).unwrap_or(now);
                Some(Member {
                    kname: x.kname.clone(),
                    bytes,
                    now: avail(x, now)?,
                    after: avail(x, after)?,
                    grow,
                })
            })
            .collect();
        let current = a.size_kib * 2;
        let smallest = members.iter().map(|x| x.after).min().unwrap_or(0);
        let largest = members.iter().map(|x| x.after).max().unwrap_or(0);
        let known = members.len() == a.members.iter().filter(|x| x.slot.is_some()).count();
        if mine.is_empty() {
            // An apply stopped after the members grew: the array still grows (every member a
            // partition of the file, of one size); else only what is on it follows.
            let resumable = known
                && smallest > current + SLACK
                && largest - smallest <= SLACK
                && members.iter().all(|x| self.file_partition(m, &x.kname));
            if !resumable || self.size_refused(m, a, &members) {
                return self.follow_mirror(m, a, None);
            }
        } else if !known {
            self.refuse(
                format!("mirror {}", m.name),
                format!("its member partitions could grow, but where md's data starts on every member of {} is not known (sysfs dev-*/offset)", m.md_path()),
                "give the partitions their present sizes in the file, or grow the mirror by hand",
            );
            return vec![];
        } else if largest - smallest > SLACK || smallest <= current + SLACK {
            self.refuse_uneven(m, &members);
            return vec![];
        } else if self.size_refused(m, a, &members) {
            return vec![];
        }
        let mut steps: Vec<PlannedStep> = members
            .iter()
            .filter_map(|x| x.grow)
            .map(|g| {
                ps(
                    Step::GrowPartition(g.clone()),
                    Risk::Safe,
                    format!("the file gives the member partitions of mirror {} the rest of their disks and every one has free space after it; its start and its data do not move, and md uses none of the new space until the array grows", m.name),
                )
            })
            .collect();
        steps.push(ps(
            Step::GrowArraySize(GrowArraySize { array: m.name.clone(), md_device: m.md_device(), from: current * 512, to: smallest * 512 }),
            Risk::Safe,
            "every member has grown: md sets each member's size to its device's and the array's to the smallest; the data already there stays on every member, and md resyncs only the new region, which holds nothing yet",
        ));
        steps.push(ps(
            Step::WaitIdle(WaitIdle {
                array: m.name.clone(),
                md_device: m.md_device(),
            }),
            Risk::Safe,
            "the new region is resynced; what is on the mirror takes it once every member holds it",
        ));
        steps.extend(self.follow_mirror(m, a, Some(smallest * 512)));
        steps
    }

    /// Whether `kname` is a partition of the file among the mirror's members.
    fn file_partition(&self, m: &MirrorSpec, kname: &str) -> bool {
        m.members.iter().any(|n| {
            n.contains(':')
                && self
                    .disks
                    .get(n)
                    .and_then(|r| r.dev)
                    .is_some_and(|d| d.kname == kname)
        })
    }

    /// Refusals of a grow apply would fail on or must not start: a 1.0 superblock, an array
    /// that resyncs or is degraded, other changes to the mirror in this plan, a filesystem on
    /// the array itself. True when refused.
    fn size_refused(&mut self, m: &MirrorSpec, a: &MdArray, members: &[Member]) -> bool {
        let object = format!("mirror {}", m.name);
        let md = m.md_path();
        let grows = members
            .iter()
            .filter(|x| x.after > x.now)
            .map(|x| {
                format!(
                    "{} by {}",
                    self.member_name(m, &x.kname),
                    human((x.after - x.now) * 512)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let changing = self
            .steps
            .iter()
            .any(|s| s.step.object() == crate::plan::address::Address::Mirror(m.name.clone()));
        // A PV grows with its array; so does the LUKS header of an encrypted mirror (its mapping
        // and the PV on that follow).
        let content = a.fstype.as_deref().filter(|t| {
            *t != "LVM2_member"
                && !(m.encryption.is_some() && *t == crate::observe::luks::LUKS_FSTYPE)
        });
        let (reason, fix) = if a.superblock_version() == "1.0" {
            (
                format!(
                    "its members could grow ({grows}), but {md} has a 1.0 superblock, at the end of each member: once a partition grows, mdadm finds no superblock at its new end until md has moved it, so a machine that dies in between does not assemble the array"
                ),
                format!(
                    "grow the mirror by hand (growpart on every member, then mdadm --grow {md} --size=max at once), or give the partitions their present sizes in the file"
                ),
            )
        } else if !a.is_idle() || a.degraded > 0 {
            (
                format!(
                    "its members could grow ({grows}), but {md} is {}: md grows an array only when every member is in sync and no resync runs",
                    if a.degraded > 0 {
                        "degraded".to_string()
                    } else {
                        format!("busy ({})", a.sync_action)
                    }
                ),
                if a.sync_action == "frozen" {
                    format!(
                        "{md} is frozen and never resumes by itself: once whatever froze it is done, `echo idle > /sys/block/{}/md/sync_action`, then plan again",
                        a.kname
                    )
                } else {
                    format!("wait until {md} is in sync (`mdadm --wait {md}`), then plan again")
                },
            )
        } else if changing {
            (
                format!("its members could grow ({grows}), but this plan changes {md} already"),
                "apply the other changes to the mirror first, then plan again".to_string(),
            )
        } else if let Some(t) = content {
            (
                format!("its members could grow ({grows}), but {md} carries a {t} filesystem directly, which hyraid does not grow"),
                "give the partitions their present sizes in the file, or grow the mirror and the filesystem by hand".to_string(),
            )
        } else {
            return false;
        };
        self.refuse(object, reason, fix);
        true
    }

    /// The members would not end at one size: md would use only the smallest, so no growpart.
    fn refuse_uneven(&mut self, m: &MirrorSpec, members: &[Member]) {
        let md = m.md_path();
        let largest = members.iter().map(|y| y.after).max().unwrap_or(0);
        let short: Vec<String> = members
            .iter()
            .filter(|x| x.after + SLACK <= largest || x.grow.is_none())
            .map(|x| {
                let name = self.member_name(m, &x.kname);
                match x.grow {
                    Some(_) => format!("{name} (grows to {})", human(x.after * 512)),
                    None if self.file_sized(&name) => format!(
                        "{name} (stays at {}: the file gives it that size)",
                        human(x.bytes)
                    ),
                    None => format!(
                        "{name} (stays at {}: no free space after it that growpart can take)",
                        human(x.bytes)
                    ),
                }
            })
            .collect();
        for g in members.iter().filter_map(|x| x.grow) {
            self.refuse(
                format!("disk {}", g.disk),
                format!("partition {} could grow by {} into the free space after it, but it is a member of {md}, which would not follow: md grows a mirror only as far as its smallest member, {}", g.partition, human(g.to - g.from), short.join(", ")),
                format!("give partition {} a size of {} in the file to keep it, or give every member of mirror {} the same free space after it", g.partition, human(g.from), m.name),
            );
        }
    }

    /// Whether the file gives partition `disk:partition` a size (rather than `rest`).
    fn file_sized(&self, name: &str) -> bool {
        let Some((disk, part)) = name.split_once(':') else {
            return false;
        };
        self.d.disks.get(disk).is_some_and(|s| {
            s.partitions
                .iter()
                .any(|p| p.name == part && p.size.is_some())
        })
    }

    /// The file's name of a member (`disk:partition`), else its kernel name.
    pub(super) fn member_name(&self, m: &MirrorSpec, kname: &str) -> String {
        m.members
            .iter()
            .find(|n| {
                self.disks
                    .get(*n)
                    .and_then(|r| r.dev)
                    .is_some_and(|d| d.kname == kname)
            })
            .cloned()
            .unwrap_or_else(|| kname.to_string())
    }

    /// What is on the mirror takes its new size: the PV (`pvresize`), after the resync of the
    /// new region when one still runs. `to` is the array's size once this plan grows it.
    /// A filesystem made on the mirror directly would grow here too, once the file can say so.
    fn follow_mirror(&mut self, m: &MirrorSpec, a: &MdArray, to: Option<u64>) -> Vec<PlannedStep> {
        let size = to.unwrap_or(a.size_kib * 1024);
        // An encrypted mirror's PV is its mapping: the mapping follows the array, then the PV.
        if m.encryption.is_some() {
            return self.follow_encrypted_mirror(m, a, to, size);
        }
        let Some(pv) = self
            .ix
            .pv(&a.kname)
            .filter(|p| p.dev_size + SLACK * 512 < size)
        else {
            return vec![];
        };
        let mut steps = Vec::new();
        if to.is_none() && !a.is_idle() {
            steps.push(ps(
                Step::WaitIdle(WaitIdle {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                "the array grew and its new region is being resynced; the PV takes it once every member holds it",
            ));
        }
        steps.push(ps(
            Step::ResizePv(ResizePv {
                device: m.md_path(),
                from: pv.dev_size,
                to: size,
            }),
            Risk::Safe,
            "the mirror under the PV has grown; the PV takes the new space",
        ));
        steps
    }
}
