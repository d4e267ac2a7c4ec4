//! A role's own latencies over the run at full precision (a pub/sub role's delivery latency, a
//! stream role's end-to-end latency, ...), kept in memory beside the figures that summarise
//! them: the result writes them to `histograms.roles` (never into the figures' object), and
//! `respbench merge` adds them up, so merged percentiles are those of the one run.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::latency::LatencySummary;

/// The latencies' names, as `histograms.roles` and the flat outputs (`NAME_p99_ms`) give them.
pub mod name {
    /// A pub/sub role: from the publisher's send to the subscriber's read.
    pub const DELIVERY: &str = "delivery";
    /// A stream or queue role: from the producer's send to the consumer's read.
    pub const END_TO_END: &str = "end_to_end";
    /// A queue role: the time a pop waited for data, and the time the server took once it was there.
    pub const WAIT: &str = "wait";
    pub const SERVICE: &str = "service";
    /// A tracking role: from the write to the invalidation's arrival at a reader.
    pub const INVALIDATION_DELAY: &str = "invalidation_delay";
}

/// A role's latency histograms by name; empty when read back from a result (its histograms are
/// in `histograms.roles`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latencies(BTreeMap<String, Histogram<u64>>);

impl Latencies {
    pub fn of<const N: usize>(named: [(&str, Histogram<u64>); N]) -> Latencies {
        Latencies(named.into_iter().map(|(what, h)| (what.to_string(), h)).collect())
    }

    pub fn get(&self, what: &str) -> Option<&Histogram<u64>> {
        self.0.get(what)
    }

    /// Keeps `h` as the latency `what`, or adds it to what is kept under that name.
    pub fn add(&mut self, what: &str, h: &Histogram<u64>) {
        match self.0.get_mut(what) {
            Some(sum) => sum.add(h).expect("same bounds"),
            None => {
                self.0.insert(what.to_string(), h.clone());
            }
        }
    }

    /// The latency `what` summarised (empty when none is kept).
    pub fn summary(&self, what: &str) -> LatencySummary {
        self.get(what).map(LatencySummary::of).unwrap_or_default()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Histogram<u64>)> {
        self.0.iter().map(|(what, h)| (what.as_str(), h))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
