//! The connect phase lasts until the run's first reply: a server that accepts connections and
//! never answers ends a counted run (and, under memtier's `--connection-stage-timeout`, a timed
//! one) within the connect budget instead of keeping it waiting for ever.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The connect phase ends with the run's first reply (the steady state): shared by the
/// workers, so that one worker's silent connections do not end a run the server answers.
#[derive(Debug, Default)]
pub struct FirstReply {
    /// The checks before the run found the server silent for the whole connect budget.
    spent: bool,
    pub(super) answered: AtomicBool,
    pub(super) missed: AtomicBool,
}

/// How long the run's first requests may wait for a reply when the checks before the run
/// already found the server silent for the whole connect budget: long enough for a server
/// that answers now, short enough not to wait the budget a second time.
const SPENT_GRACE: Duration = Duration::from_millis(200);

impl FirstReply {
    pub fn new(spent: bool) -> FirstReply {
        FirstReply { spent, ..FirstReply::default() }
    }

    /// When the first reply must have come, for a run that starts at `start`.
    pub fn deadline(&self, start: Instant, budget: Duration) -> Instant {
        start + if self.spent { budget.min(SPENT_GRACE) } else { budget }
    }

    /// The run's outcome when no reply came in time: why, in one line.
    pub fn missed(&self, config: &crate::config::Config) -> Option<crate::net::ConnectError> {
        let missed = self.missed.load(Ordering::SeqCst) && !self.answered.load(Ordering::SeqCst);
        let memtier = config.faults.voice == crate::config::Voice::Memtier;
        missed.then(|| crate::net::ConnectError::NoReply {
            target: config.server.target.to_string(),
            waited: config.faults.connect_timeout,
            flag: if memtier { "--connection-stage-timeout" } else { "--connect-timeout" },
        })
    }
}
