//! `hyraid sim`: the simulated machine as a user's tool. `new` writes a blank-machine snapshot
//! from a list of disks (to plan before the disks are bought); `settle` lets time pass on a
//! snapshot until every resync, recovery and pvmove has finished.

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
        SimCmd::Settle { snapshot } => {
            let text = std::fs::read_to_string(&snapshot)
                .map_err(|e| msg(format!("{}: {e}", snapshot.display())))?;
            let h = SimHost::from_json(&text)
                .map_err(|e| msg(format!("{}: {e}", snapshot.display())))?;
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
