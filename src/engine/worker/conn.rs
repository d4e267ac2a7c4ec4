//! What a worker's connections are made of: a logical client (`Conn`) with a link (a socket
//! and its buffers and in-flight queue) per server node, and the in-flight entries themselves.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::super::pacer::Pacer;
use super::journal::Journal;
use crate::codec::{Dropping, Next, Protocol};
use crate::net::{Dial, Transport};
use crate::resp::{Limits, ScanError, Scanned};
use crate::resp::{Out, SendBuf};
use crate::stats::ClientStats;
use crate::workload::RequestGen;

/// The worker's read buffer, lent to each link while it reads ([`lend`]); it grows only for a
/// reply larger than this.
pub(super) const READ_BUFFER: usize = 64 * 1024;

/// Least a link's own buffer takes when it must hold the start of a reply between reads.
const TAIL_MIN: usize = 512;

/// Most of a reply a link copies to its own buffer between reads; more, and it keeps the
/// worker's (see [`take_back`]).
const TAIL_MAX: usize = READ_BUFFER / 4;

/// A request on the wire, waiting for its reply.
#[derive(Debug, Clone, Copy)]
pub(super) struct InFlight {
    /// The command's index in the plan ([`InFlight::command`]): 32 bits keep the entry to
    /// one cache line.
    pub(super) op: u32,
    /// When the schedule meant it to be sent: response time is measured from here.
    pub(super) intended: Instant,
    /// When it could have been sent: `intended`, or when a pipeline slot freed if later. The
    /// client's send lag is measured from here (a wait for a slot is the server's doing).
    pub(super) queued: Instant,
    /// When it was queued for the socket: service time is measured from here.
    pub(super) sent: Instant,
    /// The last command of its unit (of a sequence, or a single command): its reply frees a
    /// pipeline slot.
    pub(super) ends_unit: bool,
    /// Its encoded length in the link's journal (0 when nothing is journaled).
    pub(super) len: u32,
    /// Times it was sent again (after a dropped connection or a redirect).
    pub(super) tries: u16,
    /// The `ASKING` before a request sent after `-ASK`: its reply is not counted.
    pub(super) asking: bool,
    /// A paced, measured unit's last command whose send lag is not recorded yet: it is when
    /// the write (epoll) or submit (io_uring) that first carries it fixes its send time.
    pub(super) lag_due: bool,
}

const _: () = assert!(std::mem::size_of::<InFlight>() == 64);

impl InFlight {
    /// A request about to be queued: `intended` and `queued` as their fields say, sent `now`
    /// (the write or submit that carries it may move that later).
    #[inline(always)]
    pub(super) fn new(command: usize, intended: Instant, queued: Instant, now: Instant) -> InFlight {
        InFlight {
            op: command as u32,
            intended,
            queued,
            sent: now,
            ends_unit: false,
            len: 0,
            tries: 0,
            asking: false,
            lag_due: false,
        }
    }

    /// The command's index in the plan.
    #[inline(always)]
    pub(super) fn command(&self) -> usize {
        self.op as usize
    }
}

/// Cluster mode: a request drawn for a link whose pipeline was full, held until its replies
/// free room. One whose key is known by its number ([`Held::key`]) is only that number until
/// it joins the pipeline, and is encoded then; any other ([`Held::encoded`]) was encoded when
/// drawn, its bytes at the tail of the link's write buffer. 32 bytes: a link holds a few
/// pipelines of them, and a cluster run has a link per node for each connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Held {
    /// The key's number; for a request encoded when drawn, its length.
    pub(super) key_or_len: u64,
    /// As [`InFlight::intended`]: a closed loop's request is timed from when it joins.
    pub(super) intended: Instant,
    /// The command's index in the plan ([`Held::command`]), 32 bits as [`InFlight`]'s.
    op: u32,
    /// The node whose `{tag}` its command carries ([`Held::tag_node`]).
    tag: u16,
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<Held>() == 32);

impl Held {
    const NO_TAG: u16 = u16::MAX;
    const ENCODED: u8 = 1;
    const ENDS_UNIT: u8 = 2;
    const LAG_DUE: u8 = 4;

    /// A request held as its key's number, encoded when it joins the pipeline.
    pub(super) fn key(key: u64, command: usize, intended: Instant, tag: Option<usize>) -> Held {
        let tag = tag.map_or(Held::NO_TAG, |t| t as u16);
        Held { key_or_len: key, intended, op: command as u32, tag, flags: 0 }
    }

    /// A request encoded when drawn, its `len` bytes at the write buffer's tail.
    pub(super) fn encoded(len: usize, command: usize, intended: Instant) -> Held {
        Held { key_or_len: len as u64, intended, op: command as u32, tag: Held::NO_TAG, flags: Held::ENCODED }
    }

    /// The command's index in the plan.
    #[inline(always)]
    pub(super) fn command(&self) -> usize {
        self.op as usize
    }

    /// The node whose `{tag}` its command carries, if any.
    pub(super) fn tag_node(&self) -> Option<usize> {
        (self.tag != Held::NO_TAG).then_some(usize::from(self.tag))
    }

    /// Its length in the write buffer's held tail, if it was encoded when drawn.
    pub(super) fn encoded_len(&self) -> Option<usize> {
        (self.flags & Held::ENCODED != 0).then_some(self.key_or_len as usize)
    }

    pub(super) fn ends_unit(&self) -> bool {
        self.flags & Held::ENDS_UNIT != 0
    }

    pub(super) fn lag_due(&self) -> bool {
        self.flags & Held::LAG_DUE != 0
    }
}

/// Where a `--transaction` unit is in its sending: its commands go one by one, each taking a
/// pipeline slot, so that at `--pipeline 1` each waits for the previous reply (other
/// connections' commands can come between, as a WATCH expects), and a deeper pipeline sends
/// the unit contiguously. The next unit starts only when this one is all sent.
#[derive(Debug, Clone, Copy)]
pub(super) struct UnitCursor {
    pub(super) unit: usize,
    pub(super) step: usize,
    /// Times the step's command was sent so far (of its repeat).
    pub(super) sent: u32,
    /// The node the whole unit goes to (cluster mode).
    pub(super) node: Option<usize>,
    pub(super) intended: Instant,
    pub(super) queued: Instant,
    pub(super) measured: bool,
}

/// A link that failed and waits to reconnect.
#[derive(Debug, Clone, Copy)]
pub(super) struct Down {
    pub(super) since: Instant,
    pub(super) retry_at: Instant,
    pub(super) backoff: Duration,
    pub(super) attempts: u32,
}

/// A reconnect under way in the event loop (`net::Dial`): its socket is registered with the
/// link's token until it is logged in.
pub(super) struct Dialing {
    pub(super) dial: Dial,
    /// Whether the link was out (a reconnect, not a first connect or `--reconnect-every`):
    /// then its downtime is an outage.
    pub(super) outage: bool,
}

/// One socket of a connection, to one node.
pub struct Link {
    /// `None` while down.
    pub(super) io: Option<Transport>,
    /// While down: the attempt to connect again under way, if any.
    pub(super) dialing: Option<Box<Dialing>>,
    /// Replies read, `rbuf[rstart..rend]` not scanned yet. While the link reads, the worker's
    /// buffer; between reads, its own, which holds only the start of a reply not complete yet
    /// (empty and unallocated when nothing is pending, as at pipeline 1 almost always).
    pub(super) rbuf: Vec<u8>,
    pub(super) rstart: usize,
    pub(super) rend: usize,
    /// A large value whose body the socket drops as it arrives (`codec::Dropping`): `rbuf`
    /// holds its header. Once one came, the link reads a header's worth first at each reply's
    /// start (`peek`), so that the next large body is not copied before its header is seen.
    pub(super) large: Option<Dropping>,
    pub(super) peek: bool,
    /// The socket wakes the worker only once the rest of a large body came (`SO_RCVLOWAT`),
    /// set back once the body is dropped.
    pub(super) lowat: bool,
    /// Requests not written yet, from `wpos` on: large values by reference (`resp::SendBuf`).
    pub(super) wbuf: SendBuf,
    pub(super) wpos: usize,
    pub(super) inflight: VecDeque<InFlight>,
    /// How many of the last requests in flight no write has carried yet: timed when the
    /// write that carries them begins (`flush_link`), not when they were queued.
    pub(super) unwritten: usize,
    /// The bytes of the requests in flight, in order, when they may have to be sent again
    /// (`--retry`, cluster redirects). Empty otherwise.
    pub(super) journal: Journal,
    pub(super) down: Option<Down>,
    /// A reply was scanned since the last (re)connect: the stream once made sense.
    pub(super) healthy: bool,
    /// Units answered since the last (re)connect, for `--reconnect-every`.
    pub(super) served: u64,
    /// Units whose last command is on this link, queued or on the wire (cluster mode's
    /// pipeline counts them per link: `queue.rs`).
    pub(super) units: usize,
    /// Cluster mode: requests drawn for this link while its pipeline was full, in order; they
    /// join the pipeline as its replies free room. The bytes of those encoded when drawn are
    /// the last `held_len` of `wbuf`, behind what may be written: joining the pipeline moves
    /// that mark, not them.
    pub(super) held: VecDeque<Held>,
    pub(super) held_len: usize,
}

impl Link {
    pub fn new(io: Transport, pipeline: usize, max_request: usize) -> Link {
        Link {
            io: Some(io),
            dialing: None,
            rbuf: Vec::new(),
            rstart: 0,
            rend: 0,
            large: None,
            peek: false,
            lowat: false,
            wbuf: SendBuf::with_capacity(pipeline * max_request),
            wpos: 0,
            inflight: VecDeque::with_capacity(pipeline),
            unwritten: 0,
            journal: Journal::default(),
            down: None,
            healthy: false,
            served: 0,
            units: 0,
            held: VecDeque::new(),
            held_len: 0,
        }
    }

    /// A link not connected yet (or any more), waiting for its next attempt.
    pub(super) fn waiting(pipeline: usize, max_request: usize, down: Down) -> Link {
        Link {
            io: None,
            dialing: None,
            rbuf: Vec::new(),
            rstart: 0,
            rend: 0,
            large: None,
            peek: false,
            lowat: false,
            wbuf: SendBuf::with_capacity(pipeline * max_request),
            wpos: 0,
            inflight: VecDeque::new(),
            unwritten: 0,
            journal: Journal::default(),
            down: Some(down),
            healthy: false,
            served: 0,
            units: 0,
            held: VecDeque::new(),
            held_len: 0,
        }
    }

    pub(super) fn idle(&self) -> bool {
        self.inflight.is_empty() && self.held.is_empty()
    }

    /// Marks the request just queued (`held`: held) as its unit's last: its reply frees a
    /// pipeline slot, and its send lag is recorded when a write carries it if `lag_due`.
    #[inline]
    pub(super) fn end_unit(&mut self, held: bool, lag_due: bool) {
        if held {
            if let Some(req) = self.held.back_mut() {
                req.flags |= Held::ENDS_UNIT | if lag_due { Held::LAG_DUE } else { 0 };
            }
        } else {
            if let Some(req) = self.inflight.back_mut() {
                req.ends_unit = true;
                req.lag_due = lag_due;
            }
            self.units += 1;
        }
    }

    /// Whether a flush has anything to do: the link is up, with bytes to write, requests no
    /// write carried yet, or a TLS session that may still hold records.
    #[inline]
    pub(super) fn has_output(&self) -> bool {
        self.io
            .as_ref()
            .is_some_and(|io| self.wpos < self.sendable_end() || self.unwritten > 0 || matches!(io, Transport::Tls(_)))
    }

    /// Where the held requests' bytes start in `wbuf`: what may be written ends there.
    #[inline]
    pub(super) fn sendable_end(&self) -> usize {
        self.wbuf.len() - self.held_len
    }

    /// Puts `bytes` (a request sent again or redirected) in the pipeline's part of the write
    /// buffer, ahead of what is held; returns where they start.
    pub(super) fn push_sendable(&mut self, bytes: &[u8]) -> usize {
        let at = self.sendable_end();
        if self.held_len == 0 {
            self.wbuf.extend_from_slice(bytes);
        } else {
            self.wbuf.insert(at, bytes);
        }
        at
    }

    /// Drops every byte of the write buffer but the held requests' (after a failure: what
    /// was not written is sent again from the journal, or not at all).
    pub(super) fn drop_sendable(&mut self) {
        self.wbuf.consume_front(self.sendable_end());
        self.wpos = 0;
        self.unwritten = 0;
    }

    /// The next complete reply in the read buffer (its length on the wire) and how many of
    /// its bytes the buffer holds; `None` until one is complete. A large value's body is
    /// dropped as it arrives where the socket can (`codec::Dropping`), its header kept.
    #[inline]
    pub(super) fn next_reply(
        &mut self,
        protocol: Protocol,
        limits: Limits,
    ) -> Result<Option<(Scanned, usize)>, ScanError> {
        // Every reply read so far taken, the usual end of a read: no protocol finds one in
        // no bytes, and no large value is being dropped.
        if self.rstart == self.rend && self.large.is_none() {
            return Ok(None);
        }
        let drops = self.io.as_ref().is_some_and(Transport::drops);
        match protocol.next_reply(&self.rbuf[self.rstart..self.rend], limits, &mut self.large, drops)? {
            Next::Reply(scanned, held) => Ok(Some((scanned, held))),
            Next::More { keep } => {
                self.rend = self.rstart + keep;
                self.peek |= self.large.is_some();
                Ok(None)
            }
        }
    }

    /// Puts bytes read while logging in (after the login's replies) where replies are read.
    pub fn prefill(&mut self, bytes: &[u8]) {
        if self.rbuf.len() - self.rend < bytes.len() {
            self.rbuf.resize(self.rend + bytes.len(), 0);
        }
        self.rbuf[self.rend..self.rend + bytes.len()].copy_from_slice(bytes);
        self.rend += bytes.len();
    }
}

/// A logical client and everything it owns.
pub struct Conn {
    /// By node number; a standalone server is node 0.
    pub(super) links: Vec<Option<Link>>,
    /// Cluster mode: a command whose key's slot is not known before it is encoded (a key
    /// argument with more than the drawn key in it) is encoded here, then routed by its key.
    pub(super) scratch: Vec<u8>,
    /// Units (single commands or whole sequences) in flight: what the pipeline depth counts.
    pub(super) units_in_flight: usize,
    /// An error reply came back within the unit being received.
    pub(super) unit_failed: bool,
    /// `--transaction`: the unit being sent, whose next commands go as the pipeline has room.
    pub(super) unit_sending: Option<UnitCursor>,
    /// When a reply last freed a slot of a full pipeline.
    pub(super) slot_freed: Option<Instant>,
    /// Requests left to send, when the run is counted.
    pub(super) remaining: Option<u64>,
    pub(super) requests: RequestGen,
    pub(super) pacer: Pacer,
    /// Done sending and drained, or given up.
    pub(super) finished: bool,
    /// A staircase ramp holds it back (no links yet) until this time.
    pub(super) join_at: Option<Instant>,
    /// Its own per-second figures (memtier's `--client-stats`); `None` unless asked for.
    pub(super) client_stats: Option<Box<ClientStats>>,
    /// Cluster mode: the pipeline depth is each link's, not shared by the links (`held.rs`).
    pub(super) per_node: bool,
    /// Cluster mode with connections bound to primaries: the node whose `{tag}` every unit
    /// takes (valkey-benchmark's client on its primary).
    pub(in crate::engine) home: Option<usize>,
    /// Requests answered with an error, waiting to be sent again.
    pub(super) retries: Retries,
    /// Units it keeps in flight at most: its role's pipeline (`Config::pipeline_of`).
    pub(super) pipeline: usize,
}

impl Conn {
    pub fn new(links: Vec<Option<Link>>, requests: RequestGen, pacer: Pacer, remaining: Option<u64>) -> Conn {
        Conn {
            links,
            scratch: Vec::new(),
            units_in_flight: 0,
            unit_failed: false,
            unit_sending: None,
            slot_freed: None,
            remaining,
            requests,
            pacer,
            finished: false,
            join_at: None,
            client_stats: None,
            per_node: false,
            home: None,
            retries: Retries::default(),
            pipeline: 1,
        }
    }

    /// Sets the schedule once the run's start time is known.
    pub fn set_pacer(&mut self, pacer: Pacer) {
        self.pacer = pacer;
    }

    /// Sets the units it keeps in flight at most.
    pub fn set_pipeline(&mut self, pipeline: usize) {
        self.pipeline = pipeline.max(1);
    }

    pub(super) fn idle(&self) -> bool {
        self.links.iter().flatten().all(Link::idle) && self.retries.waiting.is_empty()
    }

    /// Keeps the connection's own per-second figures from now on (memtier's `--client-stats`).
    pub fn keep_stats(&mut self, stats: ClientStats) {
        self.client_stats = Some(Box::new(stats));
    }

    /// Holds the connection back until `at`: a staircase ramp's step (not connected), or its
    /// role's start (connected).
    pub fn hold_until(&mut self, at: Instant) {
        self.join_at = Some(at);
    }

    /// A connection the ramp holds back, or a standalone one waiting to reconnect, sends
    /// nothing meanwhile.
    pub(super) fn blocked(&self) -> bool {
        self.join_at.is_some() || (self.links.len() == 1 && self.links[0].as_ref().is_some_and(|l| l.down.is_some()))
    }
}

/// Moves unscanned bytes to the front; doubles the buffer when one reply fills it.
pub(super) fn make_room(link: &mut Link) {
    if link.rstart > 0 {
        link.rbuf.copy_within(link.rstart..link.rend, 0);
        link.rend -= link.rstart;
        link.rstart = 0;
    }
    if link.rend == link.rbuf.len() {
        let len = (link.rbuf.len() * 2).max(TAIL_MIN);
        link.rbuf.resize(len, 0);
    }
}

/// Lends the worker's read buffer (`shared`) to a link about to read, with what the link held
/// of a reply moved to its front; the link's own buffer waits in `shared` meanwhile. Nothing is
/// lent to a link whose own buffer is the larger (it grew for a large reply).
pub(super) fn lend(shared: &mut Vec<u8>, link: &mut Link) {
    let pending = link.rend - link.rstart;
    if shared.len() <= link.rbuf.len() || shared.len() < pending {
        return;
    }
    shared[..pending].copy_from_slice(&link.rbuf[link.rstart..link.rend]);
    std::mem::swap(shared, &mut link.rbuf);
    (link.rstart, link.rend) = (0, pending);
}

/// Takes the worker's read buffer back from a link done reading ([`lend`]): the start of a
/// reply not complete yet goes to the link's own buffer, which grows to hold it (and keeps
/// that size until [`shrink`]). A link in the middle of a large reply (more than `TAIL_MAX`
/// of it read) keeps the lent buffer instead, so the reply is not copied again at each read,
/// and the worker takes a new one. Then `shared` is the worker's buffer again, at least
/// `READ_BUFFER` long (a link that failed while reading took the lent one with it).
pub(super) fn take_back(shared: &mut Vec<u8>, link: Option<&mut Link>) {
    if let Some(link) = link
        && link.rbuf.len() > shared.len()
        && link.rend - link.rstart <= TAIL_MAX
    {
        let pending = link.rend - link.rstart;
        if shared.len() < pending {
            shared.resize(pending.next_power_of_two().max(TAIL_MIN), 0);
        }
        shared[..pending].copy_from_slice(&link.rbuf[link.rstart..link.rend]);
        std::mem::swap(shared, &mut link.rbuf);
        (link.rstart, link.rend) = (0, pending);
    }
    if shared.len() < READ_BUFFER {
        *shared = vec![0; READ_BUFFER];
    }
}

/// Moves the send time of the requests a link queued after `since` (its socket's previous
/// send, whose requests were moved to it; `None`: every request) to `at`, when their bytes
/// went to the kernel. Those are the last in flight: a request is queued at the back, timed
/// after every submit before it (or, sent again after a reconnect, timed anew).
pub(super) fn restamp(link: &mut Link, since: Option<Instant>, at: Instant, lag: &mut Histogram<u64>) {
    for entry in link.inflight.iter_mut().rev().take_while(|e| since.is_none_or(|s| e.sent > s)) {
        sent_at(entry, at, lag);
    }
}

/// Times the last `count` requests a link has in flight (those no write carried yet) at `at`,
/// when the write that carries them begins.
pub(super) fn restamp_last(link: &mut Link, count: usize, at: Instant, lag: &mut Histogram<u64>) {
    link.inflight.iter_mut().rev().take(count).for_each(|entry| sent_at(entry, at, lag));
}

/// A request left at `at`: its send time, and its unit's send lag from the schedule if due.
#[inline]
fn sent_at(entry: &mut InFlight, at: Instant, lag: &mut Histogram<u64>) {
    entry.sent = at;
    if std::mem::take(&mut entry.lag_due) {
        lag.saturating_record(at.saturating_duration_since(entry.intended).as_nanos() as u64);
    }
}

/// Frees a link's own read buffer when it holds nothing (once an interval: a buffer that grew
/// for a burst of partial replies is not kept for the rest of the run).
pub(super) fn shrink(link: &mut Link) {
    if link.rstart == link.rend && link.rbuf.capacity() > 0 {
        link.rbuf = Vec::new();
        (link.rstart, link.rend) = (0, 0);
    }
}

/// A request waiting to be sent again, its bytes in [`Retries::bytes`], in order.
#[derive(Debug)]
pub(super) struct Waiting {
    pub(super) due: Instant,
    pub(super) node: usize,
    pub(super) req: InFlight,
}

/// A connection's requests waiting out their backoff, oldest first: they leave in order,
/// each no earlier than it is due.
#[derive(Debug, Default)]
pub struct Retries {
    pub(super) waiting: VecDeque<Waiting>,
    pub(super) bytes: VecDeque<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sent: Instant) -> InFlight {
        let (op, ends_unit, len, tries, asking) = (0, true, 0, 0, false);
        InFlight { op, intended: sent, queued: sent, sent, ends_unit, len, tries, asking, lag_due: false }
    }

    #[test]
    fn restamp_moves_only_the_requests_queued_after_the_last_send() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let down = Down { since: t0, retry_at: t0, backoff: Duration::ZERO, attempts: 0 };
        let mut link = Link::waiting(4, 64, down);
        // Two requests sent at 1 ms (moved there by that send), two queued after it.
        link.inflight.extend([entry(at(1)), entry(at(1)), entry(at(2)), entry(at(3))]);
        link.inflight[3].lag_due = true;
        let mut lag = crate::stats::histogram();
        restamp(&mut link, Some(at(1)), at(300), &mut lag);
        let sent: Vec<Instant> = link.inflight.iter().map(|e| e.sent).collect();
        assert_eq!(sent, [at(1), at(1), at(300), at(300)]);
        // The unit's send lag is recorded once, from its intended time to the send.
        assert_eq!((lag.len(), lag.max() / 1_000_000), (1, 297));
        // A socket's first send carries everything in flight.
        restamp(&mut link, None, at(400), &mut lag);
        assert!(link.inflight.iter().all(|e| e.sent == at(400)));
        assert_eq!(lag.len(), 1);
    }
}
