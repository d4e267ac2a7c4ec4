//! `--metrics-listen`: live OpenMetrics during a run against a real redis-server, scraped over
//! HTTP and read with the Prometheus project's own Python parser.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

/// GET /metrics; the body.
fn scrape(addr: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("application/openmetrics-text"), "{head}");
    body.to_string()
}

/// The samples as `{"name{label=value,...}": value}`, by prometheus_client's OpenMetrics parser.
fn parse(text: &str) -> Value {
    let script = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        out[f"{s.name}{{{labels}}}"] = s.value
print(json.dumps(out))
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 (scripts/install-deps.sh installs prometheus-client)");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the parser refused the text: {}\n{text}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn live_metrics_parse_and_end_equal_to_the_result() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--duration", "3s", "-c", "4", "--threads", "1", "--rate", "3000"])
        .args(["--ratio", "1:4", "--key-max", "999", "--progress", "-q", "--json", json.to_str().unwrap()])
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"]);
    let mut run = Watched::spawn(cmd);
    let addr = address(&mut run);
    // Mid-run: after the first interval, its counts are there.
    run.wait_intervals(1);
    let mid = parse(&scrape(&addr));
    let gets = mid["respbench_requests_total{command=GET}"].as_f64().unwrap();
    assert!(gets > 0.0, "{mid}");
    assert_eq!(mid["respbench_requested_rate{}"], 3000.0);
    assert!(mid["respbench_latency_seconds_count{command=GET}"].as_f64().unwrap() > 0.0, "{mid}");
    assert!(mid["respbench_server_used_memory_bytes{}"].as_f64().unwrap() > 0.0, "{mid}");
    // The end: the final values equal the JSON's counts.
    run.wait_lines(1, |l| l.contains("metrics final"));
    let end = parse(&scrape(&addr));
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    for command in ["GET", "SET"] {
        let count = doc["commands"][command]["count"].as_f64().unwrap();
        assert_eq!(end[format!("respbench_requests_total{{command={command}}}")], count, "{end}");
        assert_eq!(end[format!("respbench_latency_seconds_count{{command={command}}}")], count, "{end}");
    }
    assert!(end["respbench_requests_total{command=GET}"].as_f64().unwrap() > gets);
    let errors: f64 = end
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("respbench_errors_total"))
        .map(|(_, v)| v.as_f64().unwrap())
        .sum();
    assert_eq!(errors, doc["totals"]["errors"].as_f64().unwrap());
}

#[test]
fn a_scenario_serves_one_endpoint_over_its_phases() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = fill_then_run_scenario(dir.path(), &["3000", "1000"]);
    let json = dir.path().join("s.json");
    let mut cmd = respbench();
    cmd.args(["run", file.to_str().unwrap(), "-p", &server.port_arg(), "--json", json.to_str().unwrap()]).args([
        "--metrics-listen",
        "127.0.0.1:0",
        "--metrics-linger",
        "60s",
    ]);
    let mut run = Watched::spawn(cmd);
    run.wait_lines(1, |l| l.contains("metrics final"));
    let addr = metrics_addr(&run);
    let end = parse(&scrape(&addr));
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let phases = doc["phases"].as_array().unwrap();
    // The fill phase (500 keys) is served too.
    let sets: u64 = phases.iter().map(|p| p["result"]["commands"]["SET"]["count"].as_u64().unwrap()).sum();
    assert_eq!(sets, 2500);
    assert_eq!(end["respbench_requests_total{command=SET}"], sets as f64, "{end}");
}

/// The address a run prints when it serves its metrics.
fn address(run: &mut Watched) -> String {
    run.wait_lines(1, |l| l.contains("metrics on http://"));
    metrics_addr(run)
}

/// Scrapes until `command`'s request counter is above 0 (the first interval is in); its value.
fn first_counts(addr: &str, command: &str) -> (f64, Value) {
    let key = format!("respbench_requests_total{{command={command}}}");
    let mut seen = (0.0, Value::Null);
    wait_for(&format!("{key} above 0"), std::time::Duration::from_secs(60), || {
        let parsed = parse(&scrape(addr));
        seen = (parsed[&key].as_f64().unwrap_or(0.0), parsed);
        seen.0 > 0.0
    });
    seen
}

#[test]
fn each_client_thread_has_a_busy_share_every_interval() {
    let server = Server::start(&[]);
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--duration", "4s", "-c", "4", "--threads", "2", "--rate", "2000"]).args([
        "--progress",
        "-q",
        "--metrics-listen",
        "127.0.0.1:0",
    ]);
    let mut run = Watched::spawn(cmd);
    let addr = address(&mut run);
    // The first interval gives each thread's starting point, the second its share.
    run.wait_intervals(2);
    let mid = parse(&scrape(&addr));
    for thread in ["0", "1"] {
        let share = mid[format!("respbench_client_thread_busy_ratio{{thread={thread}}}")].as_f64();
        assert!(share.is_some_and(|s| (0.0..=1.0).contains(&s)), "thread {thread}: {mid}");
    }
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_memtier_front_end_serves_metrics_mid_run() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    // Each connection's requests stop after 2 KiB (a few dozen) until the test has looked.
    let gate = gate::Gate::start(server.port, 2048);
    let mut cmd = respbench();
    // 2 connections at 500 requests per second each, 1,500 each.
    cmd.args(["memtier", "-s", "127.0.0.1", "-p", &gate.port_arg(), "-c", "2", "-t", "1", "-n", "1500"])
        .args(["--rate-limiting=500", "--ratio=1:1", "--hide-histogram", "--metrics-listen=127.0.0.1:0"])
        .args(["--metrics-linger=60s", &format!("--json-out-file={}", json.display())]);
    let mut run = Watched::spawn(cmd);
    let addr = address(&mut run);
    gate.wait_held();
    let (sets, _) = first_counts(&addr, "SET");
    assert!(sets < 1500.0, "not mid-run: {sets} SETs of 1,500");
    gate.open();
    run.wait_lines(1, |l| l.contains("metrics final"));
    let end = parse(&scrape(&addr));
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = end["respbench_requests_total{command=SET}"].as_f64().unwrap()
        + end["respbench_requests_total{command=GET}"].as_f64().unwrap();
    assert_eq!(sent, 3000.0, "{end}");
    assert_eq!(server.calls("set") + server.calls("get"), 3000);
}

#[test]
fn a_fill_serves_metrics_mid_fill() {
    let server = Server::start(&[]);
    // The fill's requests stop after 64 KiB (about a thousand SETs) until the test has looked:
    // an idle machine fills 100,000 keys before its first scrape otherwise.
    let gate = gate::Gate::start(server.port, 64 * 1024);
    let mut cmd = respbench();
    cmd.args(["fill", "-p", &gate.port_arg(), "--key-max", "99999", "-c", "1", "--threads", "1"]).args([
        "--metrics-listen",
        "127.0.0.1:0",
        "--metrics-linger",
        "60s",
    ]);
    let mut run = Watched::spawn(cmd);
    let addr = address(&mut run);
    gate.wait_held();
    let (sets, _) = first_counts(&addr, "SET");
    assert!(sets < 100_000.0, "not mid-fill: {sets} SETs of 100,000");
    gate.open();
    run.wait_lines(1, |l| l.contains("metrics final"));
    let end = parse(&scrape(&addr));
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(end["respbench_requests_total{command=SET}"], 100_000.0, "{end}");
    assert_eq!(server.dbsize(), 100_000);
}

#[test]
fn a_capacity_search_serves_metrics_over_its_steps() {
    let server = Server::start(&[]);
    let mut cmd = respbench();
    cmd.args(["capacity", "-p", &server.port_arg(), "--slo", "p99=1s", "--start-rate", "400", "--max-rate", "800"])
        .args(["--precision", "50", "--duration", "2s", "-c", "2", "--threads", "1", "--ratio", "1:1"])
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"]);
    let mut run = Watched::spawn(cmd);
    let addr = address(&mut run);
    let (sets, mid) = first_counts(&addr, "SET");
    assert!(mid["respbench_requested_rate{}"].as_f64().unwrap() >= 400.0, "{mid}");
    run.wait_lines(1, |l| l.contains("metrics final"));
    let end = parse(&scrape(&addr));
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    // Every step's requests: more than the first interval's, and all the server executed.
    let total = end["respbench_requests_total{command=SET}"].as_f64().unwrap();
    assert!(total > sets, "{sets} then {total}");
    assert_eq!(total as u64, server.calls("set"), "{end}");
}

/// The address a run said it serves its metrics on (`metrics on http://ADDR/metrics`).
fn metrics_addr(run: &Watched) -> String {
    run.lines()
        .iter()
        .find_map(|l| l.split("http://").nth(1))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap()
        .to_string()
}
