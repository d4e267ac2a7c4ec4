//! The result's histograms themselves: every command's response and service times (and the
//! latency's parts, with kernel timestamps), the totals, the send lag and each cluster node
//! losslessly (3 significant digits), each as the standard compressed HdrHistogram encoding
//! (base64 of the V2 deflate serialization, as `HistogramLogWriter` and other HdrHistogram
//! libraries read it). A run's intervals are not here: they are in the interval log the result
//! names (`interval_log`). A merged result, and results written before the interval log,
//! keep them inline at 2 digits ([`IntervalHistograms`], leaving out what the rest gives).
//! Percentiles of results merged from several shards come from these, added, never from
//! averaged percentiles.

use super::error::Malformed;
use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Outcome;
use crate::stats::{LatencyParts, OpStats, coarse};

/// What the `histograms.encoding` field says.
pub const ENCODING: &str = "base64 of the HdrHistogram V2 compressed (deflate) serialization; \
    totals, commands, send_lag and nodes at 3 significant digits; a run's intervals in the \
    interval log named by interval_log (HdrHistogram interval log format, 2 digits); inline \
    intervals (merged results) at 2 digits, an interval's absent service is its latency, and its \
    `rest` command (absent from its commands) is its totals less its other commands";

/// One histogram as its base64 text.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).expect("serialising into memory cannot fail");
    STANDARD.encode(bytes)
}

/// The histogram a base64 text holds.
pub fn decode(text: &str) -> Result<Histogram<u64>, Malformed> {
    let bytes = STANDARD.decode(text.trim()).map_err(|e| format!("a histogram is not base64 ({e})"))?;
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| Malformed(format!("a histogram does not decode ({e:?})")))
}

/// Response and service time of one row, and the latency's parts when it kept them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Pair {
    pub latency: String,
    pub service: String,
    /// Kernel timestamps on: the latency's parts (`send_lag`, `wire_and_server`,
    /// `receive_lag`, and `without_client`: the response time less the client's parts, in
    /// open loop); absent otherwise.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub parts: BTreeMap<String, String>,
}

impl Pair {
    pub fn of(op: &OpStats) -> Pair {
        let mut parts = BTreeMap::new();
        if let Some(p) = op.parts.as_deref().filter(|p| p.count() > 0) {
            for (name, h) in Pair::named(p) {
                if !h.is_empty() {
                    parts.insert(name.to_string(), encode(h));
                }
            }
        }
        Pair { latency: encode(&op.latency_ns), service: encode(op.service_histogram()), parts }
    }

    fn named(p: &LatencyParts) -> [(&'static str, &Histogram<u64>); 4] {
        [
            ("send_lag", &p.send_lag_ns),
            ("wire_and_server", &p.wire_ns),
            ("receive_lag", &p.receive_lag_ns),
            ("without_client", &p.without_client_ns),
        ]
    }

    /// The parts this pair holds, with their exact sums (`None`: none kept).
    pub fn latency_parts(&self, sums_ns: [u64; 3]) -> Result<Option<LatencyParts>, Malformed> {
        if self.parts.is_empty() {
            return Ok(None);
        }
        let mut parts = LatencyParts { sums_ns, ..LatencyParts::default() };
        for (name, text) in &self.parts {
            let h = crate::stats::widen(&decode(text)?);
            match name.as_str() {
                "send_lag" => parts.send_lag_ns = h,
                "wire_and_server" => parts.wire_ns = h,
                "receive_lag" => parts.receive_lag_ns = h,
                "without_client" => parts.without_client_ns = h,
                _ => {}
            }
        }
        Ok(Some(parts))
    }

    /// Both histograms.
    fn decoded(&self) -> Result<(Histogram<u64>, Histogram<u64>), Malformed> {
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
    /// A row at compact precision, the service times only when it has its own.
    pub fn of(op: &OpStats) -> IntervalPair {
        let service = if op.service_ns.is_empty() { String::new() } else { encode(&coarse(&op.service_ns)) };
        IntervalPair { latency: encode(&coarse(&op.latency_ns)), service }
    }

    /// The pair in full, the service times written out.
    fn complete(&self) -> Pair {
        let service = if self.service.is_empty() { self.latency.clone() } else { self.service.clone() };
        Pair { latency: self.latency.clone(), service, parts: BTreeMap::new() }
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
    /// An interval as a merged result writes it, from its totals and rows (at compact
    /// precision).
    pub fn of<'a>(
        run: usize,
        index: u64,
        total: &OpStats,
        rows: impl IntoIterator<Item = (&'a String, &'a OpStats)>,
    ) -> IntervalHistograms {
        let rows: Vec<(&String, &OpStats)> = rows.into_iter().collect();
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
    pub fn complete(&self) -> Result<CompleteInterval, Malformed> {
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
            let pair = Pair { latency: encode(&latency), service: encode(&service), parts: BTreeMap::new() };
            out.commands.insert(name.clone(), pair);
        }
        Ok(out)
    }
}

/// Whether `total`'s compact histograms are exactly the sum of the rows'.
fn sums_up<'a>(total: &OpStats, rows: impl Iterator<Item = &'a OpStats>) -> bool {
    let (mut latency, mut service) = (Vec::new(), Vec::new());
    for op in rows {
        latency.push(&op.latency_ns);
        service.push(op.service_histogram());
    }
    same_sum(&total.latency_ns, &latency) && same_sum(total.service_histogram(), &service)
}

fn same_sum(total: &Histogram<u64>, parts: &[&Histogram<u64>]) -> bool {
    if parts.iter().map(|p| p.len()).sum::<u64>() != total.len() {
        return false;
    }
    let Some((first, others)) = parts.split_first() else { return total.is_empty() };
    let mut sum = coarse(first);
    for p in others {
        if sum.add(coarse(p)).is_err() {
            return false;
        }
    }
    let whole = coarse(total);
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
    /// The interval log beside this file (its name, in this file's directory) that holds every
    /// interval's histograms; absent when the run wrote none (or for a merged result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_log: Option<String>,
    /// Inline intervals: a merged result's, and those of results written before the interval
    /// log; absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalHistograms>,
    /// `--role`: each role's own latencies over the run, by role, then by name
    /// (`stats::latency_name`: a pub/sub role's `delivery`, a stream role's `end_to_end`, a
    /// queue role's `wait`, `service` and `end_to_end`, a tracking role's
    /// `invalidation_delay`); absent without roles.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, BTreeMap<String, String>>,
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
            // Named by the caller that wrote it beside the result.
            interval_log: None,
            intervals: Vec::new(),
            // Filled in from the result's roles (`roles::histograms`).
            roles: BTreeMap::new(),
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
        let total = crate::stats::total(ops);
        let written = IntervalHistograms::of(0, 7, &total, names.iter().zip(ops));
        let json = serde_json::to_string(&written).unwrap();
        let back: IntervalHistograms = serde_json::from_str(&json).unwrap();
        let complete = back.complete().unwrap();
        for (name, op) in names.iter().zip(ops) {
            let pair = &complete.commands[name];
            assert_eq!(decode(&pair.latency).unwrap(), coarse(&op.latency_ns), "{name}");
            assert_eq!(decode(&pair.service).unwrap(), coarse(op.service_histogram()), "{name} service");
        }
        assert_eq!(decode(&complete.totals.latency).unwrap(), coarse(&total.latency_ns));
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
        bad.commands.insert("C0".into(), IntervalPair::of(&rows(&[50], false)[0]));
        assert!(bad.complete().unwrap_err().contains("exceed the totals"));
    }
}
