//! What one command (or the total) did over some span of time.

use hdrhistogram::Histogram;

use super::compact::{Recorded, Summarized};
use super::latency::{LatencySummary, histogram};
use super::parts::LatencyParts;

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

impl Default for OpStats {
    fn default() -> OpStats {
        OpStats::with_counters([0; COUNTERS], histogram(), histogram(), false, None)
    }
}

/// The counters of [`OpStats`], named once in their one order: reading, writing, adding,
/// packing and emptying them all go through the functions this makes, and the struct literal
/// in `with_counters` makes the compiler ask for a new field here.
macro_rules! counters {
    ($($name:ident),* $(,)?) => {
        /// How many counters a row has.
        pub const COUNTERS: usize = [$(stringify!($name)),*].len();

        impl<H> OpStats<H> {
            /// The counters, in their one order.
            pub fn counters(&self) -> [u64; COUNTERS] {
                [$(self.$name),*]
            }

            /// The counters to change in place, in the same order.
            pub fn counters_mut(&mut self) -> [&mut u64; COUNTERS] {
                [$(&mut self.$name),*]
            }

            /// A row of these counters and histograms.
            pub(crate) fn with_counters(
                counters: [u64; COUNTERS],
                latency_ns: H,
                service_ns: H,
                unit: bool,
                parts: Option<Box<LatencyParts<H>>>,
            ) -> OpStats<H> {
                let [$($name),*] = counters;
                OpStats { $($name,)* latency_ns, service_ns, unit, parts }
            }
        }
    };
}

counters!(count, hits, misses, aborts, errors, sent, failed, abandoned, bytes_out, bytes_in, latency_sum_ns);

impl<H> OpStats<H> {
    /// The same row with each histogram turned by `f`, counters copied. This is the one
    /// place that lists the histograms: compaction and its reverse go through it, so a new
    /// histogram field is added here (the struct literal makes the compiler ask for it).
    pub fn map_histograms<G>(&self, mut f: impl FnMut(&H) -> G) -> OpStats<G> {
        let (latency_ns, service_ns) = (f(&self.latency_ns), f(&self.service_ns));
        let parts = self.parts.as_ref().map(|p| Box::new(p.map_histograms(&mut f)));
        self.with_histograms(latency_ns, service_ns, parts)
    }

    /// The same counters with the histograms given.
    fn with_histograms<G>(&self, latency_ns: G, service_ns: G, parts: Option<Box<LatencyParts<G>>>) -> OpStats<G> {
        OpStats::with_counters(self.counters(), latency_ns, service_ns, self.unit, parts)
    }

    /// Each histogram with its counterpart in `other`, in [`map_histograms`]' order.
    fn zip_histograms<'a, G>(&'a mut self, other: &'a OpStats<G>) -> [(&'a mut H, &'a G); 2] {
        [(&mut self.latency_ns, &other.latency_ns), (&mut self.service_ns, &other.service_ns)]
    }
}

impl<H> OpStats<H> {
    /// Requests answered without an error: `errors` counts error replies (part of `count`)
    /// and requests that got no reply (`failed`, not part of it).
    pub fn succeeded(&self) -> u64 {
        (self.count + self.failed).saturating_sub(self.errors)
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
        self.record_besides_latency(response_ns, service_ns);
    }

    /// What [`record`](Self::record) keeps of a reply besides its response time's histogram:
    /// the sum, and the service time in open loop (a worker counts the response time in its
    /// row's front, `front.rs`).
    #[inline(always)]
    pub(super) fn record_besides_latency(&mut self, response_ns: u64, service_ns: Option<u64>) {
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
        add_counters(self.counters_mut(), other.counters());
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

/// Adds `theirs` to `mine`, counter by counter (saturating: a sum of nanoseconds can be large).
fn add_counters(mine: [&mut u64; COUNTERS], theirs: [u64; COUNTERS]) {
    for (m, t) in mine.into_iter().zip(theirs) {
        *m = m.saturating_add(t);
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
            add_counters(counters.counters_mut(), row.counters());
        }
        let mut out = counters.compact(&[]);
        out.latency_ns = Summarized::combined(rows.iter().map(|r| &r.latency_ns));
        out.service_ns = Summarized::combined(rows.iter().map(|r| &r.service_ns));
        out
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
