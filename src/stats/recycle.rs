//! Windows that keep their memory from one interval to the next: a full window holds a dozen
//! histograms of ~260 KB each, and making new ones every interval (a worker's next window, the
//! collector's merge of an interval) churned megabytes per second through the allocator, whose
//! arenas then rose and fell by as much: a long run's resident set swung by ~2 MB between
//! samples. A window emptied here is equal to a new one and keeps its histograms' memory. Also
//! the window at the interval log's precision, for the journal's writer.

use super::compact::coarse;
use super::errors::ErrorCounts;
use super::op::OpStats;
use super::parts::LatencyParts;
use super::window::Window;

/// Makes the allocator map every block of 128 KiB or more on its own and unmap it when freed
/// (glibc does so at first, then raises that threshold to the largest block freed, from when
/// on full histograms come from its arenas and what a backlog took stays resident). Windows
/// are recycled, so such blocks are made rarely: the system calls cost nothing that shows.
pub fn map_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt takes two integers and changes only the allocator's settings.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Empties a histogram in place. One that holds nothing is left as it is: emptying writes
/// every one of its ~260 KB of counts, and most of a window's histograms stay empty (the
/// service time in closed loop, the latency's parts without timestamps, commands not drawn).
fn emptied(h: &mut hdrhistogram::Histogram<u64>) {
    if !h.is_empty() {
        h.reset();
    }
}

impl OpStats {
    /// Empties the row: counters to 0, histograms emptied in place; `unit` and whether it keeps
    /// the latency's parts stay as they were.
    pub fn reset(&mut self) {
        for n in self.counters_mut() {
            *n = 0;
        }
        let OpStats { latency_ns, service_ns, parts, .. } = self;
        emptied(latency_ns);
        emptied(service_ns);
        if let Some(parts) = parts.as_deref_mut() {
            parts.reset();
        }
    }
}

impl OpStats {
    /// This row emptied, then made the total of `ops` (a sequence's unit row left out, as
    /// `stats::total` does), in its own memory.
    pub fn summed(&mut self, ops: &[OpStats]) -> &OpStats {
        self.reset();
        for op in ops.iter().filter(|op| !op.unit) {
            self.merge(op);
        }
        self
    }
}

impl LatencyParts {
    fn reset(&mut self) {
        let LatencyParts { send_lag_ns, wire_ns, receive_lag_ns, without_client_ns, sums_ns } = self;
        for h in [send_lag_ns, wire_ns, receive_lag_ns, without_client_ns] {
            emptied(h);
        }
        *sums_ns = [0; 3];
    }
}

impl Window {
    /// Empties the window for another interval, keeping its rows' histograms (and their
    /// memory); per-node rows go (the worker lists its nodes afresh, as for a new window).
    pub fn reset(&mut self) {
        let Window {
            ops,
            errors,
            send_lag_ns,
            down,
            reconnect_attempts,
            connections_lost,
            successes,
            nodes,
            moved,
            asked,
            retries,
            retried_ops,
            active_connections,
            clock_bound_ns,
            stamps_refused,
        } = self;
        ops.iter_mut().for_each(OpStats::reset);
        *errors = ErrorCounts::default();
        emptied(send_lag_ns);
        down.clear();
        *connections_lost = ErrorCounts::default();
        // The rows stay, emptied: a worker keeps those of nodes still in its map.
        nodes.iter_mut().for_each(|(_, op)| op.reset());
        for n in [reconnect_attempts, successes, moved, asked, retries, retried_ops, active_connections, clock_bound_ns]
        {
            *n = 0;
        }
        *stamps_refused = None;
    }

    /// This window at the interval log's precision (`COMPACT_DIGITS`, ~12x smaller than
    /// full): what the journal's writer is handed, so that a writer running behind holds
    /// little per interval it has still to write.
    pub fn coarse(&self) -> Window {
        let Window {
            ops,
            errors,
            send_lag_ns,
            down,
            reconnect_attempts,
            successes,
            nodes,
            moved,
            asked,
            retries,
            retried_ops,
            active_connections,
            connections_lost,
            clock_bound_ns,
            stamps_refused,
        } = self;
        Window {
            ops: ops.iter().map(|op| op.map_histograms(coarse)).collect(),
            errors: errors.clone(),
            send_lag_ns: coarse(send_lag_ns),
            down: down.clone(),
            reconnect_attempts: *reconnect_attempts,
            successes: *successes,
            nodes: nodes.iter().map(|(name, op)| (name.clone(), op.map_histograms(coarse))).collect(),
            moved: *moved,
            asked: *asked,
            retries: *retries,
            retried_ops: *retried_ops,
            active_connections: *active_connections,
            connections_lost: connections_lost.clone(),
            clock_bound_ns: *clock_bound_ns,
            stamps_refused: stamps_refused.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::stats::{ErrorKind, Parts};

    fn filled(parts: bool) -> Window {
        let mut w = Window::with_parts(3, Some(2), parts);
        for (i, op) in w.ops.iter_mut().enumerate() {
            op.count = 5 + i as u64;
            op.sent = 7;
            op.bytes_in = 100;
            op.latency_sum_ns = 123;
            op.record(1_000 * (i as u64 + 1), Some(900));
            if let Some(p) = op.parts.as_deref_mut() {
                p.record(Parts { send_lag_ns: 10, wire_ns: 800, receive_lag_ns: 90 }, Some(990));
            }
        }
        w.errors.add(ErrorKind::Io, 3);
        w.connections_lost.add(ErrorKind::Io, 1);
        w.send_lag_ns.record(42).unwrap();
        let now = Instant::now();
        w.down.push((now, now));
        let mut node = OpStats { count: 1, ..Default::default() };
        node.record(1_000, None);
        w.nodes.push(("a:1".into(), node));
        (w.reconnect_attempts, w.successes, w.moved, w.asked) = (1, 2, 3, 4);
        (w.active_connections, w.clock_bound_ns) = (5, 6);
        w.stamps_refused = Some("no".into());
        w
    }

    /// What a test can compare: every counter and every histogram's recorded values.
    fn shape(w: &Window) -> String {
        let h = |h: &hdrhistogram::Histogram<u64>| (h.len(), h.min(), h.max(), h.iter_recorded().count());
        let ops: Vec<String> = w
            .ops
            .iter()
            .map(|op| {
                let parts = op.parts.as_deref().map(|p| {
                    (h(&p.send_lag_ns), h(&p.wire_ns), h(&p.receive_lag_ns), h(&p.without_client_ns), p.sums_ns)
                });
                format!("{:?} {:?} {:?} {} {:?}", op.counters(), h(&op.latency_ns), h(&op.service_ns), op.unit, parts)
            })
            .collect();
        format!(
            "{ops:?} {:?} {:?} {} {} {:?} {} {} {} {} {} {} {:?}",
            w.errors,
            h(&w.send_lag_ns),
            w.down.len(),
            w.reconnect_attempts,
            w.connections_lost,
            w.successes,
            // Node rows are kept emptied: what counts is that nothing is left in them.
            w.nodes.iter().filter(|(_, op)| op.counters().iter().any(|&n| n > 0) || !op.latency_ns.is_empty()).count(),
            w.moved,
            w.asked,
            w.active_connections,
            w.clock_bound_ns,
            w.stamps_refused
        )
    }

    #[test]
    fn a_reset_window_is_a_new_one() {
        for parts in [false, true] {
            let mut w = filled(parts);
            assert_ne!(shape(&w), shape(&Window::with_parts(3, Some(2), parts)));
            w.reset();
            assert_eq!(shape(&w), shape(&Window::with_parts(3, Some(2), parts)), "parts {parts}");
            // And it records as a new one does.
            let mut fresh = Window::with_parts(3, Some(2), parts);
            w.ops[0].record(5_000, None);
            fresh.ops[0].record(5_000, None);
            assert_eq!(shape(&w), shape(&fresh));
        }
    }

    #[test]
    fn a_coarse_window_keeps_its_counts_and_buckets() {
        let w = filled(true);
        let c = w.coarse();
        assert_eq!(c.ops[1].count, 6);
        assert_eq!(c.ops[1].latency_ns.len(), 1);
        assert_eq!(c.ops[1].latency_ns.sigfig(), crate::stats::COMPACT_DIGITS);
        assert_eq!(coarse(&c.ops[1].latency_ns), c.ops[1].latency_ns, "coarse twice is coarse once");
        assert_eq!(c.errors, w.errors);
    }
}
