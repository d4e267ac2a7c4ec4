//! Requests sent again after an error reply or a dropped connection, the file of requests given
//! up, and the connect phase's budget: through memtier's names (`--retry-on-error`,
//! `--failed-keys-file`, `--connection-stage-timeout`) and respbench's own (`--retry-errors`,
//! `--failed-keys`, `--connect-timeout`), against a real redis-server stopped and started again
//! mid-run, and a listener that accepts and never answers.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

/// A listener on a free port that accepts every connection and never writes a byte, for the
/// life of the test process.
fn silent() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().map_while(Result::ok) {
            held.push(stream);
        }
    });
    port
}

#[test]
fn memtier_connection_stage_timeout_exits_2_against_a_server_that_never_answers() {
    let port = silent();
    let started = Instant::now();
    let out = respbench()
        .args(["memtier", "-p", &port.to_string(), "-t", "1", "-c", "2", "-n", "10"])
        .args(["--connection-stage-timeout", "1"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}: {err}");
    assert!(err.contains("answered no request within 1s (--connection-stage-timeout)"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_counted_run_against_a_server_that_never_answers_ends_in_the_connect_budget() {
    let port = silent();
    let started = Instant::now();
    // Default settings: no --request-timeout, the default 5 s connect budget.
    let out = respbench().args(["-p", &port.to_string(), "-n", "100", "-c", "4", "--threads", "1"]).output().unwrap();
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // The checks spend the budget once; the run's first requests get a short grace after it.
    assert!(took < Duration::from_secs(5 + 3), "took {took:?}: {err}");
    let line = err.lines().find(|l| l.contains("answered no request")).unwrap_or_else(|| panic!("{err}"));
    assert_eq!(
        line,
        format!(
            "respbench: 127.0.0.1:{port} accepted the connections but answered no request within 5s (--connect-timeout)"
        )
    );
}

/// The rows of a failed-keys file after its header, each split into its five fields.
fn rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("timestamp,command,key,status,retries"), "{text}");
    lines.map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>()).collect()
}

/// Runs `run` (a paced run of SETs) against `server`, whose writes fail (`NOREPLICAS`: it wants
/// a replica) until it is stopped mid-run and started again (its settings back to the
/// defaults): the run goes on across the restart, and is waited for.
fn across_a_restart(server: &mut Server, run: Command) -> std::process::Output {
    assert_eq!(server.cli(&["CONFIG", "SET", "min-replicas-to-write", "1"]), "OK");
    let watched = Watched::spawn(run);
    // Refused writes, retried and given up, before the stop.
    wait_for("refused writes", Duration::from_secs(30), || server.info_u64("stats", "total_error_replies") >= 20);
    server.kill();
    server.start_again();
    // The run reconnected and writes again.
    server.wait_calls("set", 10);
    watched.finish()
}

fn check_failed_keys(file: &Path, out: &std::process::Output, prefix: &str) {
    let err = stderr(out);
    let rows = rows(file);
    let refused: Vec<_> = rows.iter().filter(|r| r[3] == "NOREPLICAS").collect();
    assert!(!refused.is_empty(), "{rows:?}\n{err}");
    for row in &refused {
        assert_eq!(row.len(), 5, "{row:?}");
        assert_eq!(row[1], "SET", "{row:?}");
        assert!(row[2].starts_with(prefix), "{row:?}");
        // Sent once more (--max-retries 1 / --retry 1), then given up.
        assert_eq!(row[4], "1", "{row:?}");
        assert!(row[0].split_once('.').is_some_and(|(s, us)| s.len() >= 10 && us.len() == 6), "{row:?}");
    }
}

#[test]
fn memtier_retry_on_error_writes_a_row_per_key_given_up_across_a_restart() {
    let mut server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (file, json) = (dir.path().join("failed.csv"), dir.path().join("run.json"));
    let memtier_json = dir.path().join("mb.json");
    let mut run = respbench();
    run.args(["memtier", "-p", &server.port_arg(), "-t", "1", "-c", "2", "-n", "400", "--ratio", "1:0"])
        .args(["--rate-limiting", "100", "--reconnect-on-error", "--retry-on-error", "--max-retries", "1"])
        .args(["--failed-keys-file", file.to_str().unwrap(), "--respbench-json", json.to_str().unwrap()])
        .args(["--hide-histogram", "--json-out-file", memtier_json.to_str().unwrap()]);
    let out = across_a_restart(&mut server, run);
    let err = stderr(&out);
    assert!(err.contains("retries") && err.contains("retried_ops"), "{err}");
    check_failed_keys(&file, &out, "memtier-");
    // A row per request given up: as many as the run counted failed.
    let doc = read_json(&json);
    let failed: u64 = doc["errors"].as_object().unwrap().values().filter_map(|v| v.as_u64()).sum();
    assert_eq!(rows(&file).len() as u64, failed, "{}", doc["errors"]);
    assert!(server.dbsize() > 0, "writes went through after the restart");
    // memtier 2.4's configuration block carries the seven retry settings.
    let config = &read_json(&memtier_json)["configuration"];
    let expected = serde_json::json!({
        "retry_on_error": "true", "max_retries": 1, "retry_backoff_ms": 0, "retry_backoff_factor": 0.0,
        "retry_on": "", "max_retry_queue": 0, "failed_keys_file": file.to_str().unwrap(),
    });
    for (key, value) in expected.as_object().unwrap() {
        assert_eq!(&config[key], value, "{key}");
    }
}

#[test]
fn retry_errors_writes_failed_keys_across_a_restart() {
    let mut server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (file, json) = (dir.path().join("failed.csv"), dir.path().join("run.json"));
    let mut run = respbench();
    run.args(["-p", &server.port_arg(), "--threads", "1", "-c", "2", "-n", "800", "--ratio", "1:0"])
        .args(["--rate", "200", "--retry", "1", "--retry-errors", "--retry-backoff", "1ms"])
        .args(["--failed-keys", file.to_str().unwrap(), "--json", json.to_str().unwrap(), "--progress"]);
    let out = across_a_restart(&mut server, run);
    check_failed_keys(&file, &out, "key:");
    let doc = read_json(&json);
    let failed: u64 = doc["errors"].as_object().unwrap().values().filter_map(|v| v.as_u64()).sum();
    assert_eq!(rows(&file).len() as u64, failed, "{}", doc["errors"]);
    assert!(server.dbsize() > 0, "writes went through after the restart");
}
