//! hyraid's integration tests, in one test binary (as ripgrep, cargo and rust-analyzer keep
//! theirs): each module is one concern, and `cargo test --test it MODULE::` runs one of them
//! (`cargo test --test it crash::` the crash matrix). Splitting a module for the 600-line rule
//! costs no link: there is one executable to build, not one per file.
//!
//! Everything a test changes is its own: the simulated machines, the temporary directories, and
//! the stop flag an apply, check, tune or bench is given (`hyraid::machine::Stop`); nothing is
//! process-wide, so the modules run side by side in one process.

mod common;

mod alerts;
mod boot_esp;
mod boot_loaders;
mod cache_media;
mod caches;
mod capacity;
mod check;
mod cli;
mod closed_pipe;
mod concurrency;
mod crash;
mod docs;
mod drive_health;
mod early_reads;
mod encryption;
mod encryption_keys;
mod encryption_lv;
mod encryption_passphrase;
mod encryption_tpm2;
mod file_bitmap;
mod filesystems;
mod fixtures_sweep;
mod fleet;
mod foreign;
mod frozen_and_degraded;
mod fs_label;
mod fs_remake;
mod fstab_left_alone;
mod fuzz_parsers;
mod import;
mod import_adopt;
mod import_yaml;
mod in_use;
mod inactive_contents;
mod kernel_tables;
mod key_places;
mod layers;
mod layout_options;
mod luks_fixtures;
mod lv_shrink;
mod lvm_devices_file;
mod messages;
mod mirror_filesystem;
mod mirror_grow;
mod mirror_width;
mod monitoring_box;
mod package;
mod partition_in_use;
mod partitions;
mod persist;
mod plot;
mod preconditions;
mod pvmove;
mod refusals;
mod render;
mod replace;
mod review_defects;
mod safety;
mod saved_plan_format;
mod saved_plan_words;
mod saved_plans;
mod scale;
mod schema;
mod schema_rules;
mod sim_apply;
mod sim_tool;
mod status;
mod status_prometheus;
mod terminal_editor;
mod trixie_formats;
mod tune;
mod tune_jobs;
mod tune_real_kernel;
mod unmet;
mod usage;
mod validate;
mod vm_captures;
mod wait_and_stop;
mod writecache_block;
mod yaml_meaning;
