//! Plain tables built from a result JSON: CSV of the summary and of the time series, and a
//! Markdown summary to paste into issues and pull requests.

use std::fmt::Write;

use serde_json::Value;

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// The rows of the summary: each command, then the totals.
fn rows(doc: &Value) -> Vec<(String, &Value)> {
    let mut rows: Vec<(String, &Value)> =
        doc["commands"].as_object().map(|m| m.iter().map(|(k, v)| (k.clone(), v)).collect()).unwrap_or_default();
    rows.push(("Totals".into(), &doc["totals"]));
    rows
}

/// A CSV field, quoted when it must be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

pub fn csv_summary(doc: &Value) -> String {
    let mut out = String::from(
        "type,count,ops_per_sec,hits_per_sec,misses_per_sec,avg_ms,p50_ms,p99_ms,p99.9_ms,max_ms,kb_per_sec,errors\n",
    );
    for (name, op) in rows(doc) {
        let l = &op["latency_us"];
        let _ = writeln!(
            out,
            "{},{},{:.2},{:.2},{:.2},{:.3},{:.3},{:.3},{:.3},{:.3},{:.2},{}",
            field(&name),
            op["count"].as_u64().unwrap_or(0),
            num(&op["ops_per_sec"]),
            num(&op["hits_per_sec"]),
            num(&op["misses_per_sec"]),
            num(&l["mean_us"]) / 1000.0,
            num(&l["p50_us"]) / 1000.0,
            num(&l["p99_us"]) / 1000.0,
            num(&l["p99.9_us"]) / 1000.0,
            num(&l["max_us"]) / 1000.0,
            num(&op["kb_per_sec"]),
            op["errors"].as_u64().unwrap_or(0)
        );
    }
    out
}

pub fn csv_timeline(doc: &Value) -> String {
    let mut out = String::from(
        "run,index,start_secs,duration_secs,count,ops_per_sec,p50_ms,p99_ms,p99.9_ms,max_ms,errors,server_cpu,server_used_memory_bytes,server_hit_ratio\n",
    );
    for p in doc["time_series"].as_array().into_iter().flatten() {
        let l = &p["latency_us"];
        let opt = |v: &Value| v.as_f64().map(|x| x.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{:.3},{:.3},{},{:.2},{:.3},{:.3},{:.3},{:.3},{},{},{},{}",
            p["run"].as_u64().unwrap_or(0),
            p["index"].as_u64().unwrap_or(0),
            num(&p["start_secs"]),
            num(&p["duration_secs"]),
            p["count"].as_u64().unwrap_or(0),
            num(&p["ops_per_sec"]),
            num(&l["p50_us"]) / 1000.0,
            num(&l["p99_us"]) / 1000.0,
            num(&l["p99.9_us"]) / 1000.0,
            num(&l["max_us"]) / 1000.0,
            p["errors"].as_u64().unwrap_or(0),
            opt(&p["server"]["cpu"]["total"]),
            opt(&p["server"]["used_memory_bytes"]),
            opt(&p["server"]["hit_ratio"]),
        );
    }
    out
}

pub fn markdown(doc: &Value) -> String {
    let server = doc["server"]
        .as_object()
        .map(|s| format!("{} {}", s["name"].as_str().unwrap_or(""), s["version"].as_str().unwrap_or("")))
        .unwrap_or_else(|| "server".into());
    let c = &doc["configuration"];
    let mut out = format!(
        "**{server}** at `{}`: {} connections, pipeline {}, {:.2} s{}\n\n",
        c["target"].as_str().unwrap_or(""),
        c["connections"],
        c["pipeline"],
        num(&doc["duration_secs"]),
        if doc["interrupted"].as_bool() == Some(true) { " (interrupted)" } else { "" }
    );
    out.push_str(
        "| Type | Ops/sec | p50 ms | p99 ms | p99.9 ms | Max ms | Errors |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for (name, op) in rows(doc) {
        let l = &op["latency_us"];
        let _ = writeln!(
            out,
            "| {name} | {:.0} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
            num(&op["ops_per_sec"]),
            num(&l["p50_us"]) / 1000.0,
            num(&l["p99_us"]) / 1000.0,
            num(&l["p99.9_us"]) / 1000.0,
            num(&l["max_us"]) / 1000.0,
            op["errors"].as_u64().unwrap_or(0)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(field("GET"), "GET");
        assert_eq!(field("a,b"), "\"a,b\"");
    }
}
