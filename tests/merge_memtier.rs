//! `respbench merge --memtier-json`: shards' results, run on real processes against one real
//! server, merged into memtier_benchmark 2.3's JSON: memtier's key set, counts that add up to
//! the shards' and the server's, percentiles of the union of the shards' samples.

mod common;
mod memtier_shape;
mod shard_support;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use hdrhistogram::Histogram;
use memtier_shape::assert_same_as_fixture;
use serde_json::Value;
use shard_support::*;

/// The union of the shards' histograms at `pick`, built here from each shard's own.
fn union(docs: &[Value], pick: impl Fn(&Value) -> &Value) -> Histogram<u64> {
    let mut all = decode(pick(&docs[0]));
    for d in &docs[1..] {
        all.add(decode(pick(d))).unwrap();
    }
    all
}

/// Each interval's response times, all commands together, from the interval log the result
/// names beside it (HdrHistogram's interval log format: one line per command and kind, an
/// interval's lines sharing their start).
fn interval_totals(json: &Path, doc: &Value) -> Vec<Histogram<u64>> {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let name = doc["histograms"]["interval_log"].as_str().expect("the result names its interval log");
    let text = std::fs::read(json.parent().unwrap().join(name)).unwrap();
    let mut out: Vec<(f64, Histogram<u64>)> = Vec::new();
    for entry in IntervalLogIterator::new(&text) {
        let LogEntry::Interval(line) = entry.unwrap() else { continue };
        if !line.tag().unwrap().as_str().ends_with("/response") {
            continue;
        }
        let start = line.start_timestamp().as_secs_f64();
        let h = decode(&Value::String(line.encoded_histogram().to_string()));
        match out.last_mut() {
            Some((at, sum)) if (*at - start).abs() < 1e-4 => sum.add(h).unwrap(),
            _ => out.push((start, h)),
        }
    }
    out.into_iter().map(|(_, h)| h).collect()
}

/// memtier's figure for a percentile of a nanosecond histogram: milliseconds, 3 decimals.
fn memtier_ms(h: &Histogram<u64>, percent: f64) -> f64 {
    let ns = h.highest_equivalent(h.value_at_quantile(percent / 100.0));
    (ns as f64 / 1e6 * 1000.0).round() / 1000.0
}

#[test]
fn three_shards_merge_into_memtiers_json_with_union_percentiles() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let common = ["-n", "30000", "--ratio", "1:4", "--key-max", "10000", "-d", "100", "-c", "4", "--threads", "2"];
    let (files, docs) = run_shards(&server, dir.path(), "s", 3, &common);
    let memtier = dir.path().join("merged-memtier.json");
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().cloned());
    args.extend(["--memtier-json".into(), memtier.display().to_string()]);
    let out = respbench().args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let m = read_json(&memtier);

    // (1) memtier 2.3's key set and types.
    assert_same_as_fixture(&m, "basic.json");

    // (2) Counts add up: to the shards' and to what the server counted.
    let all = &m["ALL STATS"];
    let count = |block: &str| all[block]["Count"].as_u64().unwrap();
    let shards_total: u64 = docs.iter().map(|d| d["totals"]["count"].as_u64().unwrap()).sum();
    assert_eq!(count("Totals"), shards_total);
    assert_eq!(count("Totals"), 30_000);
    assert_eq!(count("Sets"), server.calls("set"));
    assert_eq!(count("Gets"), server.calls("get"));
    assert_eq!(count("Sets") + count("Gets"), count("Totals"));
    for block in ["Sets", "Gets", "Totals"] {
        let series: u64 =
            all[block]["Time-Serie"].as_object().unwrap().values().map(|s| s["Count"].as_u64().unwrap()).sum();
        assert_eq!(series, count(block), "{block}'s Time-Serie");
    }
    // The whole run's connections and threads, memtier's way: threads x clients per thread.
    assert_eq!(m["configuration"]["threads"], 6);
    assert_eq!(m["configuration"]["clients"], 2);
    assert_eq!(m["configuration"]["requests"], 30_000 / 12);
    assert_eq!(m["run information"]["Threads"], 6);

    // (3) Percentiles of the union of every shard's samples, not averages of theirs.
    let totals = union(&docs, |d| &d["histograms"]["totals"]["latency"]);
    let sets = union(&docs, |d| &d["histograms"]["commands"]["SET"]["latency"]);
    assert_eq!(totals.len(), 30_000);
    for (key, p) in [("p50.00", 50.0), ("p99.00", 99.0), ("p99.90", 99.9)] {
        assert_eq!(all["Totals"]["Percentile Latencies"][key].as_f64().unwrap(), memtier_ms(&totals, p), "{key}");
        assert_eq!(all["Sets"]["Percentile Latencies"][key].as_f64().unwrap(), memtier_ms(&sets, p), "Sets {key}");
    }
    let max = (totals.max() as f64 / 1e6 * 1000.0).round() / 1000.0;
    assert_eq!(all["Totals"]["Max Latency"].as_f64().unwrap(), max);
    // Each second is the union of the shards' intervals that fall in it on the wall clock
    // (the shards started apart: each interval's second is its start since the first start).
    let base = docs.iter().map(|d| d["started_unix_ms"].as_i64().unwrap()).min().unwrap();
    let mut seconds: BTreeMap<u64, Histogram<u64>> = BTreeMap::new();
    for (d, file) in docs.iter().zip(&files) {
        let offset = (d["started_unix_ms"].as_i64().unwrap() - base) as f64 / 1000.0;
        let points = d["time_series"].as_array().unwrap();
        let logged = interval_totals(Path::new(file), d);
        assert_eq!(points.len(), logged.len(), "an interval in the log per point");
        for (point, h) in points.iter().zip(logged) {
            let second = (offset + point["start_secs"].as_f64().unwrap()).round() as u64;
            match seconds.get_mut(&second) {
                Some(all) => all.add(h).unwrap(),
                None => drop(seconds.insert(second, h)),
            }
        }
    }
    let series = all["Totals"]["Time-Serie"].as_object().unwrap();
    assert_eq!(series.len(), seconds.len());
    for (second, h) in &seconds {
        let ours = &series[&second.to_string()];
        assert_eq!(ours["Count"].as_u64().unwrap(), h.len(), "second {second}");
        assert_eq!(ours["p99.00"].as_f64().unwrap(), memtier_ms(h, 99.0), "second {second}");
    }
    // memtier's own compressed histogram (microseconds) holds every sample.
    let compressed = &all["Totals"]["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"];
    assert_eq!(decode(compressed).len(), 30_000);
}

#[test]
fn merge_with_memtier_json_refuses_different_workloads() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let m = dir.path().join("m.json");
    run_ok(&server, &["-n", "2000", "--shard", "0/2", "--ratio", "1:4", "--json", a.to_str().unwrap(), "-q"]);
    run_ok(&server, &["-n", "2000", "--shard", "1/2", "--ratio", "1:1", "--json", b.to_str().unwrap(), "-q"]);
    let out = respbench()
        .args(["merge", a.to_str().unwrap(), b.to_str().unwrap(), "--memtier-json", m.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("different workloads") && err.contains("configuration.commands"), "{err}");
    assert!(!m.exists(), "nothing is written for a refused merge");
}

#[test]
fn shards_of_several_runs_merge_into_memtiers_run_sections() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let common = ["-n", "2000", "--ratio", "1:1", "-c", "5", "--runs", "2"];
    let (files, docs) = run_shards(&server, dir.path(), "r", 2, &common);
    let memtier = dir.path().join("runs-memtier.json");
    let out = respbench()
        .args(["merge", &files[0], &files[1], "--print-all-runs", "--hide-histogram", "--memtier-json"])
        .arg(&memtier)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let m = read_json(&memtier);
    assert_same_as_fixture(&m, "runs.json");
    let count = |section: &str| m[section]["Totals"]["Count"].as_u64().unwrap();
    for run in 0..2 {
        let shards: u64 = docs.iter().map(|d| d["runs"][run]["count"].as_u64().unwrap()).sum();
        assert_eq!(count(&format!("RUN #{} RESULTS", run + 1)), shards, "run {run}");
    }
    let all = count("AGGREGATED AVERAGE RESULTS (2 runs)");
    assert_eq!(all, count("RUN #1 RESULTS") + count("RUN #2 RESULTS"));
    assert_eq!(all, server.calls("set") + server.calls("get"));
    assert_eq!(all, 2 * 2000);
}
