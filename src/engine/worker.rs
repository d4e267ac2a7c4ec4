//! One worker thread: an event loop that owns its connections, keeps each pipeline full as
//! its pacer allows, scans replies in place and records them into its own interval window.
//! Nothing here is shared with other threads except the channel that carries finished windows.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use super::pacer::Pacer;
use super::timer::Timer;
use super::{Msg, ThreadCpu};
use crate::config::{Faults, ServerOptions};
use crate::net::{Session, Transport};
use crate::resp::{self, ReplyClass};
use crate::stats::{ErrorKind, Window};
use crate::workload::RequestGen;

/// Initial read buffer per connection; grows only for a reply larger than this.
const READ_BUFFER: usize = 64 * 1024;

/// A request on the wire, waiting for its reply.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    command: usize,
    /// When the schedule meant it to be sent: response time is measured from here.
    intended: Instant,
    /// When it was queued for the socket: service time is measured from here.
    sent: Instant,
    /// The last command of its unit (of a sequence, or a single command): its reply frees a
    /// pipeline slot.
    ends_unit: bool,
    /// Its encoded length in the connection's journal (with `--retry` only).
    len: u32,
    /// Times it was sent again after a dropped connection.
    tries: u32,
}

/// A connection that failed and waits to reconnect.
#[derive(Debug, Clone, Copy)]
struct Down {
    since: Instant,
    retry_at: Instant,
    backoff: Duration,
    attempts: u32,
}

/// A connection and everything it owns.
pub struct Conn {
    io: Transport,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    inflight: VecDeque<InFlight>,
    /// Units (single commands or whole sequences) in flight: what the pipeline depth counts.
    units_in_flight: usize,
    /// An error reply came back within the unit being received.
    unit_failed: bool,
    /// Requests left to send, when the run is counted.
    remaining: Option<u64>,
    requests: RequestGen,
    pacer: Pacer,
    /// Done sending and drained, or failed for good.
    finished: bool,
    /// Waiting to reconnect.
    down: Option<Down>,
    /// A reply was scanned since the last (re)connect: the stream once made sense.
    healthy: bool,
    /// With `--retry`: the bytes of the requests in flight, in order, to send again after a
    /// reconnect. Empty otherwise.
    journal: VecDeque<u8>,
}

impl Conn {
    pub fn new(
        io: Transport,
        requests: RequestGen,
        pacer: Pacer,
        remaining: Option<u64>,
        pipeline: usize,
        max_request: usize,
    ) -> Conn {
        Conn {
            io,
            rbuf: vec![0; READ_BUFFER],
            rstart: 0,
            rend: 0,
            wbuf: Vec::with_capacity(pipeline * max_request),
            wpos: 0,
            inflight: VecDeque::with_capacity(pipeline),
            units_in_flight: 0,
            unit_failed: false,
            remaining,
            requests,
            pacer,
            finished: false,
            down: None,
            healthy: false,
            journal: VecDeque::new(),
        }
    }
}

impl Conn {
    /// Sets the schedule once the run's start time is known.
    pub fn set_pacer(&mut self, pacer: Pacer) {
        self.pacer = pacer;
    }
}

/// What a worker needs to know about the run.
pub struct WorkerPlan<'a> {
    pub index: usize,
    pub pipeline: usize,
    pub interval: Duration,
    /// Start of the measured phase (after the warmup): requests meant for earlier are not counted.
    pub measure_from: Instant,
    pub deadline: Option<Instant>,
    pub stop: &'a AtomicBool,
    /// Rows of a window: the commands, then the sequence's unit row if any.
    pub rows: usize,
    pub unit_row: Option<usize>,
    /// How to log in again after a dropped connection.
    pub server: &'a ServerOptions,
    pub faults: Faults,
}

/// Runs the event loop until every connection is done, the deadline passes or `stop` is set.
pub fn run(plan: WorkerPlan<'_>, mut conns: Vec<Conn>, tx: Sender<Msg>) {
    let mut worker = match Worker::new(&plan, &mut conns) {
        Ok(w) => w,
        Err(e) => {
            // Registration failing is a broken event loop; report every connection as failed.
            let mut window = Window::new(plan.rows, plan.unit_row);
            window.errors.add(ErrorKind::Io, conns.len() as u64);
            let cpu = ThreadCpu::default();
            let _ = tx.send(Msg::Done { worker: plan.index, interval: 0, window, ended: Instant::now(), cpu });
            eprintln!("respbench: worker {} could not start its event loop: {e}", plan.index);
            return;
        }
    };
    let mut events = Events::with_capacity(1024);
    let cpu_before = ThreadCpu::now();
    let mut now = Instant::now();
    let loop_start = now;
    for conn in conns.iter_mut() {
        worker.fill_and_flush(conn, now);
    }
    while worker.active > 0 {
        let mut wake = worker.next_flush;
        if let Some(deadline) = plan.deadline {
            wake = wake.min(deadline);
        }
        // A connection with a full pipeline waits for a reply, not for its clock. Paced sends
        // are batched at a grain: each timer wake-up costs more than a send, so at high rates
        // a send may leave up to one grain late (counted in its response time and send lag).
        let due = conns
            .iter()
            .filter(|c| !c.finished && c.down.is_none() && c.units_in_flight < plan.pipeline)
            .filter_map(|c| c.pacer.next_due())
            .min();
        if let Some(due) = due {
            wake = wake.min(due.max(now + TIMER_GRAIN));
        }
        if worker.down > 0
            && let Some(retry_at) = conns.iter().filter_map(|c| c.down.map(|d| d.retry_at)).min()
        {
            wake = wake.min(retry_at);
        }
        if let Some(timeout) = plan.faults.timeout {
            let oldest = conns.iter().filter(|c| !c.finished && c.down.is_none()).filter_map(|c| c.inflight.front());
            if let Some(sent) = oldest.map(|r| r.sent).min() {
                wake = wake.min(sent + timeout);
            }
        }
        let timeout = wake.saturating_duration_since(now);
        let polled = match worker.timer.as_mut() {
            // Open loop: the timerfd wakes us to the microsecond.
            Some(timer) if !timeout.is_zero() => {
                timer.arm(wake, now).and_then(|()| worker.poll.poll(&mut events, None))
            }
            _ => worker.poll.poll(&mut events, Some(timeout)),
        };
        if let Err(e) = polled
            && e.kind() != io::ErrorKind::Interrupted
        {
            eprintln!("respbench: worker {} event loop failed: {e}", plan.index);
            break;
        }
        now = Instant::now();
        for event in events.iter() {
            if event.token() == TIMER {
                if let Some(timer) = worker.timer.as_mut() {
                    timer.fired();
                }
                continue;
            }
            let conn = &mut conns[event.token().0];
            if !conn.finished && conn.down.is_none() {
                now = worker.on_event(conn, now);
            }
        }
        if worker.paced {
            for conn in conns.iter_mut().filter(|c| !c.finished && c.down.is_none()) {
                worker.fill_and_flush(conn, now);
            }
        }
        if let Some(timeout) = plan.faults.timeout {
            for conn in conns.iter_mut().filter(|c| !c.finished && c.down.is_none()) {
                if conn.inflight.front().is_some_and(|r| now.saturating_duration_since(r.sent) >= timeout) {
                    worker.fail(conn, ErrorKind::Timeout, now);
                }
            }
        }
        if worker.down > 0 {
            for (i, conn) in conns.iter_mut().enumerate() {
                if conn.down.is_some_and(|d| d.retry_at <= now) {
                    worker.reconnect(conn, Token(i), now);
                    now = Instant::now();
                }
            }
        }
        if plan.stop.load(Ordering::Relaxed) || plan.deadline.is_some_and(|d| now >= d) {
            break;
        }
        while now >= worker.next_flush {
            worker.flush_window(&tx);
        }
    }
    // Connections still down when the run ends: their outage lasts to the end.
    for conn in conns.iter_mut() {
        if let Some(down) = conn.down.take() {
            worker.window.down.push((down.since, now));
        }
    }
    let window = std::mem::replace(&mut worker.window, Window::new(plan.rows, plan.unit_row));
    let cpu = ThreadCpu::now().since(&cpu_before, now.duration_since(loop_start));
    let _ = tx.send(Msg::Done { worker: plan.index, interval: worker.interval, window, ended: now, cpu });
}

/// The event-loop token of the pacing timer (connections use their index).
const TIMER: Token = Token(usize::MAX);

/// Shortest sleep between paced sends of one worker thread.
pub const TIMER_GRAIN: Duration = Duration::from_micros(20);

struct Worker<'p> {
    plan: &'p WorkerPlan<'p>,
    poll: Poll,
    /// Open loop only.
    timer: Option<Timer>,
    window: Window,
    /// Index of the interval `window` belongs to.
    interval: u64,
    next_flush: Instant,
    /// Connections not finished yet.
    active: usize,
    /// Whether any connection waits on a clock (then every wake-up tries to send).
    paced: bool,
    /// Connections waiting to reconnect.
    down: usize,
}

impl<'p> Worker<'p> {
    fn new(plan: &'p WorkerPlan<'p>, conns: &mut [Conn]) -> io::Result<Worker<'p>> {
        let poll = Poll::new()?;
        for (i, conn) in conns.iter_mut().enumerate() {
            // Edge-triggered: registered once, never re-armed per request.
            poll.registry().register(&mut conn.io, Token(i), Interest::READABLE | Interest::WRITABLE)?;
        }
        let paced = conns.iter().any(|c| c.pacer.next_due().is_some());
        let timer = if paced {
            let timer = Timer::new()?;
            timer.register(poll.registry(), TIMER)?;
            Some(timer)
        } else {
            None
        };
        Ok(Worker {
            plan,
            poll,
            timer,
            window: Window::new(plan.rows, plan.unit_row),
            interval: 0,
            next_flush: plan.measure_from + plan.interval,
            active: conns.len(),
            paced,
            down: 0,
        })
    }

    /// Hands the finished interval to the collector and starts the next one.
    fn flush_window(&mut self, tx: &Sender<Msg>) {
        let window = std::mem::replace(&mut self.window, Window::new(self.plan.rows, self.plan.unit_row));
        let _ = tx.send(Msg::Window { worker: self.plan.index, interval: self.interval, window });
        self.interval += 1;
        self.next_flush += self.plan.interval;
    }

    /// Reads and scans everything available, then refills the pipeline. Returns the clock.
    fn on_event(&mut self, conn: &mut Conn, mut now: Instant) -> Instant {
        loop {
            if conn.rend == conn.rbuf.len() {
                make_room(conn);
            }
            let space = conn.rbuf.len() - conn.rend;
            match conn.io.read(&mut conn.rbuf[conn.rend..]) {
                Ok(0) => {
                    self.fail(conn, ErrorKind::Io, now);
                    return now;
                }
                Ok(n) => {
                    conn.rend += n;
                    now = Instant::now();
                    if !self.consume(conn, now) {
                        return now;
                    }
                    // A short read drained the socket: the next arrival raises a new edge.
                    if n < space && conn.io.short_read_drains() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.fail(conn, ErrorKind::Io, now);
                    return now;
                }
            }
        }
        self.fill_and_flush(conn, now);
        now
    }

    /// Scans every complete reply in the read buffer. False if the connection failed.
    fn consume(&mut self, conn: &mut Conn, now: Instant) -> bool {
        loop {
            let scanned = match resp::scan(&conn.rbuf[conn.rstart..conn.rend]) {
                Ok(Some(s)) => s,
                Ok(None) => break,
                Err(_) => {
                    self.fail(conn, ErrorKind::Protocol, now);
                    return false;
                }
            };
            let at = conn.rstart;
            conn.rstart += scanned.len;
            conn.healthy = true;
            if scanned.class == ReplyClass::Push {
                continue;
            }
            let Some(req) = conn.inflight.pop_front() else {
                // A reply to nothing we sent: the stream cannot be trusted any more.
                self.fail(conn, ErrorKind::Protocol, now);
                return false;
            };
            if req.ends_unit {
                conn.units_in_flight -= 1;
            }
            if req.len > 0 {
                conn.journal.drain(..req.len as usize);
            }
            if req.intended < self.plan.measure_from {
                continue; // a warmup request: not counted
            }
            let response = now.saturating_duration_since(req.intended).as_nanos() as u64;
            let service = self.paced.then(|| now.saturating_duration_since(req.sent).as_nanos() as u64);
            let failed = matches!(scanned.class, ReplyClass::Error { .. });
            self.window.successes += u64::from(!failed);
            if let Some(row) = self.plan.unit_row {
                conn.unit_failed |= failed;
                if req.ends_unit {
                    let unit = &mut self.window.ops[row];
                    unit.count += 1;
                    unit.errors += u64::from(std::mem::take(&mut conn.unit_failed));
                    unit.record(response, service);
                }
            }
            let op = &mut self.window.ops[req.command];
            op.count += 1;
            op.bytes_in += scanned.len as u64;
            match scanned.class {
                ReplyClass::Value if conn.requests.workload().is_read(req.command) => op.hits += 1,
                ReplyClass::Nil if conn.requests.workload().is_read(req.command) => op.misses += 1,
                ReplyClass::Error { msg_start, msg_end } => {
                    op.errors += 1;
                    let msg = &conn.rbuf[at + msg_start..at + msg_end];
                    self.window.errors.add_server(resp::error_prefix(msg));
                }
                _ => {}
            }
            op.record(response, service);
        }
        if conn.rstart == conn.rend {
            conn.rstart = 0;
            conn.rend = 0;
        }
        true
    }

    /// Queues every request the pipeline and the pacer allow, then writes them in one call.
    fn fill_and_flush(&mut self, conn: &mut Conn, now: Instant) {
        while conn.units_in_flight < self.plan.pipeline && conn.remaining != Some(0) {
            let Some(intended) = conn.pacer.due(now) else {
                break;
            };
            let measured = intended >= self.plan.measure_from;
            let unit = conn.requests.pick_unit();
            let journal = self.plan.faults.retry > 0;
            for s in 0..conn.requests.steps(unit) {
                let step = conn.requests.step(unit, s);
                for _ in 0..step.repeat {
                    let before = conn.wbuf.len();
                    conn.requests.encode(step.command, &mut conn.wbuf);
                    let command = step.command;
                    let len = conn.wbuf.len() - before;
                    if journal {
                        conn.journal.extend(&conn.wbuf[before..]);
                    }
                    let len_kept = if journal { len as u32 } else { 0 };
                    conn.inflight.push_back(InFlight {
                        command,
                        intended,
                        sent: now,
                        ends_unit: false,
                        len: len_kept,
                        tries: 0,
                    });
                    if measured {
                        self.window.ops[command].bytes_out += len as u64;
                    }
                }
            }
            if let Some(last) = conn.inflight.back_mut() {
                last.ends_unit = true;
            }
            conn.units_in_flight += 1;
            if !measured {
                continue; // warmup: neither counted nor taken from the quota
            }
            if self.paced {
                self.window.send_lag_ns.saturating_record(now.saturating_duration_since(intended).as_nanos() as u64);
            }
            if let Some(left) = conn.remaining.as_mut() {
                *left -= 1;
            }
        }
        while conn.wpos < conn.wbuf.len() {
            match conn.io.write(&conn.wbuf[conn.wpos..]) {
                Ok(n) => conn.wpos += n,
                // The rest goes out on the next writable edge.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.fail(conn, ErrorKind::Io, now);
                    return;
                }
            }
        }
        if conn.wpos == conn.wbuf.len() {
            conn.wbuf.clear();
            conn.wpos = 0;
        }
        // TLS may hold encrypted bytes the socket did not take yet.
        if let Err(e) = conn.io.flush()
            && e.kind() != io::ErrorKind::WouldBlock
        {
            self.fail(conn, ErrorKind::Io, now);
            return;
        }
        if conn.remaining == Some(0) && conn.inflight.is_empty() {
            self.finish(conn);
        }
    }

    /// The connection failed: its requests in flight count as failed (or are kept to send
    /// again with `--retry`), and it waits to reconnect unless the run is ending.
    fn fail(&mut self, conn: &mut Conn, kind: ErrorKind, now: Instant) {
        let _ = self.poll.registry().deregister(&mut conn.io);
        let ending = self.plan.stop.load(Ordering::Relaxed) || self.plan.deadline.is_some_and(|d| now >= d);
        // A server that never made sense (garbage from the first reply) will not after a
        // reconnect either; one that went away or stalled may come back.
        let hopeless = kind == ErrorKind::Protocol && !conn.healthy;
        let give_up = ending || hopeless || self.plan.faults.max_reconnects == Some(0);
        let retry = if give_up { 0 } else { self.plan.faults.retry };
        let mut resend = VecDeque::new();
        let mut resend_bytes = Vec::new();
        let mut lost = 0u64;
        let mut offset = 0;
        for req in conn.inflight.drain(..) {
            let len = req.len as usize;
            if req.tries < retry {
                resend_bytes.extend(conn.journal.range(offset..offset + len));
                resend.push_back(InFlight { tries: req.tries + 1, ..req });
            } else {
                lost += 1;
                count_failed(&mut self.window, self.plan.unit_row, &req);
            }
            offset += len;
        }
        conn.journal.clear();
        // A lost connection counts once even with nothing in flight.
        self.window.errors.add(kind, lost.max(1));
        conn.rstart = 0;
        conn.rend = 0;
        conn.wbuf.clear();
        conn.wpos = 0;
        conn.units_in_flight = 0;
        conn.unit_failed = false;
        if give_up || (conn.remaining == Some(0) && resend.is_empty()) {
            self.finish(conn);
            return;
        }
        // Requests to send again go out first once the connection is back.
        conn.wbuf.extend_from_slice(&resend_bytes);
        conn.journal.extend(&resend_bytes);
        conn.units_in_flight = resend.iter().filter(|r| r.ends_unit).count();
        conn.inflight = resend;
        let backoff = self.plan.faults.reconnect_backoff;
        conn.down = Some(Down { since: now, retry_at: now + backoff, backoff, attempts: 0 });
        self.down += 1;
    }

    /// One reconnect attempt: log in again (blocking, bounded), register, and resume sending.
    fn reconnect(&mut self, conn: &mut Conn, token: Token, now: Instant) {
        let Some(mut down) = conn.down else { return };
        self.window.reconnect_attempts += 1;
        let opened = Session::open_within(self.plan.server, RECONNECT_TIMEOUT)
            .ok()
            .and_then(|session| session.into_transport().ok());
        let registered = opened.and_then(|mut io| {
            self.poll.registry().register(&mut io, token, Interest::READABLE | Interest::WRITABLE).ok().map(|()| io)
        });
        let after = Instant::now();
        match registered {
            Some(io) => {
                conn.io = io;
                conn.down = None;
                conn.healthy = false;
                self.down -= 1;
                self.window.down.push((down.since, after));
                // Sent again now: service time counts from here, response time still from the
                // intended send (the outage is in it).
                for req in conn.inflight.iter_mut() {
                    req.sent = after;
                }
                self.fill_and_flush(conn, after);
            }
            None => {
                down.attempts += 1;
                if self.plan.faults.max_reconnects.is_some_and(|max| down.attempts >= max) {
                    let pending: Vec<InFlight> = conn.inflight.drain(..).collect();
                    for req in &pending {
                        count_failed(&mut self.window, self.plan.unit_row, req);
                    }
                    self.window.errors.add(ErrorKind::Io, pending.len() as u64);
                    self.window.down.push((down.since, after));
                    conn.down = None;
                    self.down -= 1;
                    self.finish(conn);
                    return;
                }
                down.backoff = (down.backoff * 2).min(self.plan.faults.max_backoff());
                down.retry_at = now.max(after) + down.backoff;
                conn.down = Some(down);
            }
        }
    }

    fn finish(&mut self, conn: &mut Conn) {
        if !conn.finished {
            conn.finished = true;
            self.active -= 1;
        }
    }
}

/// Longest a reconnect attempt may block its worker (connect, TLS, login).
const RECONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// Counts a request that will get no reply against its command (and its unit).
fn count_failed(window: &mut Window, unit_row: Option<usize>, req: &InFlight) {
    window.ops[req.command].errors += 1;
    if let (Some(row), true) = (unit_row, req.ends_unit) {
        window.ops[row].errors += 1;
    }
}

/// Moves unscanned bytes to the front; doubles the buffer when one reply fills it.
fn make_room(conn: &mut Conn) {
    if conn.rstart > 0 {
        conn.rbuf.copy_within(conn.rstart..conn.rend, 0);
        conn.rend -= conn.rstart;
        conn.rstart = 0;
    }
    if conn.rend == conn.rbuf.len() {
        let len = conn.rbuf.len() * 2;
        conn.rbuf.resize(len, 0);
    }
}
