//! The result's histograms themselves: every command's response and service times, the
//! totals, the send lag and each cluster node losslessly (3 significant digits), and every
//! interval at the timeline's compact precision (2 digits), each as the standard compressed
//! HdrHistogram encoding (base64 of the V2 deflate serialization, as `HistogramLogWriter` and
//! other HdrHistogram libraries read it). An interval leaves out what the rest gives (see
//! [`IntervalHistograms`]). Percentiles of results merged from several shards come from
//! these, added, never from averaged percentiles.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Outcome;
use crate::stats::{CompactOp, OpStats, Packed};

/// What the `histograms.encoding` field says.
pub const ENCODING: &str = "base64 of the HdrHistogram V2 compressed (deflate) serialization; \
    totals, commands, send_lag and nodes at 3 significant digits, intervals at 2; \
    an interval's absent service is its latency, and its `rest` command (absent from its commands) \
    is its totals less its other commands";

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

    /// Both histograms.
    fn decoded(&self) -> Result<(Histogram<u64>, Histogram<u64>), String> {
        Ok((decode(&self.latency)?, decode(&self.service)?))
    }
}

/// Response and service time of one row of an interval, at compact precision; the service
/// times are left out where they are the response times (closed loop).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct IntervalPair {
    pub latency: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub service: String,
}

impl IntervalPair {
    /// A packed row: its compact histograms as they are, the service times only when it has
    /// its own.
    pub fn of(op: &CompactOp) -> IntervalPair {
        let text = |p: &Packed| STANDARD.encode(p.bytes());
        let service = if op.service_ns.is_empty() { String::new() } else { text(&op.service_ns) };
        IntervalPair { latency: text(&op.latency_ns), service }
    }

    /// The pair in full, the service times written out.
    fn complete(&self) -> Pair {
        let service = if self.service.is_empty() { self.latency.clone() } else { self.service.clone() };
        Pair { latency: self.latency.clone(), service }
    }
}

/// An interval with nothing left out, as [`IntervalHistograms::complete`] reads it back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompleteInterval {
    pub run: usize,
    pub index: u64,
    pub totals: Pair,
    pub commands: BTreeMap<String, Pair>,
}

/// One interval's histograms, keyed like `time_series` (run, index), at the timeline's
/// compact precision. Nothing that the rest gives is written: a `service` equal to its
/// `latency` is left out, and so is one command's pair (named by `rest`) when the totals are
/// the sum of the commands (a one-command run writes its totals only).
/// [`complete`](Self::complete) puts back what was left out, exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct IntervalHistograms {
    pub run: usize,
    pub index: u64,
    #[serde(flatten)]
    pub totals: IntervalPair,
    pub commands: BTreeMap<String, IntervalPair>,
    /// The command whose pair is the totals' less every command's in `commands`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rest: Option<String>,
}

impl IntervalHistograms {
    /// An interval as a result writes it, from its packed totals and rows.
    pub fn of<'a>(
        run: usize,
        index: u64,
        total: &CompactOp,
        rows: impl IntoIterator<Item = (&'a String, &'a CompactOp)>,
    ) -> IntervalHistograms {
        let rows: Vec<(&String, &CompactOp)> = rows.into_iter().collect();
        let mut commands: BTreeMap<String, IntervalPair> =
            rows.iter().map(|(n, op)| ((*n).clone(), IntervalPair::of(op))).collect();
        // The largest pair is the one left out, where the totals are the commands' sum (not
        // with a sequence's unit row, which the totals leave out).
        let size = |p: &IntervalPair| p.latency.len() + p.service.len();
        let rest = sums_up(total, rows.iter().map(|(_, op)| *op))
            .then(|| commands.iter().max_by_key(|(_, p)| size(p)).map(|(n, _)| n.clone()))
            .flatten();
        if let Some(name) = &rest {
            commands.remove(name);
        }
        IntervalHistograms { run, index, totals: IntervalPair::of(total), commands, rest }
    }

    /// The interval as if nothing had been left out: every service written, the `rest`
    /// command's pair computed (the same compact histograms that were packed).
    pub fn complete(&self) -> Result<CompleteInterval, String> {
        let mut out = CompleteInterval {
            run: self.run,
            index: self.index,
            totals: self.totals.complete(),
            commands: BTreeMap::new(),
        };
        for (name, p) in &self.commands {
            out.commands.insert(name.clone(), p.complete());
        }
        if let Some(name) = &self.rest {
            let at = || format!("interval {} of run {}", self.index, self.run);
            let (mut latency, mut service) = out.totals.decoded().map_err(|e| format!("{}: {e}", at()))?;
            for p in out.commands.values() {
                let (l, s) = p.decoded().map_err(|e| format!("{}: {e}", at()))?;
                let more = |e| format!("{}: the commands' histograms exceed the totals' ({e:?})", at());
                latency.subtract(&l).map_err(more)?;
                service.subtract(&s).map_err(more)?;
            }
            out.commands.insert(name.clone(), Pair { latency: encode(&latency), service: encode(&service) });
        }
        Ok(out)
    }
}

/// Whether `total`'s compact histograms are exactly the sum of the rows'.
fn sums_up<'a>(total: &CompactOp, rows: impl Iterator<Item = &'a CompactOp>) -> bool {
    let (mut latency, mut service) = (Vec::new(), Vec::new());
    for op in rows {
        latency.push(&op.latency_ns);
        service.push(if op.service_ns.is_empty() { &op.latency_ns } else { &op.service_ns });
    }
    let total_service = if total.service_ns.is_empty() { &total.latency_ns } else { &total.service_ns };
    same_sum(&total.latency_ns, &latency) && same_sum(total_service, &service)
}

fn same_sum(total: &Packed, parts: &[&Packed]) -> bool {
    if parts.iter().map(|p| p.len()).sum::<u64>() != total.len() {
        return false;
    }
    let Some((first, others)) = parts.split_first() else { return total.is_empty() };
    let mut sum = first.coarse();
    for p in others {
        if sum.add(p.coarse()).is_err() {
            return false;
        }
    }
    let whole = total.coarse();
    sum.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .eq(whole.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())))
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
                .map(|i| IntervalHistograms::of(i.run, i.index, &i.total, names.iter().zip(&i.window.ops)))
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

    /// Rows recording `n` replies each, open loop (service times of their own) or not.
    fn rows(counts: &[u64], open_loop: bool) -> Vec<OpStats> {
        let mut out = Vec::new();
        for (k, &n) in counts.iter().enumerate() {
            let mut op = OpStats { count: n, ..OpStats::default() };
            for i in 0..n {
                let ns = 1_000 + i * 97 * (k as u64 + 1);
                op.record(ns * 3, open_loop.then_some(ns));
            }
            out.push(op);
        }
        out
    }

    /// Writes an interval, then reads it back completed: what was left out comes back as the
    /// packed rows were, exactly.
    fn round_trip(ops: &[OpStats]) -> (IntervalHistograms, CompleteInterval) {
        let names: Vec<String> = (0..ops.len()).map(|i| format!("C{i}")).collect();
        let packed: Vec<CompactOp> = ops.iter().map(OpStats::compact).collect();
        let total = crate::stats::total(ops).compact();
        let written = IntervalHistograms::of(0, 7, &total, names.iter().zip(&packed));
        let json = serde_json::to_string(&written).unwrap();
        let back: IntervalHistograms = serde_json::from_str(&json).unwrap();
        let complete = back.complete().unwrap();
        for (name, op) in names.iter().zip(&packed) {
            let pair = &complete.commands[name];
            assert_eq!(decode(&pair.latency).unwrap(), op.latency_ns.coarse(), "{name}");
            let service = if op.service_ns.is_empty() { &op.latency_ns } else { &op.service_ns };
            assert_eq!(decode(&pair.service).unwrap(), service.coarse(), "{name} service");
        }
        assert_eq!(decode(&complete.totals.latency).unwrap(), total.latency_ns.coarse());
        (written, complete)
    }

    #[test]
    fn intervals_leave_out_what_the_rest_gives() {
        // Closed loop, two commands: no service, the larger command left out.
        let (written, _) = round_trip(&rows(&[300, 2_000], false));
        assert_eq!(written.rest.as_deref(), Some("C1"));
        assert_eq!(written.commands.len(), 1);
        assert!(written.totals.service.is_empty() && written.commands["C0"].service.is_empty());
        // One command: the totals only.
        let (written, _) = round_trip(&rows(&[500], false));
        assert_eq!((written.rest.as_deref(), written.commands.len()), (Some("C0"), 0));
        // Open loop: service times of their own, subtracted as well; an idle command too.
        let (written, _) = round_trip(&rows(&[400, 0, 900], true));
        assert!(!written.totals.service.is_empty());
        assert_eq!(written.rest.as_deref(), Some("C2"));
        // A sequence's unit row is not in the totals: nothing is derived.
        let mut ops = rows(&[100, 200, 300], false);
        ops[2].unit = true;
        let (written, _) = round_trip(&ops);
        assert_eq!((written.rest, written.commands.len()), (None, 3));
        // Commands that exceed the totals are refused, not subtracted into nonsense.
        let mut bad = round_trip(&rows(&[10, 20], false)).0;
        bad.commands.insert("C0".into(), IntervalPair::of(&rows(&[50], false)[0].compact()));
        assert!(bad.complete().unwrap_err().contains("exceed the totals"));
    }
}
