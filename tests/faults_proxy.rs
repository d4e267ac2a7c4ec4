//! Faults between the client and a real server, made by the proxy in tests/common/proxy.rs:
//! latency and jitter, a bandwidth cap, a reset in the middle of a reply, a half-open
//! connection, accepts that come late or never. Each must end as the README says: the failure
//! counted and named by kind, the run bounded by its own timeouts, and every request sent
//! accounted for in the JSON (replies + failed), matched against the server's commandstats.

mod common;

use std::time::Duration;

use common::proxy::{Faults, Proxy};
use common::*;
use serde_json::Value;

/// A GET reply for a value of `VALUE` bytes: `$4000\r\n`, the value, `\r\n`.
const VALUE: usize = 4000;
const REPLY: usize = VALUE + 8;

/// A server whose keys `key:0` to `key:99` hold values of `VALUE` bytes, so every GET is a hit
/// and its reply long enough to cut in the middle.
fn filled_server() -> Server {
    let server = Server::start(&[]);
    let value = VALUE.to_string();
    let out =
        respbench().args(["fill", "-p", &server.port_arg(), "--key-max", "99", "-d", &value, "-q"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    server.cli(&["CONFIG", "RESETSTAT"]);
    server
}

/// Runs `args` against the proxy, GETs of the filled keys only; returns the JSON and the output.
fn run_through(proxy: &Proxy, args: &[&str]) -> (Value, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = respbench()
        .args(["-p", &proxy.port_arg(), "--ratio", "0:1", "--key-max", "99", "-q", "--json"])
        .arg(&json)
        .args(args)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    let doc = read_json(&json);
    (doc, out)
}

/// Requests sent = replies + failed, per command and in total; returns the failed ones. No
/// request here can get an error reply, so every failure is the fault's. (A counted run's
/// requests that a connection that gave up never sent are neither: the caller gives `sent`.)
/// Connections lost for `kind` (`faults.connections_lost_by_kind`), 0 when none were.
fn lost(doc: &Value, kind: &str) -> u64 {
    doc["faults"]["connections_lost_by_kind"][kind].as_u64().unwrap_or(0)
}

fn accounted(doc: &Value, sent: u64) -> u64 {
    let errors = doc["errors"].as_object().unwrap();
    assert!(errors.keys().all(|k| !k.starts_with("server:")), "{errors:?}");
    let totals = &doc["totals"];
    let (replies, failed) = (totals["count"].as_u64().unwrap(), totals["errors"].as_u64().unwrap());
    assert_eq!(replies + failed, sent, "replies {replies} + failed {failed} != sent {sent}: {totals}");
    // The result's own accounting says the same: sent = replies + failed + abandoned.
    let field = |k: &str| totals[k].as_u64().unwrap_or_else(|| panic!("totals.{k}: {totals}"));
    assert_eq!(field("sent"), sent, "{totals}");
    assert_eq!(field("sent"), replies + field("failed") + field("abandoned"), "{totals}");
    let commands = doc["commands"].as_object().unwrap();
    let by_command: u64 = commands.values().map(|c| c["count"].as_u64().unwrap() + c["errors"].as_u64().unwrap()).sum();
    assert_eq!(by_command, sent, "{commands:?}");
    // Every reply is a hit: a reply cut short is never counted as one.
    assert_eq!(totals["hits"].as_u64().unwrap(), replies, "{totals}");
    failed
}

fn error_kind(doc: &Value, kind: &str) -> u64 {
    doc["errors"][kind].as_u64().unwrap_or(0)
}

#[test]
fn added_latency_and_jitter_are_in_every_response_time_and_nothing_is_lost() {
    let server = filled_server();
    let latency = Duration::from_millis(10);
    let proxy = Proxy::start(server.port, Faults { latency, jitter: latency, ..Faults::default() });
    let (doc, out) = run_through(&proxy, &["-n", "200", "-c", "4", "--request-timeout", "5s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(accounted(&doc, 200), 0);
    assert_eq!(server.calls("get"), 200);
    // Each way at least `latency`: no response can be quicker than the round trip it adds.
    let min_us = doc["totals"]["latency_us"]["min_us"].as_f64().unwrap();
    assert!(min_us >= 2.0 * latency.as_micros() as f64, "min {min_us} us");
}

#[test]
fn latency_past_the_request_timeout_fails_the_request_and_the_connection_gives_up() {
    let server = filled_server();
    let proxy = Proxy::start(server.port, Faults { latency: Duration::from_millis(200), ..Faults::default() });
    let timeout = Duration::from_millis(100);
    let (doc, out) = run_through(&proxy, &["-n", "12", "-c", "2", "--threads", "1", "--request-timeout", "100ms"]);
    // A counted run without --retry: each connection's first request times out and the
    // connection gives up (one line says so); the rest of its requests are never sent, so
    // nothing succeeded and fewer were sent than asked: exit 1, the results written all the same.
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("did not reply within --request-timeout 100ms: the connection gives up"), "{err}");
    assert_eq!(accounted(&doc, 2), 2);
    assert_eq!(error_kind(&doc, "timeout"), 2, "{}", doc["errors"]);
    // The proxy delivers the two late requests after all: the server ran exactly those.
    server.wait_calls("get", 2);
    assert_eq!(server.calls("get"), 2);
    // Bounded by the run's own timeout, not the latency: answered, the 6 round trips of 400 ms
    // each connection asked for would take 2.4 s.
    let took = doc["duration_secs"].as_f64().unwrap();
    assert!(took < 6.0 * 0.4 && took >= timeout.as_secs_f64(), "{took} s");
}

#[test]
fn a_bandwidth_cap_paces_the_replies_and_nothing_is_lost() {
    let server = filled_server();
    let cap: u64 = 400_000;
    let proxy = Proxy::start(server.port, Faults { bytes_per_sec: Some(cap), ..Faults::default() });
    let (doc, out) = run_through(&proxy, &["-n", "60", "-c", "2", "--request-timeout", "5s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(accounted(&doc, 60), 0);
    assert_eq!(server.calls("get"), 60);
    // The replies came no faster than the cap lets them (per connection): the run took at
    // least that long however fast the machine.
    let bytes_in = doc["totals"]["bytes_in"].as_u64().unwrap();
    assert!(bytes_in >= 60 * REPLY as u64, "{bytes_in}");
    let least = bytes_in as f64 / (2 * cap) as f64;
    let took = doc["duration_secs"].as_f64().unwrap();
    assert!(took >= 0.9 * least, "{bytes_in} bytes in {took} s: faster than the cap allows ({least} s)");
}

/// Resets the first reply stream of each of the run's 4 connections in the middle of its sixth
/// reply; returns the JSON and the server's GET calls.
fn reset_mid_reply(retry: &str) -> (Value, u64, Proxy) {
    let server = filled_server();
    let faults = Faults { reset_after: Some((5 * REPLY + REPLY / 2, 4)), ..Faults::default() };
    let proxy = Proxy::start(server.port, faults);
    let args = ["-n", "400", "-c", "4", "--reconnect-backoff", "10ms", "--request-timeout", "5s", "--retry", retry];
    let (doc, out) = run_through(&proxy, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(proxy.counts().resets, 4);
    (doc, server.calls("get"), proxy)
}

#[test]
fn a_reset_mid_reply_fails_the_request_in_flight_and_the_connection_comes_back() {
    let (doc, calls, _proxy) = reset_mid_reply("0");
    // One request in flight per connection reset: failed, named io, never waited out.
    let failed = accounted(&doc, 400);
    assert_eq!(failed, 4, "{}", doc["totals"]);
    assert!(error_kind(&doc, "io") >= 4, "{}", doc["errors"]);
    assert_eq!(error_kind(&doc, "timeout"), 0, "{}", doc["errors"]);
    // The server ran the requests whose replies were cut: every one it ran is accounted.
    let replies = doc["totals"]["count"].as_u64().unwrap();
    assert_eq!(calls, replies + failed);
    assert!(!doc["faults"]["outages"].as_array().unwrap().is_empty(), "{}", doc["faults"]);
    assert!(doc["faults"]["reconnect_attempts"].as_u64().unwrap() >= 4, "{}", doc["faults"]);
}

#[test]
fn with_retry_a_request_whose_reply_was_reset_is_sent_again() {
    let (doc, calls, _proxy) = reset_mid_reply("1");
    assert_eq!(accounted(&doc, 400), 0);
    // Sent twice: the server ran each of the 4 twice, the run counted one reply.
    assert_eq!(calls, 404);
    // No request failed (each went again), so `errors` is empty; the connections lost are
    // counted as connections, in `faults`.
    assert_eq!(error_kind(&doc, "io"), 0, "{}", doc["errors"]);
    assert!(lost(&doc, "io") >= 4, "the lost connections are still counted: {}", doc["faults"]);
}

#[test]
fn a_half_open_connection_is_timed_out_and_its_request_sent_again() {
    let server = filled_server();
    let faults = Faults { half_open_after: Some((5 * REPLY + REPLY / 2, 2)), ..Faults::default() };
    let proxy = Proxy::start(server.port, faults);
    // A timeout long enough that a loaded machine's scheduling never trips it on its own.
    let args = ["-n", "400", "-c", "4", "--reconnect-backoff", "10ms", "--request-timeout", "1s", "--retry", "1"];
    let (doc, out) = run_through(&proxy, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(proxy.counts().half_opened, 2);
    // Nothing closed the two connections: only the request timeout found them out, and the
    // request each had in flight went again on the new connection.
    assert_eq!(accounted(&doc, 400), 0);
    // The requests went again, so none failed; the two connections were lost to the timeout.
    assert_eq!(error_kind(&doc, "timeout"), 0, "{}", doc["errors"]);
    assert_eq!(lost(&doc, "timeout"), 2, "{}", doc["faults"]);
    assert_eq!(lost(&doc, "io"), 0, "{}", doc["faults"]);
    // The server ran those two twice (their replies were cut off the first time).
    assert_eq!(server.calls("get"), 402);
}

#[test]
fn half_open_connections_at_the_deadline_end_the_run_within_its_grace() {
    let server = filled_server();
    let faults = Faults { half_open_after: Some((REPLY + REPLY / 2, 2)), ..Faults::default() };
    let proxy = Proxy::start(server.port, faults);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let duration = 3.0;
    let run =
        Watched::spawn({
            let mut cmd = respbench();
            cmd.args(["-p", &proxy.port_arg(), "--ratio", "0:1", "--key-max", "99", "--duration", "3s", "-c", "2"])
                .args(["--rate", "50", "--progress", "-q", "--json", json.to_str().unwrap()]);
            cmd
        });
    // Both connections hang in their second reply; no --request-timeout: the deadline's grace
    // (2 s) is all that ends them.
    proxy.wait_for("two half-open connections", |c| c.half_opened == 2);
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let replies = doc["totals"]["count"].as_u64().unwrap();
    let failed = doc["totals"]["errors"].as_u64().unwrap();
    assert_eq!(failed, 2, "{}", doc["totals"]);
    assert_eq!(error_kind(&doc, "timeout"), 2, "{}", doc["errors"]);
    // Every request the run sent reached the server (the two cut ones too): all accounted.
    assert_eq!(server.calls("get"), replies + failed);
    // The run's own bound: the duration, then the 2 s grace for replies in flight (and 2 s for
    // a loaded machine's turns): without it, the run would wait for them forever.
    let took = doc["duration_secs"].as_f64().unwrap();
    assert!(took >= duration && took < duration + 2.0 + 2.0, "{took} s");
}

#[test]
fn slow_accepts_within_the_connect_timeout_only_delay_the_start() {
    let server = filled_server();
    let proxy = Proxy::start(server.port, Faults { accept_delay: Duration::from_millis(100), ..Faults::default() });
    let (doc, out) = run_through(&proxy, &["-n", "200", "-c", "4", "--connect-timeout", "10s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(accounted(&doc, 200), 0);
    assert_eq!(server.calls("get"), 200);
    assert!(proxy.counts().accepted >= 5, "the check connection and the run's 4: {:?}", proxy.counts());
}

#[test]
fn accepts_that_never_come_end_the_run_within_its_timeouts() {
    let server = Server::start(&[]);
    let proxy = Proxy::start(server.port, Faults { never_accept: true, ..Faults::default() });
    let (connect, request) = (Duration::from_millis(500), Duration::from_millis(300));
    let args = ["-n", "8", "-c", "4", "--threads", "1", "--connect-timeout", "500ms", "--request-timeout", "300ms"];
    let (doc, out) = run_through(&proxy, &args);
    // The connects succeed (the listen backlog); nothing ever answers. The checks give up at
    // the connect timeout, saying so; each connection's first request fails at the request
    // timeout and the connection gives up (a counted run): nothing succeeded, exit 1.
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("did not answer DBSIZE within 500ms (--connect-timeout)"), "{err}");
    assert!(err.contains("the connection gives up"), "{err}");
    // One request sent per connection, each failed as a timeout; the other 4 never sent.
    assert_eq!(accounted(&doc, 4), 4);
    assert_eq!(error_kind(&doc, "timeout"), 4, "{}", doc["errors"]);
    // Bounded by the run's own timeouts (twice them, for the worker's turn).
    let bound = 2.0 * (request + connect).as_secs_f64();
    assert!(doc["duration_secs"].as_f64().unwrap() < bound, "{} s", doc["duration_secs"]);
}
