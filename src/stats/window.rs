//! One worker's measurements over one interval.

use hdrhistogram::Histogram;

use super::errors::ErrorCounts;
use super::latency::histogram;
use super::op::{OpStats, total};

/// One worker's measurements over one interval: a slot per command of the mix. Its histograms
/// are full while it fills; the timeline keeps summaries of them (`engine::Interval::of`).
#[derive(Debug, Clone)]
pub struct Window<H = Histogram<u64>> {
    pub ops: Vec<OpStats<H>>,
    pub errors: ErrorCounts,
    /// Open loop only: how long after its intended time each request was actually sent.
    pub send_lag_ns: H,
    /// Connections that were down: from the failure to the reconnect (or the end of the run).
    pub down: Vec<(std::time::Instant, std::time::Instant)>,
    /// Reconnect attempts, successful or not.
    pub reconnect_attempts: u64,
    /// Connections (links) lost, by why (`io`: closed or broken, `timeout`, `protocol`).
    /// Counted apart from the requests they took with them, which `errors` counts by kind.
    pub connections_lost: ErrorCounts,
    /// Replies that were not errors (warmup excluded).
    pub successes: u64,
    /// Cluster mode: per node (by address), what its links did.
    pub nodes: Vec<(String, OpStats<H>)>,
    /// Cluster redirects followed.
    pub moved: u64,
    pub asked: u64,
    /// Requests sent again after an error reply or a dropped connection (each time), and the
    /// requests answered in the end after one or more of those.
    pub retries: u64,
    pub retried_ops: u64,
    /// Connections taking part (connected or reconnecting, not given up), at most, during the
    /// interval: rises in steps under a staircase ramp. Workers' counts add up.
    pub active_connections: u64,
    /// Kernel receive timestamps on: how far their mapping onto the run's clock may be off, at
    /// most, in nanoseconds (the largest of the workers' measurements).
    pub clock_bound_ns: u64,
    /// Why the kernel refused receive timestamps on a worker's socket, if it did.
    pub stamps_refused: Option<String>,
}

impl Window {
    /// The run's node rows as a result reports them: the nodes it sent requests to, by
    /// address. A replica known from the map but never read from (no `--read-from-replicas`)
    /// did nothing to report.
    pub fn take_nodes_sent_to(&mut self) -> Vec<(String, OpStats)> {
        let mut nodes = std::mem::take(&mut self.nodes);
        nodes.retain(|(_, op)| op.bytes_out > 0 || op.count > 0);
        nodes.sort_by(|a, b| a.0.cmp(&b.0));
        nodes
    }

    /// A window with `rows` rows, `unit_row` marked as a sequence's unit row.
    pub fn new(rows: usize, unit_row: Option<usize>) -> Window {
        Window::with_parts(rows, unit_row, false)
    }

    /// A window whose rows keep the latency's decomposition when `parts` (kernel timestamps on).
    pub fn with_parts(rows: usize, unit_row: Option<usize>, parts: bool) -> Window {
        Window {
            ops: (0..rows)
                .map(|i| OpStats { unit: Some(i) == unit_row, ..OpStats::default() }.with_parts(parts))
                .collect(),
            errors: ErrorCounts::default(),
            send_lag_ns: histogram(),
            down: Vec::new(),
            reconnect_attempts: 0,
            connections_lost: ErrorCounts::default(),
            successes: 0,
            nodes: Vec::new(),
            moved: 0,
            asked: 0,
            retries: 0,
            retried_ops: 0,
            active_connections: 0,
            clock_bound_ns: 0,
            stamps_refused: None,
        }
    }

    pub fn merge(&mut self, other: &Window) {
        for (mine, theirs) in self.ops.iter_mut().zip(&other.ops) {
            mine.merge(theirs);
        }
        self.errors.merge(&other.errors);
        self.send_lag_ns.add(&other.send_lag_ns).expect("same bounds");
        self.down.extend_from_slice(&other.down);
        self.reconnect_attempts += other.reconnect_attempts;
        self.connections_lost.merge(&other.connections_lost);
        self.successes += other.successes;
        self.moved += other.moved;
        self.asked += other.asked;
        self.retries += other.retries;
        self.retried_ops += other.retried_ops;
        self.active_connections += other.active_connections;
        self.clock_bound_ns = self.clock_bound_ns.max(other.clock_bound_ns);
        if self.stamps_refused.is_none() {
            self.stamps_refused.clone_from(&other.stamps_refused);
        }
        for (name, op) in &other.nodes {
            match self.nodes.iter_mut().find(|(n, _)| n == name) {
                Some((_, mine)) => mine.merge(op),
                None => self.nodes.push((name.clone(), op.clone())),
            }
        }
    }

    /// All commands together.
    pub fn total(&self) -> OpStats {
        total(&self.ops)
    }
}
