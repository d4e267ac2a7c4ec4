//! When things go wrong or move: a link that fails (its requests counted or kept to resend),
//! reconnects with backoff, retires when its node leaves the cluster map, or gives up; and the
//! cluster redirects (`-MOVED`, `-ASK`) that send a request on to another node.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::conn::{Conn, Dialing, Down, InFlight, Link};
use super::state::{LINKS, Worker, WorkerPlan};
use super::voice::{self, Lost};
use crate::config::ServerOptions;
use crate::engine::router;
use crate::net::{ConnectError, Dial, Login, Progress, Session, Transport, cluster};
use crate::resp;
use crate::stats::{ErrorKind, OpStats, Window};

/// Redirects one request may follow before it counts as failed.
pub(super) const MAX_REDIRECTS: u16 = 16;

/// Longest a reconnect attempt may block its worker (connect, TLS, login).
const RECONNECT_TIMEOUT: Duration = Duration::from_millis(500);

impl Worker<'_> {
    /// Sends a redirected request to the node named (`ASKING` first after `-ASK`).
    pub(super) fn redirect(
        &mut self,
        conn: &mut Conn,
        c: usize,
        (slot, to, ask): (u16, &cluster::NodeAddr, bool),
        bytes: Vec<u8>,
        req: InFlight,
        now: Instant,
    ) {
        self.answered();
        let router = self.router.as_mut().expect("redirects are followed in cluster mode");
        let node = if ask {
            self.window.asked += 1;
            router.node_id(to)
        } else {
            self.window.moved += 1;
            router.moved(slot, to)
        };
        self.ensure_link(conn, c, node, now);
        let link = conn.links[node].as_mut().expect("ensure_link made it");
        if ask {
            let mut asking = Vec::new();
            resp::encode_command(&mut asking, &[b"ASKING"]);
            link.push_sendable(&asking);
            link.journal.extend(&asking);
            // Timed as the request it precedes: the link's requests not sent yet are the last
            // ones, all later than its last send (`conn::restamp`).
            let len = asking.len() as u32;
            link.inflight.push_back(InFlight { ends_unit: false, len, asking: true, sent: now, ..req });
            link.unwritten += 1;
        }
        link.push_sendable(&bytes);
        link.journal.extend(&bytes);
        link.units += usize::from(req.ends_unit);
        link.inflight.push_back(InFlight { sent: now, queued: now, tries: req.tries + 1, ..req });
        link.unwritten += 1;
    }

    /// Makes sure connection `conn` has a link to `node` (cluster mode): logs in (blocking,
    /// bounded) the first time, or leaves a link that waits to reconnect.
    pub(super) fn ensure_link(&mut self, conn: &mut Conn, c: usize, node: usize, now: Instant) {
        if conn.links.len() <= node {
            conn.links.resize_with(node + 1, || None);
        }
        if conn.links[node].is_some() {
            return;
        }
        let backoff = self.plan.faults.reconnect_backoff;
        let link = Link::waiting(
            self.plan.pipeline,
            self.plan.max_request,
            Down { since: now, retry_at: now, backoff, attempts: 0 },
        );
        self.down += 1;
        conn.links[node] = Some(link);
        if let Some(window_nodes) = self.router.as_ref().map(|r| r.nodes.len()) {
            while self.window.nodes.len() < window_nodes {
                let name = self.router.as_ref().map(|r| r.nodes[self.window.nodes.len()].to_string());
                self.window.nodes.push((name.unwrap_or_default(), OpStats::default()));
            }
        }
        self.connect_link(conn, c, node, now);
    }

    /// A link failed: its requests in flight count as failed (or are kept to send again with
    /// `--retry`), and it waits to reconnect unless the run is ending.
    pub(super) fn fail(&mut self, conn: &mut Conn, node: usize, kind: ErrorKind, now: Instant) {
        self.fail_because(conn, node, kind, Lost::Other, now);
    }

    /// [`fail`](Self::fail), knowing how the link went (said in memtier's words).
    pub(super) fn fail_because(&mut self, conn: &mut Conn, node: usize, kind: ErrorKind, how: Lost<'_>, now: Instant) {
        let Some(link) = conn.links[node].as_mut() else { return };
        if let Some(mut io) = link.io.take() {
            self.driver.deregister(&mut io);
        }
        let ending = self.plan.stop.load(Ordering::Relaxed) || self.plan.deadline.is_some_and(|d| now >= d);
        // A server that never made sense (garbage from the first reply) will not after a
        // reconnect either; one that went away or stalled may come back.
        let protocol = kind == ErrorKind::Protocol;
        let hopeless = protocol && !link.healthy;
        let give_up = ending || hopeless || self.plan.faults.max_reconnects == Some(0);
        let retry = if give_up { 0 } else { self.plan.faults.retry.min(u32::from(u16::MAX)) as u16 };
        let mut resend = VecDeque::new();
        let mut resend_bytes = Vec::new();
        let mut lost = 0u64;
        let mut offset = 0;
        let status = kind.to_string();
        for req in link.inflight.drain(..) {
            let len = req.len as usize;
            if req.tries < retry {
                resend_bytes.extend_from_slice(link.journal.range(offset..offset + len));
                resend.push_back(InFlight { tries: req.tries + 1, ..req });
                self.window.retries += 1;
            } else if !req.asking {
                // (An ASKING is not a request of the run: it fails with the one it preceded.)
                lost += u64::from(count_failed(&mut self.window, self.plan, &req));
                if self.plan.faults.failed_keys {
                    let bytes = link.journal.range(offset..offset + len).to_vec();
                    self.keep_failed(&req, &bytes, &status);
                }
                if req.ends_unit {
                    conn.units_in_flight -= 1;
                }
            }
            offset += len;
        }
        link.journal.clear();
        let why = kind.to_string();
        // The link counts once as a connection lost, and each request it took as failed: one
        // unit per figure.
        self.window.connections_lost.add(kind.clone(), 1);
        self.window.connections_lost.keep_first_loss(how.loss());
        if lost > 0 {
            self.window.errors.add(kind, lost);
        }
        (link.rstart, link.rend, link.large) = (0, 0, None);
        link.drop_sendable();
        conn.unit_failed = false;
        // The server forgot the connection's WATCH and MULTI: the unit's rest would make no sense.
        conn.unit_sending = None;
        if let Some(router) = self.router.as_mut() {
            router.stale = true;
        }
        let faults = &self.plan.faults;
        if give_up || (conn.remaining == Some(0) && resend.is_empty() && conn.idle()) {
            if !ending && !protocol {
                voice::lost(faults.voice, &self.target_of(node), &why, how, None, faults.max_reconnects);
            }
            self.abandon(conn, ErrorKind::Io);
            return;
        }
        // Requests to send again go out first once the link is back.
        let link = conn.links[node].as_mut().expect("the link that failed");
        link.push_sendable(&resend_bytes);
        link.journal.extend(&resend_bytes);
        link.units = resend.iter().filter(|r| r.ends_unit).count();
        link.inflight = resend;
        link.unwritten = link.inflight.len();
        let backoff = self.plan.faults.reconnect_backoff;
        link.down = Some(Down { since: now, retry_at: now + backoff, backoff, attempts: 0 });
        self.down += 1;
        let faults = &self.plan.faults;
        voice::lost(faults.voice, &self.target_of(node), &why, how, Some(backoff), faults.max_reconnects);
    }

    /// The address of `node`, for messages.
    fn target_of(&self, node: usize) -> String {
        match &self.router {
            Some(router) => router.options_for(node).target.to_string(),
            None => self.plan.server.target.to_string(),
        }
    }

    /// `--reconnect-every`: after its quota of replies, a link with nothing in flight is closed
    /// and opened again at once (not an outage, not an error).
    pub(super) fn recycle(&mut self, conn: &mut Conn, c: usize, node: usize, now: Instant) {
        let Some(link) = conn.links[node].as_mut() else { return };
        if !link.inflight.is_empty() {
            return;
        }
        if let Some(mut io) = link.io.take() {
            self.driver.deregister(&mut io);
        }
        (link.rstart, link.rend, link.large) = (0, 0, None);
        link.drop_sendable();
        link.journal.clear();
        // retry_at == since: connecting it again is not counted as an outage.
        link.down = Some(Down { since: now, retry_at: now, backoff: self.plan.faults.reconnect_backoff, attempts: 0 });
        self.down += 1;
        crate::net::debug(self.plan.server.session.debug, || {
            format!("reconnecting to {} (--reconnect-every)", self.target_of(node))
        });
        self.connect_link(conn, c, node, now);
    }

    /// One reconnect attempt of a link: log in again (blocking, bounded), register, resume.
    /// In cluster mode the map is reloaded first: a link whose node left it is retired and
    /// its requests fail over to the slots' new owners on the next sends.
    pub(super) fn reconnect(&mut self, conn: &mut Conn, c: usize, node: usize, now: Instant) {
        if let Some(router) = self.router.as_mut() {
            if router.stale {
                router.refresh();
            }
            if !router.in_map(node) {
                self.retire(conn, c, node, now);
                self.fill_and_flush(conn, c, Instant::now());
                return;
            }
        }
        self.connect_link(conn, c, node, now);
        if conn.links[node].as_ref().is_some_and(|l| l.io.is_some()) {
            self.fill_and_flush(conn, c, Instant::now());
        }
    }

    /// Starts an attempt to log a down link in, in the event loop (`net::Dial`): the other
    /// connections of the worker go on meanwhile. Called again at the attempt's deadline, it
    /// counts the attempt as failed. What only a blocking login can do (MPTCP, memcached
    /// SASL) is done blocking, bounded by the connect timeout.
    pub(super) fn connect_link(&mut self, conn: &mut Conn, c: usize, node: usize, now: Instant) {
        let Some(link) = conn.links[node].as_mut() else { return };
        let Some(down) = link.down else { return };
        let opts = match &self.router {
            Some(router) => router.options_for(node),
            None => self.plan.server.clone(),
        };
        if let Some(mut dialing) = link.dialing.take() {
            self.driver.deregister_dial(dialing.dial.source());
            crate::net::debug(self.plan.server.session.debug, || {
                format!("reconnecting to {}: no login within the connect timeout", opts.target)
            });
            self.attempt_failed(conn, node, down, &opts.target.to_string(), now);
            return;
        }
        // A link that was out (not a first connect or `--reconnect-every`): its downtime is an outage.
        let outage = down.attempts > 0 || !link.inflight.is_empty() || down.retry_at > down.since;
        self.window.reconnect_attempts += 1;
        let replica = self.router.as_ref().is_some_and(|r| r.is_replica(node));
        let timeout = opts.connect_timeout.unwrap_or(RECONNECT_TIMEOUT);
        let Some(login) = Login::of(&opts, replica) else {
            return self.connect_blocking(conn, c, node, (&opts, replica, timeout), (down, outage), now);
        };
        let token = c * LINKS + node;
        let started = Dial::start(&opts, None, login, now + timeout).and_then(|mut dial| {
            let registered = self.driver.register_dial(dial.source(), token);
            registered.map(|()| dial).map_err(|source| ConnectError::Io { target: opts.target.to_string(), source })
        });
        let link = conn.links[node].as_mut().expect("checked above");
        match started {
            Ok(dial) => {
                link.down = Some(Down { retry_at: dial.deadline, ..down });
                link.dialing = Some(Box::new(Dialing { dial, outage }));
            }
            Err(e) => {
                crate::net::debug(self.plan.server.session.debug, || format!("reconnecting: {e}"));
                self.attempt_failed(conn, node, down, &opts.target.to_string(), now);
            }
        }
    }

    /// A readiness event on a link that is dialing: moves the attempt on.
    pub(super) fn on_dial(&mut self, conn: &mut Conn, c: usize, node: usize, now: Instant) {
        let Some(link) = conn.links[node].as_mut() else { return };
        let (Some(dialing), Some(down)) = (link.dialing.as_mut(), link.down) else { return };
        match dialing.dial.advance() {
            Progress::Pending => {}
            Progress::Ready => {
                let Dialing { dial, outage } = *link.dialing.take().expect("dialing");
                let (io, rest) = dial.finish();
                let target = self.target_of(node);
                let Ok(io) = self.driver.dialed(io, c * LINKS + node) else {
                    return self.attempt_failed(conn, node, down, &target, now);
                };
                self.link_up(conn, (c, node), io, (down, outage, &target), Instant::now());
                if let Some(link) = conn.links[node].as_mut() {
                    link.prefill(&rest);
                }
                self.fill_and_flush(conn, c, Instant::now());
            }
            Progress::Failed(e) => {
                let mut dialing = link.dialing.take().expect("dialing");
                self.driver.deregister_dial(dialing.dial.source());
                crate::net::debug(self.plan.server.session.debug, || format!("reconnecting: {e}"));
                let target = self.target_of(node);
                self.attempt_failed(conn, node, down, &target, now);
            }
        }
    }

    /// The blocking reconnect, for logins the event loop cannot drive.
    fn connect_blocking(
        &mut self,
        conn: &mut Conn,
        c: usize,
        node: usize,
        (opts, replica, timeout): (&ServerOptions, bool, Duration),
        (down, outage): (Down, bool),
        now: Instant,
    ) {
        let opened = Session::open_within(opts, timeout).ok().and_then(|mut session| {
            if replica {
                session.call_checked(&[b"READONLY"]).ok()?;
            }
            session.into_transport().ok()
        });
        let registered = opened.and_then(|io| self.driver.register(io, c * LINKS + node).ok());
        let target = opts.target.to_string();
        match registered {
            Some(io) => self.link_up(conn, (c, node), io, (down, outage, &target), Instant::now()),
            None => self.attempt_failed(conn, node, down, &target, now),
        }
    }

    /// A link is logged in again: it resumes, what waited on it goes out first.
    fn link_up(
        &mut self,
        conn: &mut Conn,
        (c, node): (usize, usize),
        io: Transport,
        (down, outage, target): (Down, bool, &str),
        after: Instant,
    ) {
        self.show_socket(c, node, &io);
        let link = conn.links[node].as_mut().expect("the link reconnected");
        link.io = Some(io);
        link.down = None;
        link.healthy = false;
        link.served = 0;
        self.down -= 1;
        // Connecting a new link is not an outage; reconnecting one is.
        if outage {
            self.window.down.push((down.since, after));
            voice::reconnected(self.plan.faults.voice, target, down.attempts);
        }
        // Sent again now: service time counts from here, response time still from the
        // intended send (the outage is in it).
        for req in link.inflight.iter_mut() {
            req.sent = after;
        }
        self.flush_link(conn, node, after);
    }

    /// An attempt failed: back off (or give up after `--max-reconnects`).
    fn attempt_failed(&mut self, conn: &mut Conn, node: usize, mut down: Down, target: &str, now: Instant) {
        let after = Instant::now();
        down.attempts += 1;
        if self.plan.faults.max_reconnects.is_some_and(|max| down.attempts >= max) {
            voice::attempt_failed(self.plan.faults.voice, target, down.attempts, None);
            self.window.down.push((down.since, after));
            self.abandon(conn, ErrorKind::Io);
            return;
        }
        if let Some(router) = self.router.as_mut() {
            router.stale = true;
        }
        down.backoff = down.backoff.mul_f64(self.plan.faults.backoff_factor).min(self.plan.faults.max_backoff);
        down.retry_at = now.max(after) + down.backoff;
        voice::attempt_failed(self.plan.faults.voice, target, down.attempts, Some(down.backoff));
        crate::net::debug(self.plan.server.session.debug, || {
            format!("reconnect attempt {} to {target} failed; next in {:?}", down.attempts, down.backoff)
        });
        if let Some(link) = conn.links[node].as_mut() {
            link.down = Some(down);
        }
    }

    /// A link whose node left the cluster map: what waited on it fails, and it is dropped.
    pub(super) fn retire(&mut self, conn: &mut Conn, c: usize, node: usize, now: Instant) {
        let Some(mut link) = conn.links[node].take() else { return };
        self.show_gone(c, node);
        if let Some(down) = link.down.take() {
            self.down -= 1;
            self.window.down.push((down.since, now));
        }
        if let Some(mut dialing) = link.dialing.take() {
            self.driver.deregister_dial(dialing.dial.source());
        }
        if let Some(mut io) = link.io.take() {
            self.driver.deregister(&mut io);
        }
        let pending: Vec<InFlight> = link.inflight.drain(..).collect();
        let mut lost = 0;
        let mut offset = 0;
        for req in &pending {
            let len = req.len as usize;
            offset += len;
            if req.asking {
                continue;
            }
            lost += u64::from(count_failed(&mut self.window, self.plan, req));
            if self.plan.faults.failed_keys {
                let bytes = link.journal.range(offset - len..offset).to_vec();
                self.keep_failed(req, &bytes, "node gone");
            }
            if req.ends_unit {
                conn.units_in_flight -= 1;
            }
        }
        if lost > 0 {
            self.window.errors.add(ErrorKind::Io, lost);
        }
        self.reroute_held(conn, c, link, now);
    }

    /// Gives a connection up: whatever it still has in flight fails, and it leaves the run.
    pub(super) fn abandon(&mut self, conn: &mut Conn, kind: ErrorKind) {
        conn.drop_held();
        let status = kind.to_string();
        self.fail_waiting(conn, &status);
        let mut lost = 0;
        for link in conn.links.iter_mut().flatten() {
            if let Some(mut io) = link.io.take() {
                self.driver.deregister(&mut io);
            }
            if link.down.take().is_some() {
                self.down -= 1;
            }
            if let Some(mut dialing) = link.dialing.take() {
                self.driver.deregister_dial(dialing.dial.source());
            }
            let mut offset = 0;
            for req in link.inflight.drain(..) {
                let len = req.len as usize;
                offset += len;
                if req.asking {
                    continue;
                }
                lost += u64::from(count_failed(&mut self.window, self.plan, &req));
                if self.plan.faults.failed_keys {
                    let bytes = link.journal.range(offset - len..offset).to_vec();
                    self.keep_failed(&req, &bytes, &status);
                }
            }
            link.journal.clear();
            link.units = 0;
        }
        if lost > 0 {
            self.window.errors.add(kind, lost);
        }
        conn.units_in_flight = 0;
        self.finish(conn);
    }
}

/// `-MOVED slot host:port` or `-ASK slot host:port`: where to send the request instead.
pub(super) fn redirect_of(msg: &[u8]) -> Option<(u16, cluster::NodeAddr, bool)> {
    let ask = msg.starts_with(b"ASK ");
    if !ask && !msg.starts_with(b"MOVED ") {
        return None;
    }
    let (slot, to) = router::redirect(msg)?;
    Some((slot, to, ask))
}

/// Counts a request that will get no reply against its command (and its unit); true when it
/// counted (a warmup request is not: its reply would not have counted either).
pub(super) fn count_failed(window: &mut Window, plan: &WorkerPlan<'_>, req: &InFlight) -> bool {
    if req.intended < plan.measure_from {
        return false;
    }
    let op = &mut window.ops[req.command()];
    op.errors += 1;
    op.failed += 1;
    if let (Some(row), true) = (plan.unit_row, req.ends_unit) {
        window.ops[row].errors += 1;
        window.ops[row].failed += 1;
    }
    true
}
