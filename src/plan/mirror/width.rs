//! A mirror's width brought to the file: grown by a slot for each disk that joins as a spare
//! beyond the free slots; shrunk when members the file no longer names (and nothing replaces)
//! leave (failed, removed, then fewer slots: a permanent loss of redundancy, only with
//! --allow-destroy, and never below two members); empty slots the file has no disk for dropped
//! (also only with --allow-destroy: a missing member could not come back by --re-add).

use super::members::Slots;
use super::*;
use crate::observe::MdMember;
use crate::plan::step::{GrowArray, RemoveMember, WaitIdle};

/// md keeps at least this many members in a mirror hyraid manages.
const MIN_MEMBERS: usize = 2;

impl<'a> Planner<'a> {
    /// The width change the file asks for after joins and replaces: grow for the spares that
    /// joined beyond the slots, or remove the leaving members and shrink, or drop empty slots.
    /// Returns whether the plan waits for the recovery it starts.
    pub(super) fn change_width(
        &mut self,
        m: &MirrorSpec,
        a: &MdArray,
        object: &str,
        slots: Slots,
        out: &mut Vec<PlannedStep>,
    ) -> bool {
        let busy = (!a.is_idle() || slots.started) && !slots.replaced;
        if slots.grow > 0 {
            self.wait_first(m, busy, out);
            let n = a.raid_disks + slots.grow;
            out.push(ps(
                Step::GrowArray(GrowArray { array: m.name.clone(), md_device: m.md_device(), raid_devices: n }),
                Risk::Safe,
                format!("the file lists {} members and the array has {} slots: md adds the slots and the spares fill them by recovery; the members in sync stay in sync", m.members.len(), a.raid_disks),
            ));
            out.push(ps(
                Step::WaitIdle(WaitIdle {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                "the new members are copied onto (recovery); they hold the data once it ends",
            ));
            return true;
        }
        if !slots.leaving.is_empty() {
            self.remove_leaving(m, a, object, busy, slots.leaving, out);
            return false;
        }
        self.drop_empty_slots(m, a, busy, out);
        false
    }

    /// A wait before a width change when a resync or recovery runs (md refuses it then).
    fn wait_first(&self, m: &MirrorSpec, busy: bool, out: &mut Vec<PlannedStep>) {
        if busy {
            out.push(ps(
                Step::WaitIdle(WaitIdle {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                "md refuses a width change while a resync or recovery runs",
            ));
        }
    }

    /// Members the file no longer names and nothing replaces: failed, removed, and the array
    /// shrunk, with --allow-destroy; refused without it, and refused when fewer than two
    /// members would be left.
    fn remove_leaving(
        &mut self,
        m: &MirrorSpec,
        a: &MdArray,
        object: &str,
        busy: bool,
        leaving: Vec<&MdMember>,
        out: &mut Vec<PlannedStep>,
    ) {
        let active = a
            .members
            .iter()
            .filter(|x| !x.faulty() && x.slot.is_some())
            .count();
        let left = active.saturating_sub(leaving.len());
        let names: Vec<String> = leaving
            .iter()
            .map(|x| format!("/dev/{}", x.kname))
            .collect();
        if left < MIN_MEMBERS {
            self.refuse(
                object,
                format!("member {} is not among the mirror's `members`; removing it would leave the mirror with {left} working member(s), and hyraid never takes a mirror below {MIN_MEMBERS}", names.join(", ")),
                format!("{}, or name a disk that replaces it{}", self.keep_hint(&leaving), self.missing_hint(m)),
            );
            return;
        }
        let width = (a.raid_disks as usize)
            .saturating_sub(leaving.len())
            .max(m.members.len())
            .max(MIN_MEMBERS) as u32;
        if !self.policy.allow_destroy {
            for x in &leaving {
                self.refuse(
                    object,
                    format!("member /dev/{} is not among the mirror's `members`; removing it from the mirror is a permanent loss of redundancy", x.kname),
                    format!("run with --allow-destroy to remove it (`mdadm --fail`, `--remove`, `--grow --raid-devices={width}`), or {}", self.keep_hint(&[*x])) + &self.missing_hint(m),
                );
            }
            return;
        }
        self.wait_first(m, busy, out);
        for x in leaving {
            out.push(ps(
                Step::RemoveMember(RemoveMember { array: m.name.clone(), md_device: m.md_device(), device: self.stable_path(&x.kname), zero_superblock: true }),
                Risk::Degrades,
                format!("/dev/{} is no longer among the mirror's `members`: the mirror keeps one copy fewer (allowed by --allow-destroy); its superblock is erased so that no reboot assembles it again", x.kname),
            ));
        }
        if width < a.raid_disks {
            out.push(ps(
                Step::GrowArray(GrowArray {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                    raid_devices: width,
                }),
                Risk::Degrades,
                format!("the removed members' slots go: {width} members, none missing"),
            ));
        }
    }

    /// How to keep these members: list the file's disk for each in the mirror's `members`, or
    /// declare the disk first when the file does not name it.
    fn keep_hint(&self, members: &[&MdMember]) -> String {
        let what: Vec<String> = members
            .iter()
            .map(|x| {
                let named = self
                    .disks
                    .iter()
                    .find(|(_, r)| r.dev.is_some_and(|d| d.kname == x.kname));
                match named {
                    Some((name, _)) => format!("`{name}`"),
                    None => format!(
                        "a disk declared under `disks:` for {}",
                        self.stable_path(&x.kname)
                    ),
                }
            })
            .collect();
        format!("list {} in the mirror's `members`", what.join(" and "))
    }

    /// A member of the file that is on no disk here is most often the leaving one, mistyped.
    fn missing_hint(&self, m: &MirrorSpec) -> String {
        let missing: Vec<String> = m
            .members
            .iter()
            .filter_map(|n| {
                let r = self.disks.get(n)?;
                r.dev.is_none().then(|| format!("`{n}` ({})", r.path))
            })
            .collect();
        if missing.is_empty() {
            return String::new();
        }
        format!(
            " ({} of the file is on no disk here: if it is meant to be this member, check its `id` against `ls -l /dev/disk/by-id/`)",
            missing.join(" and ")
        )
    }

    /// More slots than the file lists members, every working member named by the file: the
    /// empty slots (left by a removal, or by a member missing now) go, with --allow-destroy. No
    /// copy is lost, but the array's full width becomes what runs now: a missing member can no
    /// longer come back by --re-add. Without the flag, refused.
    fn drop_empty_slots(
        &mut self,
        m: &MirrorSpec,
        a: &MdArray,
        busy: bool,
        out: &mut Vec<PlannedStep>,
    ) {
        let width = m.members.len().max(MIN_MEMBERS) as u32;
        let active = a
            .members
            .iter()
            .filter(|x| !x.faulty() && x.slot.is_some())
            .count() as u32;
        if a.raid_disks <= width || active > width || a.array_state == "inactive" {
            return;
        }
        if !self.policy.allow_destroy {
            self.refuse(
                format!("mirror {}", m.name),
                format!("the array has {} slots and runs with {active} ({} missing); the file lists {} members: dropping the empty slots makes {width} its full width, and a missing member could no longer come back by --re-add", a.raid_disks, a.raid_disks - active, m.members.len()),
                "name the disk that comes back or replaces the missing one in the mirror's `members` (it is rebuilt into the slot), or run with --allow-destroy to drop the empty slots",
            );
            return;
        }
        self.wait_first(m, busy, out);
        out.push(ps(
            Step::GrowArray(GrowArray { array: m.name.clone(), md_device: m.md_device(), raid_devices: width }),
            Risk::Degrades,
            format!("the array has {} slots and the file lists {} members: the empty slots go (no member holds them; allowed by --allow-destroy)", a.raid_disks, m.members.len()),
        ));
    }
}
