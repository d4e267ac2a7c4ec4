//! The paced worker's due sends: the connections whose entry in the timer queue (`due.rs`)
//! came up, sent at the turn's end and between a turn's events; and every worker's wait,
//! which a paced one times.

use std::time::Instant;

use super::conn::Conn;
use super::state::Worker;
use crate::net::driver::Event;

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

impl Worker<'_> {
    /// Waits for events or until `wake`; returns the clock after. Paced workers wake to the
    /// microsecond (the driver's timer is set from a fresh clock: the loop's is as old as the
    /// sends just made), early by what the machine adds where they sleep long (the alarm), and
    /// count the waits the machine ended late.
    pub(super) fn wait(&mut self, wake: Instant, events: &mut Vec<Event>) -> std::io::Result<Instant> {
        let called = self.paced.then(Instant::now);
        let asked = self.alarm.as_ref().zip(called).map(|(a, called)| a.ask(wake, called));
        let at = asked.as_ref().map_or(wake, |a| a.at);
        self.driver.wait(at, events)?;
        let now = Instant::now();
        if let Some(called) = called {
            self.wakeups.woke(called, at, now);
        }
        if let (Some(alarm), Some(asked)) = (self.alarm.as_mut(), asked) {
            alarm.woke(&asked, now, !events.is_empty());
        }
        Ok(now)
    }
}
