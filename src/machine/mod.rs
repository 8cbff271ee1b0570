//! Working on this machine, whatever the command: the lock that keeps two hyraid runs apart
//! ([`lock`]), the stop flag a run is given and an interrupt sets ([`stop`]), and the machine read
//! for a file ([`observe_for`]). Plan, apply, status, check, observe and tune all start here;
//! `apply` holds only applying.

pub mod lock;
mod probe_luks;
mod read;
pub mod stop;

pub use lock::{Lock, LockError};
pub use read::{observe_for, observe_started_for};
pub use stop::{Stop, install_interrupt_handler};
