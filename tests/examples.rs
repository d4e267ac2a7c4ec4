//! The scenarios in examples/scenarios are the cloud guides' procedures: each one runs here,
//! scaled down by its one `scale` variable, against a local redis-server, every phase to a
//! result.

mod common;

use std::path::Path;

use common::*;

fn run_example(name: &str, scale: &str) -> serde_json::Value {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios").join(name);
    let out = respbench()
        .args(["run", file.to_str().unwrap(), "--scale", scale, "-h", "127.0.0.1", "-p", &server.port_arg()])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {}", stderr(&out));
    let doc = read_json(&json);
    for phase in doc["phases"].as_array().unwrap() {
        assert_eq!(phase["ok"], true, "{name}: {phase}");
        if phase["kind"] != "capacity" {
            assert!(phase["result"]["totals"]["count"].as_u64().unwrap() > 0, "{name}: {}", phase["name"]);
            assert_eq!(phase["result"]["totals"]["errors"], 0, "{name}: {}", phase["name"]);
        }
    }
    assert!(server.dbsize() > 0);
    doc
}

#[test]
fn azure_managed_redis_memtier_procedure() {
    let doc = run_example("azure-managed-redis-memtier.toml", "0.001");
    let names: Vec<&str> = doc["phases"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["fill", "throughput"]);
    // memtier-0 .. memtier-1699396, scaled: 1,699 keys.
    assert_eq!(doc["phases"][0]["result"]["totals"]["count"], 1699);
    let line = doc["phases"][1]["command_line"].as_str().unwrap();
    assert!(line.contains("--connections 300 --threads 6 --pipeline 10"), "{line}");
}

/// Populate, centralise (the middle read once), then the gaussian load.
fn auto_tiering(name: &str, keys: u64, middle: u64) {
    let doc = run_example(name, "0.0001");
    let phases = doc["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["populate", "centralise", "gaussian 1:1"]);
    assert_eq!(phases[0]["result"]["totals"]["count"], keys);
    // The middle of the scaled keys, every one there: all hits.
    assert_eq!(phases[1]["result"]["totals"]["count"], middle);
    assert_eq!(phases[1]["result"]["totals"]["misses"], 0, "{}", phases[1]["result"]["totals"]);
    assert!(phases[2]["command_line"].as_str().unwrap().contains("--key-pattern G"));
}

#[test]
fn redis_enterprise_auto_tiering_procedure() {
    auto_tiering("redis-enterprise-auto-tiering.toml", 7500, 2050);
}

#[test]
fn redis_enterprise_auto_tiering_without_replication() {
    auto_tiering("redis-enterprise-auto-tiering-no-replication.toml", 15000, 4100);
}

#[test]
fn elasticache_instance_comparison() {
    let doc = run_example("elasticache-instance-comparison.toml", "0.001");
    let phases = doc["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["SET", "GET", "LPUSH", "LPOP"]);
    for (phase, command) in phases.iter().zip(["SET", "GET", "LPUSH", "LPOP"]) {
        assert_eq!(phase["result"]["commands"][command]["count"], 64000, "{command}: {phase}");
    }
}

#[test]
fn valkey_benchmark_quick_check() {
    let doc = run_example("valkey-benchmark-quick-check.toml", "0.01");
    let phases = doc["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 8);
    let counts: Vec<u64> = phases[..4].iter().map(|p| p["result"]["totals"]["count"].as_u64().unwrap()).collect();
    assert_eq!(counts, [1000; 4]);
    let capacity = &phases[7]["result"]["capacity"];
    assert!(!capacity["steps"].as_array().unwrap().is_empty(), "{capacity}");
    assert_eq!(capacity["slo"]["bound_us"], 1000.0);
}

#[test]
fn azure_cache_redis_benchmark_passes() {
    let doc = run_example("azure-cache-redis-benchmark.toml", "0.01");
    let phases = doc["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["pre-test setup", "latency", "throughput"]);
    let counts: Vec<u64> = phases.iter().map(|p| p["result"]["totals"]["count"].as_u64().unwrap()).collect();
    assert_eq!(counts, [1, 1000, 10000]);
    for p in &phases[1..] {
        let line = p["command_line"].as_str().unwrap();
        assert!(line.contains("--pipeline 50") && line.contains("--data-size 1024"), "{line}");
    }
    // Without -r, one key, as redis-benchmark: key:__rand_int__, which the setup wrote.
    assert_eq!(phases[2]["result"]["totals"]["misses"], 0, "{}", phases[2]["result"]["totals"]);
}

#[test]
fn valkey_benchmark_manual_examples() {
    let doc = run_example("valkey-benchmark-manual.toml", "0.01");
    let phases = doc["phases"].as_array().unwrap();
    let counts: Vec<(&str, u64)> = phases
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["result"]["totals"]["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        counts,
        [
            ("subset SET", 1000),
            ("subset LPUSH", 1000),
            ("random keys SET", 10000),
            ("pipelined SET", 10000),
            ("pipelined GET", 10000),
            ("a million keys", 10000),
            ("custom LPUSH", 100),
        ]
    );
    assert!(phases[3]["command_line"].as_str().unwrap().contains("--pipeline 16"));
    assert!(phases[5]["command_line"].as_str().unwrap().contains("--key-max 999999"));
}
