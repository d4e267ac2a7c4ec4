//! Several load machines as one run, on real servers and processes: shards fill disjoint parts
//! of a key range that add up to exactly the range, `respbench merge` adds their histograms
//! (checked against one built here from the decoded shards), and `--start-at` starts shards
//! on one instant and refuses a past one (unless a late shard may start at once).

mod common;
mod shard_support;

use std::process::Child;
use std::time::{SystemTime, UNIX_EPOCH};

use common::*;
use serde_json::Value;
use shard_support::*;

/// Within the histograms' precision (3 significant digits).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= a.abs().max(b.abs()) * 1e-3 + 1e-9
}

#[test]
fn two_shards_fill_the_range_exactly_and_merge_exactly() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let common =
        ["-n", "allkeys", "--key-min", "1", "--key-max", "100000", "--key-pattern", "P:P", "-c", "4", "--seed", "7"];
    let (files, docs) = run_shards(&server, dir.path(), "shard", 2, &common);
    assert_eq!(server.dbsize(), 100_000);
    assert_eq!(server.calls("set"), 100_000);
    assert_eq!(docs[0]["shard"]["key_part"], serde_json::json!([1, 50000]));
    assert_eq!(docs[1]["shard"]["key_part"], serde_json::json!([50001, 100000]));
    assert_ne!(docs[0]["shard"]["stream_seed"], docs[1]["shard"]["stream_seed"]);

    let merged = dir.path().join("merged.json");
    let out = respbench().args(["merge", &files[0], &files[1], "--json", merged.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let m = read_json(&merged);
    let count = |d: &Value| d["totals"]["count"].as_u64().unwrap();
    assert_eq!(count(&m), count(&docs[0]) + count(&docs[1]));
    assert_eq!(count(&m), 100_000);
    assert_eq!(m["configuration"]["connections"], 8);
    // One histogram of every sample, built here from both shards' own.
    let mut all = decode(&docs[0]["histograms"]["totals"]["latency"]);
    all.add(decode(&docs[1]["histograms"]["totals"]["latency"])).unwrap();
    assert_eq!(all.len(), 100_000);
    let lat = &m["totals"]["latency_us"];
    for (field, q) in [("p50_us", 0.5), ("p99_us", 0.99), ("p99.9_us", 0.999)] {
        let want = all.value_at_quantile(q) as f64 / 1000.0;
        assert!(close(lat[field].as_f64().unwrap(), want), "{field}: {} vs {want}", lat[field]);
    }
    assert!(close(lat["max_us"].as_f64().unwrap(), all.max() as f64 / 1000.0));
    // The merged result's own histograms are the union too, and it renders as any result.
    assert_eq!(decode(&m["histograms"]["totals"]["latency"]), all);
    let report = respbench().args(["report", merged.to_str().unwrap()]).output().unwrap();
    assert!(report.status.success() && stdout(&report).contains("Totals"), "{}", stderr(&report));
}

#[test]
fn merge_refuses_different_workloads_in_one_line() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    run_ok(&server, &["-n", "2000", "--shard", "0/2", "--data-size", "32", "--json", a.to_str().unwrap(), "-q"]);
    run_ok(&server, &["-n", "2000", "--shard", "1/2", "--data-size", "64", "--json", b.to_str().unwrap(), "-q"]);
    let out = respbench().args(["merge", a.to_str().unwrap(), b.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("configuration.value_size"), "{err}");
}

#[test]
fn a_start_time_in_the_past_is_refused() {
    let server = Server::start(&[]);
    let out = run(&server, &["-n", "100", "--start-at", "2001-09-09T01:46:40Z"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--start-at 1000000000.000 is in the past"), "{err}");
    let out = run(&server, &["-n", "100", "--start-at", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("'soon' is not a time"), "{}", stderr(&out));
}

#[test]
fn a_late_shard_starts_at_once_when_allowed_and_says_how_late() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("late.json");
    let late = ["-n", "100", "--start-at", "1000000000", "--allow-late-start", "-q", "--json", json.to_str().unwrap()];
    let out = run(&server, &late);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("--start-at 1000000000.000 passed"), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["start"]["requested_unix_ms"], 1e12);
    assert!(doc["start"]["offset_ms"].as_f64().unwrap() > 0.0, "{}", doc["start"]);
    assert_eq!(server.calls("set") + server.calls("get"), 100);
    let out = run(&server, &["-n", "100", "--allow-late-start"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--start-at"), "{}", stderr(&out));
}

#[test]
fn shards_started_together_start_within_milliseconds() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    let at = format!("{:.3}", now + 2.0);
    let (files, docs) = run_shards(&server, dir.path(), "s", 2, &["--duration", "1s", "--start-at", &at, "-c", "2"]);
    let requested: f64 = at.parse::<f64>().unwrap() * 1000.0;
    for d in &docs {
        assert!(close(d["start"]["requested_unix_ms"].as_f64().unwrap(), requested), "{}", d["start"]);
        let offset = d["start"]["offset_ms"].as_f64().unwrap();
        assert!(offset.abs() < 5.0, "offset {offset} ms");
    }
    let starts: Vec<i64> = docs.iter().map(|d| d["started_unix_ms"].as_i64().unwrap()).collect();
    assert!((starts[0] - starts[1]).abs() < 5, "{starts:?}");
    let out = respbench().args(["merge", &files[0], &files[1]]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("apart"), "{}", stderr(&out));
}

#[test]
fn the_front_ends_pass_the_shard_options_on() {
    let server = Server::start(&[]);
    let port = server.port_arg();
    let memtier = ["memtier", "-p", &port, "--shard", "1/2", "-n", "100", "-c", "1", "-t", "1", "--hide-histogram"];
    let out = respbench().args(memtier).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("shard 1/2 (from --shard 1/2)"), "{}", stderr(&out));
    let bench = ["redis-benchmark", "-p", &port, "--shard", "0/2", "-n", "1000", "-t", "set", "-q"];
    let out = respbench().args(bench).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("shard 0/2 (from --shard 0/2)"), "{}", stderr(&out));
    let out = respbench().args(["redis-benchmark", "-p", &port, "--start-at", "5", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is in the past"), "{}", stderr(&out));
    let late =
        ["redis-benchmark", "-p", &port, "--start-at", "5", "--allow-late-start", "-n", "100", "-t", "set", "-q"];
    let out = respbench().args(late).output().unwrap();
    assert!(out.status.success() && stderr(&out).contains("passed"), "{}", stderr(&out));
}

#[test]
fn memtier_command_lines_run_as_shards_merge_through_their_respbench_results() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..2).map(|i| dir.path().join(format!("m{i}.json")).display().to_string()).collect();
    let shards: Vec<Child> = (0..2)
        .map(|i| {
            let (shard, json) = (format!("--shard={i}/2"), format!("--respbench-json={}", files[i]));
            let memtier_json = format!("--json-out-file={}", dir.path().join(format!("memtier{i}.json")).display());
            let args = ["memtier", "-c", "2", "-t", "1", "-n", "1000", "--ratio=1:1", "--hide-histogram"];
            spawn_shard_with(&server, &args, &[&shard, &json, &memtier_json])
        })
        .collect();
    shards.into_iter().for_each(wait_ok);
    let merged = dir.path().join("merged.json");
    let out = respbench().arg("merge").args(&files).args(["--json", merged.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&merged);
    // The command line's total (2 connections x 1,000 requests) is split between the shards.
    assert_eq!(doc["totals"]["count"], 2000, "{}", doc["totals"]);
    assert_eq!(server.calls("set") + server.calls("get"), 2000);
    // memtier's own file is still written, as memtier writes it.
    assert!(dir.path().join("memtier0.json").exists());
}
