//! Observation: pure parsers of the real tools' machine formats, and [`observe`], which asks
//! the host for as few outputs as possible and builds the [`Observed`] model.

pub mod capture;
pub mod filesystems;
pub mod fs_label;
pub mod json_schema;
pub mod loader;
pub mod lookup;
pub mod lsblk;
pub mod luks;
pub mod luks_dump;
pub mod lvm;
pub mod lvm_devices;
pub mod lvm_model;
pub mod md;
pub mod mdadm;
pub mod mdstat;
pub mod model;
pub mod monitoring;
pub mod names;
pub mod observer;
pub mod parse_util;
pub mod partx;
mod probe;
pub mod smart;
pub mod system;
pub mod tpm2;
pub mod wipefs;
pub mod write_cache;

pub use filesystems::{FSTAB_PATH, Filesystem, SYSTEMD_PATH, probe_sizes as probe_fs_sizes};
pub use lookup::Lookup;
pub use model::*;
pub use observer::{
    EarlyReads, ObserveError, ProbeScope, observe, observe_scoped, observe_started,
    probe_write_cache,
};
pub use parse_util::ParseError;
