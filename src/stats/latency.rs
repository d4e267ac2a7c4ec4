//! The latency histograms' bounds, and a histogram's summary in microseconds.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Largest latency recorded exactly: one hour, in nanoseconds. Larger values are clamped.
pub(super) const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("constant bounds are valid")
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
