//! An existing mirror brought to the file: members joining, replaced or re-added, write-mostly, bitmap and write-behind.

use super::*;
use crate::observe::MdMember;
use crate::plan::step::{
    AddBitmap, AddMember, ReAddMember, ReadWrite, RemoveBitmap, RemoveFailed, ReplaceMember,
    SetWriteBehind, SetWriteMostly, StartArray, WaitIdle, WipeSignatures,
};

/// The disks the file names for a mirror, sorted against the array. A disk the file names that
/// is not in the array joins it: back into its old place when it carries this array's superblock
/// (--re-add), into a free slot (--add), or in place of a working member the file no longer names
/// (--replace, no loss of redundancy).
struct Members<'m> {
    /// Disks working in the array (spares included), with their kernel names.
    present: Vec<(&'m String, &'m str)>,
    /// Disks that join, with what to erase first: None = re-add (a failed member, or a disk
    /// carrying this array's superblock), Some(signatures, maybe none) = add.
    joining: Vec<(&'m String, Option<Vec<String>>)>,
    /// Disks already in the array as spares without a slot (left by an interrupted hot
    /// replace): each one finishes the replacement of a member the file no longer names.
    spares: Vec<&'m String>,
}

/// Where joining disks go: a free slot first, then the place of a member the file no longer names.
struct Slots<'x> {
    /// Slots no working member holds.
    free: usize,
    /// In-sync members the file no longer names (and md is not already replacing): each one is
    /// replaced by a joining disk or a spare, or refused.
    leaving: Vec<&'x MdMember>,
    /// A hot replace is planned: the array waits for the copy, then drops the replaced member.
    replaced: bool,
}

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
        let mut slots = self.slots(a);
        let joins = !members.joining.is_empty();
        self.join_members(m, wm, &object, members.joining, &mut slots, &mut out);
        self.finish_replacements(m, wm, members.spares, &mut slots, &mut out);
        if slots.replaced {
            self.drop_replaced(m, &mut out);
        }
        self.refuse_leaving(&object, slots.leaving);
        self.note_array_state(m, a);
        if inactive {
            return out;
        }
        // Write-mostly on live members: set first, clear last (write-behind needs one).
        let (set_on, set_off) = self.write_mostly_changes(m, wm, a, &members.present);
        out.extend(set_on);
        let recreate = bitmap_recreated(m, a);
        if self.bitmap_refused_read_only(m, a, &object, recreate) {
            return out;
        }
        if recreate {
            self.recreate_bitmap(m, a, joins, slots.replaced, &mut out);
        } else {
            out.extend(self.write_behind_change(m, a));
        }
        out.extend(set_off);
        out
    }

    /// Refuses an array hyraid does not manage: not RAID1, firmware RAID metadata, or a bitmap
    /// that is not internal. The mirror is then blocked.
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
            (_, Some(b)) if b.kind != crate::observe::BitmapKind::Internal => Some(format!(
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
        out.push(ps(
            Step::StartArray(StartArray { array: m.name.clone(), md: a.kname.clone() }),
            Risk::Degrades,
            format!("assembled but not running: {n} of {} members are present; it runs degraded until the missing member is replaced", a.raid_disks),
        ));
        let mut v = a.clone();
        for (i, x) in v.members.iter_mut().filter(|x| !x.faulty()).enumerate() {
            x.state.retain(|w| w != "spare");
            x.state.insert(0, "in_sync".into());
            x.slot = Some(i as u32);
        }
        v.array_state = "active".into();
        v.degraded = v.raid_disks.saturating_sub(n as u32);
        self.notes.push(format!("mirror {}: write-mostly, bitmap and write-behind are checked once it runs (apply verifies them)", m.name));
        Some(v)
    }

    /// Sorts the disks the file names into present, joining and spares; notes the missing ones
    /// and refuses the ones that cannot join.
    fn sort_members<'m>(&mut self, m: &'m MirrorSpec, a: &MdArray, object: &str) -> Members<'m>
    where
        'a: 'm,
    {
        let array_uuid = a.uuid.as_deref().map(crate::observe::names::norm_uuid);
        let mut present: Vec<(&String, &str)> = Vec::new();
        let mut joining: Vec<(&String, Option<Vec<String>>)> = Vec::new();
        let mut spares: Vec<&String> = Vec::new();
        for name in &m.members {
            let r = &self.disks[name];
            let Some(dev) = r.dev else {
                self.notes.push(format!(
                    "mirror {}: disk {name} ({}) is not present; the array runs without it",
                    m.name, r.path
                ));
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
                Some(_) => joining.push((name, None)),
                None => {
                    let ours = dev.signatures.iter().flatten().any(|s| {
                        s.kind == "linux_raid_member"
                            && s.uuid.as_deref().map(crate::observe::names::norm_uuid) == array_uuid
                            && array_uuid.is_some()
                    });
                    if ours && dev.holders.is_empty() {
                        joining.push((name, None));
                        continue;
                    }
                    match self.usable(r) {
                        Err(why) => self.refuse(object, format!("cannot add {name}: {why}"), "free the device or change the file"),
                        Ok(found) if !found.is_empty() && !self.policy.allow_destroy => self.refuse(
                            format!("disk {name}"),
                            format!("{} carries {} — adding it to mirror {} destroys that", r.path, found.join(", "), m.name),
                            "check the disk holds nothing you need, then run with --allow-destroy",
                        ),
                        Ok(found) => joining.push((name, Some(found))),
                    }
                }
            }
        }
        Members {
            present,
            joining,
            spares,
        }
    }

    /// Failed members hold no current copy: removed, they free their slots.
    fn remove_failed_members(&self, m: &MirrorSpec, a: &MdArray, out: &mut Vec<PlannedStep>) {
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
    /// the file no longer names.
    fn slots<'x>(&self, a: &'x MdArray) -> Slots<'x> {
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
                    && !self.file_knames.contains(&x.kname)
            })
            .collect();
        Slots {
            free,
            leaving,
            replaced: false,
        }
    }

    /// Each joining disk, after the wipe it needs: re-added or added into a free slot, or copied
    /// in place of a member the file no longer names (hot replace); refused when there is neither.
    fn join_members(
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
                out.push(match kind {
                    None => ps(Step::ReAddMember(ReAddMember { array: m.name.clone(), md_device: m.md_device(), device }), Risk::Degrades, "this disk was a member of the mirror: re-added, only the blocks the bitmap marks as changed are copied"),
                    Some(_) => ps(Step::AddMember(AddMember { array: m.name.clone(), md_device: m.md_device(), device }), Risk::Degrades, "the mirror is missing a member; it is rebuilt onto this disk (redundancy returns when recovery ends)"),
                });
            } else if let Some(old) = slots.leaving.pop() {
                let old_path = self.stable_path(&old.kname);
                out.push(ps(Step::ReplaceMember(ReplaceMember { array: m.name.clone(), md_device: m.md_device(), old: old_path, new: device, spare_added: false }),
                    Risk::Safe,
                    format!("/dev/{} is no longer in the file: {name} is copied in its place while it stays in service, so redundancy never drops", old.kname),
                ));
                slots.replaced = true;
            }
        }
    }

    /// Each spare left by an interrupted hot replace continues the replacement of a member the
    /// file no longer names.
    fn finish_replacements(
        &self,
        m: &MirrorSpec,
        wm: &BTreeSet<String>,
        spares: Vec<&String>,
        slots: &mut Slots,
        out: &mut Vec<PlannedStep>,
    ) {
        for name in spares {
            let Some(old) = slots.leaving.pop() else {
                break;
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
        }
    }

    /// After a hot replace: wait for the copy (md then fails the replaced member out), and
    /// remove the replaced member.
    fn drop_replaced(&self, m: &MirrorSpec, out: &mut Vec<PlannedStep>) {
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
    }

    /// Refuses each working member the file does not list and nothing replaces: removing it is a
    /// width change hyraid does not make.
    fn refuse_leaving(&mut self, object: &str, leaving: Vec<&MdMember>) {
        for x in leaving {
            self.refuse(
                object,
                format!(
                    "member /dev/{} is not in the file; hyraid does not remove a working member",
                    x.kname
                ),
                format!(
                    "list /dev/{} in the mirror's `members`, or remove it from the array by hand (`mdadm --fail`, `--remove`, `--grow --raid-devices`)",
                    x.kname
                ),
            );
        }
    }

    /// Notes a degraded array, and a resync or recovery in progress with how far it is.
    fn note_array_state(&mut self, m: &MirrorSpec, a: &MdArray) {
        if a.degraded > 0 {
            self.notes.push(format!(
                "mirror {}: degraded ({} member(s) missing)",
                m.name, a.degraded
            ));
        }
        if !a.is_idle() {
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
        for (name, kname) in present {
            let want = wm.contains(*name);
            let have = a.member(kname).is_some_and(|x| x.write_mostly());
            if want != have {
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

    /// Refuses bitmap and write-behind changes on a read-only array (`mdadm --readonly`).
    fn bitmap_refused_read_only(
        &mut self,
        m: &MirrorSpec,
        a: &MdArray,
        object: &str,
        recreate: bool,
    ) -> bool {
        let write_behind_changes = a
            .bitmap
            .as_ref()
            .is_some_and(|b| b.backlog != m.write_behind);
        if (recreate || write_behind_changes) && a.array_state == "readonly" {
            self.refuse(
                object,
                "the array is read-only (`mdadm --readonly`); md refuses bitmap changes on it",
                format!("make it writable (`mdadm --readwrite {}`) if that is intended, then apply again", m.md_path()),
            );
            return true;
        }
        false
    }

    /// The bitmap removed and added again (its chunk changes, or it comes or goes): made
    /// read-write and idle first, as md refuses bitmap changes otherwise.
    fn recreate_bitmap(
        &self,
        m: &MirrorSpec,
        a: &MdArray,
        joins: bool,
        replaced: bool,
        out: &mut Vec<PlannedStep>,
    ) {
        let have_chunk = a.bitmap.as_ref().map(|b| b.chunk);
        if a.auto_read_only() {
            // After boot or assembly an array is read-only until its first write; md refuses
            // bitmap changes until then, and a pending resync starts at that first write.
            out.push(ps(
                Step::ReadWrite(ReadWrite {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                "the array is auto-read-only (after boot or assembly); md refuses bitmap changes until it is read-write",
            ));
        }
        if (!a.is_idle() || joins || a.auto_read_only() || a.resync_pending) && !replaced {
            out.push(ps(
                Step::WaitIdle(WaitIdle {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                format!(
                    "the kernel refuses bitmap changes while {} runs",
                    if joins {
                        "the recovery this plan starts"
                    } else if a.is_idle() {
                        "the pending resync (it starts when the array turns read-write)"
                    } else {
                        a.sync_action.as_str()
                    }
                ),
            ));
        }
        if let Some(have) = have_chunk {
            let why = match m.bitmap_chunk {
                Some(c) => format!("bitmap chunk {} → {}: md changes it only by removing and re-adding; until re-added an unclean shutdown means a full resync", human(have), human(c)),
                None => "the file says `bitmap: none`: every unclean shutdown will mean a full resync and a dropped member a full recovery".into(),
            };
            out.push(ps(
                Step::RemoveBitmap(RemoveBitmap {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Degrades,
                why,
            ));
        }
        if let Some(c) = m.bitmap_chunk {
            let risk = if m.write_behind > 0 {
                Risk::DataAtRisk
            } else {
                Risk::Safe
            };
            out.push(ps(Step::AddBitmap(AddBitmap { array: m.name.clone(), md_device: m.md_device(), chunk: c, write_behind: m.write_behind }), risk, "internal write-intent bitmap: short resyncs after a crash, fast re-add of a dropped member"));
        }
    }

    /// The write-behind of a kept bitmap, when the file asks another.
    fn write_behind_change(&self, m: &MirrorSpec, a: &MdArray) -> Option<PlannedStep> {
        let b = a.bitmap.as_ref().filter(|b| b.backlog != m.write_behind)?;
        let (risk, why) = if m.write_behind > b.backlog {
            (
                Risk::DataAtRisk,
                format!(
                    "write-behind {} → {}: writes are acknowledged before the write-mostly member has them",
                    b.backlog, m.write_behind
                ),
            )
        } else {
            (
                Risk::Safe,
                format!("write-behind {} → {}", b.backlog, m.write_behind),
            )
        };
        Some(ps(
            Step::SetWriteBehind(SetWriteBehind {
                array: m.name.clone(),
                md: a.kname.clone(),
                value: m.write_behind,
            }),
            risk,
            why,
        ))
    }
}

/// Whether the bitmap is removed and added again: its chunk changes, or the file adds or drops it.
fn bitmap_recreated(m: &MirrorSpec, a: &MdArray) -> bool {
    let have_chunk = a.bitmap.as_ref().map(|b| b.chunk);
    match (m.bitmap_chunk, have_chunk) {
        (Some(w), Some(h)) => w != h,
        (w, h) => w.is_some() != h.is_some(),
    }
}
