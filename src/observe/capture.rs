//! The saved capture of `hyraid observe --capture FILE`: every request the observer made of the
//! host with its answer (recorded by `host::record::Recorder`), next to what was observed.

use super::Observed;
use crate::host::record::{Exchange, Replay};
use serde::{Deserialize, Serialize};

/// A capture: what the host was asked and answered, and what hyraid observed from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    pub hostname: String,
    pub exchanges: Vec<Exchange>,
    pub observed: Observed,
}

/// A host answering from the capture, as the captured machine answered.
impl From<Capture> for Replay {
    fn from(c: Capture) -> Replay {
        Replay::new(c.hostname, c.exchanges)
    }
}
