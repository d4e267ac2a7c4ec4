//! The server's own latency per command (`INFO latencystats`) beside the run's wire-and-server
//! time and the client's, on both I/O paths, against a real redis-server; and a plain reason
//! where a figure is missing (memcached, latency tracking off, INFO denied by an ACL, kernel
//! receive timestamps off).

mod common;

use common::*;
use serde_json::Value;

const PATHS: [&str; 2] = ["epoll", "uring"];

/// A run of `args` on `--io io` against port `port`: its stdout, JSON and HTML page.
fn run_on(port: &str, io: &str, args: &[&str]) -> (String, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("run.json"), dir.path().join("run.html"));
    let out = respbench()
        .args(["-h", "127.0.0.1", "-p", port, "--io", io])
        .args(args)
        .args(["--json", json.to_str().unwrap(), "--html", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "--io {io} {args:?}: {}", stderr(&out));
    (stdout(&out), read_json(&json), std::fs::read_to_string(&html).unwrap())
}

#[test]
fn the_servers_own_p99_sits_beside_the_wire_and_server_p99_and_within_it_on_both_io_paths() {
    let server = Server::start(&[]);
    for io in PATHS {
        // After a reset, the server's figures are this run's (and the checks' before it).
        assert_eq!(server.cli(&["CONFIG", "RESETSTAT"]), "OK");
        // Closed loop: kernel receive timestamps are on when asked for.
        let args = ["-n", "20000", "-c", "4", "--ratio", "1:1", "--timestamps"];
        let (text, doc, page) = run_on(&server.port_arg(), io, &args);
        let latency = &doc["server_latency"];
        assert_eq!(latency["source"], "INFO latencystats", "{latency}");
        assert!(latency["unavailable"].is_null() && latency["wire_and_server_unavailable"].is_null(), "{latency}");
        assert!(latency["span"].as_str().unwrap().contains("CONFIG RESETSTAT"), "{latency}");
        for command in ["GET", "SET"] {
            let row = &latency["commands"][command];
            let client = &doc["commands"][command];
            let ms = |field: &str| row[field].as_f64().unwrap_or_else(|| panic!("--io {io} {command}: {field}: {row}"));
            let (p50, p99, p999) = (ms("p50_ms"), ms("p99_ms"), ms("p99_9_ms"));
            assert!(0.0 < p50 && p50 <= p99 && p99 <= p999, "--io {io} {command}: {row}");
            // Every request's time at the server lies within its wire-and-server time.
            let wire_p99 = ms("wire_and_server_p99_ms");
            assert!(p99 <= wire_p99, "--io {io} {command}: server p99 {p99} ms > wire and server {wire_p99} ms");
            let parts = &client["latency_parts_us"]["wire_and_server"];
            // The same figure in milliseconds and in microseconds (to the float's last digit).
            let parts_p99 = parts["p99_us"].as_f64().unwrap();
            assert!((wire_p99 * 1000.0 - parts_p99).abs() < 1e-6, "--io {io} {command}: {wire_p99} ms, {parts_p99} us");
            assert!(ms("wire_and_server_p50_ms") <= wire_p99 && wire_p99 <= ms("wire_and_server_p99_9_ms"), "{row}");
            assert!((ms("network_p99_ms") - (wire_p99 - p99)).abs() < 1e-9, "--io {io} {command}: {row}");
            // Since the reset, the server ran exactly the client's requests of this command; the
            // run's share is read as the measured phase starts, so it is at most all of them.
            assert_eq!(row["calls_total"], 10_000, "--io {io} {command}: {row}");
            assert_eq!(client["count"], 10_000);
            let in_run = row["calls_in_run"].as_u64().unwrap();
            assert!(in_run <= 10_000, "--io {io} {command}: {row}");
            assert_eq!(row["run_mean_ms"].is_number(), in_run > 0, "{row}");
        }
        assert!(text.contains("Server's own latency in microseconds (INFO latencystats: since the server started"));
        assert!(text.lines().any(|l| l.contains("w+s p99") && l.contains("network p99")), "--io {io}: {text}");
        // The text row: the server's p99, then the wire-and-server p99 beside it, both as in the JSON.
        for command in ["GET", "SET"] {
            let line = text.lines().find(|l| l.split_whitespace().next() == Some(command)).unwrap();
            let cells: Vec<&str> = line.split_whitespace().collect();
            let us = |field: &str| format!("{:.1}", latency["commands"][command][field].as_f64().unwrap() * 1000.0);
            assert_eq!((cells[2], cells[5]), (&*us("p99_ms"), &*us("wire_and_server_p99_ms")), "--io {io}: {line}");
        }
        assert!(!text.contains("wire-and-server time unavailable"), "--io {io}: {text}");
        assert!(page.contains("<h2>Server's own latency</h2>") && page.contains("<th>w+s p99 µs</th>"), "{io}");
    }
}

#[test]
fn without_kernel_timestamps_the_wire_and_server_time_is_said_to_be_unavailable() {
    let server = Server::start(&[]);
    for io in PATHS {
        // Closed loop: timestamps are off unless asked for.
        let (text, doc, page) = run_on(&server.port_arg(), io, &["-n", "2000", "-c", "2", "--ratio", "1:1"]);
        let latency = &doc["server_latency"];
        let why = latency["wire_and_server_unavailable"].as_str().unwrap();
        assert!(why.contains("kernel receive timestamps are off"), "--io {io}: {why}");
        assert!(latency["commands"]["GET"]["p99_ms"].is_number(), "--io {io}: {latency}");
        assert!(latency["commands"]["GET"]["wire_and_server_p99_ms"].is_null(), "--io {io}: {latency}");
        let said = "Server's own latency: wire-and-server time unavailable (kernel receive timestamps are off";
        assert!(text.contains(said), "--io {io}: {text}");
        assert!(page.contains("wire-and-server time unavailable (kernel receive timestamps are off"), "--io {io}");
    }
    // Nor on a unix socket, where the kernel has no receive timestamps to give.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("unix.json");
    let out = respbench()
        .args(["-s", server.socket().to_str().unwrap(), "-n", "2000", "--timestamps"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let why = read_json(&json)["server_latency"]["wire_and_server_unavailable"].clone();
    assert!(why.as_str().unwrap().contains("not available on a unix socket"), "{why}");
    assert!(stdout(&out).contains("wire-and-server time unavailable (kernel receive timestamps are not available"));
}

#[test]
fn memcached_has_no_server_latency_and_the_reports_say_so() {
    let server = Memcached::start(&[]);
    for io in PATHS {
        let (text, doc, page) =
            run_on(&server.port_arg(), io, &["--protocol", "memcache-text", "-n", "400", "-c", "2", "--ratio", "1:1"]);
        let reason = "memcached reports no per-command latency";
        assert_eq!(doc["server_latency"]["unavailable"], reason, "{}", doc["server_latency"]);
        assert!(doc["server_latency"]["commands"].as_object().unwrap().is_empty());
        assert!(text.contains(&format!("Server's own latency: unavailable ({reason})")), "--io {io}: {text}");
        assert!(page.contains(&format!("Unavailable: {reason}.")), "--io {io}");
    }
}

#[test]
fn a_server_that_does_not_track_latency_or_denies_info_says_why() {
    let untracked = Server::start(&["--latency-tracking", "no"]);
    let denied = Server::start(&[]);
    let acl = ["ACL", "SETUSER", "bench", "on", ">s3cret", "~*", "&*", "+@all", "-info"];
    assert_eq!(denied.cli(&acl), "OK");
    for io in PATHS {
        let args = ["-n", "2000", "-c", "2", "--ratio", "1:1"];
        let (text, doc, _) = run_on(&untracked.port_arg(), io, &args);
        let why = doc["server_latency"]["unavailable"].as_str().unwrap();
        assert!(why.contains("latency-tracking is off"), "--io {io}: {why}");
        assert!(text.contains("Server's own latency: unavailable (the server tracks no command latency"), "{text}");

        let login = [&args[..], &["--user", "bench", "-a", "s3cret"]].concat();
        let (text, doc, _) = run_on(&denied.port_arg(), io, &login);
        let why = doc["server_latency"]["unavailable"].as_str().unwrap();
        assert!(why.contains("refused INFO"), "--io {io}: {why}");
        assert!(text.contains("Server's own latency: unavailable (the server refused INFO"), "{text}");
    }
}
