//! Former members: a device that still carries a mirror's md superblock but is no longer in the
//! array nor in the file's members (a removal killed before `--zero-superblock`, a member failed
//! and removed by hand). Left so, a reboot may assemble it into the array again, or start it
//! alone as a stale copy. A device the file names is erased: as a safe step when the array runs
//! complete without it (its copy is stale: a replacement or removal stopped before its erase),
//! else only with --allow-destroy; one it does not name is only noted, with the command.

use super::*;
use crate::observe::names::norm_uuid;
use crate::plan::step::ZeroSuperblock;

impl<'a> Planner<'a> {
    /// Erase the superblock of every former member of `a` the file names (with
    /// --allow-destroy; refused without); note the others.
    pub(super) fn former_members(
        &mut self,
        m: &MirrorSpec,
        a: &MdArray,
        object: &str,
        out: &mut Vec<PlannedStep>,
    ) {
        let Some(uuid) = a.uuid.as_deref().map(norm_uuid) else {
            return;
        };
        let listed: Vec<&str> = m
            .members
            .iter()
            .filter_map(|n| self.disks.get(n)?.dev.map(|d| d.kname.as_str()))
            .collect();
        let o = self.o;
        // A replaced member md has failed out once the copy ended, not removed yet: the plan
        // removes it (`remove_failed_members`), and on a complete array it is then a former
        // member like the others. A failed member of an array short of members is not: that
        // is a disk md failed, which status and the plan report (and `--re-add` or a
        // replacement settles).
        if complete(a) {
            for x in a.members.iter().filter(|x| x.faulty()) {
                let Some(b) = o.device(&x.kname) else {
                    continue;
                };
                if listed.contains(&b.kname.as_str()) || !self.names(b) {
                    continue;
                }
                out.push(self.erase_stale(m, a, self.stable_path(&b.kname)));
            }
        }
        for b in &o.block_devices {
            let carries = b.signatures.iter().flatten().any(|s| {
                s.kind == "linux_raid_member"
                    && s.uuid.as_deref().map(norm_uuid) == Some(uuid.clone())
            });
            if !carries
                || listed.contains(&b.kname.as_str())
                || self.ix.array_of_member(&b.kname).is_some()
                || self.use_of(b).is_some()
            {
                continue;
            }
            let device = self.stable_path(&b.kname);
            if !self.names(b) {
                // hyraid touches nothing the file does not name: said, not done.
                self.notes.push(format!("{object}: {device} still carries this mirror's md superblock but is not a member (it was replaced or removed, and the file does not name the disk, so hyraid leaves it alone); a reboot may assemble it again: erase it with `mdadm --zero-superblock {device}` once its copy is not needed"));
                continue;
            }
            // The array holds every copy without it: its copy is stale (a replacement or
            // removal stopped between md letting it go and the erase). Erasing it completes
            // that change and gives up no redundancy, as the replacement's own erase does.
            if complete(a) {
                out.push(self.erase_stale(m, a, device));
                continue;
            }
            if !self.policy.allow_destroy {
                self.refuse(
                    object.to_string(),
                    format!("{device} still carries the md superblock of this mirror, which it is no longer a member of: a reboot may assemble it into the array again, or start it as a stale copy"),
                    "run with --allow-destroy to erase that superblock (mdadm --zero-superblock), or list the device in the mirror's members again",
                );
                continue;
            }
            out.push(ps(
                Step::ZeroSuperblock(ZeroSuperblock {
                    array: m.name.clone(),
                    device,
                }),
                Risk::Destroys,
                "a former member of the mirror, which runs without a full set of members: its copy is given up (allowed by --allow-destroy)",
            ));
        }
    }
}

impl Planner<'_> {
    /// Whether the file names `b` (the disk, or the disk it is a partition of).
    fn names(&self, b: &crate::observe::BlockDevice) -> bool {
        self.file_knames.contains(&b.kname)
            || b.parent
                .as_ref()
                .is_some_and(|p| self.file_knames.contains(p))
    }

    /// The erase of a stale copy beside a complete array: it completes a replacement or
    /// removal and gives up no redundancy, as the replacement's own erase does.
    fn erase_stale(&self, m: &MirrorSpec, a: &MdArray, device: String) -> PlannedStep {
        ps(
            Step::ZeroSuperblock(ZeroSuperblock {
                array: m.name.clone(),
                device,
            }),
            Risk::Safe,
            format!(
                "a former member of the mirror, which runs complete without it ({0} of {0} members in sync): its copy is stale (a replacement or removal stopped before this erase); the md superblock is erased so that no reboot assembles it",
                a.raid_disks
            ),
        )
    }
}

/// Whether `a` runs with every slot held by a member in sync: nothing missing, nothing rebuilding.
fn complete(a: &MdArray) -> bool {
    let in_sync = a
        .members
        .iter()
        .filter(|x| !x.faulty() && x.slot.is_some() && x.has("in_sync"))
        .count();
    a.degraded == 0 && a.array_state != "inactive" && in_sync >= a.raid_disks as usize
}
