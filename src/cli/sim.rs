//! `hyraid sim`: the simulated machine as a user's tool. `new` writes a blank-machine snapshot
//! from a list of disks (to plan before the disks are bought); `settle` lets time pass on a
//! snapshot until every resync, recovery and pvmove has finished; `fail`, `pull` and `insert`
//! play the degraded day (a disk md fails, a disk gone, with or without a reboot, a new one).

use super::write_out;
use crate::error::{Error, msg};
use crate::sim::SimHost;
use crate::sim::blank::{self, DiskSpec};
use std::path::PathBuf;

#[derive(clap::Subcommand, Debug)]
pub(super) enum SimCmd {
    /// Write the snapshot of a blank machine with the disks given: kernel names, sizes, media,
    /// models, serials and /dev/disk/by-id names as the kernel and udev would show them. Prints
    /// the `disks:` section of a file for it.
    New(NewArgs),
    /// Let time pass on a snapshot: every running resync, recovery and pvmove finishes, and the
    /// snapshot is written back (what `status` and `apply` see afterwards).
    Settle {
        /// A snapshot (from `hyraid observe -o` or `hyraid sim new`).
        snapshot: PathBuf,
    },
    /// md fails a disk, as after a write error on it: each member on it (the disk or its
    /// partitions) faulty, its mirror degraded. The snapshot is written back.
    Fail {
        snapshot: PathBuf,
        /// The disk: its kernel name (`sdb`), its /dev/disk/by-id name or its serial.
        disk: String,
    },
    /// A disk pulled out: while the machine runs, md fails and removes its members and the disk
    /// is gone; with --reboot, the machine boots without it and its mirrors come up assembled
    /// but not running, as udev leaves them. The snapshot is written back.
    Pull {
        snapshot: PathBuf,
        /// The disk: its kernel name (`sdb`), its /dev/disk/by-id name or its serial.
        disk: String,
        /// The machine reboots without the disk.
        #[arg(long)]
        reboot: bool,
    },
    /// A blank disk plugged in (a new disk in place of a dead one). Prints its by-id name for
    /// the file. The snapshot is written back.
    Insert {
        snapshot: PathBuf,
        /// The disk: MEDIA:SIZE[:MODEL[:SERIAL]], as `sim new` takes it.
        #[arg(long = "disk", value_name = "MEDIA:SIZE[:MODEL[:SERIAL]]")]
        disk: DiskSpec,
    },
}

/// The simulated machine of `snapshot`, and a way to write it back.
fn load(snapshot: &std::path::Path) -> Result<SimHost, Error> {
    let text = std::fs::read_to_string(snapshot)
        .map_err(|e| msg(format!("{}: {e}", snapshot.display())))?;
    SimHost::from_json(&text).map_err(|e| msg(format!("{}: {e}", snapshot.display())))
}

fn save(snapshot: &std::path::Path, h: &SimHost) -> Result<(), Error> {
    write_out(
        snapshot,
        &(serde_json::to_string_pretty(&h.world()).unwrap() + "\n"),
    )
}

/// The kernel name of the disk a user names by kernel name, by-id name or serial.
fn disk_named(h: &SimHost, name: &str) -> Result<String, Error> {
    let w = h.world();
    let id = name.trim_start_matches("/dev/disk/by-id/");
    let k = name.trim_start_matches("/dev/");
    (w.block_devices.iter())
        .filter(|b| b.kind == crate::observe::DevKind::Disk)
        .find(|b| {
            b.kname == k || b.by_id.iter().any(|i| i == id) || b.serial.as_deref() == Some(name)
        })
        .map(|b| b.kname.clone())
        .ok_or_else(|| {
            let disks: Vec<String> = (w.block_devices.iter())
                .filter(|b| b.kind == crate::observe::DevKind::Disk)
                .map(|b| {
                    format!(
                        "{} ({})",
                        b.kname,
                        b.by_id
                            .first()
                            .map(String::as_str)
                            .unwrap_or("no by-id name")
                    )
                })
                .collect();
            msg(format!(
                "no disk `{name}` on the simulated machine; its disks: {}",
                disks.join(", ")
            ))
        })
}

#[derive(clap::Args, Debug)]
pub(super) struct NewArgs {
    /// Where to write the snapshot (an existing file is never overwritten).
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
    /// The machine's hostname (the file's `host:`).
    #[arg(long, default_value = "sim")]
    host: String,
    /// A disk: MEDIA:SIZE[:MODEL[:SERIAL]], MEDIA ssd, hdd or nvme (e.g. `hdd:4TB:WDC
    /// WD40EFRX-68N32N0:WD-WCC7K0000001`); once per disk, in the order the kernel finds them.
    #[arg(
        long = "disk",
        value_name = "MEDIA:SIZE[:MODEL[:SERIAL]]",
        required = true
    )]
    disks: Vec<DiskSpec>,
}

pub(super) fn run(cmd: SimCmd) -> Result<u8, Error> {
    match cmd {
        SimCmd::New(a) => {
            if a.out.exists() {
                return Err(msg(format!(
                    "{} exists; hyraid sim new never overwrites a file (remove it, or name another)",
                    a.out.display()
                )));
            }
            let m = blank::machine(&a.host, &a.disks);
            write_out(&a.out, &(serde_json::to_string_pretty(&m).unwrap() + "\n"))?;
            super::err_line(&format!(
                "wrote {} ({} disk(s)); plan against it with `hyraid plan FILE --sim {}`. Its disks, for the file:",
                a.out.display(),
                m.block_devices.len(),
                a.out.display()
            ));
            super::out(format!("host: {}\n{}", m.hostname, blank::disks_yaml(&m)))?;
            Ok(0)
        }
        SimCmd::Fail { snapshot, disk } => {
            let h = load(&snapshot)?;
            let k = disk_named(&h, &disk)?;
            let failed = h.fail_disk(&k);
            if failed.is_empty() {
                return Err(msg(format!(
                    "{disk} ({k}) is in no array: md has nothing to fail"
                )));
            }
            save(&snapshot, &h)?;
            super::out(format!("md failed {}.\n", failed.join(", ")))?;
            Ok(0)
        }
        SimCmd::Pull {
            snapshot,
            disk,
            reboot,
        } => {
            let h = load(&snapshot)?;
            let k = disk_named(&h, &disk)?;
            let what = if reboot {
                h.reboot_without_disk(&k);
                let down: Vec<String> = (h.world().arrays.iter())
                    .filter(|a| a.array_state == "inactive")
                    .map(|a| format!("/dev/{}", a.kname))
                    .collect();
                format!(
                    "{k} is gone and the machine rebooted without it; assembled but not running: {}",
                    if down.is_empty() {
                        "none".into()
                    } else {
                        down.join(", ")
                    }
                )
            } else {
                let failed = h.pull_disk(&k);
                format!(
                    "{k} is gone; md failed and removed {}",
                    if failed.is_empty() {
                        "nothing".into()
                    } else {
                        failed.join(", ")
                    }
                )
            };
            save(&snapshot, &h)?;
            super::out(format!("{what}.\n"))?;
            Ok(0)
        }
        SimCmd::Insert { snapshot, disk } => {
            let h = load(&snapshot)?;
            let d = h.insert_disk(&disk);
            save(&snapshot, &h)?;
            super::out(format!(
                "{} plugged in, blank: /dev/disk/by-id/{}\n",
                d.kname,
                d.by_id.first().map(String::as_str).unwrap_or_default()
            ))?;
            Ok(0)
        }
        SimCmd::Settle { snapshot } => {
            let h = load(&snapshot)?;
            let before = h.world();
            h.finish_syncs();
            let after = h.world();
            let busy = |o: &crate::observe::Observed| {
                o.arrays.iter().filter(|a| a.sync_action != "idle").count()
            };
            write_out(
                &snapshot,
                &(serde_json::to_string_pretty(&after).unwrap() + "\n"),
            )?;
            super::out(format!(
                "{}: {} array(s) were resyncing or recovering, {} are now; every pvmove has finished.\n",
                snapshot.display(),
                busy(&before),
                busy(&after)
            ))?;
            Ok(0)
        }
    }
}
