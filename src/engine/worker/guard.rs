//! Hostile and silent servers during the run: the reply limits (what they say is `voice`'s),
//! the drain after the deadline, which gives replies in flight at most [`DRAIN_GRACE`], and
//! the drain after a stop signal, which gives them at most [`STOP_GRACE`].

use std::time::{Duration, Instant};

use super::conn::Conn;
use super::state::Worker;
use crate::resp::Limits;
use crate::stats::ErrorKind;

/// After the deadline, how long a request in flight may still wait for its reply.
pub const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// After a stop signal (SIGINT, SIGTERM, SIGHUP), how long replies already in flight may
/// still come: short, since whoever sent the signal wants the process gone.
pub const STOP_GRACE: Duration = Duration::from_millis(200);

/// The limits a link's replies are scanned within.
#[inline]
pub(super) fn limits(max_reply: i64) -> Limits {
    Limits { max_bulk: max_reply }
}

impl Worker<'_> {
    /// The server closed the link: a short read may have taken its last bytes without seeing
    /// the end of the stream, so no later edge would tell. Replies still awaited fail now.
    pub(super) fn closed_by_peer(&mut self, conn: &mut Conn, node: usize, now: Instant) {
        if conn.links[node].as_ref().is_some_and(|l| l.io.is_some()) {
            self.fail_because(conn, node, ErrorKind::Io, super::voice::Lost::Dropped, now);
        }
    }

    /// At and after the deadline: nothing more is sent, idle connections finish, and a request
    /// still in flight fails as `timeout` once it has waited [`DRAIN_GRACE`] (or the grace
    /// after the deadline is over). True when every connection is done.
    pub(super) fn drain(&mut self, conns: &mut [Conn], deadline: Instant, now: Instant) -> bool {
        let over = now >= deadline + DRAIN_GRACE;
        for conn in conns.iter_mut().filter(|c| !c.finished) {
            conn.remaining = Some(0);
            conn.drop_held();
            self.fail_waiting(conn, "not sent again before the run ended");
            for node in 0..conn.links.len() {
                let late = conn.links[node].as_ref().is_some_and(|l| {
                    l.io.is_some()
                        && l.inflight
                            .front()
                            .is_some_and(|r| over || now.saturating_duration_since(r.sent) >= DRAIN_GRACE)
                });
                if late {
                    self.fail(conn, node, ErrorKind::Timeout, now);
                }
            }
            if !conn.finished && conn.idle() {
                // Done: its sockets close when the worker ends, after the run's end is taken
                // (closing thousands of them here would delay the last replies' reading).
                // A link down or dialing is given up now.
                if conn.links.iter().flatten().any(|l| l.down.is_some() || l.dialing.is_some()) {
                    self.abandon(conn, ErrorKind::Timeout);
                } else {
                    self.finish(conn);
                }
            }
        }
        self.active == 0
    }
}

impl Worker<'_> {
    /// Once a stop signal has come (at `stopped`): nothing more is sent, replies already in
    /// flight are counted as they arrive, and a connection still waiting when [`STOP_GRACE`]
    /// is over is let go with its missing replies uncounted (neither answered nor failed: the
    /// run was interrupted, the server was not slow). True when every connection is done.
    pub(super) fn stop_drain(&mut self, conns: &mut [Conn], stopped: Instant, now: Instant) -> bool {
        let over = now >= stopped + STOP_GRACE;
        for conn in conns.iter_mut().filter(|c| !c.finished) {
            conn.remaining = Some(0);
            conn.drop_held();
            let waiting = conn.links.iter().flatten().any(|l| l.io.is_some() && !l.inflight.is_empty());
            if over || !waiting {
                self.let_go(conn);
            }
        }
        self.active == 0
    }

    /// Closes a connection at a stop, its requests in flight counted as abandoned (neither
    /// answered nor failed).
    fn let_go(&mut self, conn: &mut Conn) {
        conn.drop_held();
        let (measure_from, unit_row) = (self.plan.measure_from, self.plan.unit_row);
        self.retrying -= conn.retries.waiting.len();
        conn.retries.bytes.clear();
        for super::conn::Waiting { req, .. } in conn.retries.waiting.drain(..) {
            if req.intended >= measure_from {
                self.window.ops[req.command()].abandoned += 1;
                if let (Some(row), true) = (unit_row, req.ends_unit) {
                    self.window.ops[row].abandoned += 1;
                }
            }
        }
        for link in conn.links.iter_mut().flatten() {
            if let Some(mut io) = link.io.take() {
                self.driver.deregister(&mut io);
            }
            if link.down.take().is_some() {
                self.down -= 1;
            }
            for req in link.inflight.drain(..).filter(|r| !r.asking && r.intended >= measure_from) {
                self.window.ops[req.command()].abandoned += 1;
                if let (Some(row), true) = (unit_row, req.ends_unit) {
                    self.window.ops[row].abandoned += 1;
                }
            }
            link.units = 0;
        }
        conn.units_in_flight = 0;
        self.finish(conn);
    }
}

/// When the drain must look again: the oldest request in flight reaching its grace.
pub(super) fn drain_wake(conns: &[Conn], deadline: Instant) -> Instant {
    let links = conns.iter().filter(|c| !c.finished).flat_map(|c| c.links.iter().flatten());
    let oldest = links.filter(|l| l.io.is_some()).filter_map(|l| l.inflight.front()).map(|r| r.sent).min();
    let end = deadline + DRAIN_GRACE;
    oldest.map_or(end, |sent| (sent + DRAIN_GRACE).min(end))
}
