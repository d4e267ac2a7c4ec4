//! The result's histograms themselves, lossless: every command's response and service times,
//! the totals, the send lag, each cluster node, and every interval, each as the standard
//! compressed HdrHistogram encoding (base64 of the V2 deflate serialization, as
//! `HistogramLogWriter` and other HdrHistogram libraries read it). Percentiles of results
//! merged from several shards come from these, added, never from averaged percentiles.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Outcome;
use crate::stats::OpStats;

/// What the `histograms.encoding` field says.
pub const ENCODING: &str = "base64 of the HdrHistogram V2 compressed (deflate) serialization";

/// One histogram as its base64 text.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).expect("serialising into memory cannot fail");
    STANDARD.encode(bytes)
}

/// The histogram a base64 text holds.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = STANDARD.decode(text.trim()).map_err(|e| format!("a histogram is not base64 ({e})"))?;
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| format!("a histogram does not decode ({e:?})"))
}

/// Response and service time of one row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Pair {
    pub latency: String,
    pub service: String,
}

impl Pair {
    pub fn of(op: &OpStats) -> Pair {
        Pair { latency: encode(&op.latency_ns), service: encode(op.service_histogram()) }
    }
}

/// One interval's histograms, keyed like `time_series` (run, index).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct IntervalHistograms {
    pub run: usize,
    pub index: u64,
    #[serde(flatten)]
    pub totals: Pair,
    pub commands: BTreeMap<String, Pair>,
}

/// The `histograms` object of the result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Histograms {
    pub encoding: String,
    pub unit: String,
    pub totals: Pair,
    pub commands: BTreeMap<String, Pair>,
    /// Open loop: how late sends left; `null` in closed loop.
    pub send_lag: Option<String>,
    /// Cluster mode: per node; empty for a standalone server.
    pub nodes: BTreeMap<String, Pair>,
    pub intervals: Vec<IntervalHistograms>,
}

impl Histograms {
    pub fn of(outcome: &Outcome, open_loop: bool) -> Histograms {
        let names = &outcome.command_names;
        let rows = |ops: &[OpStats]| names.iter().cloned().zip(ops.iter().map(Pair::of)).collect();
        Histograms {
            encoding: ENCODING.into(),
            unit: "nanoseconds".into(),
            totals: Pair::of(&outcome.total()),
            commands: rows(&outcome.ops),
            send_lag: open_loop.then(|| encode(&outcome.send_lag_ns)),
            nodes: outcome.nodes.iter().map(|(n, op)| (n.clone(), Pair::of(op))).collect(),
            intervals: outcome
                .timeline
                .iter()
                .map(|i| IntervalHistograms {
                    run: i.run,
                    index: i.index,
                    totals: Pair::of(&i.window.total()),
                    commands: rows(&i.window.ops),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_survive_the_round_trip() {
        let mut op = OpStats::default();
        for ns in [1, 999, 12_345, 1_000_000, 3_600_000_000_000] {
            op.record(ns, None);
        }
        let back = decode(&encode(&op.latency_ns)).unwrap();
        assert_eq!(back, op.latency_ns);
        let empty = decode(&encode(&OpStats::default().latency_ns)).unwrap();
        assert!(empty.is_empty());
        assert!(decode("not base64!").unwrap_err().contains("base64"));
    }
}
