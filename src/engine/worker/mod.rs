//! One worker thread: an event loop that owns its connections, keeps each pipeline full as
//! its pacer allows, scans replies in place and records them into its own interval window.
//! Nothing here is shared with other threads except the channel that carries finished windows.
//!
//! A connection is one logical client with a link (a socket) per server node: one link to a
//! standalone server, one per node in cluster mode, where each request goes down the link of
//! its key's slot and redirects (`MOVED`, `ASK`) are followed. A failed link reconnects with
//! backoff while the run goes on.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

mod alarm;
mod conn;
mod due;
mod faults;
mod first_reply;
mod guard;
mod journal;
mod paced;
mod queue;
mod ramp;
mod read;
mod retry;
mod shown;
mod state;
mod voice;
mod write;

use alarm::Alarm;
use conn::UnitCursor;
pub use conn::{Conn, Link};
use due::DueQueue;
pub use ramp::join_delay;
pub use state::{FirstReply, WorkerPlan};
use state::{LINKS, Worker};
pub use voice::Said;

use super::router::Router;
use super::{Msg, ThreadCpu};
use crate::net::driver::stamp::Clock;
use crate::net::driver::{Driver, IoKind};
use crate::stats::{ErrorKind, Fronts, OpStats, Window};

/// Puts a worker's connections under a new I/O driver (before the run starts: registering
/// thousands of sockets, and arming their receives, takes milliseconds).
/// A worker's connections, its cluster map and its I/O driver (or why it could not start): what
/// the open phase hands the worker.
pub type Opened = (Vec<Conn>, Option<Router>, io::Result<Driver>);

pub fn drive_with(io: IoKind, paced: bool, stamps: bool, conns: &mut [Conn]) -> io::Result<Driver> {
    let sockets = conns.iter().map(|c| c.links.len()).sum();
    let mut driver = Driver::new(io, paced, sockets, stamps)?;
    for (c, conn) in conns.iter_mut().enumerate() {
        for (node, link) in conn.links.iter_mut().enumerate() {
            if let Some(link) = link.as_mut()
                && let Some(io) = link.io.take()
            {
                link.io = Some(driver.register(io, c * LINKS + node)?);
            }
        }
    }
    driver.submit()?;
    Ok(driver)
}

/// Runs the event loop until every connection is done, the deadline passes or `stop` is set.
pub fn run(plan: WorkerPlan<'_>, (mut conns, router, driver): Opened, tx: Sender<Msg>) {
    let mut worker = match driver.map(|driver| Worker::new(&plan, &mut conns, router, driver)) {
        Ok(w) => w,
        Err(e) => {
            // Registration failing is a broken event loop; report every connection as failed.
            let mut window = Window::new(plan.rows, plan.unit_row);
            window.connections_lost.add(ErrorKind::Io, conns.len() as u64);
            let cpu = ThreadCpu::default();
            let (ended, clients) = (Instant::now(), Vec::new());
            let failed = (Vec::new(), 0);
            let _ = tx.send(Msg::Done { worker: plan.index, interval: 0, window, ended, cpu, clients, failed });
            eprintln!("respbench: worker {} could not start its event loop: {e}", plan.index);
            return;
        }
    };
    let mut events = Vec::with_capacity(1024);
    let cpu_before = ThreadCpu::now();
    let mut now = Instant::now();
    let loop_start = now;
    // When the worker first saw a stop signal: replies in flight get a grace from then.
    let mut stopped: Option<Instant> = None;
    // This turn's due sends were held back after a stall (see below).
    let mut held_back = false;
    for (c, conn) in conns.iter_mut().enumerate() {
        worker.fill_and_flush(conn, c, now);
    }
    while worker.active > 0 {
        let wake = worker.wake_at(&conns, stopped, now);
        now = match worker.wait(wake, &mut events) {
            Ok(now) => now,
            Err(e) => {
                eprintln!("respbench: worker {} event loop failed: {e}", plan.index);
                break;
            }
        };
        restamp_sent(&worker.driver, &mut conns, &mut worker.window.send_lag_ns);
        let mut mid_turn = worker.paced;
        for event in &events {
            now = worker.on_link_event(&mut conns, event, now);
            // A turn of many events (a server's burst of replies over thousands of
            // connections) takes milliseconds: the sends that fall due meanwhile leave then,
            // not at its end.
            if mid_turn && worker.due.next().is_some_and(|due| due <= now) {
                mid_turn = !worker.send_due_mid_turn(&mut conns, now);
            }
        }
        if !worker.deferred.is_empty() {
            worker.flush_deferred(&mut conns);
        }
        if worker.paced {
            (now, held_back) = worker.send_due_unless_stalled(&mut conns, now, held_back);
        }
        worker.send_retries(&mut conns, now);
        worker.time_out(&mut conns, now);
        if worker.down > 0 {
            for (c, conn) in conns.iter_mut().enumerate().filter(|(_, c)| !c.finished) {
                for node in 0..conn.links.len() {
                    if conn.links[node].as_ref().and_then(|l| l.down).is_some_and(|d| d.retry_at <= now) {
                        worker.reconnect(conn, c, node, now);
                        worker.show(conn, c);
                        now = Instant::now();
                    }
                }
            }
        }
        // A redirect said the map moved on: reload it, at most every REFRESH_EVERY.
        if let Some(router) = worker.router.as_mut()
            && router.stale
            && now.saturating_duration_since(worker.refreshed) >= REFRESH_EVERY
        {
            router.refresh();
            now = Instant::now();
            worker.refreshed = now;
        }
        if plan.stop.load(Ordering::Relaxed) && worker.stop_drain(&mut conns, *stopped.get_or_insert(now), now) {
            break;
        }
        if let Some(deadline) = plan.deadline
            && now >= deadline
            && worker.drain(&mut conns, deadline, now)
        {
            break;
        }
        // Replies drained after the deadline belong to the last interval, not a sliver of a new one.
        while now >= worker.next_flush && plan.deadline.is_none_or(|d| worker.next_flush < d) {
            worker.flush_window(&tx);
            conns.iter_mut().flat_map(|c| c.links.iter_mut().flatten()).for_each(conn::shrink);
        }
        // After the flush: a connection joining on an interval's boundary counts in the next.
        if worker.next_join.is_some_and(|t| now >= t) {
            now = worker.admit_due(&mut conns, now);
        }
    }
    // Links still down when the run ends: their outage lasts to the end.
    for link in conns.iter_mut().flat_map(|c| c.links.iter_mut().flatten()) {
        if let Some(down) = link.down.take() {
            worker.window.down.push((down.since, now));
        }
    }
    worker.settle_window();
    let window = worker.fresh_window();
    let window = std::mem::replace(&mut worker.window, window);
    let cpu = ThreadCpu {
        late_wakeups: worker.wakeups.late,
        late_wakeup_max_ms: worker.wakeups.worst.as_secs_f64() * 1e3,
        ..ThreadCpu::now().since(&cpu_before, now.duration_since(loop_start))
    };
    let clients = conns.iter_mut().filter_map(|c| c.client_stats.take()).map(|s| *s).collect();
    let failed = (std::mem::take(&mut worker.failed), worker.failed_dropped);
    let (worker, interval) = (plan.index, worker.interval);
    let _ = tx.send(Msg::Done { worker, interval, window, ended: now, cpu, clients, failed });
}

/// Under io_uring a request leaves when the submit that carries its bytes hands them to the
/// kernel, at a wait: maybe turns after it was written into the ring, behind a send still in
/// flight (a stall meanwhile, the process stopped or waiting for a core, is the client's send
/// lag, not the wire's). Its send time moves there, before any reply to it is read. A walk of
/// each reported send's new requests only; epoll reports none (a write is its send).
fn restamp_sent(driver: &Driver, conns: &mut [Conn], lag: &mut Histogram<u64>) {
    for sent in driver.sent() {
        let link = conns.get_mut(sent.token / LINKS).and_then(|c| c.links.get_mut(sent.token % LINKS));
        if let Some(link) = link.and_then(Option::as_mut) {
            conn::restamp(link, sent.since, sent.at, lag);
        }
    }
}

impl Worker<'_> {
    /// Sends what is due, unless the worker stalled since its last event (the process stopped,
    /// or waited for a core): then it reads what arrived meanwhile first, or one read would
    /// take those replies with the next ones and give them the later arrival's kernel stamp.
    /// Once in a row, so a long turn never starves the sends. Returns the clock and whether
    /// this turn held back.
    fn send_due_unless_stalled(&mut self, conns: &mut [Conn], now: Instant, held_back: bool) -> (Instant, bool) {
        let fresh = Instant::now();
        if !held_back && fresh.saturating_duration_since(now) > STALL {
            return (fresh, true);
        }
        self.send_due(conns, now);
        (now, false)
    }

    /// When the loop must wake next: the interval's end, the deadline (or the drain after it),
    /// a connection joining, the grace after a stop, a paced send, a reconnect, a request timing out.
    fn wake_at(&self, conns: &[Conn], stopped: Option<Instant>, now: Instant) -> Instant {
        if !self.deferred.is_empty() {
            return now; // writes wait for the reads of a turn that does not wait
        }
        let mut wake = match self.plan.deadline {
            // Past the deadline the drain decides (replies in flight get a grace); no interval
            // ends there, the last one ended at the deadline.
            Some(deadline) if now >= deadline => guard::drain_wake(conns, deadline),
            Some(deadline) => self.next_flush.min(deadline),
            None => self.next_flush,
        };
        if let Some(join) = self.next_join {
            wake = wake.min(join);
        }
        if let Some(stopped) = stopped {
            wake = wake.min(stopped + guard::STOP_GRACE);
        }
        // Paced sends are batched: each timer wake-up costs more than a send, so a send may
        // leave up to one grain late, or at high rates at its tick (`due.rs`), which counts in
        // its response time and send lag. Only connections that can send are queued; closed
        // loop has none.
        if let Some(due) = self.due.next() {
            let at = self.batching.as_ref().map_or(due, |b| b.wake_for(due));
            wake = wake.min(at.max(now + TIMER_GRAIN));
        }
        if self.down > 0 {
            let links = conns.iter().filter(|c| !c.finished).flat_map(|c| c.links.iter().flatten());
            if let Some(retry_at) = links.filter_map(|l| l.down.map(|d| d.retry_at)).min() {
                wake = wake.min(retry_at);
            }
        }
        if let (false, Some(by)) = (self.answered, self.plan.first_reply.0) {
            wake = wake.min(by);
        }
        if let Some(due) = self.next_retry(conns) {
            wake = wake.min(due);
        }
        if let Some(timeout) = self.plan.faults.timeout {
            let links = conns.iter().filter(|c| !c.finished).flat_map(|c| c.links.iter().flatten());
            let oldest = links.filter(|l| l.io.is_some()).filter_map(|l| l.inflight.front()).map(|r| r.sent).min();
            if let Some(sent) = oldest {
                wake = wake.min(sent + timeout);
            }
        }
        wake
    }

    /// Requests in flight past `--request-timeout`: their link fails (and, in a counted run
    /// without `--retry`, the connection gives up).
    fn time_out(&mut self, conns: &mut [Conn], now: Instant) {
        if !self.answered {
            self.await_first_reply(conns, now);
        }
        if let Some(timeout) = self.plan.faults.timeout {
            for (c, conn) in conns.iter_mut().enumerate().filter(|(_, c)| !c.finished) {
                for node in 0..conn.links.len() {
                    let late = conn.links[node].as_ref().is_some_and(|l| {
                        l.io.is_some()
                            && l.inflight.front().is_some_and(|r| now.saturating_duration_since(r.sent) >= timeout)
                    });
                    if late {
                        self.fail(conn, node, ErrorKind::Timeout, now);
                        if self.plan.deadline.is_none() && self.plan.faults.retry == 0 && !conn.finished {
                            if self.plan.faults.voice == crate::config::Voice::Respbench {
                                voice::gave_up(self.plan.said, &self.plan.server.target, timeout);
                            }
                            self.abandon(conn, ErrorKind::Timeout);
                        }
                        self.changed(conn, c);
                    }
                }
            }
        }
    }
}

/// Shortest sleep between paced sends of one worker thread.
pub const TIMER_GRAIN: Duration = Duration::from_micros(20);

/// Shortest time between two reloads of the cluster map.
const REFRESH_EVERY: Duration = Duration::from_millis(100);

/// A gap this long between a paced worker's last event and its sends is a stall, not work.
const STALL: Duration = Duration::from_millis(1);

impl<'p> Worker<'p> {
    fn new(plan: &'p WorkerPlan<'p>, conns: &mut [Conn], router: Option<Router>, driver: Driver) -> Worker<'p> {
        let paced = conns.iter().any(|c| c.pacer.next_due().is_some());
        let batching = due::Batching::for_rate(conns.iter().map(|c| c.pacer.per_sec()).sum(), Instant::now());
        let faults = &plan.faults;
        let journal = faults.retry > 0 || faults.retry_errors || faults.failed_keys || router.is_some();
        let held = conns.iter().filter(|c| c.join_at.is_some()).count();
        let sole = conns.first().and_then(|c| c.requests.sole_command());
        let sole = sole.filter(|&f| conns.iter().all(|c| c.requests.sole_command() == Some(f)));
        let fold = sole.filter(|_| router.is_some() && plan.unit_row.is_none());
        for conn in conns.iter_mut() {
            conn.per_node = router.is_some();
        }
        let mut worker = Worker {
            plan,
            driver,
            window: Window::new(plan.rows, plan.unit_row),
            fronts: Fronts::new(plan.rows),
            interval: 0,
            next_flush: plan.measure_from + plan.interval,
            active: conns.len(),
            paced,
            due: DueQueue::new(if paced { conns.len() } else { 0 }),
            batching,
            down: 0,
            router,
            journal,
            fold,
            refreshed: Instant::now(),
            next_join: conns.iter().filter_map(|c| c.join_at).min(),
            live: conns.len() - held,
            clock: plan.stamps.then(Clock::measure),
            rbuf: vec![0; conn::READ_BUFFER],
            deferred: Vec::new(),
            not_yet: Vec::new(),
            alarm: (paced && batching.is_none()).then(Alarm::new),
            wakeups: alarm::Wakeups::default(),
            answered: false,
            retrying: 0,
            failed: Vec::new(),
            failed_dropped: 0,
            shown: None,
            node_name: String::new(),
        };
        worker.show_all(conns);
        worker.window = worker.fresh_window();
        worker
    }

    /// An empty window, with a row per known node in cluster mode.
    fn fresh_window(&mut self) -> Window {
        // One spare is kept, any more let go: windows made while the collector was behind
        // (a busy machine) do not stay in circulation for the rest of the run.
        let mut window = match self.plan.spares.try_iter().reduce(|keep, _more| keep) {
            Some(spare) => spare,
            None => Window::with_parts(self.plan.rows, self.plan.unit_row, self.clock.is_some()),
        };
        window.active_connections = self.live as u64;
        if let Some(clock) = self.clock.as_mut() {
            *clock = Clock::measure();
            window.clock_bound_ns = clock.bound_ns;
            window.stamps_refused = self.driver.stamps_refused().map(ToString::to_string);
        }
        if let Some(router) = &self.router {
            // A recycled window's rows are kept (emptied by the collector) for the nodes that
            // are still where they were: a node's row is made once, not once per interval.
            window.nodes.truncate(router.nodes.len());
            for (i, node) in router.nodes.iter().enumerate() {
                use std::fmt::Write as _;
                self.node_name.clear();
                let _ = write!(self.node_name, "{node}");
                match window.nodes.get_mut(i) {
                    Some((name, _)) if *name == self.node_name => {}
                    Some(row) => *row = (self.node_name.clone(), OpStats::default()),
                    None => window.nodes.push((self.node_name.clone(), OpStats::default())),
                }
            }
        }
        window
    }

    /// Hands the finished interval to the collector and starts the next one.
    fn flush_window(&mut self, tx: &Sender<Msg>) {
        self.settle_window();
        let fresh = self.fresh_window();
        let window = std::mem::replace(&mut self.window, fresh);
        let _ = tx.send(Msg::Window { worker: self.plan.index, interval: self.interval, window });
        self.interval += 1;
        self.next_flush += self.plan.interval;
    }

    /// Brings the window's histograms up to date: the response times recorded in the fronts,
    /// then the nodes' latencies added to the sole command's row ([`fold`](Worker::fold)): the
    /// window then holds every figure, as when each reply was recorded in both rows.
    fn settle_window(&mut self) {
        self.fronts.drain_into(&mut self.window);
        let Some(f) = self.fold else { return };
        let Window { ops, nodes, .. } = &mut self.window;
        let Some(op) = ops.get_mut(f) else { return };
        for (_, node) in nodes.iter() {
            // All histograms share the same bounds, so adding cannot fail.
            op.latency_ns.add(&node.latency_ns).expect("same bounds");
            if !node.service_ns.is_empty() {
                op.service_ns.add(&node.service_ns).expect("same bounds");
            }
        }
    }

    /// Queues every unit the pipeline and the pacer allow, then writes each link's queue.
    fn fill_and_flush(&mut self, conn: &mut Conn, c: usize, now: Instant) {
        if conn.per_node {
            self.release_held(conn, now);
        }
        let retry_cap = self.retry_cap();
        while conn.room(conn.pipeline) && !conn.blocked() && conn.retries.waiting.len() < retry_cap {
            if let Some(cursor) = conn.unit_sending.take() {
                self.send_unit_step(conn, c, cursor, now);
                continue;
            }
            if conn.remaining == Some(0) {
                break;
            }
            let Some(intended) = conn.pacer.due(now) else {
                break;
            };
            let measured = intended >= self.plan.measure_from;
            // When it could have gone: its time, or later if it waited for a pipeline slot.
            let queued = conn.slot_freed.map_or(intended, |freed| intended.max(freed));
            let unit = conn.requests.pick_unit();
            // Cluster mode: one primary's hash tag for the whole unit, so `{tag}` keys stay
            // together (a client bound to one primary keeps its own); a transaction's unit goes
            // whole to its key's primary. A unit whose every command goes where its key's
            // digits say needs none.
            let tag_node = conn.home.or_else(|| {
                let router = self.router.as_mut()?;
                let routed = conn.requests.unit_routed(unit);
                match conn.requests.unit_key_name() {
                    Some(key) => {
                        router.node_for(crate::net::cluster::slot(key), false).or_else(|| router.next_primary())
                    }
                    None if routed => None,
                    None => router.next_primary(),
                }
            });
            if conn.requests.workload().transaction() {
                let cursor = UnitCursor { unit, step: 0, sent: 0, node: tag_node, intended, queued, measured };
                self.send_unit_step(conn, c, cursor, now);
                if let (true, Some(left)) = (measured, conn.remaining.as_mut()) {
                    *left -= 1;
                }
                continue;
            }
            let mut last = None;
            for s in 0..conn.requests.steps(unit) {
                let step = conn.requests.step(unit, s);
                for _ in 0..step.repeat {
                    let command = conn.requests.resolve(step.command);
                    last = Some(self.queue(conn, c, command, (tag_node, intended, queued), now));
                }
            }
            if let Some((node, held)) = last
                && let Some(link) = conn.links[node].as_mut()
            {
                // Its send lag is recorded when a write or submit carries it (`conn::restamp`).
                link.end_unit(held, self.paced && measured);
            }
            conn.units_in_flight += 1;
            if !measured {
                continue; // warmup: neither counted nor taken from the quota
            }
            if let Some(row) = self.plan.unit_row {
                self.window.ops[row].sent += 1;
            }
            if let Some(left) = conn.remaining.as_mut() {
                *left -= 1;
            }
        }
        // The writes' time: one clock read for the connection's links, just before them
        // (io_uring's sends leave at the submit that carries them: `restamp_sent`).
        let at = if self.driver.sends_at_write() { Instant::now() } else { now };
        if self.stalled_with_replies_due(conn, now, at) {
            self.deferred.push(c);
        } else {
            self.flush_links(conn, at);
        }
        if conn.remaining == Some(0) && conn.idle() && conn.unit_sending.is_none() {
            self.finish(conn);
        }
        self.changed(conn, c);
    }

    /// Sends the next command of a `--transaction` unit, in one pipeline slot of its own, and
    /// keeps the unit's place while commands are left. The unit's first command keeps the
    /// schedule's times; each later one, sent when a slot freed, is timed from then.
    fn send_unit_step(&mut self, conn: &mut Conn, c: usize, cursor: UnitCursor, now: Instant) {
        let first = cursor.step == 0 && cursor.sent == 0;
        let (intended, queued) = if first || !cursor.measured { (cursor.intended, cursor.queued) } else { (now, now) };
        let step = conn.requests.step(cursor.unit, cursor.step);
        let command = conn.requests.resolve(step.command);
        let (node, held) = self.queue(conn, c, command, (cursor.node, intended, queued), now);
        if let Some(link) = conn.links[node].as_mut() {
            link.end_unit(held, first && self.paced && cursor.measured);
        }
        conn.units_in_flight += 1;
        let mut next = UnitCursor { sent: cursor.sent + 1, ..cursor };
        if next.sent >= step.repeat {
            (next.step, next.sent) = (next.step + 1, 0);
        }
        if next.step < conn.requests.steps(cursor.unit) {
            conn.unit_sending = Some(next);
        }
    }

    /// Whether the worker stalled (the process stopped, or waited for a core) between the
    /// turn's clock read `now` and its writes at `at`, with replies it has not read yet maybe
    /// waiting: kernel timestamps on, the writes wait for the next turn's reads, else one read
    /// would take the replies that arrived in the stall with the replies to these writes and
    /// give them all the later arrival's stamp.
    fn stalled_with_replies_due(&self, conn: &Conn, now: Instant, at: Instant) -> bool {
        self.clock.is_some()
            && at.saturating_duration_since(now) > STALL
            && conn.links.iter().flatten().any(|l| l.io.is_some() && l.inflight.len() > l.unwritten)
    }

    /// Writes what the connections deferred at a stall have queued, after the reads.
    fn flush_deferred(&mut self, conns: &mut [Conn]) {
        let mut deferred = std::mem::take(&mut self.deferred);
        for &c in &deferred {
            self.flush_links(&mut conns[c], Instant::now());
        }
        deferred.clear();
        self.deferred = deferred;
    }

    fn finish(&mut self, conn: &mut Conn) {
        if !conn.finished {
            conn.finished = true;
            self.active -= 1;
            if conn.join_at.is_none() {
                self.live -= 1;
            }
        }
    }
}

impl Worker<'_> {
    /// Queues a paced connection at its next send if it can send then: a slot free in its
    /// pipeline, quota left, connected and joined. Otherwise it stays out until one of those
    /// changes, and whatever changes it (a reply, a reconnect, joining) calls this again.
    #[inline(always)]
    pub(super) fn requeue(&mut self, conn: &Conn, c: usize) {
        // Closed loop pays this one test.
        if self.paced {
            self.requeue_paced(conn, c);
        }
    }

    fn requeue_paced(&mut self, conn: &Conn, c: usize) {
        if conn.finished || !conn.room(conn.pipeline) || conn.remaining == Some(0) || conn.blocked() {
            return;
        }
        if let Some(at) = conn.pacer.next_due() {
            self.due.push(c, at);
        }
    }
}
