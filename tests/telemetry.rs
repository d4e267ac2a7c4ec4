//! Filling to a memory target, server telemetry during runs, and the checks before a run,
//! against real redis-server processes.

mod common;

use common::*;

fn used_memory(server: &Server) -> u64 {
    server.info_u64("memory", "used_memory")
}

#[test]
fn fill_reaches_75_percent_of_maxmemory_without_evicting() {
    let server = Server::start(&["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("fill.json");
    let out = respbench()
        .args([
            "fill",
            "-p",
            &server.port_arg(),
            "--memory-target",
            "75%",
            "-d",
            "1000",
            "--json",
            json.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let target = 0.75 * 64.0 * 1024.0 * 1024.0;
    let used = used_memory(&server) as f64;
    assert!((used - target).abs() / target < 0.05, "used_memory {used}, target {target}");
    assert_eq!(server.info_u64("stats", "evicted_keys"), 0);
    let doc = read_json(&json);
    let (min, max) = (doc["key_min"].as_u64().unwrap(), doc["key_max"].as_u64().unwrap());
    assert_eq!(server.dbsize(), max - min + 1);
    assert_eq!(server.cli(&["EXISTS", &format!("key:{max}")]), "1");
    assert_eq!(server.cli(&["EXISTS", &format!("key:{}", max + 1)]), "0");
    let text = stdout(&out);
    assert!(text.contains(&format!("--key-min {min} --key-max {max}")), "{text}");
}

#[test]
fn fill_with_memory_given_works_when_config_is_renamed_away() {
    let server = Server::start(&["--rename-command", "CONFIG", ""]);
    assert!(server.cli(&["CONFIG", "GET", "maxmemory"]).contains("unknown command"), "CONFIG still answers");
    // Without --memory the server does not say how much it has: a clear error.
    let out = respbench().args(["fill", "-p", &server.port_arg(), "--memory-target", "75%"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1);
    assert!(stderr(&out).contains("--memory"), "{}", stderr(&out));
    let out = respbench()
        .args(["fill", "-p", &server.port_arg(), "--memory-target", "75%", "--memory", "32mb", "-d", "500"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let target = 0.75 * 32.0 * 1024.0 * 1024.0;
    let used = used_memory(&server) as f64;
    assert!((used - target).abs() / target < 0.05, "used_memory {used}, target {target}");
}

#[test]
fn fill_refuses_a_target_it_cannot_reach_without_eviction() {
    let server = Server::start(&["--maxmemory", "16mb"]);
    let out = respbench().args(["fill", "-p", &server.port_arg(), "--memory-target", "1gb"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("would evict"), "{}", stderr(&out));
    // A plain key-range fill needs no target.
    let out = respbench().args(["fill", "-p", &server.port_arg(), "--key-max", "999", "-d", "10"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.dbsize(), 1000);
}

#[test]
fn a_run_records_server_cpu_memory_and_a_hit_ratio_that_matches_the_clients() {
    let server = Server::start(&[]);
    run_ok(&server, &["-n", "allkeys", "--key-max", "999", "-d", "64"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_ok(
        &server,
        &["--duration", "3s", "--ratio", "0:1", "--key-max", "1999", "-c", "4", "--json", json.to_str().unwrap()],
    );
    let doc = read_json(&json);
    let points = doc["time_series"].as_array().unwrap();
    let full: Vec<&serde_json::Value> = points.iter().filter(|p| p["duration_secs"].as_f64().unwrap() > 0.9).collect();
    assert!(full.len() >= 2, "{} full intervals", full.len());
    for p in full {
        let server_side = &p["server"];
        assert!(server_side["cpu"]["total"].as_f64().unwrap() > 0.0, "{server_side}");
        assert!(server_side["used_memory_bytes"].as_u64().unwrap() > 100_000);
        let (hits, misses) = (p["hits"].as_f64().unwrap(), p["misses"].as_f64().unwrap());
        let client_ratio = hits / (hits + misses);
        let server_ratio = server_side["hit_ratio"].as_f64().unwrap();
        assert!((client_ratio - server_ratio).abs() < 0.01, "client {client_ratio}, server {server_ratio}");
    }
    let overall = &doc["server_telemetry"];
    assert!((overall["hit_ratio"].as_f64().unwrap() - 0.5).abs() < 0.02, "{overall}");
    assert_eq!(overall["keys"], 1000);
    assert!(overall["connected_clients"].as_u64().unwrap() >= 5, "{overall}");
}

#[test]
fn evictions_during_a_run_are_reported() {
    let server = Server::start(&["--maxmemory", "4mb", "--maxmemory-policy", "allkeys-random"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = run_ok(
        &server,
        &[
            "--duration",
            "2s",
            "--ratio",
            "1:0",
            "-d",
            "8k",
            "--key-max",
            "9999",
            "-c",
            "4",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let doc = read_json(&json);
    let evicted = doc["server_telemetry"]["evicted_keys"].as_u64().unwrap();
    assert!(evicted > 0, "{}", doc["server_telemetry"]);
    assert!(doc["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("evicted")));
    assert!(stdout(&out).contains("WARNING: the server evicted"), "{}", stdout(&out));
}

#[test]
fn checks_before_a_run_warn_on_one_line_each() {
    let server = Server::start(&[]);
    // Reading an empty keyspace.
    let out = run_ok(&server, &["-n", "200", "--ratio", "0:1", "-q"]);
    let err = stderr(&out);
    assert!(err.lines().any(|l| l.starts_with("respbench: warning: the keyspace is empty")), "{err}");
    // Reading a range that is only partly filled.
    run_ok(&server, &["-n", "allkeys", "--key-max", "499"]);
    let out = run_ok(&server, &["-n", "200", "--ratio", "0:1", "--key-max", "999", "-q"]);
    assert!(stderr(&out).contains("keys sampled across the read range key:0..key:999 exist"), "{}", stderr(&out));
    // A filled range: no warning.
    let out = run_ok(&server, &["-n", "200", "--ratio", "0:1", "--key-max", "499", "-q"]);
    assert_eq!(stderr(&out), "");
    // Persistence.
    let persisting = Server::start(&["--save", "3600 1", "--appendonly", "yes"]);
    let out = run_ok(&persisting, &["-n", "100", "--ratio", "1:0", "-q"]);
    let err = stderr(&out);
    assert!(err.contains("snapshots to disk (save \"3600 1\")"), "{err}");
    assert!(err.contains("appendonly yes"), "{err}");
}

#[test]
fn a_server_that_refuses_info_just_gets_no_telemetry() {
    let server = Server::start(&["--rename-command", "INFO", ""]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = run_ok(&server, &["-n", "2000", "-c", "2", "--json", json.to_str().unwrap()]);
    let doc = read_json(&json);
    assert!(doc["server_telemetry"].is_null());
    assert!(doc["server"].is_null());
    assert!(doc["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("refused INFO")));
    assert!(stdout(&out).contains("server (INFO refused)"), "{}", stdout(&out));
}

#[test]
fn fill_flags_and_errors() {
    let help = respbench().args(["fill", "--help"]).output().unwrap();
    assert!(help.status.success());
    for flag in ["--memory-target", "--memory", "--key-min", "--data-size", "--json"] {
        assert!(stdout(&help).contains(flag), "fill --help lacks {flag}");
    }
    for (args, needle) in [
        (&["fill", "--memory-target", "150%"][..], "'150%'"),
        (&["fill", "--memory-target", "lots"][..], "'lots'"),
        (&["fill", "--memory", "1gb"][..], "--memory-target"),
        (&["fill", "--ratio", "1:1"][..], "--ratio"),
    ] {
        let out = respbench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out).lines().count(), 1, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}
