//! What happens to a simulated machine beyond the commands it runs: time passing (resyncs and
//! moves finishing), a disk gone across a reboot, a power loss during a move, a block that
//! differs between a mirror's members.

use super::{SimHost, tools};
use crate::host::Host;
use crate::observe::BlockDevice;

impl SimHost {
    /// The arrays with a member on disk `kname` (itself or one of its partitions), each with
    /// the member's kernel name.
    fn members_on(&self, kname: &str) -> Vec<(String, String)> {
        let w = &self.st().world;
        let on =
            |k: &str| k == kname || w.device(k).and_then(|d| d.parent.as_deref()) == Some(kname);
        (w.arrays.iter())
            .flat_map(|a| {
                (a.members.iter())
                    .filter(|m| on(&m.kname))
                    .map(|m| (a.kname.clone(), m.kname.clone()))
            })
            .collect()
    }

    /// `mdadm /dev/MD OP /dev/MEMBER` for each member on disk `kname`, as md's tools run it;
    /// the members it succeeded for (`/dev/sdb in /dev/md127`).
    fn mdadm_on(&self, kname: &str, op: &str) -> Vec<String> {
        (self.members_on(kname).into_iter())
            .filter(|(md, member)| {
                let argv = [
                    "mdadm",
                    &format!("/dev/{md}"),
                    op,
                    &format!("/dev/{member}"),
                ];
                self.run(&argv.map(String::from))
                    .is_ok_and(|o| o.status == 0)
            })
            .map(|(md, member)| format!("/dev/{member} in /dev/{md}"))
            .collect()
    }

    /// md fails disk `kname` (what it does after a write error on it, and what `mdadm --fail`
    /// does): each member on it is faulty and its array degraded. Returns what md failed.
    pub fn fail_disk(&self, kname: &str) -> Vec<String> {
        self.mdadm_on(kname, "--fail")
    }

    /// Disk `kname` pulled from the running machine: md fails and removes each member on it (the
    /// kernel's I/O errors, then udev's `mdadm --incremental --fail`), and the disk and its
    /// partitions are gone.
    pub fn pull_disk(&self, kname: &str) -> Vec<String> {
        let failed = self.mdadm_on(kname, "--fail");
        self.mdadm_on(kname, "--remove");
        let mut st = self.st();
        let w = &mut st.world;
        w.block_devices
            .retain(|d| d.kname != kname && d.parent.as_deref() != Some(kname));
        let present: Vec<String> = w.block_devices.iter().map(|d| d.kname.clone()).collect();
        w.boot.loaders.esps.retain(|k, _| present.contains(k));
        failed
    }

    /// A blank disk of `spec` plugged in (hot-plug, or a new disk in a bay before a boot).
    pub fn insert_disk(&self, spec: &super::blank::DiskSpec) -> BlockDevice {
        let mut st = self.st();
        let d = super::blank::plugged(&st.world, spec);
        st.world.block_devices.push(d.clone());
        d
    }

    /// A reboot with one disk gone: arrays it or its partitions were in come up assembled but not
    /// started, as udev's incremental assembly leaves them (no /dev/md/NAME link until they run).
    pub fn reboot_without_disk(&self, kname: &str) {
        let mut st = self.st();
        let gone: Vec<String> = (st.world.block_devices.iter())
            .filter(|d| d.kname == kname || d.parent.as_deref() == Some(kname))
            .map(|d| d.kname.clone())
            .collect();
        st.world.block_devices.retain(|d| !gone.contains(&d.kname));
        for a in st
            .world
            .arrays
            .iter_mut()
            .filter(|a| gone.iter().any(|k| a.member(k).is_some()))
        {
            a.members.retain(|m| !gone.contains(&m.kname));
            for m in a.members.iter_mut() {
                m.state.retain(|w| w == "write_mostly");
                m.state.push("spare".into());
                m.slot = None;
            }
            a.array_state = "inactive".into();
            a.sync_action = "idle".into();
            a.sync_completed = None;
        }
        // What stood on those arrays does not come up: their LUKS mappings stay closed, their
        // LVs inactive, and nothing of theirs is mounted.
        let w = &mut st.world;
        let mut down: Vec<String> = w
            .arrays
            .iter()
            .filter(|a| a.array_state == "inactive")
            .map(|a| a.kname.clone())
            .collect();
        let closed: Vec<String> = (w.luks.iter_mut())
            .filter(|l| down.contains(&l.device))
            .filter_map(|l| l.mapping.take().map(|m| m.kname))
            .collect();
        down.extend(closed);
        let vgs: Vec<String> = (w.lvm.pvs.iter())
            .filter(|p| down.contains(&p.kname))
            .filter_map(|p| p.vg.clone())
            .collect();
        for l in w.lvm.lvs.iter_mut().filter(|l| vgs.contains(&l.vg)) {
            l.active = false;
        }
        for f in w.filesystems.iter_mut() {
            if (f.md && down.contains(&f.kname)) || vgs.contains(&f.vg) {
                f.mountpoint = None;
            }
        }
    }

    /// A block of array `name` (by its md name) differs between its members at `sector`, as a
    /// write to one member's data area behind md's back leaves it: a check counts it.
    pub fn corrupt(&self, name: &str, sector: u64) {
        let mut st = self.st();
        let Some(k) = st.world.array_named(name).map(|a| a.kname.clone()) else {
            return;
        };
        st.corrupt.entry(k).or_default().push(sector);
    }

    /// Let every running resync/recovery and pvmove finish (time passing).
    pub fn finish_syncs(&self) {
        let mut st = self.st();
        for a in st.world.arrays.iter_mut() {
            tools::finish_sync(a);
        }
        tools::advance_moves(&mut st, true);
    }

    /// The machine dies during a pvmove: the move LV stays and nothing polls it, until `pvmove`
    /// (bare, or on the same PV) runs again.
    pub fn stall_moves(&self) {
        self.st().moves_stalled = true;
    }

    /// The power is lost during a pvmove and the machine boots without activating the VGs (no
    /// event activation): every LV inactive, the move LV too, and nothing polls it.
    pub fn power_loss_during_moves(&self) {
        let mut st = self.st();
        st.moves_stalled = true;
        for l in st.world.lvm.lvs.iter_mut() {
            l.active = false;
        }
    }
}
