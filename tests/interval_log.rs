//! The interval log beside a result (`FILE.hlog`): a run's per-interval histograms leave the
//! JSON (which keeps a small line per interval) for HdrHistogram's interval log format, and
//! `respbench recover` and `respbench merge` read it back, the latency's parts included.

mod common;
mod shard_support;

use std::path::Path;
use std::time::Duration;

use common::*;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use serde_json::Value;
use shard_support::*;

/// The interval log's lines, as (tag, start, bytes of the line).
fn log_lines(path: &Path) -> Vec<(String, f64, usize)> {
    let text = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(&text) {
        if let LogEntry::Interval(line) = entry.unwrap() {
            let tag = line.tag().unwrap().as_str().to_string();
            out.push((tag, line.start_timestamp().as_secs_f64(), line.encoded_histogram().len()));
        }
    }
    out
}

#[test]
fn the_json_keeps_a_small_line_per_interval_and_the_log_the_histograms() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let args = ["--duration", "5s", "--rate", "4000", "-c", "4", "--threads", "1", "--ratio", "1:3", "--timestamps"];
    run_ok(&server, &[&args[..], &["--key-max", "999", "--json", json.to_str().unwrap()]].concat());
    let text = std::fs::read_to_string(&json).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let points = doc["time_series"].as_array().unwrap();
    assert!(points.len() >= 5, "{} points", points.len());
    // Each point is one line of the file, well under 2 KB, and no interval histogram is inline.
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("    {\"run\":")).collect();
    assert_eq!(lines.len(), points.len());
    for line in &lines {
        assert!(line.len() < 2_000, "{} bytes: {line}", line.len());
    }
    assert!(doc["histograms"].get("intervals").is_none(), "{}", doc["histograms"]);
    let name = doc["histograms"]["interval_log"].as_str().unwrap();
    assert_eq!(name, "run.json.hlog");
    assert!(!dir.path().join("run.json.journal").exists(), "the journal goes, the interval log stays");
    // One group of lines per point, tagged by command and kind, with the parts; 10 KB at most each.
    let logged = log_lines(&dir.path().join(name));
    let mut starts: Vec<f64> = logged.iter().map(|(_, s, _)| *s).collect();
    starts.dedup();
    assert_eq!(starts.len(), points.len());
    for kind in ["GET/response", "SET/service", "GET/wire_and_server", "GET/send_lag", "GET/receive_lag", "@/send_lag"]
    {
        assert!(logged.iter().any(|(t, _, _)| t == kind), "no {kind}");
    }
    for start in starts {
        let bytes: usize = logged.iter().filter(|(_, s, _)| *s == start).map(|(_, _, n)| n).sum();
        assert!(bytes <= 10_000, "interval at {start}: {bytes} bytes");
    }
}

#[test]
fn recover_and_merge_keep_the_latency_parts() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // A killed run: recovered from its journal and its interval log.
    let json = dir.path().join("killed.json");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--duration", "60s", "-c", "4", "--threads", "1", "--timestamps"]).args([
        "--key-max",
        "999",
        "--json",
        json.to_str().unwrap(),
        "--progress",
    ]);
    let mut run = Watched::spawn(cmd);
    let journal = dir.path().join("killed.json.journal");
    run.wait_intervals(2);
    wait_for("two journaled intervals", Duration::from_secs(60), || {
        std::fs::read_to_string(&journal).unwrap_or_default().matches("\"line\":\"interval\"").count() >= 2
    });
    run.signal(libc::SIGKILL);
    run.finish();
    let recovered = dir.path().join("recovered.json");
    let out = respbench()
        .args(["recover", journal.to_str().unwrap(), "--json", recovered.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&recovered);
    let parts = &doc["totals"]["latency_parts_us"];
    assert!(parts["count"].as_u64().unwrap() > 0, "{}", doc["totals"]);
    assert!(parts["wire_and_server"]["p99_us"].as_f64().unwrap() > 0.0, "{parts}");
    assert!(doc["commands"]["GET"]["latency_parts_us"]["count"].as_u64().unwrap() > 0);

    // Two shards with parts: the merge adds them.
    let common = ["-n", "4000", "--ratio", "1:3", "--key-max", "999", "-c", "2", "--threads", "1", "--timestamps"];
    let (files, docs) = run_shards(&server, dir.path(), "p", 2, &common);
    let merged = dir.path().join("merged.json");
    let out = respbench().args(["merge", &files[0], &files[1], "--json", merged.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let m = read_json(&merged);
    let count = |d: &Value| d["totals"]["latency_parts_us"]["count"].as_u64().unwrap();
    assert!(docs.iter().all(|d| count(d) > 0));
    assert_eq!(count(&m), docs.iter().map(count).sum::<u64>());
    let series = m["time_series"].as_array().unwrap();
    assert!(series.iter().any(|p| p["latency_parts_us"]["count"].as_u64().unwrap_or(0) > 0), "{series:?}");
}
