//! The reading half of a worker: drains a link's socket into its buffer and scans each
//! complete reply in place with the run's codec, matching it to the request it answers and
//! recording response and service time, hits, misses and errors.

use std::io;
use std::time::Instant;

use super::conn::Conn;
use super::conn::InFlight;
use super::conn::{lend, make_room, take_back};
use super::faults::{MAX_REDIRECTS, redirect_of};
use super::guard;
use super::state::{LINKS, Worker};
use super::voice::{self, Lost};
use crate::net::driver::Event;
use crate::net::driver::stamp::Clock;
use crate::resp::{self, ReplyClass};
use crate::stats::{self, ErrorKind, OpStats};

/// What a link that had a large value reads first at a reply's start: its end and the next
/// reply's header, at least.
const PEEK: usize = 64;

impl Worker<'_> {
    /// Takes one event of the driver's: a dial that completed, bytes or an end on a link of a
    /// connection still running, or bytes reaching one that has finished. Returns the clock.
    pub(super) fn on_link_event(&mut self, conns: &mut [Conn], event: &Event, mut now: Instant) -> Instant {
        let (c, node) = (event.token / LINKS, event.token % LINKS);
        let conn = &mut conns[c];
        let link = conn.links.get(node).and_then(Option::as_ref);
        let (up, dialing) = link.map_or((false, false), |l| (l.io.is_some(), l.dialing.is_some()));
        if !conn.finished && dialing {
            self.on_dial(conn, c, node, now);
            now = Instant::now();
            self.changed(conn, c);
        } else if !conn.finished && up {
            now = self.on_event(conn, c, node, now);
            // The close came with the last bytes (one edge for both): nothing more will.
            if event.read_closed {
                self.closed_by_peer(conn, node, now);
            }
            self.changed(conn, c);
        } else if conn.finished && up {
            self.discard_input(conn, node);
        }
        now
    }

    /// Reads and scans everything available on one link, then refills. Returns the clock.
    pub(super) fn on_event(&mut self, conn: &mut Conn, c: usize, node: usize, now: Instant) -> Instant {
        if let Some(link) = conn.links[node].as_mut() {
            lend(&mut self.rbuf, link);
        }
        let (mut now, up) = self.read_all(conn, c, node, now);
        take_back(&mut self.rbuf, conn.links[node].as_mut());
        if !up {
            return now;
        }
        if let (Some(every), Some(link)) = (self.plan.faults.reconnect_every, conn.links[node].as_ref())
            && link.served >= every
            && conn.remaining != Some(0)
            // A transaction's unit ends on the connection it began on (its WATCH and MULTI).
            && conn.unit_sending.is_none()
        {
            if !link.inflight.is_empty() {
                return now; // the rest of its replies first, then a fresh connection
            }
            self.recycle(conn, c, node, now);
            now = Instant::now();
        }
        self.fill_and_flush(conn, c, now);
        now
    }

    /// Counts a reply in its node's row (cluster mode). True if its latency went there only,
    /// the sole command's, added to the command's row as the window leaves the worker
    /// (`Worker::settle_window`).
    #[inline]
    fn record_node(
        &mut self,
        node: usize,
        (failed, len): (bool, usize),
        (response, service): (u64, Option<u64>),
        command: usize,
    ) -> bool {
        let Some((_, per_node)) = self.window.nodes.get_mut(node) else { return false };
        per_node.count += 1;
        per_node.errors += u64::from(failed);
        per_node.bytes_in += len as u64;
        self.fronts.record_node(per_node, node, response, service);
        self.fold == Some(command)
    }

    /// Reads and drops what reaches a connection that has finished (a server's pushes, such as
    /// the invalidations of client-side caching): unread, on the io_uring path, those bytes
    /// would hold buffers of the pool the worker's running connections receive into, until
    /// none was left for them.
    pub(super) fn discard_input(&mut self, conn: &mut Conn, node: usize) {
        let Some(io) = conn.links[node].as_mut().and_then(|l| l.io.as_mut()) else { return };
        loop {
            let space = self.rbuf.len();
            match io.read_stamped(&mut self.rbuf, false) {
                Ok((n, _)) if n > 0 && !io.drained_after(n, space) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                _ => return,
            }
        }
    }

    /// Reads and scans until the socket has nothing more. Returns the clock, and false if the
    /// link failed.
    fn read_all(&mut self, conn: &mut Conn, c: usize, node: usize, mut now: Instant) -> (Instant, bool) {
        loop {
            let Some(link) = conn.links[node].as_mut() else { return (now, false) };
            if link.rend == link.rbuf.len() {
                make_room(link);
            }
            let Some(io) = link.io.as_mut() else { return (now, false) };
            // After a large value, a header's worth first: the next large body is dropped, not copied.
            let peek = link.peek && (link.rstart == link.rend || link.large.is_some());
            let end = if peek { link.rbuf.len().min(link.rend + PEEK) } else { link.rbuf.len() };
            let space = end - link.rend;
            let dropping = link.large.map_or(0, |l| l.left);
            if dropping == 0 && link.lowat {
                link.lowat = false;
                io.wake_after(1);
            }
            let got = match dropping {
                0 => io.read_stamped(&mut link.rbuf[link.rend..end], self.clock.is_some()),
                _ => io.discard(dropping).map(|n| (n, None)),
            };
            match got {
                Ok((0, _)) => {
                    self.fail_because(conn, node, ErrorKind::Io, Lost::Dropped, now);
                    return (now, false);
                }
                Ok((n, _)) if dropping > 0 => {
                    let large = link.large.as_mut().expect("a large value being dropped");
                    large.left -= n;
                    let left = large.left;
                    // The drop asked for the body's rest, not the read window: it drained the
                    // socket only if it got less than that (the CRLF after a body's last few
                    // bytes is still there, and no new edge would come for it).
                    if io.drained_after(n, dropping) {
                        // The rest wakes the worker once it is there, not at each segment.
                        link.lowat |= io.wake_after(left);
                        break;
                    }
                }
                Ok((n, stamp)) => {
                    let drained = io.drained_after(n, space);
                    link.rend += n;
                    now = Instant::now();
                    // Every reply this read completes arrived with its last bytes, by then.
                    if !self.consume(conn, c, node, (now, stamp)) {
                        return (now, false);
                    }
                    // A short read drained the socket: the next arrival raises a new edge.
                    if drained {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.fail_because(conn, node, ErrorKind::Io, Lost::Error(&e), now);
                    return (now, false);
                }
            }
        }
        (now, true)
    }

    /// Scans every complete reply in a link's read buffer. False if the link failed. `stamp`:
    /// the kernel's receive time of the last bytes read, when timestamps are on.
    fn consume(&mut self, conn: &mut Conn, c: usize, node: usize, (now, stamp): (Instant, Option<u64>)) -> bool {
        let (protocol, limits) = (self.plan.server.session.protocol, guard::limits(self.plan.faults.max_reply));
        let mut since = Since::new(now);
        loop {
            let Some(link) = conn.links[node].as_mut() else { return false };
            let (scanned, held) = match link.next_reply(protocol, limits) {
                Ok(Some(next)) => next,
                Ok(None) => break,
                Err(e) => {
                    let start = &link.rbuf[link.rstart..link.rend.min(link.rstart + 16)];
                    let (server, faults) = (&self.plan.server, &self.plan.faults);
                    voice::protocol(faults.voice, self.plan.said, &server.target, server.session.protocol, &e, start);
                    self.fail(conn, node, ErrorKind::Protocol, now);
                    return false;
                }
            };
            let at = link.rstart;
            link.rstart += held;
            link.healthy = true;
            if scanned.class == ReplyClass::Push {
                continue;
            }
            // A reply to nothing we sent, or naming another request: the stream cannot be
            // trusted any more.
            let named = |r: &InFlight| scanned.id == 0 || scanned.id == r.op + 1;
            let Some(req) = link.inflight.pop_front_if(|r| named(r)) else {
                // (The request stays in flight, so it is counted as failed with the others.)
                self.fail(conn, node, ErrorKind::Protocol, now);
                return false;
            };
            // A full pipeline (the link's: standalone, or cluster mode's per link) has room now.
            if req.ends_unit && !req.asking {
                if link.units == conn.pipeline {
                    conn.slot_freed = Some(now);
                }
                link.units -= 1;
            }
            if let ReplyClass::Error { msg_start, msg_end } = scanned.class
                && self.router.is_some()
                && req.tries < MAX_REDIRECTS
                && let Some((slot, to, ask)) = redirect_of(&link.rbuf[at + msg_start..at + msg_end])
            {
                // Follow the redirect: the same bytes, to the node named, keeping the intended time.
                let bytes = link.journal.take(req.len as usize).to_vec();
                self.redirect(conn, c, (slot, &to, ask), bytes, req, now);
                continue;
            }
            if self.settle(conn, node, (at, scanned.class), &req, now) {
                continue;
            }
            if req.asking {
                continue;
            }
            if req.ends_unit {
                conn.units_in_flight -= 1;
            }
            if req.intended < self.plan.measure_from {
                continue; // a warmup request: not counted
            }
            let response = since.nanos_from(req.intended);
            let service = self.paced.then(|| now.saturating_duration_since(req.sent).as_nanos() as u64);
            let failed = matches!(scanned.class, ReplyClass::Error { .. });
            self.window.successes += u64::from(!failed);
            if let Some(row) = self.plan.unit_row {
                conn.unit_failed |= failed;
                if req.ends_unit {
                    let unit = &mut self.window.ops[row];
                    unit.count += 1;
                    unit.errors += u64::from(std::mem::take(&mut conn.unit_failed));
                    self.fronts.record_op(unit, row, response, service);
                }
            }
            let folded = self.record_node(node, (failed, scanned.len), (response, service), req.command());
            let reply = conn.links[node].as_ref().map_or(&[][..], |l| &l.rbuf[at..at + held]);
            if conn.requests.workload().follows_cursor() {
                conn.requests.scan_reply(req.command(), scanned.class, reply);
            }
            let op = &mut self.window.ops[req.command()];
            op.count += 1;
            op.bytes_in += scanned.len as u64;
            let mut read = (0, 0);
            match scanned.class {
                ReplyClass::Value | ReplyClass::Nil => {
                    let (hits, misses) = conn.requests.workload().hits_misses(req.command(), scanned.class, reply);
                    op.hits += hits;
                    op.misses += misses;
                    op.aborts += u64::from(conn.requests.workload().aborted(req.command(), scanned.class));
                    read = (hits, misses);
                }
                ReplyClass::Error { msg_start, msg_end } => {
                    op.errors += 1;
                    let link = conn.links[node].as_ref().expect("the link being read");
                    let msg = &link.rbuf[at + msg_start..at + msg_end];
                    self.window.errors.add_server(resp::error_prefix(msg));
                    self.window.errors.keep_first_reply(msg);
                    voice::error_reply(self.plan.faults.voice, self.plan.said, &self.plan.server.target, msg);
                }
                _ => {}
            }
            if folded {
                op.latency_sum_ns = op.latency_sum_ns.saturating_add(response);
            } else {
                self.fronts.record_op(op, req.command(), response, service);
            }
            if let (Some(clock), Some(stamp)) = (self.clock.as_ref(), stamp) {
                record_parts(op, clock, &req, (stamp, now), self.paced.then_some(response));
            }
            if let Some(stats) = conn.client_stats.as_mut() {
                stats.replied(req.command(), scanned.len as u64, response, read, now);
            }
        }
        if let Some(link) = conn.links[node].as_mut()
            && link.rstart == link.rend
        {
            link.rstart = 0;
            link.rend = 0;
        }
        true
    }
}

impl Worker<'_> {
    /// A reply matched to `req` (at `at` in the link's buffer): an error reply may send the
    /// request again (true: it waits to, and is not counted now) or be kept for
    /// `--failed-keys`; else the request's bytes leave the journal. Also ends the connect phase
    /// and counts a request answered after being sent again, and a unit served.
    fn settle(
        &mut self,
        conn: &mut Conn,
        node: usize,
        (at, class): (usize, ReplyClass),
        req: &InFlight,
        now: Instant,
    ) -> bool {
        self.answered();
        let Some(link) = conn.links[node].as_mut() else { return false };
        if let ReplyClass::Error { msg_start, msg_end } = class {
            let msg = &link.rbuf[at + msg_start..at + msg_end];
            if self.plan.faults.retry_errors
                && self.retry_reply(&mut conn.retries, node, (req, msg), &mut link.journal, now)
            {
                return true;
            }
            if self.plan.faults.failed_keys {
                // Given up: its row names the key it carried and the error's first word.
                let bytes = link.journal.range(0..req.len as usize).to_vec();
                let status = String::from_utf8_lossy(resp::error_prefix(msg)).into_owned();
                self.keep_failed(req, &bytes, &status);
            }
        } else {
            let measured = !req.asking && req.intended >= self.plan.measure_from;
            self.window.retried_ops += u64::from(measured && req.tries > 0);
        }
        if req.len > 0 {
            link.journal.consume(req.len as usize);
        }
        link.served += u64::from(req.ends_unit && !req.asking);
        false
    }
}

/// Nanoseconds from an instant to a read's clock. The requests one turn queued share their
/// intended time, and their replies come in their order: the subtraction, dear for an
/// `Instant`, is done once for a run of them.
struct Since {
    now: Instant,
    from: Instant,
    nanos: u64,
}

impl Since {
    #[inline(always)]
    fn new(now: Instant) -> Since {
        Since { now, from: now, nanos: 0 }
    }

    #[inline(always)]
    fn nanos_from(&mut self, from: Instant) -> u64 {
        if from != self.from {
            self.from = from;
            self.nanos = self.now.saturating_duration_since(from).as_nanos() as u64;
        }
        self.nanos
    }
}

/// Records a reply's latency decomposed, from its in-flight entry, the kernel's receive time
/// of the read that completed it, and the parse (`now`); `response` in open loop only (for the
/// response time without the client's lags).
#[inline]
fn record_parts(op: &mut OpStats, clock: &Clock, req: &InFlight, (stamp, now): (u64, Instant), response: Option<u64>) {
    let Some(parts) = op.parts.as_mut() else { return };
    let since_queued = |t: Instant| t.saturating_duration_since(req.queued).as_nanos() as u64;
    let split = stats::split(0, since_queued(req.sent), clock.after(req.queued, stamp), since_queued(now));
    let without_client = response.map(|r| r.saturating_sub(split.send_lag_ns + split.receive_lag_ns));
    parts.record(split, without_client);
}
