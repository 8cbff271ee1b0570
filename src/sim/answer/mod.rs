//! How the simulated machine answers reads, in the real tools' output formats: one module per
//! tool or file the observer reads.

mod lsblk;
mod lvm;
mod mdstat;
mod pvmove;
mod smart;
mod sysfs;
mod wipefs;

pub(super) use lsblk::{dm_name, lsblk, lsblk_of};
pub(super) use lvm::fullreport;
pub(super) use mdstat::mdstat;
pub(super) use pvmove::moves;
pub(super) use smart::smartctl;
pub(super) use sysfs::sysfs_read;
pub(super) use wipefs::{blkid_probe, wipefs};
