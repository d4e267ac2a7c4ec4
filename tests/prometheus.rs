//! The live metrics read by the databases that read them in production: Debian's real
//! `prometheus` scraping `--metrics-listen`, and Debian's real `prometheus-pushgateway`
//! receiving `--metrics-push`, each against a real redis-server; what they hold at the end
//! equals the run's JSON. Skipped, with the reason printed, only where the binaries are missing
//! (scripts/install-deps.sh installs them).

mod common;

use std::path::Path;
use std::time::Duration;

use common::prom::{Daemon, installed, pushed_requests, pushgateway};
use common::*;
use serde_json::Value;

/// Each command's count in the run's JSON, and the total.
fn json_counts(path: &Path) -> (Vec<(String, f64)>, f64) {
    let doc = read_json(path);
    let commands = doc["commands"].as_object().unwrap();
    let counts = commands.iter().map(|(name, c)| (name.clone(), c["count"].as_f64().unwrap())).collect();
    (counts, doc["totals"]["count"].as_f64().unwrap())
}

#[test]
fn prometheus_scrapes_the_final_request_total_of_the_json() {
    let Some(prometheus) = installed("prometheus") else { return };
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--duration", "3s", "-c", "4", "--threads", "1", "--rate", "2000"])
        .args(["--ratio", "1:4", "--key-max", "999", "--progress", "-q", "--json", json.to_str().unwrap()])
        // The run keeps its final values until Prometheus has scraped them.
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "300s"]);
    let mut run = Watched::spawn(cmd);
    run.wait_lines(1, |l| l.contains("metrics on http://"));
    let target = run.lines().iter().find_map(|l| l.split("http://").nth(1)?.strip_suffix("/metrics")).unwrap();
    let prom = Daemon::scraping(&prometheus, "respbench", target);
    // The run ends once a scrape has read its final values.
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let (counts, total) = json_counts(&json);
    assert!(total > 0.0);
    // The target is gone now, so its series are stale at the present: the last sample stored.
    let query = "sum by (command) (last_over_time(respbench_requests_total{job=\"respbench\"}[1h]))";
    let mut seen = Value::Null;
    wait_for("Prometheus to hold the final request counts", Duration::from_secs(120), || {
        seen = prom.query(query);
        let result = seen["data"]["result"].as_array().cloned().unwrap_or_default();
        let scraped = |command: &str| {
            result.iter().find(|r| r["metric"]["command"] == command).and_then(|r| r["value"][1].as_str()?.parse().ok())
        };
        counts.iter().all(|(command, count)| scraped(command) == Some(*count))
    });
    let sum: f64 = seen["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"][1].as_str().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(sum, total, "{seen}");
    // Prometheus runs each of the dashboard's queries (their names are checked against the
    // endpoint's below: a family without samples yet, such as errors in an errorless run, is
    // not stored).
    for expr in dashboard_queries() {
        let promql = expr.replace("$__rate_interval", "1m").replace("$job", "respbench");
        let answer: Value = prom.query(&promql);
        assert_eq!(answer["status"], "success", "{promql}: {answer}");
    }
}

const DASHBOARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/grafana/respbench.json");

/// Every panel query of the Grafana dashboard.
fn dashboard_queries() -> Vec<String> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(DASHBOARD).unwrap()).unwrap();
    let panels = doc["panels"].as_array().unwrap();
    panels
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap())
        .map(|t| t["expr"].as_str().unwrap().to_string())
        .collect()
}

/// The `respbench_` metric names a query reads.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("respbench_") {
        let tail = &rest[at..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        names.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    names
}

/// The sample names a scrape's `# TYPE` lines declare, samples or not yet: a counter's `_total`,
/// a histogram's `_bucket`, `_sum` and `_count`, a gauge's own name.
fn declared(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (name, kind) in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")?.split_once(' ')) {
        let suffixes: &[&str] = match kind {
            "counter" => &["_total"],
            "histogram" => &["_bucket", "_sum", "_count"],
            _ => &[""],
        };
        names.extend(suffixes.iter().map(|s| format!("{name}{s}")));
    }
    names
}

#[test]
fn the_dashboard_names_only_metrics_the_endpoint_serves() {
    let server = Server::start(&[]);
    // Every INCR of it is an error reply: the errors' family has samples.
    server.cli(&["SET", "text", "abc"]);
    // Held after 2 KiB per connection, so that each worker thread's busy share is read twice
    // while it lives.
    let gate = gate::Gate::start(server.port, 2048);
    let mut cmd = respbench();
    // Open loop over TCP: the requested rate and the latency's parts are served too.
    cmd.args(["-p", &gate.port_arg(), "-n", "2000", "-c", "2", "--threads", "1", "--rate", "1000"])
        .args(["--command", "GET __key__", "--command", "INCR text", "--progress", "-q"])
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"]);
    let mut run = Watched::spawn(cmd);
    gate.wait_held();
    run.wait_fresh_intervals(2);
    gate.open();
    run.wait_lines(1, |l| l.contains("metrics final"));
    let addr =
        run.lines().iter().find_map(|l| l.split("http://").nth(1)?.strip_suffix("/metrics")).unwrap().to_string();
    let (status, text) = common::prom::get(&addr, "/metrics").unwrap();
    assert_eq!(status, 200);
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let served = declared(&text);
    for expr in dashboard_queries() {
        for name in metric_names(&expr) {
            assert!(served.contains(&name), "{name} (in {expr}) is not among {served:?}");
        }
    }
}

#[test]
fn the_dashboard_is_grafana_json_whose_queries_read_respbench_metrics() {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(DASHBOARD).unwrap()).expect("valid JSON");
    let vars: Vec<&str> =
        doc["templating"]["list"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert!(vars.contains(&"datasource") && vars.contains(&"job"), "{vars:?}");
    let panels = doc["panels"].as_array().unwrap();
    let mut ids: Vec<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
    for p in panels {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        assert!(!p["targets"].as_array().unwrap().is_empty(), "{}", p["title"]);
    }
    for expr in dashboard_queries() {
        assert!(!metric_names(&expr).is_empty(), "{expr}");
        // Every variable is the dashboard's own or Grafana's.
        for var in expr.split('$').skip(1) {
            let name: String = var.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            assert!(vars.contains(&name.as_str()) || name == "__rate_interval", "${name} in {expr}");
        }
    }
}

#[test]
fn the_pushgateway_holds_the_final_request_total_of_the_json() {
    let Some(gateway) = pushgateway() else { return };
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let url = format!("http://{}", gateway.addr);
    let out = respbench()
        .args(["-p", &server.port_arg(), "--duration", "3s", "-c", "4", "--threads", "1", "--rate", "2000"])
        .args(["--ratio", "1:4", "--key-max", "999", "-q", "--json", json.to_str().unwrap()])
        .args(["--metrics-push", &url, "--metrics-push-job", "bench", "--metrics-push-label", "instance=node/1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    // The run waits for its final push before it ends: the gateway holds it now.
    assert!(err.contains("metrics pushed\n") && !err.contains("warning: --metrics-push"), "{err}");
    let (mut counts, total) = json_counts(&json);
    counts.sort_by(|a, b| a.0.cmp(&b.0));
    let pushed = pushed_requests(&gateway, &["job=\"bench\"", "instance=\"node/1\""]);
    assert_eq!(pushed, counts);
    assert_eq!(pushed.iter().map(|(_, n)| n).sum::<f64>(), total);
}

#[test]
fn the_memtier_front_end_pushes_its_final_totals() {
    let Some(gateway) = pushgateway() else { return };
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let out = respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "-c", "2", "-t", "1", "-n", "700"])
        .args(["--ratio=1:1", "--hide-histogram", &format!("--metrics-push=http://{}", gateway.addr)])
        .args(["--metrics-push-label=instance=memtier", &format!("--json-out-file={}", json.display())])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let pushed = pushed_requests(&gateway, &["job=\"respbench\"", "instance=\"memtier\""]);
    assert_eq!(pushed, vec![("GET".to_string(), 700.0), ("SET".to_string(), 700.0)]);
    assert_eq!(server.calls("set") + server.calls("get"), 1400);
}

#[test]
fn a_gateway_that_cannot_be_reached_is_one_warning_not_a_failure() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // Nothing listens there: every push is refused.
    let url = format!("http://127.0.0.1:{}", free_port());
    let out = respbench()
        .args(["-p", &server.port_arg(), "-n", "3000", "-c", "2", "--threads", "1", "--rate", "2000"])
        .args(["-q", "--progress", "--json", json.to_str().unwrap(), "--metrics-push", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("warning: --metrics-push").count(), 1, "{err}");
    assert!(err.contains("cannot connect"), "{err}");
    assert!(!err.contains("metrics pushed\n"), "{err}");
    assert_eq!(json_counts(&json).1, 3000.0);
}

#[test]
fn push_flags_are_checked_at_the_start() {
    for (flags, wanted) in [
        (vec!["--metrics-push", "https://gw:9091"], "only http:// is supported"),
        (vec!["--metrics-push", "gw:9091"], "expected a Pushgateway URL"),
        (vec!["--metrics-push", "http://gw:9091", "--metrics-push-label", "job=x"], "--metrics-push-job's"),
        (vec!["--metrics-push-job", "x"], "--metrics-push"),
    ] {
        let out = respbench().args(["-n", "1"]).args(&flags).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(wanted), "{flags:?}: {}", stderr(&out));
    }
}

#[test]
fn a_scenario_pushes_every_phase_fill_included() {
    let Some(gateway) = pushgateway() else { return };
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = fill_then_run_scenario(dir.path(), &["2000"]);
    let json = dir.path().join("s.json");
    let out = respbench()
        .args(["run", file.to_str().unwrap(), "-p", &server.port_arg(), "--json", json.to_str().unwrap()])
        .args(["--metrics-push", &format!("http://{}", gateway.addr), "--metrics-push-job", "scenario"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let phases = doc["phases"].as_array().unwrap();
    let count = |command: &str| -> f64 {
        phases.iter().map(|p| p["result"]["commands"][command]["count"].as_f64().unwrap_or(0.0)).sum()
    };
    let pushed = pushed_requests(&gateway, &["job=\"scenario\""]);
    assert_eq!(pushed, vec![("GET".to_string(), count("GET")), ("SET".to_string(), count("SET"))]);
    // The fill's 500 SETs are in.
    assert_eq!(count("SET"), 500.0 + 1000.0);
}

#[test]
fn a_gateway_that_never_answers_does_not_hold_up_the_run() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // Accepts every connection and never reads or answers it.
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", hole.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in hole.incoming() {
            held.push(s);
        }
    });
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "-n", "4000", "-c", "2", "--threads", "1", "--rate", "2000"]).args([
        "-q",
        "--progress",
        "--json",
        json.to_str().unwrap(),
        "--metrics-push",
        &url,
    ]);
    let mut run = Watched::spawn(cmd);
    // Every interval is reported while the first push still waits for its answer.
    run.wait_intervals(2);
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let warning = err.lines().find(|l| l.contains("warning: --metrics-push")).unwrap_or_else(|| panic!("{err}"));
    assert!(warning.contains("no HTTP reply"), "{err}");
    assert_eq!(err.matches("warning: --metrics-push").count(), 1 + usize::from(err.contains("not pushed within")));
    assert_eq!(json_counts(&json).1, 4000.0);
}

#[test]
fn a_fill_pushes_its_final_total() {
    let Some(gateway) = pushgateway() else { return };
    let server = Server::start(&[]);
    let out = respbench()
        .args(["fill", "-p", &server.port_arg(), "--key-max", "4999", "-c", "2", "--threads", "1"])
        .args(["--metrics-push", &format!("http://{}", gateway.addr), "--metrics-push-job", "fill"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("metrics pushed\n"), "{}", stderr(&out));
    assert_eq!(pushed_requests(&gateway, &["job=\"fill\""]), vec![("SET".to_string(), 5000.0)]);
    assert_eq!(server.dbsize(), 5000);
}
