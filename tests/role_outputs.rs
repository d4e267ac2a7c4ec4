//! A pub/sub role's figures in every output, against a real redis-server: the CSV's role table,
//! the metrics endpoint's counters and delivery latency equal to the result's, StatsD's gauges,
//! and a run killed outright whose journal `recover` brings back with the role's figures.

mod common;

use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::Value;

const ROLE: &str = "news:pubsub:channels=4,subscribers=2,rate=400";

fn messages(doc: &Value) -> &Value {
    &doc["roles"][0]["messages"]
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn the_csv_has_a_row_per_role_with_its_figures() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let (json_arg, csv_arg) = (json.to_str().unwrap(), csv.to_str().unwrap());
    run_ok(&server, &["--role", ROLE, "-n", "400", "--json", json_arg, "--csv", csv_arg]);
    let doc = read_json(&json);
    let m = messages(&doc);
    let text = std::fs::read_to_string(&csv).unwrap();
    let (_, roles) = text.split_once("\n\n").expect("a role table after the summary");
    let mut lines = roles.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {text}"))];
    assert_eq!((row[0], row[1]), ("news", "pubsub"));
    for key in ["published", "delivered", "lost", "duplicated", "out_of_order"] {
        assert_eq!(cell(key), count(m, key).to_string(), "{key}: {text}");
    }
    assert_eq!(cell("delivered"), "800");
    let p99 = m["delivery_latency"]["p99_us"].as_f64().unwrap() / 1000.0;
    assert_eq!(cell("delivery_p99_ms"), format!("{p99:.3}"));
    assert!(header.contains(&"delivery_p50_ms") && header.contains(&"delivery_p999_ms"), "{text}");
}

fn scrape(addr: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    reply.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// The value of the sample that starts with `prefix` (its name and labels as written).
fn sample(text: &str, prefix: &str) -> f64 {
    let line = text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("{prefix} in {text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn the_metrics_end_with_the_results_role_figures_and_statsd_hears_them() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let statsd = UdpSocket::bind("127.0.0.1:0").unwrap();
    statsd.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let statsd_port = statsd.local_addr().unwrap().port().to_string();
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--role", ROLE, "--duration", "2s", "--progress", "-q"])
        .args(["--json", json.to_str().unwrap(), "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"])
        .args(["--statsd-host", "127.0.0.1", "--statsd-port", &statsd_port, "--statsd-run-label", "t"]);
    let mut run = Watched::spawn(cmd);
    run.wait_lines(1, |l| l.contains("metrics on http://"));
    let addr = common_metrics_addr(&run);
    run.wait_lines(1, |l| l.contains("metrics final"));
    let end = scrape(&addr);
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let m = messages(&doc);
    for figure in ["published", "delivered", "duplicated", "out_of_order", "lost", "expected_deliveries"] {
        let at = format!("respbench_role_messages_total{{role=\"news\",kind=\"pubsub\",figure=\"{figure}\"}}");
        assert_eq!(sample(&end, &at), count(m, figure) as f64, "{figure}: {end}");
    }
    let at = "respbench_role_latency_seconds_count{role=\"news\",latency=\"delivery\"}";
    assert_eq!(sample(&end, at), count(m, "delivered") as f64, "{end}");
    // StatsD: the role's gauges beside memtier's.
    let mut seen = String::new();
    let mut buf = [0u8; 2048];
    while !(seen.contains(".role.news.delivered:") && seen.contains(".role.news.lost:")) {
        let n = statsd.recv(&mut buf).expect("StatsD packets");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        seen.push('\n');
    }
    assert!(seen.contains(".role.news.delivery_p99_ms:"), "{seen}");
    assert!(seen.contains(&format!(".role.news.lost:{}|g", count(m, "lost"))), "{seen}");
}

/// The address a run printed for its metrics.
fn common_metrics_addr(run: &Watched) -> String {
    run.lines()
        .iter()
        .find_map(|l| l.split("http://").nth(1))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap()
        .to_string()
}

fn journal_intervals(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
    whole.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|l| l["line"] == "interval").collect()
}

#[test]
fn a_killed_role_run_is_recovered_with_its_role_figures() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.journal");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--role", ROLE, "--duration", "60s", "--json", json.to_str().unwrap()]);
    let run = Watched::spawn(cmd);
    wait_for("3 journaled intervals", Duration::from_secs(60), || journal_intervals(&journal).len() >= 3);
    run.signal(libc::SIGKILL);
    let _ = run.finish();
    let journaled = journal_intervals(&journal);
    let delivered: u64 = journaled.iter().map(|l| l["role"]["counts"]["delivered"].as_u64().unwrap()).sum();
    let published: u64 = journaled.iter().map(|l| l["ops"][0]["count"].as_u64().unwrap()).sum();
    assert!(delivered > 0, "{journaled:?}");
    let recovered = dir.path().join("recovered.json");
    let out = respbench()
        .args(["recover", journal.to_str().unwrap(), "--json", recovered.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&recovered);
    let m = messages(&doc);
    assert_eq!(count(m, "delivered"), delivered, "{m}");
    assert_eq!(count(m, "published"), published, "{m}");
    assert_eq!(count(m, "expected_deliveries"), 2 * published, "{m}");
    assert!(m["delivery_latency"]["p99_us"].as_f64().unwrap() > 0.0, "{m}");
    assert_eq!(doc["roles"][0]["over_time"].as_array().unwrap().len(), journaled.len());
}
