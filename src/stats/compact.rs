//! What a completed interval keeps: its counters as they are, each histogram re-recorded at
//! [`COMPACT_DIGITS`] significant digits and stored encoded ([`Packed`]), with the summary of
//! the full-precision histogram taken before. A full histogram holds ~260 KB of counts; a
//! packed one a few hundred bytes, so a long run's timeline stays small.

use std::io::Cursor;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

use super::{LatencySummary, MAX_LATENCY_NS, histogram};

/// Significant digits of a packed histogram (the whole run's stay at 3).
pub const COMPACT_DIGITS: u8 = 2;

/// One histogram at [`COMPACT_DIGITS`] digits, as the HdrHistogram V2 compressed (deflate)
/// serialization, plus the summary of the histogram it was packed from.
#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    bytes: Box<[u8]>,
    len: u64,
    summary: LatencySummary,
}

impl Packed {
    /// `h` packed: every recorded bucket re-recorded at compact precision (each lands in the
    /// one coarse bucket that holds it, so packing a sum equals summing the packed parts).
    pub fn of(h: &Histogram<u64>) -> Packed {
        let mut coarse =
            Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, COMPACT_DIGITS).expect("constant bounds are valid");
        for v in h.iter_recorded() {
            coarse.saturating_record_n(h.highest_equivalent(v.value_iterated_to()), v.count_at_value());
        }
        let summary = LatencySummary::of(h);
        Packed::from_histogram(&coarse, h.len(), summary)
    }

    /// A histogram already at compact precision (as a result's interval holds it), packed
    /// as it is.
    pub fn of_coarse(coarse: &Histogram<u64>) -> Packed {
        Packed::from_histogram(coarse, coarse.len(), LatencySummary::of(coarse))
    }

    fn from_histogram(coarse: &Histogram<u64>, len: u64, summary: LatencySummary) -> Packed {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new().serialize(coarse, &mut bytes).expect("serialising into memory cannot fail");
        Packed { bytes: bytes.into_boxed_slice(), len, summary }
    }

    /// The histogram at compact precision, as packed.
    pub fn coarse(&self) -> Histogram<u64> {
        Deserializer::new()
            .deserialize(&mut Cursor::new(&self.bytes[..]))
            .expect("bytes this type serialised deserialise")
    }

    /// The histogram in the full-precision layout (so that it adds to any other): each
    /// coarse bucket's count at that bucket's highest value, so that every percentile read
    /// from it is the coarse histogram's.
    pub fn histogram(&self) -> Histogram<u64> {
        widen(&self.coarse())
    }

    /// The V2 compressed serialization of the coarse histogram.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The summary of the histogram as recorded, before packing.
    pub fn summary(&self) -> LatencySummary {
        self.summary
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn len(&self) -> u64 {
        self.len
    }
}

/// Any histogram in the full-precision layout: each bucket's count at its highest value.
/// A histogram already in that layout comes back equal.
pub fn widen(h: &Histogram<u64>) -> Histogram<u64> {
    let mut full = histogram();
    for v in h.iter_recorded() {
        full.saturating_record_n(h.highest_equivalent(v.value_iterated_to()), v.count_at_value());
    }
    full
}

/// What a row's histograms are stored as: a full [`Histogram`] while an interval fills, a
/// [`Packed`] one once it is kept.
pub trait Recorded {
    fn summary(&self) -> LatencySummary;
    fn is_empty(&self) -> bool;
    /// Values recorded.
    fn len(&self) -> u64;
    /// The value at quantile `q` (0 to 1), in nanoseconds.
    fn quantile_ns(&self, q: f64) -> u64;
}

impl Recorded for Histogram<u64> {
    fn summary(&self) -> LatencySummary {
        LatencySummary::of(self)
    }

    fn is_empty(&self) -> bool {
        Histogram::is_empty(self)
    }

    fn len(&self) -> u64 {
        Histogram::len(self)
    }

    fn quantile_ns(&self, q: f64) -> u64 {
        self.value_at_quantile(q)
    }
}

impl Recorded for Packed {
    fn summary(&self) -> LatencySummary {
        self.summary
    }

    fn is_empty(&self) -> bool {
        Packed::is_empty(self)
    }

    fn len(&self) -> u64 {
        self.len
    }

    /// The summary's quantiles exactly (taken at full precision); any other from the packed
    /// histogram, at its precision.
    fn quantile_ns(&self, q: f64) -> u64 {
        let s = &self.summary;
        let exact = [(0.5, s.p50_us), (0.9, s.p90_us), (0.99, s.p99_us), (0.999, s.p999_us)];
        match exact.iter().find(|(at, _)| *at == q) {
            Some((_, us)) => (us * 1000.0).round() as u64,
            None => self.coarse().value_at_quantile(q),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::OpStats;

    fn recorded(values: impl IntoIterator<Item = u64>) -> OpStats {
        let mut op = OpStats::default();
        for ns in values {
            op.record(ns, Some(ns / 2));
        }
        op
    }

    #[test]
    fn packing_keeps_counts_and_summaries_and_adds_up() {
        let a = recorded((1..=5000).map(|i| i * 37));
        let b = recorded((1..=3000).map(|i| i * 1013));
        let mut sum = a.clone();
        sum.merge(&b);
        let (pa, pb, ps) = (a.compact(), b.compact(), sum.compact());
        assert_eq!(ps.latency(), sum.latency(), "the summary is the full-precision one");
        assert_eq!(ps.latency_ns.len(), 8000);
        // Packing a sum equals summing the packed parts, bucket for bucket.
        let mut parts = pa.latency_ns.coarse();
        parts.add(pb.latency_ns.coarse()).unwrap();
        assert_eq!(parts, ps.latency_ns.coarse());
        // Read back, a packed histogram keeps its own percentiles, within compact precision.
        let back = ps.expand();
        assert_eq!(back.latency_ns.len(), 8000);
        assert_eq!(back.count, sum.count);
        let coarse = ps.latency_ns.coarse();
        for q in [0.5, 0.9, 0.99, 0.999] {
            let full = sum.latency_ns.value_at_quantile(q) as f64;
            assert_eq!(back.latency_ns.value_at_quantile(q), coarse.value_at_quantile(q), "q {q}");
            assert!((back.latency_ns.value_at_quantile(q) as f64 - full).abs() / full < 0.01, "q {q}");
        }
        assert!(ps.latency_ns.bytes().len() < 2_000, "{} bytes", ps.latency_ns.bytes().len());
    }

    #[test]
    fn widening_a_full_histogram_changes_nothing() {
        let op = recorded([1, 999, 12_345, 1_000_000, 3_600_000_000_000]);
        assert_eq!(widen(&op.latency_ns), op.latency_ns);
        let empty = OpStats::default().compact();
        assert!(empty.latency_ns.is_empty() && empty.expand().latency_ns.is_empty());
    }
}
