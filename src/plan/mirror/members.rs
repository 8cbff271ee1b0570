//! Members of an existing mirror: the file's disks sorted against the array, failed members
//! removed, disks joining into free slots or by hot replace, interrupted replaces finished, and
//! disks beyond the slots joined as spares (the array then grows, see width.rs).

use super::*;
use crate::observe::MdMember;
use crate::plan::step::{
    AddMember, ReAddMember, RemoveFailed, ReplaceMember, WaitIdle, WipeSignatures, ZeroSuperblock,
};

/// The disks the file names for a mirror, sorted against the array. A disk the file names that
/// is not in the array joins it: back into its old place when it carries this array's superblock
/// (--re-add), into a free slot (--add), or in place of a working member the file no longer names
/// (--replace, no loss of redundancy).
pub(super) struct Members<'m> {
    /// Disks working in the array (spares included), with their kernel names.
    pub(super) present: Vec<(&'m String, &'m str)>,
    /// Disks that join, with what to erase first: None = re-add (a failed member, or a disk
    /// carrying this array's superblock), Some(signatures, maybe none) = add.
    pub(super) joining: Vec<(&'m String, Option<Vec<String>>)>,
    /// Disks already in the array as spares without a slot (left by an interrupted hot
    /// replace): each one finishes the replacement of a member the file no longer names.
    pub(super) spares: Vec<&'m String>,
}

/// Where joining disks go: a free slot first, then the place of a member the file no longer names.
pub(super) struct Slots<'x> {
    /// Slots no working member holds.
    pub(super) free: usize,
    /// In-sync members that are not among the mirror's `members` (and md is not already
    /// replacing): each one is replaced by a joining disk or a spare, or refused. A disk still
    /// declared under `disks:` but gone from `members` leaves all the same.
    pub(super) leaving: Vec<&'x MdMember>,
    /// A hot replace is planned: the array waits for the copy, then drops the replaced member.
    pub(super) replaced: bool,
    /// The kernel names of the members replaced.
    pub(super) replaced_old: Vec<String>,
    /// Disks that join as spares beyond the free slots and the leaving members: the array
    /// grows by one slot for each, which they fill by recovery.
    pub(super) grow: u32,
    /// A re-add or an add into a free slot starts a recovery (md refuses a width change until
    /// it ends).
    pub(super) started: bool,
}

impl<'a> Planner<'a> {
    /// Sorts the disks the file names into present, joining and spares; notes the missing ones
    /// and refuses the ones that cannot join.
    pub(super) fn sort_members<'m>(
        &mut self,
        m: &'m MirrorSpec,
        a: &MdArray,
        object: &str,
    ) -> Members<'m>
    where
        'a: 'm,
    {
        let array_uuid = a.uuid.as_deref().map(crate::observe::names::norm_uuid);
        let mut present: Vec<(&String, &str)> = Vec::new();
        let mut joining: Vec<(&String, Option<Vec<String>>)> = Vec::new();
        let mut spares: Vec<&String> = Vec::new();
        let mut left: Vec<(&String, bool)> = Vec::new();
        for name in &m.members {
            let r = &self.disks[name];
            // A disk not on the machine is refused as such (unmet.rs).
            let Some(dev) = r.dev else {
                // A partition this plan makes on a disk of the file (a new disk in a dead one's
                // place): blank, it joins right after it is made.
                if let Some(size) = self.planned_partition_size(name) {
                    let need = a.join_avail_sectors(size / 512).unwrap_or(size / 512);
                    if need < a.size_kib * 2 {
                        self.refuse(object, format!("cannot add {name}: the partition the plan makes ({}) is smaller than the array's members: it must hold the array's {} and md's metadata", human(size), human(a.size_kib * 1024)), "give the partition at least the size of the other members' partitions");
                    } else {
                        joining.push((name, Some(Vec::new())));
                    }
                }
                continue;
            };
            match a.member(&dev.kname) {
                // A spare without a slot: added by an interrupted hot replace; finish it.
                Some(x)
                    if !x.faulty()
                        && x.slot.is_none()
                        && x.has("spare")
                        && !x.has("replacement") =>
                {
                    present.push((name, dev.kname.as_str()));
                    spares.push(name);
                }
                Some(x) if !x.faulty() => present.push((name, dev.kname.as_str())),
                // A member md failed goes back only when the user asks for it.
                Some(_) if !self.policy.re_adds(name) => left.push((name, true)),
                // --re-add copies only what the bitmap marks; without a bitmap md refuses it,
                // and the disk goes back by --add (a full recovery; mdadm takes a device with
                // this array's own superblock as it is).
                Some(_) if a.bitmap.is_none() => joining.push((name, Some(vec![]))),
                Some(_) => joining.push((name, None)),
                None => {
                    let ours = dev.signatures.iter().flatten().any(|s| {
                        s.kind == "linux_raid_member"
                            && s.uuid.as_deref().map(crate::observe::names::norm_uuid) == array_uuid
                            && array_uuid.is_some()
                    });
                    if ours && dev.holders.is_empty() {
                        // It left the array without hyraid (failed and removed, or missing
                        // when the array started): back only when the user asks for it.
                        match self.policy.re_adds(name) {
                            true => joining.push((name, a.bitmap.is_none().then(Vec::new))),
                            false => left.push((name, false)),
                        }
                        continue;
                    }
                    match self.usable(r) {
                        Err(why) => {
                            let fix = self.unusable_fix(r);
                            self.refuse(object, format!("cannot add {name}: {why}"), fix)
                        }
                        Ok(found) if !found.is_empty() && !self.policy.allow_destroy => self.refuse(
                            format!("disk {name}"),
                            format!("{} carries {} — adding it to mirror {} destroys that", r.path, found.join(", "), m.name),
                            "check the disk holds nothing you need, then run with --allow-destroy",
                        ),
                        Ok(_) if a.join_avail_sectors(dev.size / 512).unwrap_or(dev.size / 512) < a.size_kib * 2 => self.refuse(
                            object,
                            format!("cannot add {name}: {} ({}) is smaller than the array's members: it must hold the array's {} after {} of md metadata (the members' data offset); md refuses it, and the array (and the LVM on it) cannot shrink", r.path, human(dev.size), human(a.size_kib * 1024), human((dev.size / 512).saturating_sub(a.join_avail_sectors(dev.size / 512).unwrap_or(dev.size / 512)) * 512)),
                            "use a disk at least as large as the array's members",
                        ),
                        Ok(found) => joining.push((name, Some(found))),
                    }
                }
            }
        }
        for (name, failed) in left {
            self.refuse_back(name, failed, object);
        }
        Members {
            present,
            joining,
            spares,
        }
    }

    /// A disk that left its mirror without hyraid goes back in only on `--re-add NAME`: without
    /// it the plan refuses, saying what happened (`failed`: md failed it and still lists it as
    /// faulty; else it carries the array's superblock but is not in the array) and what to do:
    /// replace it, or re-add it when the cause was transient.
    fn refuse_back(&mut self, name: &str, failed: bool, object: &str) {
        let path = self.disks[name].path.clone();
        let what = if failed {
            format!(
                "member {name} ({path}) has failed: md stopped using it, usually after I/O errors, and it holds no current copy"
            )
        } else {
            format!(
                "member {name} ({path}) left the array (md failed it, or it was missing when the array started) and carries a stale copy"
            )
        };
        self.refuse(
            object,
            format!("{what}; the mirror runs without it and hyraid does not put it back on its own"),
            format!(
                "replace the disk: put the new disk's id under `disks.{name}` (hyraid adds it and md rebuilds onto it); or, only if the cause was transient (a loose cable, a power cut) and `smartctl -a {path}` shows no reallocated or pending sectors, put it back with `--re-add {name}`"
            ),
        );
    }

    /// Failed members hold no current copy: removed, they free their slots.
    pub(super) fn remove_failed_members(
        &self,
        m: &MirrorSpec,
        a: &MdArray,
        out: &mut Vec<PlannedStep>,
    ) {
        if a.members.iter().any(|x| x.faulty()) {
            out.push(ps(
                Step::RemoveFailed(RemoveFailed {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                "failed members hold no current copy; removing them frees their slots",
            ));
        }
    }

    /// The slots of `a` joining disks can take: the free ones, and those of the in-sync members
    /// the mirror's `members` no longer list.
    pub(super) fn slots<'x>(&self, m: &MirrorSpec, a: &'x MdArray) -> Slots<'x> {
        let listed: BTreeSet<&str> = m
            .members
            .iter()
            .filter_map(|name| self.disks.get(name)?.dev)
            .map(|d| d.kname.as_str())
            .collect();
        let active = a
            .members
            .iter()
            .filter(|x| !x.faulty() && x.slot.is_some())
            .count();
        let free = (a.raid_disks as usize).saturating_sub(active);
        let leaving: Vec<&MdMember> = a
            .members
            .iter()
            .filter(|x| {
                !x.faulty()
                    && x.has("in_sync")
                    && !x.has("want_replacement")
                    && !listed.contains(x.kname.as_str())
            })
            .collect();
        Slots {
            free,
            leaving,
            replaced: false,
            replaced_old: Vec::new(),
            grow: 0,
            started: false,
        }
    }

    /// Bytes of partition `member` (`disk:partition`) when this plan creates it: its size, or
    /// for one up to the end of its disk at least what the disk leaves after the others (on a
    /// new table as sgdisk lays it out, else less 2 MiB for the GPT and alignment).
    fn planned_partition_size(&self, member: &str) -> Option<u64> {
        let (disk, part) = member.split_once(':')?;
        let c = self.steps.iter().find_map(|s| match &s.step {
            Step::CreatePartitions(c) if c.disk == disk => Some(c),
            _ => None,
        })?;
        let p = c.parts.iter().find(|p| p.name == part)?;
        p.size.or_else(|| {
            let dev = self.disks.get(disk)?.dev?;
            let there: u64 = (self.o.block_devices.iter())
                .filter(|b| b.parent.as_deref() == Some(dev.kname.as_str()))
                .map(|b| b.size)
                .sum();
            if c.new_table {
                return Some(rest_of_new_table(dev.size, &c.parts));
            }
            let others: u64 = c.parts.iter().filter_map(|p| p.size).sum();
            Some(dev.size.saturating_sub(there + others + (2 << 20)))
        })
    }

    /// Each joining disk, after the wipe it needs: re-added or added into a free slot, or copied
    /// in place of a member the file no longer names (hot replace); refused when there is neither.
    pub(super) fn join_members(
        &mut self,
        m: &MirrorSpec,
        wm: &BTreeSet<String>,
        object: &str,
        joining: Vec<(&String, Option<Vec<String>>)>,
        slots: &mut Slots,
        out: &mut Vec<PlannedStep>,
    ) {
        for (name, kind) in joining {
            let r = &self.disks[name];
            let device = ArrayDevice {
                path: r.path.clone(),
                disk: name.clone(),
                write_mostly: wm.contains(name),
            };
            // A wipe is planned only together with the join that needs it: when the join is
            // refused, nothing is erased.
            let wipe = kind.as_ref().filter(|f| !f.is_empty()).map(|found| {
                ps(
                    Step::WipeSignatures(WipeSignatures {
                        disk: name.clone(),
                        device: r.path.clone(),
                        found: found.clone(),
                    }),
                    Risk::Destroys,
                    format!(
                        "erases {} before the disk joins the mirror",
                        found.join(", ")
                    ),
                )
            });
            if slots.free == 0 && slots.leaving.is_empty() && kind.is_some() {
                // A new disk and no slot for it: it joins as a spare, and the array grows.
                out.extend(wipe);
                out.push(ps(
                    Step::AddMember(AddMember {
                        array: m.name.clone(),
                        md_device: m.md_device(),
                        device,
                    }),
                    Risk::Safe,
                    "added as a spare; the array then grows by a slot that it fills by recovery",
                ));
                slots.grow += 1;
                continue;
            }
            if slots.free == 0 && slots.leaving.is_empty() {
                self.refuse(
                    object,
                    format!("disk {name} is not a member and the array has no free slot"),
                    "name the member it replaces out of the file, or grow the array by hand",
                );
                continue;
            }
            out.extend(wipe);
            if slots.free > 0 {
                slots.free -= 1;
                slots.started = true;
                out.push(match kind {
                    None => ps(Step::ReAddMember(ReAddMember { array: m.name.clone(), md_device: m.md_device(), device }), Risk::DataAtRisk, format!("put back on request (--re-add {name}): this disk left the mirror without hyraid; only the blocks the bitmap marks as changed are copied. Right only when the cause was transient (a cable, a power cut): a disk md failed for I/O errors fails again, and the mirror then rests on one disk")),
                    Some(_) if self.policy.re_adds(name) => ps(Step::AddMember(AddMember { array: m.name.clone(), md_device: m.md_device(), device }), Risk::DataAtRisk, format!("put back on request (--re-add {name}): this disk left the mirror without hyraid and is rebuilt in full (no bitmap). Right only when the cause was transient (a cable, a power cut): a disk md failed for I/O errors fails again, and the mirror then rests on one disk")),
                    Some(_) => ps(Step::AddMember(AddMember { array: m.name.clone(), md_device: m.md_device(), device }), Risk::Degrades, "the mirror is missing a member; it is rebuilt onto this disk (redundancy returns when recovery ends)"),
                });
            } else if let Some(old) = slots.leaving.pop() {
                let old_path = self.stable_path(&old.kname);
                out.push(ps(Step::ReplaceMember(ReplaceMember { array: m.name.clone(), md_device: m.md_device(), old: old_path, new: device, spare_added: false }),
                    Risk::Safe,
                    format!("/dev/{} is no longer among the mirror's `members`: {name} is copied in its place while it stays in service, so redundancy never drops", old.kname),
                ));
                slots.replaced = true;
                slots.replaced_old.push(old.kname.clone());
            }
        }
    }

    /// Each spare left by an interrupted hot replace continues the replacement of a member the
    /// file no longer names.
    pub(super) fn finish_replacements(
        &self,
        m: &MirrorSpec,
        wm: &BTreeSet<String>,
        spares: Vec<&String>,
        slots: &mut Slots,
        out: &mut Vec<PlannedStep>,
    ) {
        for name in spares {
            let Some(old) = slots.leaving.pop() else {
                // No member for it to replace: the array grows by a slot that it fills.
                slots.grow += 1;
                continue;
            };
            let r = &self.disks[name];
            let old_path = self.stable_path(&old.kname);
            out.push(ps(
                Step::ReplaceMember(ReplaceMember {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                    old: old_path,
                    new: ArrayDevice {
                        path: r.path.clone(),
                        disk: name.clone(),
                        write_mostly: wm.contains(name),
                    },
                    spare_added: true,
                }),
                Risk::Safe,
                format!(
                    "{name} is already a spare: the interrupted replacement of /dev/{} continues",
                    old.kname
                ),
            ));
            slots.replaced = true;
            slots.replaced_old.push(old.kname.clone());
        }
    }

    /// After a hot replace: wait for the copy (md then fails the replaced member out), and
    /// remove the replaced member. A replaced disk the file still declares loses the array's
    /// superblock: its copy is stale once the new member holds the data, and a reboot must
    /// not assemble it (an undeclared one is only noted, see former.rs).
    pub(super) fn drop_replaced(
        &self,
        m: &MirrorSpec,
        replaced_old: &[String],
        out: &mut Vec<PlannedStep>,
    ) {
        out.push(ps(
            Step::WaitIdle(WaitIdle {
                array: m.name.clone(),
                md_device: m.md_device(),
            }),
            Risk::Safe,
            "the replaced member is failed out when the copy is complete",
        ));
        out.push(ps(
            Step::RemoveFailed(RemoveFailed {
                array: m.name.clone(),
                md_device: m.md_device(),
            }),
            Risk::Safe,
            "the replaced member leaves the array",
        ));
        for k in replaced_old
            .iter()
            .filter(|k| self.file_knames.contains(*k))
        {
            out.push(ps(
                Step::ZeroSuperblock(ZeroSuperblock {
                    array: m.name.clone(),
                    device: self.stable_path(k),
                }),
                Risk::Safe,
                "the replaced disk's copy is stale now that the new member holds the data: its md superblock is erased so that no reboot assembles it (the disk is still in the file)",
            ));
        }
    }
}

/// The last partition of a new GPT (`--new=N:0:0` after `parts` in order), as sgdisk lays it out:
/// each partition starts on a 1 MiB boundary, the first at 1 MiB, and the last ends where the
/// backup GPT begins (33 sectors of 512 bytes from the end; 5 of 4096 on a 4Kn disk, so 20 KiB
/// is taken for both), in whole 4 KiB. A blank disk the size of a member's gives what md needs
/// for it again, to the sector.
pub(in crate::plan) fn rest_of_new_table(
    disk: u64,
    parts: &[crate::plan::step::NewPartition],
) -> u64 {
    const MIB: u64 = 1 << 20;
    let start = parts.iter().filter_map(|p| p.size).fold(MIB, |at, s| {
        (at + s.div_ceil(1024) * 1024).div_ceil(MIB) * MIB
    });
    disk.saturating_sub(start + 20 * 1024) / 4096 * 4096
}
