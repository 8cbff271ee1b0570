//! The tools that change the simulated machine, as the real ones behave (mdadm 4.2, lvm2
//! 2.03.16, GPT fdisk 1.0.9, util-linux, cloud-guest-utils, hdparm, sdparm; kernel 6.1), including their refusals.

pub(super) mod crypt;
mod drive_cache;
pub(super) mod fio;
mod fs;
mod fs_label;
pub(super) mod loader;
mod lvm;
mod lvm_alloc;
mod lvm_cache;
pub(crate) mod lvm_devices;
mod lvm_lv;
pub(super) mod md_check;
mod md_create;
mod md_manage;
mod md_size;
mod md_sysfs;
mod mdadm;
mod partx;
mod pvmove;
mod sgdisk;
pub(super) mod systemd;
pub(super) mod tpm2;
mod wipefs;

pub(super) use drive_cache::{hdparm, sdparm};
pub(super) use fs::{fs_info, grow as grow_fs, mkfs, mount, resize2fs_min, resize2fs_to, umount};
pub(super) use fs_label::{e2label, xfs_admin};
pub(super) use lvm::run as lvm;
pub(super) use md_sysfs::sysfs_write as md_sysfs_write;
pub(super) use mdadm::{finish_sync, mdadm};
pub(super) use partx::{growpart, partx};
pub(super) use pvmove::advance_moves;
pub(super) use sgdisk::sgdisk;
pub(super) use wipefs::wipefs_all;
