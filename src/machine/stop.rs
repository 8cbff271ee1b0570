//! The stop flag: asks a running apply (or check, tune, bench) to stop at its next command
//! boundary. Each run is given its own [`Stop`]; the command line's is the one SIGINT and SIGTERM
//! set ([`Stop::interrupt`]), so nothing else in a process (a library caller, a test beside
//! another) is stopped by one run's request.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// A stop request, shared by the clones of one flag and by nothing else.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// A flag of its own, not requested.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// The flag SIGINT and SIGTERM set once [`install_interrupt_handler`] ran: the command
    /// line's. Every call gives the same flag.
    pub fn interrupt() -> Stop {
        INTERRUPT.get_or_init(Stop::new).clone()
    }

    /// Ask the run that holds this flag to stop before its next command.
    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Take the request back (a run that stopped and now puts things back).
    pub fn clear(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// The command line's flag; made before the handler is installed, so the handler only reads it.
static INTERRUPT: OnceLock<Stop> = OnceLock::new();

extern "C" fn on_signal(_: nix::libc::c_int) {
    // A lock-free read of an initialised OnceLock and an atomic store: async-signal-safe.
    if let Some(s) = INTERRUPT.get() {
        s.request();
    }
}

/// Ctrl-C or SIGTERM: finish the command that runs (it is in its own process group, so the
/// terminal's signal does not reach it), then stop before the next one: both set
/// [`Stop::interrupt`]. SIGPIPE is ignored from here on: a reader of the output that goes away
/// (`hyraid apply … | head`) must not end hyraid between two commands of a step; what it writes
/// is lost, the steps finish (bench removes its file) and the exit status says how they went.
pub fn install_interrupt_handler() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction, signal};
    let _ = Stop::interrupt();
    // SAFETY: ignoring a signal installs no handler.
    unsafe {
        let _ = signal(Signal::SIGPIPE, SigHandler::SigIgn);
    }
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only reads an initialised OnceLock and stores to an atomic.
        unsafe {
            let _ = sigaction(sig, &action);
        }
    }
}
