//! hyraid: declarative hybrid SSD+HDD storage (md RAID1 with write-mostly, bitmaps,
//! write-behind, LVM and dm-writecache) for Linux.

pub mod alert;
pub mod apply;
pub mod bench;
pub mod check;
pub mod cli;
pub mod config;
pub mod error;
pub mod history;
pub mod host;
pub mod import;
pub mod machine;
pub mod observe;
pub mod plan;
pub mod render;
pub mod sim;
pub mod status;
pub mod timings;
pub mod tune;
