//! Faults a real server cannot be made to produce: a scripted fake server on a free port that
//! answers the handshake like Redis, then sends bytes that are not RESP. The tool must count
//! the failure by kind, finish, and still write its results: never panic.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::*;

/// A fake server: answers INFO with a minimal CPU section and any other command with `garbage`.
fn fake_server(garbage: &'static [u8]) -> (u16, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stopping.load(Ordering::SeqCst) {
                break;
            }
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let request = String::from_utf8_lossy(&buf[..n]);
                    let reply: Vec<u8> = if request.contains("INFO") {
                        let body =
                            "# Server\r\nredis_version:0.0.1\r\n# CPU\r\nused_cpu_user:0.1\r\nused_cpu_sys:0.1\r\n";
                        format!("${}\r\n{body}\r\n", body.len()).into_bytes()
                    } else if request.contains("DBSIZE") {
                        b":5\r\n".to_vec()
                    } else if request.contains("EXISTS") {
                        b":32\r\n".to_vec()
                    } else if request.contains("CONFIG") {
                        b"-ERR unknown command\r\n".to_vec()
                    } else {
                        garbage.to_vec()
                    };
                    if stream.write_all(&reply).is_err() {
                        break;
                    }
                }
            });
        }
    });
    (port, stop)
}

#[test]
fn malformed_replies_are_counted_as_protocol_errors_and_the_run_still_reports() {
    for garbage in [&b"?not resp at all\r\n"[..], b"$99999999999\r\n", b"*1\r\n*1\r\n$-7\r\n", b"+OK\r\n+OK\r\n+OK\r\n"]
    {
        let (port, stop) = fake_server(garbage);
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let out = respbench()
            .args(["-p", &port.to_string(), "-n", "200", "-c", "3", "--json", json.to_str().unwrap()])
            // A stream that made sense once is reconnected: keep those cycles short here.
            .args(["--reconnect-backoff", "1ms"])
            .output()
            .unwrap();
        stop.store(true, Ordering::SeqCst);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{garbage:?}: {err}");
        // Nothing succeeded: exit 1 (the results are written all the same). Extra replies come
        // after a good one, which counts: then the run itself succeeded.
        let expected = if garbage.starts_with(b"+OK") { 0 } else { 1 };
        assert_eq!(out.status.code(), Some(expected), "{garbage:?}: {err}");
        let doc = read_json(&json);
        // Each connection is lost to the garbage (the requests it took, if any, are in errors).
        let protocol = doc["faults"]["connections_lost_by_kind"]["protocol"].as_u64().unwrap_or(0);
        assert!(protocol >= 3, "{garbage:?}: {} connections lost to protocol errors: {}", protocol, doc["faults"]);
        assert!(stdout(&out).contains("protocol"), "{garbage:?}: {}", stdout(&out));
    }
}

#[test]
fn a_standalone_restart_mid_run_is_an_outage_not_the_end() {
    let mut server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("restart.json");
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &server.port_arg(), "--duration", "7s", "-c", "8", "--threads", "2", "--ratio", "1:1"])
            .args(["--key-max", "999", "--reconnect-backoff", "50ms", "--json", json.to_str().unwrap()])
            .args(["--html", dir.path().join("restart.html").to_str().unwrap(), "--progress"]);
        cmd
    });
    // One whole interval of traffic first, the baseline the recovery is judged against.
    run.wait_intervals(1);
    server.kill();
    // Away until the run has reported two whole intervals without a reply: the outage lasts
    // at least 2 s by the run's own clock, however late its lines reach the test.
    run.wait_lines(2, |line| line.contains(" 0 ops/s now"));
    server.start_again();
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Outage: 8 connections down"), "{text}");
    let doc = read_json(&json);
    // Each connection is lost once, by kind. (A request fails only if it was in flight: a
    // server killed after answering leaves its connection nothing to lose but itself.)
    assert_eq!(doc["faults"]["connections_lost_by_kind"]["io"], 8, "{}", doc["faults"]);
    // The outage spans the time the server was away.
    let outage = &doc["faults"]["outages"][0];
    let (start, end) = (outage["start_secs"].as_f64().unwrap(), outage["end_secs"].as_f64().unwrap());
    assert!(start >= 1.0, "the server was killed after the first interval: {outage}");
    assert!(end - start >= 2.0 && end - start < 4.5, "{outage}");
    assert_eq!(outage["connections"], 8);
    assert!(doc["faults"]["reconnect_attempts"].as_u64().unwrap() >= 8);
    // The time series shows a second with no successful reply, and throughput back after.
    let points = doc["time_series"].as_array().unwrap();
    let without: Vec<u64> = doc["faults"]["seconds_without_success"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    assert!(!without.is_empty(), "{}", doc["faults"]);
    let last = points.last().unwrap();
    let first = &points[0];
    assert!(last["ops_per_sec"].as_f64().unwrap() > 0.3 * first["ops_per_sec"].as_f64().unwrap(), "{last}");
    // The restarted server got work again.
    assert!(server.calls("set") > 0);
    // The HTML report shows the outage too.
    let page = std::fs::read_to_string(dir.path().join("restart.html")).unwrap();
    assert!(page.contains("<h2>Faults</h2>") && page.contains("recovered after"), "no Faults section");
}

#[test]
fn a_frozen_server_times_requests_out_and_the_run_goes_on() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("timeout.json");
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &server.port_arg(), "--duration", "5s", "-c", "4", "--threads", "1", "--timeout", "200ms"])
            .args(["--key-max", "99", "--json", json.to_str().unwrap(), "-q", "--progress"]);
        cmd
    });
    run.wait_intervals(1);
    let pid = server.pid().to_string();
    std::process::Command::new("kill").args(["-STOP", &pid]).status().unwrap();
    // Frozen for 1.5 s (the fault itself): far past the 200 ms timeout.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    std::process::Command::new("kill").args(["-CONT", &pid]).status().unwrap();
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    assert!(doc["errors"]["timeout"].as_u64().unwrap() >= 4, "{}", doc["errors"]);
    // No reply waited much longer than the timeout.
    assert!(doc["totals"]["latency_us"]["max_us"].as_f64().unwrap_or(0.0) < 1_500_000.0, "{}", doc["totals"]);
    let last = doc["time_series"].as_array().unwrap().last().unwrap().clone();
    assert!(last["count"].as_u64().unwrap() > 0, "{last}");
}

/// Past the deadline the worker waits for the replies in flight, up to the drain's grace,
/// asleep: a server that holds its replies (writes paused) costs the client no CPU meanwhile.
#[test]
fn the_drain_after_the_deadline_waits_for_a_silent_server_asleep() {
    let server = Server::start(&[]);
    assert_eq!(server.cli(&["CLIENT", "PAUSE", "600000", "WRITE"]), "OK");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("drain.json");
    let out = run(
        &server,
        &["--duration", "100ms", "-c", "4", "--threads", "1", "--ratio", "1:0", "-q", "--json", json.to_str().unwrap()],
    );
    assert_eq!(server.cli(&["CLIENT", "UNPAUSE"]), "OK");
    // Nothing succeeded: exit 1, the 4 SETs in flight timed out in the drain.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["errors"]["timeout"], 4, "{}", doc["errors"]);
    let thread = &doc["client"]["threads"][0];
    let (cpu, wall) = (thread["cpu_secs"].as_f64().unwrap(), thread["wall_secs"].as_f64().unwrap());
    // The drain's 2 s in the wall time; a loop spinning through it would burn most of them.
    assert!(wall >= 2.0, "{thread}");
    assert!(cpu < 0.25, "the worker spun through the drain: {thread}");
}

#[test]
fn retry_sends_requests_in_flight_again_after_a_restart() {
    let mut server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("retry.json");
    // A counted run that every request must finish despite the restart. The rate makes it last
    // at least 4 s on any machine: the restart below comes after 2,000 of its 40,000 requests.
    let child = respbench()
        .args(["-p", &server.port_arg(), "-n", "40000", "--rate", "10000", "-c", "4", "--threads", "1", "-P", "8"])
        .args(["--retry", "3", "--reconnect-backoff", "20ms", "--command", "INCR counter"])
        .args(["--json", json.to_str().unwrap(), "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_calls("incr", 2000);
    server.kill();
    server.start_again();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    // The INCRs after the restart land on the new (empty) server; none was lost on the way:
    // every request counted got a reply.
    assert_eq!(doc["totals"]["count"], 40_000, "{}", doc["errors"]);
    assert_eq!(doc["commands"]["INCR"]["errors"], 0, "{}", doc["commands"]);
    assert!(!doc["faults"]["outages"].as_array().unwrap().is_empty());
    let after: u64 = server.cli(&["GET", "counter"]).parse().unwrap();
    assert!(after > 0 && after < 40_000, "{after}");
}

#[test]
fn max_reconnects_gives_up_on_a_server_that_stays_away() {
    let mut server = Server::start(&[]);
    let child = respbench()
        .args(["-p", &server.port_arg(), "--duration", "30s", "-c", "3", "--threads", "1", "-q"])
        .args(["--max-reconnects", "3", "--reconnect-backoff", "20ms"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_calls("get", 100);
    let killed = std::time::Instant::now();
    server.kill();
    let out = child.wait_with_output().unwrap();
    // Three attempts with backoff, then every connection leaves the run: it ends long before 30 s,
    // with what it measured before the server went away.
    assert!(killed.elapsed() < std::time::Duration::from_secs(5), "took {:?}", killed.elapsed());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("errors="), "{}", stdout(&out));
}
