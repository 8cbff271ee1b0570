//! `HYRAID_TIMINGS=1`: where a command's time goes. At each boundary of its work (the file read,
//! each of the machine's answers, the plan, the output) hyraid prints on stderr the milliseconds
//! since it started, so an operator can tell a slow tool from hyraid's own work (a drift check
//! that takes long on a large machine, say). Nothing is measured or printed without it.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Start the clock (the command line does, first thing) when HYRAID_TIMINGS is set to a value
/// other than 0 (set but empty counts as unset).
pub fn begin() {
    START.get_or_init(|| {
        std::env::var_os("HYRAID_TIMINGS")
            .filter(|v| !v.is_empty() && v != "0")
            .map(|_| Instant::now())
    });
}

/// Whether the clock runs (to skip making a boundary's text).
pub fn enabled() -> bool {
    matches!(START.get(), Some(Some(_)))
}

/// One boundary: `what` has just been done.
pub fn mark(what: &str) {
    if let Some(Some(start)) = START.get() {
        // Never a panic when standard error is closed: a clock is no reason to stop.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "hyraid timings: {:7.1} ms  {what}",
            start.elapsed().as_secs_f64() * 1000.0
        );
    }
}
