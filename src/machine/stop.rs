//! The interrupt handler and the stop flag: SIGINT or SIGTERM asks a running apply (or bench) to
//! stop at the next command boundary.

use std::sync::atomic::{AtomicBool, Ordering};

extern "C" fn on_signal(_: nix::libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

static STOP: AtomicBool = AtomicBool::new(false);

/// Ctrl-C or SIGTERM: finish the command that runs (it is in its own process group, so the
/// terminal's signal does not reach it), then stop before the next one. SIGPIPE is ignored from
/// here on: a reader of the output that goes away (`hyraid apply … | head`) must not end hyraid
/// between two commands of a step; what it writes is lost, the steps finish (bench removes its
/// file) and the exit status says how they went.
pub fn install_interrupt_handler() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction, signal};
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
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            let _ = sigaction(sig, &action);
        }
    }
}

/// Ask a running apply to stop before its next command (what the signal handler does).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

pub fn clear_stop() {
    STOP.store(false, Ordering::SeqCst);
}
