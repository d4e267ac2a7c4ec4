//! The staircase ramp (`--connections-start`): which step each connection joins the run at,
//! and the worker's side of it: connections held back (not even connected) until their step,
//! then connected and started, and the count of connections taking part that every interval
//! reports (`Window::active_connections`).

use std::time::{Duration, Instant};

use super::conn::{Conn, Down, Link};
use super::state::{LINKS, Worker};
use crate::config::Config;
use crate::net::Session;
use crate::stats::ErrorKind;

/// Longest the connect of a joining connection may block its worker (connect, TLS, login).
const JOIN_TIMEOUT: Duration = Duration::from_millis(500);

/// How long after the start of the load connection `index` joins (zero without a ramp).
/// Connections join in turn over the `threads` worker threads (the first of each thread, then
/// the second of each, ...), so every thread's share grows alike.
pub fn join_delay(config: &Config, threads: usize, index: usize) -> Duration {
    let Some(ramp) = config.ramp else { return Duration::ZERO };
    let order = join_order(config.connections, threads, index);
    if order < ramp.start {
        return Duration::ZERO;
    }
    let step = 1 + (order - ramp.start) / ramp.step.max(1);
    ramp.every.saturating_mul(u32::try_from(step).unwrap_or(u32::MAX))
}

/// Connection `index`'s place in the joining order, when thread `t` owns connections
/// `t * connections / threads .. (t + 1) * connections / threads`.
fn join_order(connections: usize, threads: usize, index: usize) -> usize {
    let threads = threads.clamp(1, connections.max(1));
    let first = |t: usize| t * connections / threads;
    let size = |t: usize| first(t + 1) - first(t);
    let thread = (0..threads).find(|&t| index < first(t + 1)).unwrap_or(threads - 1);
    let position = index - first(thread);
    // Everyone's earlier positions, then the same position on the threads before this one.
    (0..threads).map(|t| size(t).min(position)).sum::<usize>() + (0..thread).filter(|&t| size(t) > position).count()
}

impl Worker<'_> {
    /// Connects and starts every held-back connection whose step has come. Returns the clock.
    pub(super) fn admit_due(&mut self, conns: &mut [Conn], mut now: Instant) -> Instant {
        for (c, conn) in conns.iter_mut().enumerate() {
            if conn.finished || conn.join_at.is_none_or(|t| t > now) {
                continue;
            }
            conn.join_at = None;
            self.live += 1;
            self.window.active_connections = self.window.active_connections.max(self.live as u64);
            // A role starting later was connected before the run; a staircase's step connects now.
            if conn.links.is_empty() {
                self.connect_joining(conn, c, now);
                now = Instant::now();
            }
            self.fill_and_flush(conn, c, now);
        }
        self.next_join = conns.iter().filter(|c| !c.finished).filter_map(|c| c.join_at).min();
        now
    }

    /// Opens a joining connection's links. A standalone connection that cannot connect counts
    /// one failure and waits to reconnect like a dropped one (its outage starts now).
    fn connect_joining(&mut self, conn: &mut Conn, c: usize, now: Instant) {
        if let Some(router) = self.router.as_ref() {
            let primaries: Vec<usize> =
                (0..router.nodes.len()).filter(|&n| router.in_map(n) && !router.is_replica(n)).collect();
            for node in primaries {
                self.ensure_link(conn, c, node, now);
            }
            return;
        }
        let (pipeline, max_request) = (self.plan.pipeline, self.plan.max_request);
        let opened = Session::open_within(self.plan.server, JOIN_TIMEOUT).ok().and_then(|s| s.into_transport().ok());
        let registered = opened.and_then(|io| self.driver.register(io, c * LINKS).ok());
        let link = match registered {
            Some(io) => {
                self.show_socket(c, 0, &io);
                Link::new(io, pipeline, max_request)
            }
            None => {
                self.window.connections_lost.add(ErrorKind::Io, 1);
                self.down += 1;
                let backoff = self.plan.faults.reconnect_backoff;
                Link::waiting(pipeline, max_request, Down { since: now, retry_at: now + backoff, backoff, attempts: 1 })
            }
        };
        conn.links = vec![Some(link)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_join_in_turn_over_the_threads() {
        // 2 threads of 3: thread 0 owns 0..3, thread 1 owns 3..6.
        let orders: Vec<usize> = (0..6).map(|i| join_order(6, 2, i)).collect();
        assert_eq!(orders, vec![0, 2, 4, 1, 3, 5]);
        // Uneven threads (2 and 3): every order is taken once.
        let mut orders: Vec<usize> = (0..5).map(|i| join_order(5, 2, i)).collect();
        orders.sort();
        assert_eq!(orders, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn steps_follow_memtiers_staircase() {
        // memtier -t 2 -c 3 --clients-start 1 --clients-step 1 --step-duration 2.
        let mut config = crate::config::tests::sample();
        config.connections = 6;
        config.threads = 2;
        config.ramp = Some(crate::config::Ramp { start: 2, step: 2, every: Duration::from_secs(2) });
        let delays: Vec<u64> = (0..6).map(|i| join_delay(&config, 2, i).as_secs()).collect();
        assert_eq!(delays, vec![0, 2, 4, 0, 2, 4]);
    }
}
