//! memtier_benchmark's `--json-out-file` layout, for the memtier front-end: plotting scripts
//! read `ALL STATS` → `Totals` → `Ops/sec`, `Percentile Latencies` → `p99.00`, `Time-Serie`
//! and the rest by these exact names, with memtier 2.3's key set and value types (flags as
//! the strings "true"/"false", absent paths as null). Latencies are in milliseconds.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use serde_json::{Map, Value, json};

use super::stats::{MemtierView, Row, Section, at_percentile, distribution, ms, sections};
use crate::config::StopAfter;
use crate::engine::Outcome;
use crate::stats::Recorded;

/// What memtier's JSON is written from: a run (`render`) and a merged result
/// (`memtier_merge`) both fill it.
pub struct Document {
    /// The `configuration` block.
    pub configuration: Value,
    /// All threads, and all connections (the run information gives them per thread).
    pub threads: usize,
    pub connections: usize,
    /// `Seconds` of a timed run, else `Requests per client`.
    pub seconds: Option<u64>,
    pub requests_per_client: u64,
    /// Cluster mode: Totals carry MOVED/sec and ASK/sec.
    pub cluster: bool,
    /// `--print-percentiles`, in percent, sorted.
    pub percentiles: Vec<f64>,
    /// `--hide-histogram`.
    pub hide_histogram: bool,
    /// `--transaction`: the EXEC block and Totals carry `Aborts/sec`.
    pub transaction: bool,
    pub sections: Vec<Section>,
    /// A run with roles (`--role`): per section title, the `Role` object that section holds
    /// (a role's own section, `ROLE name RESULTS`: its name, kind, pacing and figures).
    pub roles: Vec<(String, Value)>,
}

/// The whole document: configuration, run information, then one object per section
/// (`ALL STATS`, or the RUN #n / BEST / WORST / AGGREGATED AVERAGE sections for several runs).
pub fn render(view: &MemtierView<'_>, runs: &[Outcome], pooled: &Outcome) -> String {
    let config = view.config;
    let requests_per_client = requests_per_client(view);
    write(&Document {
        configuration: super::config::configuration(view, runs.len().max(1), requests_per_client),
        threads: config.threads.max(1),
        connections: config.connections,
        seconds: match config.stop {
            StopAfter::Duration(d) => Some(d.as_secs()),
            _ => None,
        },
        requests_per_client,
        cluster: config.cluster.is_some(),
        percentiles: view.sorted_percentiles(),
        hide_histogram: view.options.hide_histogram,
        transaction: config.extras.transaction,
        sections: sections(view, runs, pooled),
        roles: Vec::new(),
    })
}

/// The text of `doc`, key for key as memtier writes it.
pub fn write(doc: &Document) -> String {
    let mut out = Map::new();
    out.insert("configuration".into(), doc.configuration.clone());
    let threads = doc.threads.max(1);
    let mut info = Map::new();
    info.insert("Threads".into(), json!(threads));
    info.insert("Connections per thread".into(), json!(doc.connections / threads));
    match doc.seconds {
        Some(secs) => info.insert("Seconds".into(), json!(secs)),
        None => info.insert("Requests per client".into(), json!(doc.requests_per_client)),
    };
    info.insert("Format version".into(), json!(2));
    out.insert("run information".into(), Value::Object(info));
    for section in &doc.sections {
        let mut stats = stats(doc, section);
        if let (Some((_, role)), Value::Object(m)) = (doc.roles.iter().find(|(t, _)| *t == section.title), &mut stats) {
            m.insert("Role".into(), role.clone());
        }
        out.insert(section.title.clone(), stats);
    }
    serde_json::to_string_pretty(&Value::Object(out)).expect("a JSON value serialises") + "\n"
}

fn requests_per_client(view: &MemtierView<'_>) -> u64 {
    let c = view.config;
    c.planned_requests().unwrap_or(0) / c.connections.max(1) as u64
}

/// One section: Runtime, a block per row, Totals, then (staircase) Active Clients and (unless
/// --hide-histogram) the latency distribution of each command.
fn stats(doc: &Document, s: &Section) -> Value {
    let mut m = Map::new();
    m.insert(
        "Runtime".into(),
        json!({
            "Start time": s.start_ms,
            "Finish time": s.finish_ms,
            "Total duration": s.finish_ms.saturating_sub(s.start_ms),
            "Time unit": "MILLISECONDS",
            "Interrupted": if s.interrupted { "true" } else { "false" },
        }),
    );
    for row in &s.rows {
        m.insert(row.block.clone(), block(doc, s, row, (0, 0.0), None));
    }
    let errors = (s.connection_errors, s.connection_errors_per_sec);
    let redirects = doc.cluster.then_some(s.redirects_per_sec);
    m.insert("Totals".into(), block(doc, s, &s.totals, errors, redirects));
    if s.active.iter().any(Option::is_some) {
        let threads = doc.threads.max(1) as u64;
        let mut active = Map::new();
        for (second, n) in s.seconds.iter().zip(&s.active) {
            let n = n.unwrap_or(0);
            active.insert(
                second.to_string(),
                json!({ "Clients per thread": n / threads, "Total clients": n - n % threads }),
            );
        }
        m.insert("Active Clients".into(), Value::Object(active));
    }
    if !doc.hide_histogram {
        for row in &s.rows {
            let points: Vec<Value> = distribution(&row.op.latency_ns)
                .into_iter()
                .map(|(msec, percent)| json!({ "<=msec": round(msec, 3), "percent": round(percent, 3) }))
                .collect();
            m.insert(row.name.clone(), Value::Array(points));
        }
    }
    Value::Object(m)
}

fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

/// memtier's percentile key: `printf("p%.Nf")` cut to 6 characters (its 7-byte buffer).
pub fn key(p: f64, places: usize) -> String {
    let mut k = format!("p{p:.places$}");
    k.truncate(6);
    k
}

/// The milliseconds of a latency sum, whole (memtier's integer division).
fn accumulated_ms(sum_ns: u64) -> u64 {
    sum_ns / 1_000_000
}

fn block(
    doc: &Document,
    s: &Section,
    row: &Row,
    (errors, errors_per_sec): (u64, f64),
    redirects: Option<(f64, f64)>,
) -> Value {
    let op = &row.op;
    let h = &op.latency_ns;
    let has = !h.is_empty();
    let avg = if has { round(ms(h.mean()), 3) } else { 0.0 };
    let r = &row.rates;
    let (hits, misses) = if row.reads { (r.hits, r.misses) } else { (0.0, 0.0) };
    let mut m = Map::new();
    m.insert("Count".into(), json!(op.count));
    m.insert("Ops/sec".into(), json!(round(r.ops, 2)));
    m.insert("Hits/sec".into(), json!(round(hits, 2)));
    m.insert("Misses/sec".into(), json!(round(misses, 2)));
    if doc.transaction && row.counts_aborts() {
        m.insert("Aborts/sec".into(), json!(round(r.aborts, 2)));
    }
    if let Some((moved, ask)) = redirects {
        // Redirects are counted for the run, not per command: Totals only.
        m.insert("MOVED/sec".into(), json!(round(moved, 2)));
        m.insert("ASK/sec".into(), json!(round(ask, 2)));
    }
    m.insert("Connection Errors/sec".into(), json!(round(errors_per_sec, 2)));
    m.insert("Connection Errors".into(), json!(errors));
    m.insert("Latency".into(), json!(avg));
    m.insert("Average Latency".into(), json!(avg));
    m.insert("Accumulated Latency".into(), json!(accumulated_ms(op.latency_sum_ns)));
    m.insert("Min Latency".into(), json!(if has { round(ms(h.min() as f64), 3) } else { 0.0 }));
    m.insert("Max Latency".into(), json!(if has { round(ms(h.max() as f64), 3) } else { 0.0 }));
    m.insert("KB/sec".into(), json!(round(r.kb(), 2)));
    m.insert("KB/sec RX/TX".into(), json!(round(r.kb(), 2)));
    m.insert("KB/sec RX".into(), json!(round(r.kb_rx, 2)));
    m.insert("KB/sec TX".into(), json!(round(r.kb_tx, 2)));
    let percentiles = &doc.percentiles;
    let mut series = Map::new();
    for (second, op) in s.seconds.iter().zip(&row.series) {
        // The second as the timeline keeps it: its summary, with the percentiles asked for
        // (each interval kept them as it completed).
        let kept = &op.latency_ns;
        let summary = kept.summary();
        let mut one = Map::new();
        one.insert("Bytes RX".into(), json!(op.bytes_in));
        one.insert("Bytes TX".into(), json!(op.bytes_out));
        one.insert("Count".into(), json!(op.count));
        if op.count > 0 && !kept.is_empty() {
            one.insert("Average Latency".into(), json!(round(summary.mean_us / 1000.0, 3)));
            one.insert("Accumulated Latency".into(), json!(accumulated_ms(op.latency_sum_ns)));
            one.insert("Min Latency".into(), json!(round(summary.min_us / 1000.0, 3)));
            one.insert("Max Latency".into(), json!(round(summary.max_us / 1000.0, 3)));
            for &p in percentiles {
                let ns = kept.kept_quantile_ns(p / 100.0).unwrap_or_else(|| kept.quantile_ns(p / 100.0));
                one.insert(key(p, 2), json!(round(ms(ns as f64), 3)));
            }
        }
        series.insert(second.to_string(), Value::Object(one));
    }
    m.insert("Time-Serie".into(), Value::Object(series));
    let mut pct = Map::new();
    for &p in percentiles {
        pct.insert(key(p, 3), json!(round(at_percentile(h, p), 3)));
    }
    pct.insert("Histogram log format".into(), json!({ "Compressed Histogram": compressed(h) }));
    m.insert("Percentile Latencies".into(), Value::Object(pct));
    Value::Object(m)
}

/// The histogram in microseconds as HdrHistogram's compressed V2 encoding, base64: what
/// memtier writes under `Histogram log format`.
pub(crate) fn compressed(ns: &Histogram<u64>) -> String {
    let us = super::stats::micros(ns);
    let mut bytes = Vec::new();
    if V2DeflateSerializer::new().serialize(&us, &mut bytes).is_err() {
        return String::new();
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtier_percentile_keys() {
        assert_eq!(key(50.0, 3), "p50.00");
        assert_eq!(key(99.9, 3), "p99.90");
        assert_eq!(key(99.99, 2), "p99.99");
        assert_eq!(key(9.5, 3), "p9.500");
        assert_eq!(key(9.5, 2), "p9.50");
        assert_eq!(accumulated_ms(2_999_999), 2);
    }
}
