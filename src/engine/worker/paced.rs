//! The paced worker's due sends: the connections whose entry in the timer queue (`due.rs`)
//! came up, sent at the turn's end and between a turn's events.

use std::time::Instant;

use super::conn::Conn;
use super::state::Worker;

impl Worker<'_> {
    /// Sends every due request of every connection whose entry came up by `now`, before the
    /// worker returns to epoll. Each connection is queued again at its next send (by
    /// `fill_and_flush`), which is after `now`, so this ends.
    pub(super) fn send_due(&mut self, conns: &mut [Conn], now: Instant) {
        self.send_due_leaving(conns, now, false);
    }

    /// [`send_due`](Self::send_due) between a turn's events: with kernel timestamps on, a
    /// connection whose replies may still wait unread in its socket (an event of this turn not
    /// taken yet) is left for the turn's end, or the reply to a write now could come before that
    /// read, and one read would give the earlier replies its later stamp. True if it left
    /// any: the turn then sends no more before its end, rather than look at them again at
    /// every event.
    pub(super) fn send_due_mid_turn(&mut self, conns: &mut [Conn], now: Instant) -> bool {
        self.send_due_leaving(conns, now, self.clock.is_some())
    }

    /// The due sends, leaving (where `leave_unread`) the connections with replies maybe
    /// unread, queued again as they were. True if it left any.
    fn send_due_leaving(&mut self, conns: &mut [Conn], now: Instant, leave_unread: bool) -> bool {
        let mut not_yet = std::mem::take(&mut self.not_yet);
        while let Some(c) = self.due.pop_due(now) {
            let conn = &mut conns[c];
            if leave_unread && conn.links.iter().flatten().any(|l| l.inflight.len() > l.unwritten) {
                not_yet.push(c);
            } else if !conn.finished && !conn.blocked() {
                self.fill_and_flush(conn, c, now);
            }
        }
        let left = !not_yet.is_empty();
        for c in not_yet.drain(..) {
            self.requeue(&conns[c], c);
        }
        self.not_yet = not_yet;
        left
    }
}
