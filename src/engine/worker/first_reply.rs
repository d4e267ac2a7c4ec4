//! The connect phase lasts until the run's first reply: a server that accepts connections and
//! never answers ends a counted run (and, under memtier's `--connection-stage-timeout`, a timed
//! one) within the connect budget instead of keeping it waiting for ever.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::conn::Conn;
use super::state::Worker;
use crate::stats::ErrorKind;

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
