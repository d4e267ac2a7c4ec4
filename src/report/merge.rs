//! Results of several shards (load machines) merged into one result, exactly: counts, errors
//! and bytes add up, histograms are added (from the lossless `histograms` each result keeps)
//! and every percentile is read from the sum, never averaged. Timelines are aligned by wall
//! clock; the server's telemetry is taken once, not once per shard. The merged document is a
//! normal result (`respbench report` and `compare` take it) and can itself be merged again.

pub mod memtier;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde_json::{Map, Value, json};

use super::histo::{self, decode, encode};
use super::json::op_summary;
use crate::stats::{OpStats, Spread};

/// Configuration fields that are each shard's own and add up in the merge.
const ADDED: [&str; 4] = ["connections", "threads", "requests", "rate_per_sec"];
/// Configuration fields that may differ between shards without the workload differing.
const OWN: [&str; 1] = ["seed"];

/// One merged interval: its totals, its commands and the shards' points in it.
type Slot<'a> = (Row, BTreeMap<String, Row>, Vec<&'a Value>);

/// One result to merge: its name (label or file stem) and its document.
pub struct Input {
    pub name: String,
    pub doc: Value,
}

/// The merged document and the warnings about it (also kept in its `warnings`).
pub struct Merged {
    pub doc: Value,
    pub warnings: Vec<String>,
}

/// A row's counters and histograms, being added up.
#[derive(Default)]
struct Row {
    op: Option<OpStats>,
}

impl Row {
    fn add(&mut self, summary: &Value, pair: &Value) -> Result<(), String> {
        let op = op_stats(summary, pair)?;
        match self.op.as_mut() {
            Some(mine) => mine.merge(&op),
            None => self.op = Some(op),
        }
        Ok(())
    }

    fn op(&self) -> OpStats {
        self.op.clone().unwrap_or_default()
    }
}

/// A row of a saved result as figures: its summary's counters (`count`, `hits`, ...) and its
/// pair of histograms (`latency`, `service`).
pub(crate) fn op_stats(summary: &Value, pair: &Value) -> Result<OpStats, String> {
    let mut op = OpStats::default();
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    (op.count, op.hits, op.misses, op.errors) = (n("count"), n("hits"), n("misses"), n("errors"));
    (op.bytes_in, op.bytes_out) = (n("bytes_in"), n("bytes_out"));
    op.latency_ns = hist(&pair["latency"])?;
    op.service_ns = hist(&pair["service"])?;
    op.latency_sum_ns = (op.latency_ns.mean() * op.latency_ns.len() as f64) as u64;
    Ok(op)
}

fn hist(v: &Value) -> Result<Histogram<u64>, String> {
    let text = v.as_str().ok_or("a histogram is missing")?;
    // Saved histograms carry their own bounds: add each into ours so that all of them add.
    let mut ours = OpStats::default().latency_ns;
    ours.add(&decode(text)?).map_err(|e| format!("a histogram is out of range ({e:?})"))?;
    Ok(ours)
}

/// The first difference between two configurations that makes them different workloads.
fn difference(a: &Value, b: &Value) -> Option<String> {
    let (Some(a), Some(b)) = (a["configuration"].as_object(), b["configuration"].as_object()) else {
        return Some("configuration (missing)".into());
    };
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        if ADDED.contains(&k.as_str()) || OWN.contains(&k.as_str()) || k == "__shard" {
            continue;
        }
        let (x, y) = (a.get(k).unwrap_or(&Value::Null), b.get(k).unwrap_or(&Value::Null));
        if x != y {
            return Some(format!("configuration.{k}: {x} vs {y}"));
        }
    }
    for k in ["count", "total_requests", "total_rate_per_sec"] {
        let (x, y) = (&a_shard(a, k), &a_shard(b, k));
        if x != y {
            return Some(format!("shard.{k}: {x} vs {y}"));
        }
    }
    None
}

/// A shard field from the document the configuration belongs to (carried alongside it).
fn a_shard(config: &Map<String, Value>, key: &str) -> Value {
    config.get("__shard").map_or(Value::Null, |s| s[key].clone())
}

fn started(doc: &Value) -> i64 {
    doc["started_unix_ms"].as_i64().unwrap_or(0)
}

/// Merges `inputs` (at least two) into one result labelled `label`.
pub fn merge(inputs: &[Input], label: Option<&str>) -> Result<Merged, String> {
    for i in inputs {
        if i.doc["histograms"]["totals"].is_null() {
            return Err(format!(
                "{} has no histograms (written by an older respbench): it cannot be merged exactly",
                i.name
            ));
        }
    }
    // Compare workloads, each configuration with its shard fields alongside.
    let with_shard = |d: &Value| {
        let mut d = d.clone();
        let shard = d["shard"].clone();
        if let Some(c) = d["configuration"].as_object_mut() {
            c.insert("__shard".into(), shard);
        }
        d
    };
    let first = with_shard(&inputs[0].doc);
    for other in &inputs[1..] {
        if let Some(diff) = difference(&first, &with_shard(&other.doc)) {
            return Err(format!(
                "{} and {} are different workloads ({diff}): only shards of one run merge",
                inputs[0].name, other.name
            ));
        }
    }
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    for i in inputs {
        if let Some(index) = i.doc["shard"]["index"].as_u64()
            && let Some(before) = seen.insert(index, &i.name)
        {
            return Err(format!("{before} and {} are both shard {index}: merge each shard once", i.name));
        }
    }
    let mut warnings = Vec::new();
    if let Some(count) = inputs[0].doc["shard"]["count"].as_u64() {
        let missing: Vec<String> = (0..count).filter(|i| !seen.contains_key(i)).map(|i| i.to_string()).collect();
        if !missing.is_empty() {
            warnings.push(format!(
                "shards {} of {count} are missing: the merge covers part of the run",
                missing.join(", ")
            ));
        }
    }

    let base = inputs.iter().map(|i| started(&i.doc)).min().unwrap_or(0);
    let end_ms = |d: &Value| started(d) as f64 + d["duration_secs"].as_f64().unwrap_or(0.0) * 1000.0;
    let end = inputs.iter().map(|i| end_ms(&i.doc)).fold(base as f64, f64::max);
    let secs = (end - base as f64) / 1000.0;
    let interval = inputs[0].doc["configuration"]["interval_secs"].as_f64().unwrap_or(1.0).max(1e-3);
    let spread_ms = inputs.iter().map(|i| started(&i.doc)).max().unwrap_or(0) - base;
    if spread_ms as f64 > interval * 1000.0 {
        warnings.push(format!(
            "the shards' measured phases started up to {spread_ms} ms apart, more than one interval \
             ({interval} s): start them together with --start-at"
        ));
    }

    // Totals, commands, nodes.
    let mut totals = Row::default();
    let mut commands: BTreeMap<String, Row> = BTreeMap::new();
    let mut nodes: BTreeMap<String, Row> = BTreeMap::new();
    let mut send_lag: Option<Histogram<u64>> = None;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for i in inputs {
        let (d, h) = (&i.doc, &i.doc["histograms"]);
        totals.add(&d["totals"], &h["totals"])?;
        for (name, summary) in d["commands"].as_object().into_iter().flatten() {
            commands.entry(name.clone()).or_default().add(summary, &h["commands"][name])?;
        }
        for (name, summary) in d["cluster"]["nodes"].as_object().into_iter().flatten() {
            nodes.entry(name.clone()).or_default().add(summary, &h["nodes"][name])?;
        }
        if !h["send_lag"].is_null() {
            let lag = hist(&h["send_lag"])?;
            match send_lag.as_mut() {
                Some(mine) => mine.add(&lag).expect("same bounds"),
                None => send_lag = Some(lag),
            }
        }
        for (kind, n) in d["errors"].as_object().into_iter().flatten() {
            *errors.entry(kind.clone()).or_default() += n.as_u64().unwrap_or(0);
        }
    }

    // Timelines aligned by wall clock: a point's slot is its start since the earliest start.
    let mut slots: BTreeMap<(u64, u64), Slot> = BTreeMap::new();
    for i in inputs {
        let offset = (started(&i.doc) - base) as f64 / 1000.0;
        let by_key: BTreeMap<(u64, u64), &Value> = i.doc["histograms"]["intervals"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| ((h["run"].as_u64().unwrap_or(0), h["index"].as_u64().unwrap_or(0)), h))
            .collect();
        for p in i.doc["time_series"].as_array().into_iter().flatten() {
            let (run, index) = (p["run"].as_u64().unwrap_or(0), p["index"].as_u64().unwrap_or(0));
            let h = by_key.get(&(run, index)).ok_or_else(|| {
                format!("{}: interval {index} of run {run} has no histograms in histograms.intervals", i.name)
            })?;
            let slot = ((offset + p["start_secs"].as_f64().unwrap_or(0.0)) / interval).round() as u64;
            let entry = slots.entry((run, slot)).or_default();
            entry.0.add(p, h)?;
            for (name, count) in p["commands"].as_object().into_iter().flatten() {
                let summary = json!({ "count": count });
                entry.1.entry(name.clone()).or_default().add(&summary, &h["commands"][name])?;
            }
            entry.2.push(p);
        }
    }
    let mut time_series = Vec::new();
    let mut interval_histograms = Vec::new();
    let mut per_run: BTreeMap<u64, Row> = BTreeMap::new();
    for ((run, slot), (row, cmds, points)) in &slots {
        let duration = points.iter().filter_map(|p| p["duration_secs"].as_f64()).fold(0.0, f64::max);
        let op = row.op();
        let mut point = Map::new();
        point.insert("run".into(), json!(run));
        point.insert("index".into(), json!(slot));
        point.insert("start_secs".into(), json!(*slot as f64 * interval));
        point.insert("duration_secs".into(), json!(duration));
        if let Value::Object(summary) = op_summary(&op, duration, false) {
            point.extend(summary);
        }
        let counts: Map<String, Value> = cmds.iter().map(|(n, r)| (n.clone(), json!(r.op().count))).collect();
        point.insert("commands".into(), Value::Object(counts));
        let server = points.iter().map(|p| &p["server"]).find(|s| !s.is_null()).cloned().unwrap_or(Value::Null);
        point.insert("server".into(), server);
        let active: u64 = points.iter().filter_map(|p| p["active_connections"].as_u64()).sum();
        point.insert("active_connections".into(), json!(active));
        time_series.push(Value::Object(point));
        let pairs: Map<String, Value> = cmds.iter().map(|(n, r)| (n.clone(), pair(&r.op()))).collect();
        let mut ih = json!({ "run": run, "index": slot, "commands": pairs });
        ih["latency"] = json!(encode(&op.latency_ns));
        ih["service"] = json!(encode(op.service_histogram()));
        interval_histograms.push(ih);
        let r = per_run.entry(*run).or_default();
        match r.op.as_mut() {
            Some(mine) => mine.merge(&op),
            None => r.op = Some(op),
        }
    }

    // Runs (--runs): counts added, durations the longest shard's, percentiles from the sum.
    let mut runs = Vec::new();
    for (run, row) in &per_run {
        let figures: Vec<&Value> = inputs.iter().filter_map(|i| i.doc["runs"].get(*run as usize)).collect();
        let duration = figures.iter().filter_map(|f| f["duration_secs"].as_f64()).fold(0.0, f64::max);
        let count: u64 = figures.iter().filter_map(|f| f["count"].as_u64()).sum();
        let errs: u64 = figures.iter().filter_map(|f| f["errors"].as_u64()).sum();
        let op = row.op();
        let us =
            |q: f64| if op.latency_ns.is_empty() { 0.0 } else { op.latency_ns.value_at_quantile(q) as f64 / 1000.0 };
        runs.push(json!({
            "duration_secs": duration,
            "count": count,
            "ops_per_sec": if duration > 0.0 { count as f64 / duration } else { 0.0 },
            "p50_us": us(0.5),
            "p99_us": us(0.99),
            "errors": errs,
        }));
    }
    let repetition = (runs.len() > 1).then(|| {
        let of = |k: &str| Spread::of(&runs.iter().filter_map(|r| r[k].as_f64()).collect::<Vec<_>>());
        json!({ "ops_per_sec": of("ops_per_sec"), "p99_us": of("p99_us") })
    });

    let total = totals.op();
    let mut doc = inputs[0].doc.clone();
    let sum_config = |k: &str| -> Value {
        let values: Vec<&Value> = inputs.iter().map(|i| &i.doc["configuration"][k]).collect();
        if values.iter().all(|v| v.is_u64()) {
            json!(values.iter().filter_map(|v| v.as_u64()).sum::<u64>())
        } else if values.iter().all(|v| v.is_number()) {
            json!(values.iter().filter_map(|v| v.as_f64()).sum::<f64>())
        } else {
            values[0].clone()
        }
    };
    for k in ADDED {
        if !doc["configuration"][k].is_null() || inputs.iter().any(|i| !i.doc["configuration"][k].is_null()) {
            doc["configuration"][k] = sum_config(k);
        }
    }
    if let Some(requests) = inputs[0].doc["shard"]["total_requests"].as_u64()
        && seen.len() as u64 == inputs[0].doc["shard"]["count"].as_u64().unwrap_or(0)
    {
        doc["configuration"]["requests"] = json!(requests);
    }
    doc["label"] = label.map_or(Value::Null, |l| json!(l));
    doc["started_unix_ms"] = json!(base);
    doc["interrupted"] = json!(inputs.iter().any(|i| i.doc["interrupted"] == true));
    doc["duration_secs"] = json!(secs);
    doc["totals"] = op_summary(&total, secs, true);
    doc["commands"] =
        Value::Object(commands.iter().map(|(n, r)| (n.clone(), op_summary(&r.op(), secs, true))).collect());
    doc["errors"] = json!(errors);
    if !doc["rate"].is_null() {
        let sum = |k: &str| inputs.iter().filter_map(|i| i.doc["rate"][k].as_f64()).sum::<f64>();
        let lag = send_lag.clone().unwrap_or_else(|| OpStats::default().latency_ns);
        doc["rate"]["requested_per_sec"] = json!(sum("requested_per_sec"));
        doc["rate"]["achieved_per_sec"] = json!(if secs > 0.0 { total.count as f64 / secs } else { 0.0 });
        doc["rate"]["sends"] = json!(lag.len());
        doc["rate"]["late_sends"] = json!(sum("late_sends") as u64);
        doc["rate"]["send_lag_us"] = serde_json::to_value(crate::stats::LatencySummary::of(&lag)).expect("plain data");
    }
    let threads: Vec<Value> =
        inputs.iter().flat_map(|i| i.doc["client"]["threads"].as_array().cloned().unwrap_or_default()).collect();
    doc["client"]["threads"] = json!(threads);
    // The server's telemetry: once, from the first shard that has it (every shard sampled the
    // same server over the same time).
    for k in ["server", "server_cpu", "server_telemetry"] {
        doc[k] = inputs.iter().map(|i| &i.doc[k]).find(|v| !v.is_null()).cloned().unwrap_or(Value::Null);
    }
    let mut all_warnings: Vec<String> = Vec::new();
    for i in inputs {
        for w in i.doc["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            let w = format!("{}: {w}", i.name);
            if !all_warnings.contains(&w) {
                all_warnings.push(w);
            }
        }
    }
    all_warnings.extend(warnings.iter().cloned());
    doc["warnings"] = json!(all_warnings);
    // Each shard's notes once (results from before notes were kept have none).
    let mut notes: Vec<&str> = Vec::new();
    for n in inputs.iter().flat_map(|i| i.doc["notes"].as_array().into_iter().flatten().filter_map(Value::as_str)) {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    doc["notes"] = json!(notes);
    doc["bottleneck"] = bottleneck(inputs);
    doc["runs"] = json!(runs);
    doc["repetition"] = repetition.unwrap_or(Value::Null);
    doc["faults"] = faults(inputs, base, &time_series);
    if !doc["cluster"].is_null() {
        let sum = |k: &str| inputs.iter().filter_map(|i| i.doc["cluster"][k].as_u64()).sum::<u64>();
        doc["cluster"]["nodes"] =
            Value::Object(nodes.iter().map(|(n, r)| (n.clone(), op_summary(&r.op(), secs, false))).collect());
        doc["cluster"]["moved"] = json!(sum("moved"));
        doc["cluster"]["asked"] = json!(sum("asked"));
    }
    doc["time_series"] = json!(time_series);
    doc["shard"] = Value::Null;
    let offsets: Vec<f64> = inputs.iter().filter_map(|i| i.doc["start"]["offset_ms"].as_f64()).collect();
    doc["start"] = match inputs.iter().find_map(|i| i.doc["start"]["requested_unix_ms"].as_f64()) {
        Some(requested) => json!({
            "requested_unix_ms": requested,
            "offset_ms": offsets.iter().copied().fold(0.0, |a: f64, b| if b.abs() > a.abs() { b } else { a }),
        }),
        None => Value::Null,
    };
    doc["histograms"] = json!({
        "encoding": histo::ENCODING,
        "unit": "nanoseconds",
        "totals": pair(&total),
        "commands": commands.iter().map(|(n, r)| (n.clone(), pair(&r.op()))).collect::<Map<String, Value>>(),
        "send_lag": send_lag.as_ref().map(encode),
        "nodes": nodes.iter().map(|(n, r)| (n.clone(), pair(&r.op()))).collect::<Map<String, Value>>(),
        "intervals": interval_histograms,
    });
    doc["merged_from"] = json!(
        inputs
            .iter()
            .map(|i| {
                let s = &i.doc["shard"];
                json!({
                    "name": i.name,
                    "shard": s["index"].as_u64().map(|x| format!("{x}/{}", s["count"])),
                    "started_unix_ms": started(&i.doc),
                    "duration_secs": i.doc["duration_secs"],
                    "start_offset_ms": i.doc["start"]["offset_ms"],
                    "hostname": i.doc["client"]["machine"]["hostname"],
                    "count": i.doc["totals"]["count"],
                })
            })
            .collect::<Vec<_>>()
    );
    Ok(Merged { doc, warnings })
}

fn pair(op: &OpStats) -> Value {
    json!({ "latency": encode(&op.latency_ns), "service": encode(op.service_histogram()) })
}

/// One verdict for all shards: a client-bound shard makes the whole client-bound (its figures
/// measure respbench), else a server-bound one, else neither.
fn bottleneck(inputs: &[Input]) -> Value {
    let verdicts: Vec<&str> = inputs.iter().map(|i| i.doc["bottleneck"]["verdict"].as_str().unwrap_or("")).collect();
    if verdicts.iter().all(|v| *v == verdicts[0]) {
        return inputs[0].doc["bottleneck"].clone();
    }
    let verdict = ["client_bound", "server_bound"].into_iter().find(|v| verdicts.contains(v)).unwrap_or(verdicts[0]);
    let detail: Vec<String> = inputs
        .iter()
        .map(|i| format!("{}: {}", i.name, i.doc["bottleneck"]["detail"].as_str().unwrap_or("")))
        .collect();
    json!({ "verdict": verdict, "detail": detail.join("; ") })
}

/// Outages on the merged clock, reconnects added, and the merged seconds with no success.
fn faults(inputs: &[Input], base: i64, time_series: &[Value]) -> Value {
    let mut outages = Vec::new();
    for i in inputs {
        let shift = (started(&i.doc) - base) as f64 / 1000.0;
        for o in i.doc["faults"]["outages"].as_array().into_iter().flatten() {
            let mut o = o.clone();
            for k in ["start_secs", "end_secs"] {
                o[k] = json!(o[k].as_f64().unwrap_or(0.0) + shift);
            }
            outages.push(o);
        }
    }
    let reconnects: u64 = inputs.iter().filter_map(|i| i.doc["faults"]["reconnect_attempts"].as_u64()).sum();
    let silent: Vec<Value> = time_series
        .iter()
        .filter(|p| p["count"].as_u64() == p["errors"].as_u64() && p["errors"].as_u64().unwrap_or(0) > 0)
        .map(|p| json!({ "run": p["run"], "index": p["index"] }))
        .collect();
    json!({ "outages": outages, "reconnect_attempts": reconnects, "seconds_without_success": silent })
}
