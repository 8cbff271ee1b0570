//! Former members: a device that still carries a mirror's md superblock but is no longer in the
//! array nor in the file's members (a removal killed before `--zero-superblock`, a member failed
//! and removed by hand). Left so, a reboot may assemble it into the array again, or start it
//! alone as a stale copy. A device the file names is erased (with --allow-destroy); one it does
//! not name is only noted, with the command.

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
            let named = self.file_knames.contains(&b.kname)
                || b.parent
                    .as_ref()
                    .is_some_and(|p| self.file_knames.contains(p));
            if !named {
                // hyraid touches nothing the file does not name: said, not done.
                self.notes.push(format!("{object}: {device} still carries this mirror's md superblock but is not a member (a removal interrupted, or a member removed by hand); a reboot may assemble it again: erase it with `mdadm --zero-superblock {device}` once its copy is not needed"));
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
                "a former member of the mirror (its removal was interrupted); its stale copy is given up (allowed by --allow-destroy)",
            ));
        }
    }
}
