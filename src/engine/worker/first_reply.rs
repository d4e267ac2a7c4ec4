//! The connect phase lasts until the run's first reply: a server that accepts connections and
//! never answers ends a counted run (and, under memtier's `--connection-stage-timeout`, a timed
//! one) within the connect budget instead of keeping it waiting for ever.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::conn::Conn;
use super::state::Worker;
use crate::stats::ErrorKind;

/// The connect phase ends with the run's first reply (the steady state): shared by the
/// workers, so that one worker's silent connections do not end a run the server answers.
#[derive(Debug, Default)]
pub struct FirstReply {
    /// The checks before the run found the server silent for the whole connect budget.
    spent: bool,
    answered: AtomicBool,
    missed: AtomicBool,
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

impl Worker<'_> {
    /// No reply yet anywhere in the run by the connect phase's deadline, with requests waiting:
    /// the server accepts but does not answer; the worker gives its connections up (and the
    /// run fails with [`FirstReply::missed`]) rather than wait for ever.
    pub(super) fn await_first_reply(&mut self, conns: &mut [Conn], now: Instant) {
        let (Some(by), shared) = self.plan.first_reply else { return };
        if now < by {
            return;
        }
        if shared.answered.load(Ordering::Relaxed) {
            self.answered = true;
            return;
        }
        let waiting = |c: &Conn| !c.finished && c.links.iter().flatten().any(|l| !l.inflight.is_empty());
        if !conns.iter().any(waiting) {
            return;
        }
        shared.missed.store(true, Ordering::SeqCst);
        self.answered = true; // given up: nothing more to wait for
        for conn in conns.iter_mut().filter(|c| !c.finished) {
            self.abandon(conn, ErrorKind::Timeout);
        }
    }

    /// A reply came: the connect phase is over for the whole run.
    #[inline]
    pub(super) fn answered(&mut self) {
        if !self.answered {
            self.answered = true;
            self.plan.first_reply.1.answered.store(true, Ordering::Relaxed);
        }
    }
}
