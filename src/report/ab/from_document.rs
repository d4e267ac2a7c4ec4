//! A saved result's runs as one side of a comparison (`respbench compare`): each run's
//! throughput, and its percentiles from that run's interval histograms merged when the result
//! holds them inline (merged and recovered results), else the figures the result kept per run
//! from the run's full histogram (p50, p99, p99.9); the side's pooled
//! figures from its totals histogram.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::{Pooled, RoundFigures};
use crate::report::document::Document;
use crate::report::document::histo;

message_error!(
    /// A result that an A/B comparison cannot read as rounds.
    NotComparable
);

/// Each run of `doc` (one when it kept no per-run figures) and its pooled figures.
pub fn runs_of(doc: &Document) -> Result<(Vec<RoundFigures>, Pooled), NotComparable> {
    let mut per_run: BTreeMap<usize, Histogram<u64>> = BTreeMap::new();
    for interval in &doc.histograms.intervals {
        if interval.totals.latency.is_empty() {
            continue;
        }
        let h = histo::decode(&interval.totals.latency).map_err(String::from)?;
        match per_run.get_mut(&interval.run) {
            Some(merged) => merged.add(&h).map_err(|e| format!("the run's histograms do not add up ({e:?})"))?,
            None => {
                per_run.insert(interval.run, h);
            }
        }
    }
    let q = |h: &Histogram<u64>, p: f64| h.value_at_quantile(p) as f64 / 1000.0;
    let rounds: Vec<RoundFigures> = if doc.runs.is_empty() {
        let l = &doc.totals.latency_us;
        vec![RoundFigures {
            ops_per_sec: doc.totals.ops_per_sec,
            p50_us: l.p50_us,
            p99_us: l.p99_us,
            p999_us: l.p999_us,
            errors: doc.totals.errors,
        }]
    } else {
        doc.runs
            .iter()
            .enumerate()
            .map(|(i, run)| match per_run.get(&i).filter(|h| !h.is_empty()) {
                Some(h) => RoundFigures {
                    ops_per_sec: run.ops_per_sec,
                    p50_us: q(h, 0.5),
                    p99_us: q(h, 0.99),
                    p999_us: q(h, 0.999),
                    errors: run.errors,
                },
                // No interval histograms inline (they are in the interval log): the run's own
                // figures, taken from its full histogram (p99.9 is 0, judged as missing, in a
                // result written before runs kept it).
                None => RoundFigures {
                    ops_per_sec: run.ops_per_sec,
                    p50_us: run.p50_us,
                    p99_us: run.p99_us,
                    p999_us: run.p99_9_us,
                    errors: run.errors,
                },
            })
            .collect()
    };
    let totals = if doc.histograms.totals.latency.is_empty() {
        None
    } else {
        Some(histo::decode(&doc.histograms.totals.latency).map_err(String::from)?)
    };
    let mut pooled = match &totals {
        Some(h) => Pooled::of(h, doc.totals.count, doc.totals.errors, doc.duration_secs),
        None => Pooled {
            count: doc.totals.count,
            errors: doc.totals.errors,
            seconds: doc.duration_secs,
            ..Pooled::default()
        },
    };
    // The result's own throughput (its measured time), and its latency figures when the file
    // kept no histogram.
    pooled.ops_per_sec = doc.totals.ops_per_sec;
    if totals.is_none() {
        pooled.latency_us = doc.totals.latency_us;
    }
    Ok((rounds, pooled))
}
