//! An existing mirror brought to the file: members joining, replaced or re-added, write-mostly, bitmap and write-behind.

use super::bitmap::bitmap_recreated;
use super::*;
use crate::plan::step::{ReadWrite, SetWriteMostly, StartArray};

impl<'a> Planner<'a> {
    /// An existing array brought to the file, in the order its steps run: start it if it is
    /// assembled but not running, remove failed members, join, replace, then write-mostly set,
    /// bitmap and write-behind, write-mostly cleared last.
    pub(in crate::plan) fn converge_mirror(
        &mut self,
        m: &MirrorSpec,
        wm: &BTreeSet<String>,
        a: &MdArray,
    ) -> Vec<PlannedStep> {
        let out = self.converge_steps(m, wm, a);
        // A frozen array (`sync_action` = frozen) starts no resync or recovery and refuses
        // bitmap and width changes, and it stays frozen until someone sets it idle: a wait
        // would never end. Only write-mostly, set through sysfs, works on it.
        // What needs md's sync thread or is refused with EBUSY while frozen; removing failed
        // members, sysfs writes and erasing a former member's superblock work.
        let needs_md = out.iter().any(|s| {
            starts_rebuild(&s.step)
                || matches!(
                    s.step,
                    Step::RemoveBitmap(_)
                        | Step::AddBitmap(_)
                        | Step::WaitIdle(_)
                        | Step::RemoveMember(_)
                )
        });
        if a.sync_action == "frozen" && needs_md {
            self.refuse(
                format!("mirror {}", m.name),
                format!("{} is frozen (sync_action = frozen): md starts no resync or recovery and refuses bitmap and width changes until it is set back to idle, which it never does by itself", m.md_path()),
                format!("once whatever froze it is done, `echo idle > /sys/block/{}/md/sync_action`, then plan again", a.kname),
            );
            self.blocked.insert(m.name.clone());
            return Vec::new();
        }
        out
    }

    fn converge_steps(
        &mut self,
        m: &MirrorSpec,
        wm: &BTreeSet<String>,
        a: &MdArray,
    ) -> Vec<PlannedStep> {
        let object = format!("mirror {}", m.name);
        let mut out = Vec::new();
        if self.array_refused(m, a, &object) {
            return out;
        }
        let started = self.start_degraded(m, a, &mut out);
        let inactive = started.is_some();
        let a = started.as_ref().unwrap_or(a);
        let members = self.sort_members(m, a, &object);
        self.remove_failed_members(m, a, &mut out);
        let mut slots = self.slots(m, a);
        let joins = !members.joining.is_empty();
        // Members coming back: joining in this plan, or already recovering into a slot.
        let recovering = a
            .members
            .iter()
            .filter(|x| !x.faulty() && x.slot.is_some() && !x.has("in_sync"))
            .count();
        let returning = (members.joining.len() + recovering) as u32;
        self.join_members(m, wm, &object, members.joining, &mut slots, &mut out);
        self.finish_replacements(m, wm, members.spares, &mut slots, &mut out);
        if slots.replaced {
            self.drop_replaced(m, &slots.replaced_old, &mut out);
        }
        let replaced = slots.replaced;
        let grown = self.change_width(m, a, &object, slots, &mut out);
        self.read_write_for_rebuild(m, a, &mut out);
        self.former_members(m, a, &object, &mut out);
        self.note_array_state(m, a);
        // An array started by this plan is planned further only when its superblocks were read
        // (its bitmap and write-mostly flags, which it takes when it starts).
        if inactive && !a.superblock_read {
            return out;
        }
        // Write-mostly on live members: set first, clear last (write-behind needs one).
        let (set_on, set_off) = self.write_mostly_changes(m, wm, a, &members.present);
        out.extend(set_on);
        let recreate = bitmap_recreated(m, a);
        if self.bitmap_refused_read_only(m, a, &object, recreate) {
            return out;
        }
        if recreate && a.bitmap.is_some() && a.degraded > returning && !replaced {
            // The bitmap records what a missing member lacks: it comes back by --re-add with
            // only those blocks copied. Removed now, its return is a full recovery.
            self.refuse(
                &object,
                format!("the array is degraded ({} member(s) missing) and its bitmap is what lets a missing member come back by --re-add, copying only the blocks written since; removing it to re-create it makes that return a full recovery", a.degraded),
                "bring the missing member back or name its replacement in the file, let the recovery end, then plan again; or leave the bitmap as it is for now",
            );
        } else if recreate {
            self.recreate_bitmap(m, a, joins, replaced || grown, &mut out);
        } else {
            out.extend(self.write_behind_change(m, a));
        }
        out.extend(set_off);
        out
    }

    /// An auto-read-only array (after boot or assembly, until its first write) holds a rebuild
    /// onto a member added to it: made read-write before the first step that starts one.
    fn read_write_for_rebuild(&mut self, m: &MirrorSpec, a: &MdArray, out: &mut Vec<PlannedStep>) {
        if !a.auto_read_only() {
            return;
        }
        let Some(at) = out.iter().position(|s| starts_rebuild(&s.step)) else {
            return;
        };
        out.insert(
            at,
            ps(
                Step::ReadWrite(ReadWrite {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                "the array is auto-read-only (after boot or assembly); md holds a rebuild onto a member added to it until its first write",
            ),
        );
    }

    /// Refuses an array hyraid does not manage: not RAID1, firmware RAID metadata, or a bitmap
    /// of a kind hyraid does not know (a file bitmap is converted, see `recreate_bitmap`). The
    /// mirror is then blocked.
    fn array_refused(&mut self, m: &MirrorSpec, a: &MdArray, object: &str) -> bool {
        if a.level != "raid1" {
            self.refuse(
                object,
                format!("{} is {}, not RAID1", m.md_path(), a.level),
                "hyraid manages RAID1 mirrors only; rename the mirror in the file",
            );
            self.blocked.insert(m.name.clone());
            return true;
        }
        let foreign = match (&a.metadata, &a.bitmap) {
            (Some(meta), _) => Some(format!(
                "/dev/md/{} has {meta} metadata (a volume of a firmware RAID container)",
                m.name
            )),
            (_, Some(b)) if b.kind == crate::observe::BitmapKind::Unknown => Some(format!(
                "the bitmap of /dev/md/{} is {}",
                m.name,
                b.describe()
            )),
            _ => None,
        };
        if let Some(why) = foreign {
            self.refuse(object, format!("{why}; hyraid manages md RAID1 with internal bitmaps only"), format!("leave it out of the file, or move it to an internal bitmap yourself (`mdadm --grow /dev/{k} --bitmap=none`, then `--bitmap=internal`)", k = a.kname));
            self.blocked.insert(m.name.clone());
            return true;
        }
        // The superblock format is fixed at creation: the array keeps serving as it is.
        let (have, want) = (a.superblock_version(), m.metadata.as_str());
        if have != want {
            self.refuse(
                object,
                format!("{} has metadata {have}, the file says {want}; the superblock format of an existing array cannot be changed (re-creating the array destroys its data)", m.md_path()),
                format!("set `metadata: \"{have}\"` in the file"),
            );
        }
        false
    }

    /// Assembled but not started (a member was missing at boot): start it degraded, and return
    /// the running array it becomes, which the rest is planned against. None when it runs.
    fn start_degraded(
        &mut self,
        m: &MirrorSpec,
        a: &MdArray,
        out: &mut Vec<PlannedStep>,
    ) -> Option<MdArray> {
        if a.array_state != "inactive" {
            return None;
        }
        let n = a.members.iter().filter(|x| !x.faulty()).count();
        let missing = a.raid_disks.saturating_sub(n as u32);
        out.push(if missing == 0 {
            ps(
                Step::StartArray(StartArray { array: m.name.clone(), md: a.kname.clone(), missing }),
                Risk::Safe,
                format!("assembled but not running, with all {n} members present (a member came late at boot): started whole"),
            )
        } else {
            ps(
                Step::StartArray(StartArray { array: m.name.clone(), md: a.kname.clone(), missing }),
                Risk::Degrades,
                format!("assembled but not running: {n} of {} members are present; it runs degraded until the missing member is replaced", a.raid_disks),
            )
        });
        // What stands on it is read once it runs: planned then, never guessed blank now.
        self.starting.insert(m.name.clone());
        self.opening
            .insert(m.name.clone(), format!("mirror {}", m.name));
        let mut v = a.clone();
        for (i, x) in v.members.iter_mut().filter(|x| !x.faulty()).enumerate() {
            x.state.retain(|w| w != "spare");
            x.state.insert(0, "in_sync".into());
            x.slot = Some(i as u32);
        }
        v.array_state = "active".into();
        v.sync_action = "idle".into();
        v.degraded = v.raid_disks.saturating_sub(n as u32);
        if !a.superblock_read {
            self.notes.push(format!("mirror {}: write-mostly, bitmap and write-behind are checked once it runs (apply verifies them)", m.name));
        }
        Some(v)
    }

    /// Notes a degraded array, and a resync or recovery in progress with how far it is.
    fn note_array_state(&mut self, m: &MirrorSpec, a: &MdArray) {
        if a.degraded > 0 {
            self.notes.push(format!(
                "mirror {}: degraded ({} member(s) missing)",
                m.name, a.degraded
            ));
        }
        if !a.is_idle() && a.sync_action != "frozen" {
            let pct = a
                .sync_completed
                .map(|(d, t)| {
                    if t > 0 {
                        format!(" {:.1}%", d as f64 * 100.0 / t as f64)
                    } else {
                        String::new()
                    }
                })
                .unwrap_or_default();
            self.notes.push(format!(
                "mirror {}: {}{pct} in progress",
                m.name, a.sync_action
            ));
        }
        // A member being rebuilt: no step is needed, and the mirror is not yet what the file
        // says (one complete copy until the recovery ends).
        let rebuilding: Vec<String> = a
            .members
            .iter()
            .filter(|x| !x.faulty() && x.slot.is_some() && !x.has("in_sync"))
            .map(|x| self.member_label(m, &x.kname))
            .collect();
        if a.degraded > 0 && !rebuilding.is_empty() {
            let pct = a
                .sync_completed
                .filter(|&(_, t)| t > 0 && a.sync_action == "recover")
                .map(|(d, t)| format!(", {:.1}% done", d as f64 * 100.0 / t as f64))
                .unwrap_or_default();
            let how = if a.sync_action == "recover" {
                "md is rebuilding"
            } else {
                "md has yet to rebuild"
            };
            self.waiting.push(format!(
                "mirror {}: {how} {} ({}{pct}); until that ends the mirror has one complete copy. Nothing for hyraid to do: `hyraid status` follows it; plan again when it ends",
                m.name,
                rebuilding.join(", "),
                a.sync_action
            ));
        }
    }

    /// A member as the file names it (`hdd0 (/dev/sdb)`), or its kernel name.
    fn member_label(&self, m: &MirrorSpec, kname: &str) -> String {
        match self.member_name(m, kname) {
            n if n == kname => format!("/dev/{kname}"),
            n => format!("{n} (/dev/{kname})"),
        }
    }

    /// The write-mostly flags of the present members that differ from the file: those to set,
    /// and those to clear.
    fn write_mostly_changes(
        &self,
        m: &MirrorSpec,
        wm: &BTreeSet<String>,
        a: &MdArray,
        present: &[(&String, &str)],
    ) -> (Vec<PlannedStep>, Vec<PlannedStep>) {
        let mut set_on = Vec::new();
        let mut set_off = Vec::new();
        // `auto` with a member whose media is not known (missing, never seen with `media:`,
        // `write_cache` or a udev rule line): it may be the fast member the others are
        // write-mostly for, so a flag that is set stays set until it is seen again.
        let unknown = matches!(m.write_mostly, WriteMostly::Auto)
            && m.members
                .iter()
                .any(|n| self.disks.get(n).is_some_and(|r| !r.media_known));
        for (name, kname) in present {
            let want = wm.contains(*name);
            let have = a.member(kname).is_some_and(|x| x.write_mostly());
            if want != have && !(have && unknown) {
                let step = Step::SetWriteMostly(SetWriteMostly {
                    array: m.name.clone(),
                    md: a.kname.clone(),
                    member: kname.to_string(),
                    disk: name.to_string(),
                    on: want,
                });
                if want {
                    set_on.push(ps(
                        step,
                        Risk::Safe,
                        "reads go to the fast members; this one only takes writes",
                    ));
                } else {
                    set_off.push(ps(step, Risk::Safe, "the file does not mark this member write-mostly; reads may be served from it"));
                }
            }
        }
        (set_on, set_off)
    }
}

/// A step after which md copies onto a member: one added, re-added or replacing another, or the
/// width grown onto a spare.
pub(in crate::plan) fn starts_rebuild(step: &Step) -> bool {
    matches!(
        step,
        Step::AddMember(_) | Step::ReAddMember(_) | Step::ReplaceMember(_) | Step::GrowArray(_)
    )
}
