//! What a completed interval keeps in memory: its counters as they are and, for each
//! histogram, only its summary ([`Summarized`]: count, mean, min, max, the percentiles reports
//! show and any a front-end asked for), taken at full precision as the interval completed. The
//! histograms themselves leave the process as the interval completes (the interval log beside
//! the result, `report::document::interval_log`) or are dropped: a long run's timeline costs a
//! few hundred bytes per interval, whatever its length.

use hdrhistogram::Histogram;

use super::latency::{LatencySummary, MAX_LATENCY_NS, histogram};

/// Significant digits of an interval's histograms in the interval log (the whole run's stay
/// at 3).
pub const COMPACT_DIGITS: u8 = 2;

/// One histogram's summary: its count, [`LatencySummary`] and the value at each quantile of
/// `extra` (a front-end's own percentiles, as bucket highs), all read from the histogram
/// before it was dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Summarized {
    len: u64,
    summary: LatencySummary,
    /// (quantile 0 to 1, value in ns: the highest equivalent of its bucket).
    extra: Box<[(f64, u64)]>,
}

impl Summarized {
    /// `h` summarised, with the values at `quantiles` (0 to 1) kept as well.
    pub fn of(h: &Histogram<u64>, quantiles: &[f64]) -> Summarized {
        let extra = if h.is_empty() {
            Box::default()
        } else {
            quantiles.iter().map(|&q| (q, h.highest_equivalent(h.value_at_quantile(q)))).collect()
        };
        Summarized { len: h.len(), summary: LatencySummary::of(h), extra }
    }

    /// The summary of an empty histogram (what [`Summarized::of`] makes of one, without one).
    pub fn empty() -> Summarized {
        Summarized { len: 0, summary: LatencySummary::default(), extra: Box::default() }
    }

    /// A summary as `stats::packed` stored it.
    pub(super) fn from_parts(len: u64, summary: LatencySummary, extra: Box<[(f64, u64)]>) -> Summarized {
        Summarized { len, summary, extra }
    }

    /// The quantiles kept and their values.
    pub(super) fn extra(&self) -> &[(f64, u64)] {
        &self.extra
    }

    /// The summary of the histogram as recorded.
    pub fn summary(&self) -> LatencySummary {
        self.summary
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// The value kept at quantile `q` (a bucket's highest equivalent), if `q` was asked for.
    pub fn kept_quantile_ns(&self, q: f64) -> Option<u64> {
        self.extra.iter().find(|(at, _)| (*at - q).abs() < 1e-12).map(|(_, ns)| *ns)
    }

    /// Several summaries as one: counts added, mean weighted, min and max exact; each kept
    /// quantile (and p50 to p99.9) the largest of the parts': an upper bound, exact when one
    /// part holds every value (memtier's rows of one command each).
    pub fn combined<'a>(parts: impl IntoIterator<Item = &'a Summarized>) -> Summarized {
        let parts: Vec<&Summarized> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        let Some(first) = parts.first() else { return Summarized::empty() };
        if parts.len() == 1 {
            return (*first).clone();
        }
        let len: u64 = parts.iter().map(|p| p.len).sum();
        let fold = |f: fn(&LatencySummary) -> f64, pick: fn(f64, f64) -> f64| {
            parts.iter().map(|p| f(&p.summary)).reduce(pick).unwrap_or(0.0)
        };
        let summary = LatencySummary {
            mean_us: parts.iter().map(|p| p.summary.mean_us * p.len as f64).sum::<f64>() / len as f64,
            min_us: fold(|s| s.min_us, f64::min),
            p50_us: fold(|s| s.p50_us, f64::max),
            p90_us: fold(|s| s.p90_us, f64::max),
            p99_us: fold(|s| s.p99_us, f64::max),
            p999_us: fold(|s| s.p999_us, f64::max),
            max_us: fold(|s| s.max_us, f64::max),
        };
        let extra = first
            .extra
            .iter()
            .map(|&(q, _)| (q, parts.iter().filter_map(|p| p.kept_quantile_ns(q)).max().unwrap_or(0)))
            .collect();
        Summarized { len, summary, extra }
    }
}

/// `h` at [`COMPACT_DIGITS`]: every recorded bucket re-recorded at compact precision (each
/// lands in the one coarse bucket that holds it, so coarsening a sum equals summing the
/// coarsened parts).
pub fn coarse(h: &Histogram<u64>) -> Histogram<u64> {
    let mut coarse =
        Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, COMPACT_DIGITS).expect("constant bounds are valid");
    for v in h.iter_recorded() {
        coarse.saturating_record_n(h.highest_equivalent(v.value_iterated_to()), v.count_at_value());
    }
    coarse
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
/// [`Summarized`] one once it is kept.
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

impl Recorded for Summarized {
    fn summary(&self) -> LatencySummary {
        self.summary
    }

    fn is_empty(&self) -> bool {
        Summarized::is_empty(self)
    }

    fn len(&self) -> u64 {
        self.len
    }

    /// The summary's quantiles and the kept ones exactly; any other the nearest summary
    /// quantile above it (an interval keeps no histogram to read it from).
    fn quantile_ns(&self, q: f64) -> u64 {
        self.kept_quantile_ns(q).unwrap_or_else(|| summary_quantile_ns(&self.summary, q))
    }
}

/// The summary's figure at the nearest of its quantiles at or above `q`, in nanoseconds.
pub(super) fn summary_quantile_ns(s: &LatencySummary, q: f64) -> u64 {
    let known = [(0.5, s.p50_us), (0.9, s.p90_us), (0.99, s.p99_us), (0.999, s.p999_us), (1.0, s.max_us)];
    let us = known.iter().find(|(at, _)| *at >= q).map_or(s.max_us, |(_, us)| *us);
    (us * 1000.0).round() as u64
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
    fn an_interval_keeps_summaries_and_the_quantiles_asked_for() {
        let a = recorded((1..=5000).map(|i| i * 37));
        let kept = a.compact(&[0.5, 0.9999]);
        assert_eq!(kept.latency(), a.latency(), "the summary is the full-precision one");
        assert_eq!(kept.latency_ns.len(), 5000);
        let h = &a.latency_ns;
        assert_eq!(kept.latency_ns.kept_quantile_ns(0.9999), Some(h.highest_equivalent(h.value_at_quantile(0.9999))));
        assert_eq!(kept.latency_ns.quantile_ns(0.99), h.value_at_quantile(0.99));
        // Two rows as one: counts add, min and max exact, the mean weighted.
        let b = recorded((1..=3000).map(|i| i * 1013)).compact(&[0.5, 0.9999]);
        let both = Summarized::combined([&kept.latency_ns, &b.latency_ns]);
        assert_eq!(both.len(), 8000);
        assert_eq!(both.summary().min_us, a.latency().min_us);
        assert_eq!(both.summary().max_us, b.latency().max_us);
        let mut sum = a.clone();
        sum.merge(&b_full());
        assert!((both.summary().mean_us - sum.latency().mean_us).abs() / sum.latency().mean_us < 1e-3);
    }

    fn b_full() -> OpStats {
        recorded((1..=3000).map(|i| i * 1013))
    }

    #[test]
    fn coarsening_a_sum_equals_summing_the_coarse_parts_and_widening_is_idempotent() {
        let (a, b) = (recorded((1..=5000).map(|i| i * 37)), b_full());
        let mut sum = a.latency_ns.clone();
        sum.add(&b.latency_ns).unwrap();
        let mut parts = coarse(&a.latency_ns);
        parts.add(coarse(&b.latency_ns)).unwrap();
        assert_eq!(parts, coarse(&sum));
        let op = recorded([1, 999, 12_345, 1_000_000, 3_600_000_000_000]);
        assert_eq!(widen(&op.latency_ns), op.latency_ns);
    }
}
