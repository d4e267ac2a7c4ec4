//! A result's timeline as a chart's series.

use crate::report::document::{Document, Point};
use crate::report::pages::chart::Series;
use crate::stats::LatencySummary;

/// x positions of a result's timeline: seconds since its start, runs one after another.
pub(super) fn timeline_x(doc: &Document) -> Vec<f64> {
    let mut t = 0.0;
    doc.time_series
        .iter()
        .map(|p| {
            t += p.duration_secs;
            t
        })
        .collect()
}

pub(super) fn series_of(doc: &Document, name: &str, value: impl Fn(&Point) -> Option<f64>) -> Series {
    let xs = timeline_x(doc);
    let points = doc.time_series.iter().zip(&xs).filter_map(|(p, &x)| value(p).map(|y| (x, y))).collect();
    Series { name: name.to_string(), points }
}

/// One figure of a latency summary (p50, p99, ...).
pub(super) type Figure = fn(&LatencySummary) -> f64;
