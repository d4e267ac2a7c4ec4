//! Hostile and silent servers during the run: the reply limits, the one-line messages that
//! name a protocol error or a fixable error reply (each said once per process, not per reply),
//! the drain after the deadline, which gives replies in flight at most [`DRAIN_GRACE`], and
//! the drain after a stop signal, which gives them at most [`STOP_GRACE`].

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use super::{Conn, Worker};
use crate::resp::{self, Limits, ScanError};
use crate::stats::ErrorKind;

/// After the deadline, how long a request in flight may still wait for its reply.
pub const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// After a stop signal (SIGINT, SIGTERM, SIGHUP), how long replies already in flight may
/// still come: short, since whoever sent the signal wants the process gone.
pub const STOP_GRACE: Duration = Duration::from_millis(200);

/// Messages already said: hint bits, and the protocol bit below.
static SAID: AtomicU8 = AtomicU8::new(0);
const SAID_PROTOCOL: u8 = 128;
static SAID_TIMEOUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True the first time `bit` is asked for in this process.
fn first(bit: u8) -> bool {
    SAID.fetch_or(bit, Ordering::Relaxed) & bit == 0
}

/// The limits a link's replies are scanned within.
#[inline]
pub(super) fn limits(max_reply: i64) -> Limits {
    Limits { max_bulk: max_reply }
}

/// Names a protocol error once: what limit or rule, and where (the offset counts from the
/// start of the reply, whose first bytes are `start`).
#[cold]
pub(super) fn protocol(target: &dyn std::fmt::Display, spoken: crate::codec::Protocol, e: &ScanError, start: &[u8]) {
    if !first(SAID_PROTOCOL) {
        return;
    }
    let guess = match crate::net::reply_guess(start, spoken) {
        Some(guess) => format!(" (got bytes {}: {guess})", crate::net::hex(start)),
        None => String::new(),
    };
    eprintln!("respbench: protocol error from {target}: {e}{guess}; connection closed (counted as `protocol`)");
}

/// Names an error reply a user can fix, the first time it comes.
#[inline]
pub(super) fn error_reply(target: &dyn std::fmt::Display, msg: &[u8]) {
    if let Some(hint) = resp::hint(msg)
        && first(hint.bit)
    {
        let shown = String::from_utf8_lossy(&msg[..msg.len().min(120)]);
        eprintln!("respbench: {target} replied `{shown}`: {}", hint.fix);
    }
}

/// A counted run has no end to wait for: a request that timed out gives up its connection
/// (a server that stopped answering would otherwise be waited on reconnect after reconnect).
#[cold]
pub(super) fn gave_up(target: &dyn std::fmt::Display, timeout: Duration) {
    if !SAID_TIMEOUT.swap(true, Ordering::Relaxed) {
        eprintln!(
            "respbench: {target} did not reply within --request-timeout {timeout:?}: the connection gives up \
             (counted as `timeout`; the rest of its requests are not sent)"
        );
    }
}

impl Worker<'_> {
    /// The server closed the link: a short read may have taken its last bytes without seeing
    /// the end of the stream, so no later edge would tell. Replies still awaited fail now.
    pub(super) fn closed_by_peer(&mut self, conn: &mut Conn, node: usize, now: Instant) {
        if conn.links[node].as_ref().is_some_and(|l| l.io.is_some()) {
            self.fail(conn, node, ErrorKind::Io, now);
        }
    }

    /// At and after the deadline: nothing more is sent, idle connections finish, and a request
    /// still in flight fails as `timeout` once it has waited [`DRAIN_GRACE`] (or the grace
    /// after the deadline is over). True when every connection is done.
    pub(super) fn drain(&mut self, conns: &mut [Conn], deadline: Instant, now: Instant) -> bool {
        let over = now >= deadline + DRAIN_GRACE;
        for conn in conns.iter_mut().filter(|c| !c.finished) {
            conn.remaining = Some(0);
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
            let waiting = conn.links.iter().flatten().any(|l| l.io.is_some() && !l.inflight.is_empty());
            if over || !waiting {
                self.let_go(conn);
            }
        }
        self.active == 0
    }

    /// Closes a connection at a stop, its requests in flight forgotten.
    fn let_go(&mut self, conn: &mut Conn) {
        for link in conn.links.iter_mut().flatten() {
            if let Some(mut io) = link.io.take() {
                self.driver.deregister(&mut io);
            }
            if link.down.take().is_some() {
                self.down -= 1;
            }
            link.inflight.clear();
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
