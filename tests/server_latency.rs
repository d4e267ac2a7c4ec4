//! The server's own latency per command (`INFO latencystats`) beside the client's, on both I/O
//! paths, against a real redis-server; and a plain reason where there is none (memcached,
//! latency tracking off, INFO denied by an ACL).

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
fn the_servers_own_percentiles_sit_beside_the_clients_on_both_io_paths() {
    let server = Server::start(&[]);
    for io in PATHS {
        // After a reset, the server's figures are this run's (and the checks' before it).
        assert_eq!(server.cli(&["CONFIG", "RESETSTAT"]), "OK");
        let (text, doc, page) = run_on(&server.port_arg(), io, &["-n", "20000", "-c", "4", "--ratio", "1:1"]);
        let latency = &doc["server_latency"];
        assert_eq!(latency["source"], "INFO latencystats", "{latency}");
        assert!(latency["unavailable"].is_null(), "{latency}");
        assert!(latency["span"].as_str().unwrap().contains("CONFIG RESETSTAT"), "{latency}");
        for command in ["GET", "SET"] {
            let server_side = &latency["commands"][command];
            let client = &doc["commands"][command];
            let (p50, p99, p999) =
                (server_side["p50_ms"].as_f64(), server_side["p99_ms"].as_f64(), server_side["p99_9_ms"].as_f64());
            let (p50, p99, p999) = (p50.unwrap(), p99.unwrap(), p999.unwrap());
            assert!(0.0 < p50 && p50 <= p99 && p99 <= p999, "--io {io} {command}: {server_side}");
            // Every request's time at the server lies within its time at the client.
            let client_p99_ms = client["service_us"]["p99_us"].as_f64().unwrap() / 1000.0;
            assert!(p99 <= client_p99_ms, "--io {io} {command}: server p99 {p99} > client {client_p99_ms}");
            // Since the reset, the server ran exactly the client's requests of this command; the
            // run's share is read as the measured phase starts, so it is at most all of them.
            assert_eq!(server_side["calls_total"], 10_000, "--io {io} {command}: {server_side}");
            assert_eq!(client["count"], 10_000);
            let in_run = server_side["calls_in_run"].as_u64().unwrap();
            assert!(in_run <= 10_000, "--io {io} {command}: {server_side}");
            assert_eq!(server_side["run_mean_ms"].is_number(), in_run > 0, "{server_side}");
        }
        assert!(text.contains("Server's own latency in microseconds (INFO latencystats: since the server started"));
        let row = |name: &str| {
            text.lines().any(|l| l.split_whitespace().next() == Some(name) && l.split_whitespace().count() >= 9)
        };
        assert!(row("GET") && row("SET"), "--io {io}: {text}");
        assert!(page.contains("<h2>Server's own latency</h2>") && page.contains("<th>server p99 µs</th>"), "{io}");
    }
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
