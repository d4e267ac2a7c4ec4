//! memtier_benchmark's `--json-out-file` layout, for the memtier front-end: plotting scripts
//! read `ALL STATS` → `Totals` → `Ops/sec`, `Percentile Latencies` → `p99.00`, `Time-Serie`
//! and the rest by these exact names. Latencies are in milliseconds, as memtier writes them.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use serde_json::{Map, Value, json};

use crate::config::{Config, KeyPattern, StopAfter, Target, ValueSize};
use crate::engine::Outcome;
use crate::stats::OpStats;

/// What memtier's own command line said, which the plan no longer shows as such.
pub struct MemtierView<'a> {
    pub config: &'a Config,
    /// `--print-percentiles`, in percent.
    pub percentiles: &'a [f64],
    pub out_file: Option<&'a str>,
}

/// The whole document: configuration, run information, then `ALL STATS` for one run or the
/// BEST / WORST / AGGREGATED AVERAGE sections for several.
pub fn render(view: &MemtierView<'_>, runs: &[Outcome], pooled: &Outcome) -> String {
    let config = view.config;
    let mut doc = Map::new();
    doc.insert("configuration".into(), configuration(view, runs.len()));
    let threads = config.threads.max(1);
    let mut info = Map::new();
    info.insert("Threads".into(), json!(threads));
    info.insert("Connections per thread".into(), json!(config.connections / threads));
    match config.stop {
        StopAfter::Duration(d) => info.insert("Seconds".into(), json!(d.as_secs())),
        _ => info.insert(
            "Requests per client".into(),
            json!(config.planned_requests().unwrap_or(0) / config.connections.max(1) as u64),
        ),
    };
    info.insert("Format version".into(), json!(2));
    doc.insert("run information".into(), Value::Object(info));
    if runs.len() > 1 {
        let rate = |o: &Outcome| o.total().count as f64 / o.elapsed.as_secs_f64().max(1e-9);
        let best = runs.iter().max_by(|a, b| rate(a).total_cmp(&rate(b))).expect("several runs");
        let worst = runs.iter().min_by(|a, b| rate(a).total_cmp(&rate(b))).expect("several runs");
        doc.insert("BEST RUN RESULTS".into(), stats(view, best));
        doc.insert("WORST RUN RESULTS".into(), stats(view, worst));
        doc.insert(format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len()), stats(view, pooled));
    } else {
        doc.insert("ALL STATS".into(), stats(view, pooled));
    }
    serde_json::to_string_pretty(&Value::Object(doc)).expect("a JSON value serialises") + "\n"
}

fn configuration(view: &MemtierView<'_>, run_count: usize) -> Value {
    let c = view.config;
    let (server, port, socket) = match &c.server.target {
        Target::Tcp { host, port } => (host.clone(), *port, String::new()),
        Target::Unix(path) => (String::new(), 0, path.display().to_string()),
    };
    let threads = c.threads.max(1);
    let (requests, test_time) = match c.stop {
        StopAfter::Duration(d) => (0, d.as_secs()),
        _ => (c.planned_requests().unwrap_or(0) / c.connections.max(1) as u64, 0),
    };
    let weight = |name: &str| c.commands.iter().find(|cmd| cmd.name == name).map_or(0, |cmd| cmd.weight);
    let pattern = |name: &str| {
        c.commands.iter().find(|cmd| cmd.name == name).map_or('R', |cmd| cmd.key_pattern.letter()).to_string()
    };
    let (data_size, range, list) = match &c.values {
        ValueSize::Fixed(n) => (*n, "0:0".to_string(), String::new()),
        ValueSize::Range { min, max } => (0, format!("{min}:{max}"), String::new()),
        ValueSize::List(l) => {
            (0, "0:0".into(), l.iter().map(|(s, w)| format!("{s}:{w}")).collect::<Vec<_>>().join(","))
        }
    };
    let (stddev, median) = c
        .commands
        .iter()
        .find_map(|cmd| match cmd.key_pattern {
            KeyPattern::Gaussian { median, stddev } => Some((stddev.unwrap_or(0.0), median.unwrap_or(0.0))),
            _ => None,
        })
        .unwrap_or((0.0, 0.0));
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put("server", json!(server));
    put("port", json!(port));
    put("unix socket", json!(socket));
    put("protocol", json!(if c.server.resp3 { "resp3" } else { "redis" }));
    put("out_file", json!(view.out_file.unwrap_or("")));
    put("run_count", json!(run_count));
    put("requests", json!(requests));
    put("rate_limit", json!(c.rate.map_or(0, |r| (r.per_sec / c.connections as f64).round() as u64)));
    put("clients", json!(c.connections / threads));
    put("threads", json!(threads));
    put("test_time", json!(test_time));
    put("ratio", json!(format!("{}:{}", weight("SET"), weight("GET"))));
    put("pipeline", json!(c.pipeline));
    put("data_size", json!(data_size));
    put("random_data", json!(c.random_data.to_string()));
    put("data_size_range", json!(range));
    put("data_size_list", json!(list));
    put("expiry_range", json!(c.expiry.map_or("0:0".to_string(), |(a, b)| format!("{a}:{b}"))));
    put("key_prefix", json!(c.keys.prefix));
    put("key_minimum", json!(c.keys.min));
    put("key_maximum", json!(c.keys.max));
    put("key_pattern", json!(format!("{}:{}", pattern("SET"), pattern("GET"))));
    put("key_stddev", json!(stddev));
    put("key_median", json!(median));
    put("authenticate", json!(c.server.password.as_ref().map_or("", |_| "(set)")));
    put("select-db", json!(c.server.db.unwrap_or(0)));
    put("print-percentiles", json!(view.percentiles));
    Value::Object(m)
}

/// One section (`ALL STATS`, `BEST RUN RESULTS`, ...): Runtime, a block per command, Totals.
fn stats(view: &MemtierView<'_>, o: &Outcome) -> Value {
    let secs = o.elapsed.as_secs_f64().max(1e-9);
    let start = o.started_unix_ms;
    let finish = start + o.elapsed.as_millis() as u64;
    let mut m = Map::new();
    m.insert(
        "Runtime".into(),
        json!({
            "Start time": start,
            "Finish time": finish,
            "Total duration": finish - start,
            "Time unit": "MILLISECONDS",
            "Interrupted": o.interrupted.to_string(),
        }),
    );
    let default_mix = o.command_names.iter().all(|n| n == "SET" || n == "GET");
    let index = |name: &str| o.command_names.iter().position(|n| n == name);
    if default_mix {
        // memtier always writes Sets, Gets and Waits, empty or not.
        for (block, name) in [("Sets", "SET"), ("Gets", "GET"), ("Waits", "WAIT")] {
            let op = index(name).map(|i| o.ops[i].clone()).unwrap_or_default();
            let series = series(view, o, |w| index(name).map(|i| w.ops[i].clone()).unwrap_or_default());
            m.insert(block.into(), block_of(view, &op, secs, series, name == "GET"));
        }
    } else {
        for (i, name) in o.command_names.iter().enumerate() {
            let reads = o.ops[i].hits + o.ops[i].misses > 0;
            let series = series(view, o, |w| w.ops[i].clone());
            m.insert(block_name(name), block_of(view, &o.ops[i], secs, series, reads));
        }
    }
    let total = o.total();
    let series = series(view, o, |w| w.total());
    let mut totals = block_of(view, &total, secs, series, true);
    if let Value::Object(t) = &mut totals {
        let io =
            o.errors.sorted().iter().filter(|(k, _)| *k == crate::stats::ErrorKind::Io).map(|(_, n)| *n).sum::<u64>();
        t.insert("Connection Errors".into(), json!(io));
        t.insert("Connection Errors/sec".into(), json!(round(io as f64 / secs, 2)));
    }
    m.insert("Totals".into(), totals);
    Value::Object(m)
}

/// memtier's name for a command's block: `LPUSH` → `Lpushs`.
fn block_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let mut chars = lower.chars();
    match chars.next() {
        Some(first) => format!("{}{}s", first.to_ascii_uppercase(), chars.as_str()),
        None => "s".into(),
    }
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

/// `p50.00`, `p99.90`: memtier's keys.
fn key(p: f64) -> String {
    format!("p{p:.2}")
}

fn block_of(view: &MemtierView<'_>, op: &OpStats, secs: f64, series: Value, reads: bool) -> Value {
    let h = &op.latency_ns;
    let has = !h.is_empty();
    let avg = if has { round(ms(h.mean()), 3) } else { 0.0 };
    let (hits, misses) = if reads { (op.hits as f64 / secs, op.misses as f64 / secs) } else { (0.0, 0.0) };
    let mut m = Map::new();
    m.insert("Count".into(), json!(op.count));
    m.insert("Ops/sec".into(), json!(round(op.count as f64 / secs, 2)));
    m.insert("Hits/sec".into(), json!(round(hits, 2)));
    m.insert("Misses/sec".into(), json!(round(misses, 2)));
    m.insert("Latency".into(), json!(avg));
    m.insert("Average Latency".into(), json!(avg));
    m.insert("Min Latency".into(), json!(if has { round(ms(h.min() as f64), 3) } else { 0.0 }));
    m.insert("Max Latency".into(), json!(if has { round(ms(h.max() as f64), 3) } else { 0.0 }));
    let kb = (op.bytes_in + op.bytes_out) as f64 / 1024.0 / secs;
    m.insert("KB/sec".into(), json!(round(kb, 2)));
    m.insert("Time-Serie".into(), series);
    let mut pct = Map::new();
    for &p in view.percentiles {
        pct.insert(key(p), json!(round(ms(h.value_at_quantile(p / 100.0) as f64), 3)));
    }
    pct.insert("Histogram log format".into(), json!({ "Compressed Histogram": compressed(h) }));
    m.insert("Percentile Latencies".into(), Value::Object(pct));
    Value::Object(m)
}

/// The per-second `Time-Serie` of one command (or the totals), keyed by second.
fn series(view: &MemtierView<'_>, o: &Outcome, pick: impl Fn(&crate::stats::Window) -> OpStats) -> Value {
    let mut m = Map::new();
    for (second, interval) in o.timeline.iter().enumerate() {
        let op = pick(&interval.window);
        let h = &op.latency_ns;
        let has = !h.is_empty();
        let mut s = Map::new();
        s.insert("Count".into(), json!(op.count));
        s.insert("Average Latency".into(), json!(if has { round(ms(h.mean()), 2) } else { 0.0 }));
        s.insert("Min Latency".into(), json!(if has { round(ms(h.min() as f64), 2) } else { 0.0 }));
        s.insert("Max Latency".into(), json!(if has { round(ms(h.max() as f64), 2) } else { 0.0 }));
        for &p in view.percentiles {
            s.insert(key(p), json!(round(ms(h.value_at_quantile(p / 100.0) as f64), 2)));
        }
        s.insert("Bytes RX".into(), json!(op.bytes_in));
        s.insert("Bytes TX".into(), json!(op.bytes_out));
        m.insert(second.to_string(), Value::Object(s));
    }
    Value::Object(m)
}

/// The histogram in microseconds as HdrHistogram's compressed V2 encoding, base64: what
/// memtier writes under `Histogram log format`.
fn compressed(ns: &Histogram<u64>) -> String {
    let us = super::hdrlog::to_micros(ns);
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
    fn memtier_names_and_keys() {
        assert_eq!(block_name("LPUSH"), "Lpushs");
        assert_eq!(block_name("SET"), "Sets");
        assert_eq!(key(50.0), "p50.00");
        assert_eq!(key(99.9), "p99.90");
        assert_eq!(key(99.99), "p99.99");
    }
}
