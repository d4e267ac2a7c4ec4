//! Results of several shards (load machines) merged into one result, exactly: counts, errors
//! and bytes add up, histograms are added (from the lossless `histograms` each result keeps,
//! and each interval's from the interval log beside it, which the caller reads)
//! and every percentile is read from the sum, never averaged. Timelines are aligned by wall
//! clock; the server's telemetry is taken once, not once per shard. The merged document is a
//! normal result (`respbench report` and `compare` take it) and can itself be merged again.

mod error;
pub use error::MergeError;
pub mod memtier;

mod clock;
mod figures;
mod input;
mod roles;
mod timeline;

use std::collections::BTreeMap;

use self::clock::Clock;
use self::figures::{Row, hist};
pub use self::input::Input;

use hdrhistogram::Histogram;
use serde_json::{Value, json};

use crate::engine::{Bottleneck, Outage};
use crate::report::document::histo::{self, Histograms, Pair, encode};
use crate::report::document::{Cluster, Document, Faults, IntervalRef, MergedFrom, Point, Start, Verdict};
use crate::report::run::json::op_summary;
use crate::stats::{LatencySummary, OpStats};

/// Configuration fields that are each shard's own and add up in the merge.
const ADDED: [&str; 4] = ["connections", "threads", "requests", "rate_per_sec"];
/// Configuration fields that may differ between shards without the workload differing.
const OWN: [&str; 1] = ["seed"];

/// The merged document and the warnings about it (also kept in its `warnings`).
pub struct Merged {
    pub doc: Document,
    pub warnings: Vec<String>,
}

/// The shard fields that must agree, as the result writes them (`null` when not a shard).
fn shard_fields(doc: &Document) -> [(&'static str, Value); 3] {
    let s = doc.shard.as_ref();
    [
        ("count", json!(s.map(|s| s.count))),
        ("total_requests", json!(s.and_then(|s| s.total_requests))),
        ("total_rate_per_sec", json!(s.and_then(|s| s.total_rate_per_sec))),
    ]
}

/// The first difference between two configurations that makes them different workloads.
fn difference(a: &Document, b: &Document) -> Option<String> {
    // Field by field as written, so that a field added later is compared too.
    let fields = |d: &Document| match serde_json::to_value(&d.configuration) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let (a_config, b_config) = (fields(a), fields(b));
    let keys: std::collections::BTreeSet<&String> = a_config.keys().chain(b_config.keys()).collect();
    for k in keys {
        if ADDED.contains(&k.as_str()) || OWN.contains(&k.as_str()) {
            continue;
        }
        let (x, y) = (a_config.get(k).unwrap_or(&Value::Null), b_config.get(k).unwrap_or(&Value::Null));
        if x != y {
            return Some(format!("configuration.{k}: {x} vs {y}"));
        }
    }
    for ((k, x), (_, y)) in shard_fields(a).into_iter().zip(shard_fields(b)) {
        if x != y {
            return Some(format!("shard.{k}: {x} vs {y}"));
        }
    }
    None
}

/// Refuses inputs that cannot merge; the shard indexes seen and the warnings about the rest.
fn check(inputs: &[Input]) -> Result<(BTreeMap<u64, &str>, Vec<String>), MergeError> {
    for i in inputs {
        let h = &i.doc.histograms;
        if let Some(log) = h.interval_log.as_ref().filter(|_| i.log.is_empty() && !i.doc.time_series.is_empty()) {
            return Err(
                format!("{}: its interval log {log} holds no interval: it cannot be merged exactly", i.name).into()
            );
        }
        if i.doc.histograms.totals.latency.is_empty() {
            return Err(format!(
                "{} has no histograms (written by an older respbench): it cannot be merged exactly",
                i.name
            )
            .into());
        }
    }
    for other in &inputs[1..] {
        if let Some(diff) = difference(&inputs[0].doc, &other.doc) {
            return Err(format!(
                "{} and {} are different workloads ({diff}): only shards of one run merge",
                inputs[0].name, other.name
            )
            .into());
        }
    }
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    for i in inputs {
        if let Some(index) = i.doc.shard.as_ref().map(|s| u64::from(s.index))
            && let Some(before) = seen.insert(index, &i.name)
        {
            return Err(format!("{before} and {} are both shard {index}: merge each shard once", i.name).into());
        }
    }
    let mut warnings = Vec::new();
    if let Some(count) = inputs[0].doc.shard.as_ref().map(|s| u64::from(s.count)) {
        let missing: Vec<String> = (0..count).filter(|i| !seen.contains_key(i)).map(|i| i.to_string()).collect();
        if !missing.is_empty() {
            warnings.push(format!(
                "shards {} of {count} are missing: the merge covers part of the run",
                missing.join(", ")
            ));
        }
    }
    Ok((seen, warnings))
}

/// The whole-run rows of every result added up.
#[derive(Default)]
struct Sums {
    totals: Row,
    commands: BTreeMap<String, Row>,
    nodes: BTreeMap<String, Row>,
    send_lag: Option<Histogram<u64>>,
    errors: BTreeMap<String, u64>,
}

impl Sums {
    fn of(inputs: &[Input]) -> Result<Sums, MergeError> {
        let mut sums = Sums::default();
        for i in inputs {
            let (d, h) = (&i.doc, &i.doc.histograms);
            sums.totals.add(&d.totals, Some(&h.totals))?;
            for (name, summary) in &d.commands {
                sums.commands.entry(name.clone()).or_default().add(summary, h.commands.get(name))?;
            }
            for (name, summary) in d.cluster.iter().flat_map(|c| &c.nodes) {
                sums.nodes.entry(name.clone()).or_default().add(summary, h.nodes.get(name))?;
            }
            if let Some(text) = &h.send_lag {
                let lag = hist(Some(text))?;
                match sums.send_lag.as_mut() {
                    Some(mine) => mine.add(&lag).expect("same bounds"),
                    None => sums.send_lag = Some(lag),
                }
            }
            for (kind, n) in &d.errors {
                *sums.errors.entry(kind.clone()).or_default() += n;
            }
        }
        Ok(sums)
    }
}

/// Merges `inputs` (at least two) into one result labelled `label`.
pub fn merge(inputs: &[Input], label: Option<&str>) -> Result<Merged, MergeError> {
    let (seen, mut warnings) = check(inputs)?;
    let clock = Clock::of(inputs, &mut warnings);
    let secs = clock.secs;
    let sums = Sums::of(inputs)?;
    let timeline = timeline::Timeline::of(inputs, &clock)?;
    let (runs, repetition) = timeline.runs(inputs);

    let total = sums.totals.op();
    let mut doc = inputs[0].doc.clone();
    add_configurations(&mut doc, inputs, &seen);
    doc.label = label.map(String::from);
    doc.started_unix_ms = clock.base;
    doc.interrupted = inputs.iter().any(|i| i.doc.interrupted);
    doc.duration_secs = secs;
    doc.totals = op_summary(&total, secs, true);
    doc.commands = sums.commands.iter().map(|(n, r)| (n.clone(), op_summary(&r.op(), secs, true))).collect();
    doc.errors = sums.errors.clone();
    if let Some(rate) = doc.rate.as_mut() {
        let rates = || inputs.iter().filter_map(|i| i.doc.rate.as_ref());
        let lag = sums.send_lag.clone().unwrap_or_else(|| OpStats::default().latency_ns);
        rate.requested_per_sec = rates().map(|r| r.requested_per_sec).sum();
        rate.achieved_per_sec = if secs > 0.0 { total.count as f64 / secs } else { 0.0 };
        rate.sends = lag.len();
        rate.late_sends = rates().map(|r| r.late_sends as f64).sum::<f64>() as u64;
        // The client's own share only where every shard measured it.
        rate.late_sends_own = rates().map(|r| r.late_sends_own).sum::<Option<u64>>();
        rate.send_lag_us = LatencySummary::of(&lag);
    }
    doc.client.threads = inputs.iter().flat_map(|i| i.doc.client.threads.iter().copied()).collect();
    doc.rate = doc.rate.take().map(|rate| rate.woken(&doc.client.threads));
    // The server's telemetry: once, from the first shard that has it (every shard sampled the
    // same server over the same time).
    doc.server = inputs.iter().find_map(|i| i.doc.server.clone());
    doc.server_cpu = inputs.iter().find_map(|i| i.doc.server_cpu);
    doc.server_telemetry = inputs.iter().find_map(|i| i.doc.server_telemetry);
    doc.server_latency = inputs.iter().find_map(|i| i.doc.server_latency.clone());
    doc.warnings = all_warnings(inputs, &warnings);
    // Each shard's notes once.
    doc.notes = Vec::new();
    for note in inputs.iter().flat_map(|i| &i.doc.notes) {
        if !doc.notes.contains(note) {
            doc.notes.push(note.clone());
        }
    }
    doc.bottleneck = bottleneck(inputs);
    doc.runs = runs;
    doc.repetition = repetition;
    doc.faults = faults(inputs, &clock, &timeline.points);
    if let Some(cluster) = doc.cluster.as_mut() {
        let sum = |f: fn(&Cluster) -> u64| inputs.iter().filter_map(|i| i.doc.cluster.as_ref()).map(f).sum::<u64>();
        cluster.nodes = sums.nodes.iter().map(|(n, r)| (n.clone(), op_summary(&r.op(), secs, false))).collect();
        cluster.moved = sum(|c| c.moved);
        cluster.asked = sum(|c| c.asked);
    }
    doc.shard = None;
    doc.start = start(inputs);
    // A role's requests are its own rows (several roles), or the run's (one).
    let role_totals = |commands: &[String]| {
        let rows: Vec<OpStats> =
            sums.commands.iter().filter(|(n, _)| commands.contains(n)).map(|(_, r)| r.op()).collect();
        op_summary(&crate::stats::total(&rows), secs, true)
    };
    let (roles, role_histograms) = roles::merge(inputs, &clock, &doc.totals, &role_totals)?;
    doc.roles = roles;
    doc.histograms = Histograms {
        encoding: histo::ENCODING.into(),
        unit: "nanoseconds".into(),
        totals: Pair::of(&total),
        commands: sums.commands.iter().map(|(n, r)| (n.clone(), Pair::of(&r.op()))).collect(),
        send_lag: sums.send_lag.as_ref().map(encode),
        nodes: sums.nodes.iter().map(|(n, r)| (n.clone(), Pair::of(&r.op()))).collect(),
        interval_log: None,
        intervals: timeline.histograms,
        roles: role_histograms,
    };
    doc.time_series = timeline.points;
    doc.merged_from = Some(inputs.iter().map(merged_from).collect());
    Ok(Merged { doc, warnings })
}

/// The fields each shard has its own of, added up; the planned requests of the whole run when
/// every shard is there.
fn add_configurations(doc: &mut Document, inputs: &[Input], seen: &BTreeMap<u64, &str>) {
    let configs = || inputs.iter().map(|i| &i.doc.configuration);
    let c = &mut doc.configuration;
    c.connections = configs().map(|c| c.connections).sum();
    c.threads = configs().map(|c| c.threads).sum();
    // Summed when every shard has one, else the first shard's.
    if configs().all(|c| c.requests.is_some()) {
        c.requests = configs().filter_map(|c| c.requests).reduce(|a, b| a + b);
    }
    if configs().all(|c| c.rate_per_sec.is_some()) {
        c.rate_per_sec = configs().filter_map(|c| c.rate_per_sec).reduce(|a, b| a + b);
    }
    if let Some(shard) = &inputs[0].doc.shard
        && let Some(requests) = shard.total_requests
        && seen.len() as u64 == u64::from(shard.count)
    {
        c.requests = Some(requests);
    }
}

/// Every result's warnings, each once and named by its result, then the merge's own.
fn all_warnings(inputs: &[Input], merge_warnings: &[String]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for i in inputs {
        for w in &i.doc.warnings {
            let w = format!("{}: {w}", i.name);
            if !all.contains(&w) {
                all.push(w);
            }
        }
    }
    all.extend(merge_warnings.iter().cloned());
    all
}

/// The requested start of the shards (`--start-at`) and the offset furthest from it.
fn start(inputs: &[Input]) -> Option<Start> {
    let requested = inputs.iter().find_map(|i| i.doc.start.map(|s| s.requested_unix_ms))?;
    let offsets = inputs.iter().filter_map(|i| i.doc.start.map(|s| s.offset_ms));
    Some(Start {
        requested_unix_ms: requested,
        offset_ms: offsets.fold(0.0, |a: f64, b| if b.abs() > a.abs() { b } else { a }),
    })
}

fn merged_from(i: &Input) -> MergedFrom {
    MergedFrom {
        name: i.name.clone(),
        shard: i.doc.shard.as_ref().map(|s| format!("{}/{}", s.index, s.count)),
        started_unix_ms: i.doc.started_unix_ms,
        duration_secs: i.doc.duration_secs,
        start_offset_ms: i.doc.start.map(|s| s.offset_ms),
        hostname: i.doc.client.machine.hostname.clone(),
        count: i.doc.totals.count,
    }
}

/// One verdict for all shards: a client-bound shard makes the whole client-bound (its figures
/// measure respbench), else a server-bound one, else neither.
fn bottleneck(inputs: &[Input]) -> Verdict {
    let verdicts: Vec<Bottleneck> = inputs.iter().map(|i| i.doc.bottleneck.verdict).collect();
    if verdicts.iter().all(|v| *v == verdicts[0]) {
        return inputs[0].doc.bottleneck.clone();
    }
    let verdict = [Bottleneck::ClientBound, Bottleneck::ServerBound]
        .into_iter()
        .find(|v| verdicts.contains(v))
        .unwrap_or(verdicts[0]);
    let detail: Vec<String> = inputs.iter().map(|i| format!("{}: {}", i.name, i.doc.bottleneck.detail)).collect();
    Verdict { verdict, detail: detail.join("; ") }
}

/// Outages on the merged clock, reconnects added, and the merged seconds with no success.
fn faults(inputs: &[Input], clock: &Clock, time_series: &[Point]) -> Faults {
    let mut outages = Vec::new();
    for i in inputs {
        let shift = clock.offset(&i.doc);
        outages.extend(i.doc.faults.outages.iter().map(|o| Outage {
            start_secs: o.start_secs + shift,
            end_secs: o.end_secs + shift,
            ..*o
        }));
    }
    Faults {
        outages,
        reconnect_attempts: inputs.iter().map(|i| i.doc.faults.reconnect_attempts).sum(),
        connections_lost: inputs.iter().map(|i| i.doc.faults.connections_lost).sum(),
        connections_lost_by_kind: {
            let mut by: BTreeMap<String, u64> = BTreeMap::new();
            for (kind, n) in inputs.iter().flat_map(|i| &i.doc.faults.connections_lost_by_kind) {
                *by.entry(kind.clone()).or_default() += n;
            }
            by
        },
        seconds_without_success: time_series
            .iter()
            .filter(|p| p.totals.count == p.totals.errors && p.totals.errors > 0)
            .map(|p| IntervalRef { run: p.run, index: p.index })
            .collect(),
    }
}
