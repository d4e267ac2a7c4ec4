//! Measurements: per-command latency histograms and counters that a worker fills for one
//! interval at a time, merged across threads once an interval, and summarised for reports.

message_error!(
    /// An error kind's name that is none of the kinds counted.
    UnknownErrorKind
);

mod clients;
mod compact;
mod packed;
mod parts;
// unsafe: mallopt has no safe wrapper; the block says why it is sound.
#[allow(unsafe_code)]
mod recycle;
mod spread;

pub use clients::{ClientStats, RowSecond};
pub use compact::{COMPACT_DIGITS, Recorded, Summarized, coarse, widen};
use hdrhistogram::Histogram;
pub(crate) use packed::{Reader, Writer};
pub use parts::{LatencyParts, Parts, split};
pub use recycle::map_large_blocks;
use serde::Serialize;
pub use spread::Spread;

/// Largest latency recorded exactly: one hour, in nanoseconds. Larger values are clamped.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// What one command (or the total) did during some span of time. Its histograms are full
/// [`Histogram`]s while it is filled and merged; a completed interval keeps only their
/// summaries ([`OpStats::compact`], [`CompactOp`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OpStats<H = Histogram<u64>> {
    /// Replies received, error replies included.
    pub count: u64,
    pub hits: u64,
    pub misses: u64,
    /// Transactions the server aborted: an EXEC answered with a null array (a WATCHed key
    /// changed). Neither a miss nor an error.
    pub aborts: u64,
    /// Requests that got an error reply or no reply at all.
    pub errors: u64,
    /// Requests sent in the measured phase: each ends as a reply (`count`), failed without
    /// one (`failed`) or abandoned at the end (`abandoned`), so
    /// `sent == count + failed + abandoned`.
    pub sent: u64,
    /// Requests that got no reply: lost with their connection, timed out, or behind garbage.
    pub failed: u64,
    /// Requests still in flight when a stop signal ended the run: neither answered nor failed.
    pub abandoned: u64,
    pub bytes_out: u64,
    pub bytes_in: u64,
    /// Sum of the response times in nanoseconds (memtier's "Accumulated Latency"): exact,
    /// where the histogram's mean is within its precision.
    pub latency_sum_ns: u64,
    /// Response time of every reply, from the intended send time, in nanoseconds.
    pub latency_ns: H,
    /// Service time of every reply, from the actual send, in nanoseconds; smaller than
    /// `latency_ns` when an open-loop run sent late. Closed loop leaves it empty: there the
    /// intended time is the actual send, and [`service_histogram`](Self::service_histogram)
    /// reads `latency_ns` instead of recording every reply twice.
    pub service_ns: H,
    /// A sequence's unit row: whole units, already counted command by command in the other
    /// rows, so totals leave it out.
    pub unit: bool,
    /// Where the time went (kernel receive timestamps on): `None` when the run keeps no
    /// decomposition (timestamps off, a unix socket, a kernel that refused them).
    pub parts: Option<Box<LatencyParts<H>>>,
}

/// A row of a completed interval: counters as counted, histograms summarised.
pub type CompactOp = OpStats<Summarized>;

pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("constant bounds are valid")
}

impl Default for OpStats {
    fn default() -> OpStats {
        OpStats {
            count: 0,
            hits: 0,
            misses: 0,
            aborts: 0,
            errors: 0,
            sent: 0,
            failed: 0,
            abandoned: 0,
            bytes_out: 0,
            bytes_in: 0,
            latency_sum_ns: 0,
            latency_ns: histogram(),
            service_ns: histogram(),
            unit: false,
            parts: None,
        }
    }
}

impl<H> OpStats<H> {
    /// The same row with each histogram turned by `f`, counters copied. This is the one
    /// place that lists the histograms: compaction and its reverse go through it, so a new
    /// histogram field is added here (the struct literal makes the compiler ask for it).
    pub fn map_histograms<G>(&self, mut f: impl FnMut(&H) -> G) -> OpStats<G> {
        let (latency_ns, service_ns) = (f(&self.latency_ns), f(&self.service_ns));
        let parts = self.parts.as_ref().map(|p| Box::new(p.map_histograms(&mut f)));
        self.with_histograms(latency_ns, service_ns, parts)
    }

    /// The same counters with the histograms given: the one place that lists the counters
    /// (the struct literal makes the compiler ask for a new field here).
    fn with_histograms<G>(&self, latency_ns: G, service_ns: G, parts: Option<Box<LatencyParts<G>>>) -> OpStats<G> {
        let OpStats {
            count,
            hits,
            misses,
            aborts,
            errors,
            sent,
            failed,
            abandoned,
            bytes_out,
            bytes_in,
            latency_sum_ns,
            latency_ns: _,
            service_ns: _,
            unit,
            parts: _,
        } = self;
        OpStats {
            count: *count,
            hits: *hits,
            misses: *misses,
            aborts: *aborts,
            errors: *errors,
            sent: *sent,
            failed: *failed,
            abandoned: *abandoned,
            bytes_out: *bytes_out,
            bytes_in: *bytes_in,
            latency_sum_ns: *latency_sum_ns,
            latency_ns,
            service_ns,
            unit: *unit,
            parts,
        }
    }

    /// Each histogram with its counterpart in `other`, in [`map_histograms`]' order.
    fn zip_histograms<'a, G>(&'a mut self, other: &'a OpStats<G>) -> [(&'a mut H, &'a G); 2] {
        [(&mut self.latency_ns, &other.latency_ns), (&mut self.service_ns, &other.service_ns)]
    }
}

impl<H: Recorded> OpStats<H> {
    /// Response-time percentiles (a packed row's were taken at full precision).
    pub fn latency(&self) -> LatencySummary {
        self.latency_ns.summary()
    }

    /// Service-time percentiles: the response times' in closed loop.
    pub fn service(&self) -> LatencySummary {
        if self.service_ns.is_empty() { self.latency() } else { self.service_ns.summary() }
    }
}

impl OpStats {
    /// This row kept small, for the timeline: counters as they are, each histogram's summary
    /// (with its values at `quantiles`, 0 to 1).
    pub fn compact(&self, quantiles: &[f64]) -> CompactOp {
        self.map_histograms(|h| Summarized::of(h, quantiles))
    }

    /// This row's counters and response-time summary only: what the timeline keeps of a
    /// command per interval (no report reads a command's service time or parts per interval).
    pub fn compact_response(&self, quantiles: &[f64]) -> CompactOp {
        self.with_histograms(Summarized::of(&self.latency_ns, quantiles), Summarized::empty(), None)
    }

    /// Records one reply's response time and, in open loop, its service time.
    #[inline]
    pub fn record(&mut self, response_ns: u64, service_ns: Option<u64>) {
        self.latency_ns.saturating_record(response_ns.max(1));
        self.latency_sum_ns = self.latency_sum_ns.saturating_add(response_ns);
        if let Some(ns) = service_ns {
            self.service_ns.saturating_record(ns.max(1));
        }
    }

    /// Service times: their own histogram in open loop, the response times in closed loop.
    pub fn service_histogram(&self) -> &Histogram<u64> {
        if self.service_ns.is_empty() { &self.latency_ns } else { &self.service_ns }
    }

    pub fn merge(&mut self, other: &OpStats) {
        self.count += other.count;
        self.hits += other.hits;
        self.misses += other.misses;
        self.aborts += other.aborts;
        self.errors += other.errors;
        self.sent += other.sent;
        self.failed += other.failed;
        self.abandoned += other.abandoned;
        self.bytes_out += other.bytes_out;
        self.bytes_in += other.bytes_in;
        self.latency_sum_ns = self.latency_sum_ns.saturating_add(other.latency_sum_ns);
        for (mine, theirs) in self.zip_histograms(other) {
            // All histograms share the same bounds, so adding cannot fail.
            mine.add(theirs).expect("same bounds");
        }
        match (&mut self.parts, &other.parts) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (None, Some(theirs)) => self.parts = Some(theirs.clone()),
            _ => {}
        }
    }

    /// Keeps the decomposition from now on (allocated here, before any request is recorded).
    pub fn with_parts(mut self, on: bool) -> OpStats {
        if on {
            self.parts = Some(Box::default());
        }
        self
    }
}

impl CompactOp {
    /// Several rows together: counters added, summaries combined ([`Summarized::combined`]);
    /// one row is cloned as it is.
    pub fn merged<'a>(rows: impl IntoIterator<Item = &'a CompactOp>) -> CompactOp {
        let rows: Vec<&CompactOp> = rows.into_iter().collect();
        if let [one] = rows[..] {
            return one.clone();
        }
        let mut counters = OpStats::default();
        for row in &rows {
            let o = row.map_histograms(|_| ());
            counters.count += o.count;
            counters.hits += o.hits;
            counters.misses += o.misses;
            counters.aborts += o.aborts;
            counters.errors += o.errors;
            counters.sent += o.sent;
            counters.failed += o.failed;
            counters.abandoned += o.abandoned;
            counters.bytes_in += o.bytes_in;
            counters.bytes_out += o.bytes_out;
            counters.latency_sum_ns = counters.latency_sum_ns.saturating_add(o.latency_sum_ns);
        }
        let mut out = counters.compact(&[]);
        out.latency_ns = Summarized::combined(rows.iter().map(|r| &r.latency_ns));
        out.service_ns = Summarized::combined(rows.iter().map(|r| &r.service_ns));
        out
    }
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorKind {
    /// An error reply, by its first word (`ERR`, `WRONGTYPE`, `OOM`, ...).
    Server(String),
    /// The connection failed or closed with the request in flight.
    Io,
    /// No reply within the timeout.
    Timeout,
    /// The server sent bytes that are not RESP.
    Protocol,
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorKind::Server(prefix) => write!(f, "server:{prefix}"),
            ErrorKind::Io => f.write_str("io"),
            ErrorKind::Timeout => f.write_str("timeout"),
            ErrorKind::Protocol => f.write_str("protocol"),
        }
    }
}

impl std::str::FromStr for ErrorKind {
    type Err = UnknownErrorKind;

    /// The kind its `Display` wrote (`server:ERR`, `io`, `timeout`, `protocol`).
    fn from_str(text: &str) -> Result<ErrorKind, UnknownErrorKind> {
        match text {
            "io" => Ok(ErrorKind::Io),
            "timeout" => Ok(ErrorKind::Timeout),
            "protocol" => Ok(ErrorKind::Protocol),
            _ => match text.strip_prefix("server:") {
                Some(prefix) => Ok(ErrorKind::Server(prefix.to_string())),
                None => {
                    Err(format!("unknown error kind '{text}' (expected io, timeout, protocol or server:PREFIX)").into())
                }
            },
        }
    }
}

/// Counts of requests by why they failed (error replies by prefix, requests without a reply
/// by kind): one request each, never a connection; or of connections lost, by why. Allocates
/// only the first time a kind is seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorCounts {
    entries: Vec<(ErrorKind, u64)>,
    /// The first error reply's text, whole (a front-end whose original stops at the first
    /// error reply names it: redis-benchmark's `Error from server: ...`).
    first_reply: Option<String>,
    /// Of connections lost: how the first went (redis-benchmark ends there, with its reason).
    first_loss: Option<Loss>,
}

/// How a connection went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// The server closed it (end of stream).
    Closed,
    /// A read or write failed with this OS error (`errno`).
    Os(i32),
    /// A request timed out, or the replies made no sense.
    Other,
}

impl ErrorCounts {
    pub fn add(&mut self, kind: ErrorKind, n: u64) {
        match self.entries.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, count)) => *count += n,
            None => self.entries.push((kind, n)),
        }
    }

    /// Counts an error reply by its prefix without allocating for a known prefix.
    pub fn add_server(&mut self, prefix: &[u8]) {
        let known = self.entries.iter_mut().find(|(k, _)| matches!(k, ErrorKind::Server(p) if p.as_bytes() == prefix));
        match known {
            Some((_, count)) => *count += 1,
            None => self.entries.push((ErrorKind::Server(String::from_utf8_lossy(prefix).into_owned()), 1)),
        }
    }

    /// Keeps an error reply's text if it is the first (allocates once).
    #[inline]
    pub fn keep_first_reply(&mut self, msg: &[u8]) {
        if self.first_reply.is_none() {
            self.first_reply = Some(String::from_utf8_lossy(msg).into_owned());
        }
    }

    /// The first error reply's text, if any came.
    pub fn first_reply(&self) -> Option<&str> {
        self.first_reply.as_deref()
    }

    /// Keeps how a connection went if it is the first.
    pub fn keep_first_loss(&mut self, loss: Loss) {
        self.first_loss.get_or_insert(loss);
    }

    /// How the first connection lost went, if one was.
    pub fn first_loss(&self) -> Option<Loss> {
        self.first_loss
    }

    pub fn merge(&mut self, other: &ErrorCounts) {
        for (kind, n) in &other.entries {
            self.add(kind.clone(), *n);
        }
        if self.first_reply.is_none() {
            self.first_reply.clone_from(&other.first_reply);
        }
        self.first_loss = self.first_loss.or(other.first_loss);
    }

    pub fn total(&self) -> u64 {
        self.entries.iter().map(|(_, n)| n).sum()
    }

    /// Kinds and counts, sorted by kind.
    pub fn sorted(&self) -> Vec<(ErrorKind, u64)> {
        let mut v = self.entries.clone();
        v.sort();
        v
    }
}

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

/// All command rows together; a sequence's unit row is left out (its commands are counted).
pub fn total(ops: &[OpStats]) -> OpStats {
    let mut total = OpStats::default();
    for op in ops.iter().filter(|op| !op.unit) {
        total.merge(op);
    }
    total
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct LatencySummary {
    pub mean_us: f64,
    pub min_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    #[serde(rename = "p99.9_us")]
    pub p999_us: f64,
    pub max_us: f64,
}

impl LatencySummary {
    pub fn of(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencySummary {
            mean_us: h.mean() / 1000.0,
            min_us: us(h.min()),
            p50_us: us(h.value_at_quantile(0.50)),
            p90_us: us(h.value_at_quantile(0.90)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(h.max()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_histograms() {
        let mut a = Window::new(2, None);
        let mut b = Window::new(2, None);
        a.ops[0].count = 2;
        a.ops[0].record(1_000, Some(1_000));
        a.ops[0].record(3_000, Some(3_000));
        b.ops[0].count = 1;
        b.ops[0].record(2_000, Some(1_000));
        b.errors.add_server(b"ERR");
        b.errors.add_server(b"ERR");
        b.errors.add(ErrorKind::Io, 1);
        a.merge(&b);
        assert_eq!(a.ops[0].count, 3);
        assert_eq!(a.total().latency_ns.len(), 3);
        let lat = a.ops[0].latency();
        assert!((lat.mean_us - 2.0).abs() < 0.01, "{lat:?}");
        assert_eq!(a.errors.total(), 3);
        assert_eq!(a.errors.sorted()[0], (ErrorKind::Server("ERR".into()), 2));
        let (mut first, mut later) = (ErrorCounts::default(), ErrorCounts::default());
        later.keep_first_reply(b"ERR later");
        first.keep_first_reply(b"ERR max number of clients reached");
        first.keep_first_reply(b"ERR again");
        first.merge(&later);
        assert_eq!(first.first_reply(), Some("ERR max number of clients reached"));
        let (mut lost, mut later) = (ErrorCounts::default(), ErrorCounts::default());
        later.keep_first_loss(Loss::Closed);
        lost.merge(&later);
        lost.keep_first_loss(Loss::Os(libc::ECONNRESET));
        assert_eq!(lost.first_loss(), Some(Loss::Closed));
    }

    #[test]
    fn huge_latencies_are_clamped_not_lost() {
        let mut op = OpStats::default();
        op.record(u64::MAX, Some(u64::MAX));
        op.record(0, None);
        assert_eq!(op.latency_ns.len(), 2);
    }
}
