//! A saved result's rows back as figures (`OpStats`), and rows being added up.

use hdrhistogram::Histogram;

use super::error::MergeError;
use crate::report::document::OpSummary;
use crate::report::document::histo::{Pair, decode};
use crate::stats::{OpStats, widen};

/// A row's counters and histograms, being added up.
#[derive(Default)]
pub(super) struct Row {
    op: Option<OpStats>,
}

impl Row {
    pub(super) fn add(&mut self, summary: &OpSummary, pair: Option<&Pair>) -> Result<(), MergeError> {
        self.merge(op_stats(summary, pair)?);
        Ok(())
    }

    pub(super) fn merge(&mut self, op: OpStats) {
        match self.op.as_mut() {
            Some(mine) => mine.merge(&op),
            None => self.op = Some(op),
        }
    }

    pub(super) fn op(&self) -> OpStats {
        self.op.clone().unwrap_or_default()
    }
}

/// A row of a saved result as figures: its summary's counters (`count`, `hits`, ...) and its
/// pair of histograms (`latency`, `service`).
pub(crate) fn op_stats(summary: &OpSummary, pair: Option<&Pair>) -> Result<OpStats, MergeError> {
    let mut op = OpStats::default();
    let s = summary;
    (op.count, op.hits, op.misses, op.errors) = (s.count, s.hits, s.misses, s.errors);
    (op.sent, op.failed, op.abandoned) = (s.sent, s.failed, s.abandoned);
    (op.bytes_in, op.bytes_out) = (s.bytes_in, s.bytes_out);
    op.latency_ns = hist(pair.map(|p| p.latency.as_str()))?;
    op.service_ns = hist(pair.map(|p| p.service.as_str()))?;
    op.latency_sum_ns = (op.latency_ns.mean() * op.latency_ns.len() as f64) as u64;
    if let Some(pair) = pair {
        op.parts = pair.latency_parts(parts_sums_ns(summary)).map_err(String::from)?.map(Box::new);
    }
    Ok(op)
}

/// The exact sums of a row's parts, from its summary's means (`[0; 3]` without parts).
pub(crate) fn parts_sums_ns(summary: &OpSummary) -> [u64; 3] {
    summary.latency_parts_us.map_or([0; 3], |p| {
        let sum = |mean_us: f64| (mean_us * 1000.0 * p.count as f64).round() as u64;
        [sum(p.send_lag.mean_us), sum(p.wire_and_server.mean_us), sum(p.receive_lag.mean_us)]
    })
}

/// A row of an interval from its summary's counters and the interval log's histograms.
pub(crate) fn logged_op(
    summary: &OpSummary,
    row: Option<&crate::report::document::interval_log::RowHistograms>,
) -> OpStats {
    let mut op = OpStats::default();
    let s = summary;
    (op.count, op.hits, op.misses, op.errors) = (s.count, s.hits, s.misses, s.errors);
    (op.sent, op.failed, op.abandoned) = (s.sent, s.failed, s.abandoned);
    (op.bytes_in, op.bytes_out) = (s.bytes_in, s.bytes_out);
    if let Some(row) = row {
        row.fill(&mut op, s.latency_parts_us.is_some().then(|| parts_sums_ns(s)));
    }
    op.latency_sum_ns = (op.latency_ns.mean() * op.latency_ns.len() as f64) as u64;
    op
}

/// A summary holding a count only (an interval's command).
pub(crate) fn count_only(count: u64) -> OpSummary {
    OpSummary { count, ..OpSummary::default() }
}

pub(super) fn hist(text: Option<&str>) -> Result<Histogram<u64>, MergeError> {
    let text = text.filter(|t| !t.is_empty()).ok_or("a histogram is missing")?;
    // Saved histograms carry their own bounds and precision (intervals are coarser): each in
    // our layout, so that all of them add, and an interval's percentiles stay its own.
    Ok(widen(&decode(text).map_err(String::from)?))
}
