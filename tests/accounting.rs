//! Every request accounted, whatever happens to the connections: sent = replies + failed +
//! abandoned, per command and in total, in the JSON and in the text's words (requests failed
//! by kind, connections lost apart), against a real redis-server that kills its clients, is
//! restarted, or sees the run stopped; where the server survives, its commandstats agree.

mod common;

use common::*;
use serde_json::Value;

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// sent = count + failed + abandoned for the totals and every command; failed is what the
/// kinds without a reply add up to. Returns (sent, replies, failed, abandoned).
fn identity_holds(doc: &Value) -> (u64, u64, u64, u64) {
    let mut rows: Vec<(String, &Value)> =
        doc["commands"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v)).collect();
    rows.push(("totals".into(), &doc["totals"]));
    for (name, row) in rows {
        assert_eq!(n(row, "sent"), n(row, "count") + n(row, "failed") + n(row, "abandoned"), "{name}: {row}");
    }
    let t = &doc["totals"];
    let without_reply: u64 = doc["errors"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| !k.starts_with("server:"))
        .map(|(_, v)| v.as_u64().unwrap())
        .sum();
    assert_eq!(without_reply, n(t, "failed"), "{}", doc["errors"]);
    (n(t, "sent"), n(t, "count"), n(t, "failed"), n(t, "abandoned"))
}

/// The text's accounting lines agree with the JSON.
fn text_agrees(text: &str, doc: &Value) {
    let (sent, replies, failed, abandoned) = identity_holds(doc);
    let line =
        format!("Requests: {sent} sent = {replies} replies + {failed} failed + {abandoned} abandoned at the end");
    assert!(text.contains(&line), "{line}\n{text}");
    let lost = n(&doc["faults"], "connections_lost");
    if lost > 0 {
        assert!(text.contains(&format!("connections lost: {lost}")), "{text}");
    }
    if failed > 0 {
        assert!(text.contains(&format!("requests failed: {failed} (")), "{text}");
    }
}

#[test]
fn a_client_kill_loop_loses_connections_and_accounts_for_every_request() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("kill.json");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "-n", "60000", "-c", "8", "--threads", "2", "--ratio", "1:0", "-P", "4"])
        .args(["--key-max", "999", "--reconnect-backoff", "10ms", "--json", json.to_str().unwrap()]);
    let run = Watched::spawn(cmd);
    // Kill every client at 10k, 20k, 30k and 40k SETs (redis-cli skips itself).
    for at in [10_000, 20_000, 30_000, 40_000] {
        server.wait_calls("set", at);
        server.cli(&["CLIENT", "KILL", "TYPE", "normal"]);
    }
    let out = run.finish();
    let doc = read_json(&json);
    let (sent, replies, failed, abandoned) = identity_holds(&doc);
    assert_eq!(sent, 60_000, "a counted run sends what it was asked: {}", doc["totals"]);
    assert_eq!(abandoned, 0);
    assert!(n(&doc["faults"], "connections_lost") >= 8, "{}", doc["faults"]);
    // The server survived: it executed every request answered, and perhaps some whose reply
    // went down with the connection, never more than were sent.
    let calls = server.calls("set");
    assert!(calls >= replies && calls <= replies + failed, "server {calls}, replies {replies}, failed {failed}");
    text_agrees(&stdout(&out), &doc);
    if failed > 0 {
        assert!(stdout(&out).contains(&format!("requests failed: {failed} (connection lost {failed})")));
    }
    assert!(!stdout(&out).contains("Errors: none"), "{}", stdout(&out));
}

#[test]
fn a_server_restart_and_a_stop_signal_leave_the_identity_whole() {
    let mut server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("restart.json");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--duration", "60s", "-c", "8", "--threads", "2", "--ratio", "1:1"])
        .args(["--key-max", "999", "-P", "8", "--reconnect-backoff", "20ms", "--progress"])
        .args(["--json", json.to_str().unwrap()]);
    let mut run = Watched::spawn(cmd);
    run.wait_intervals(1);
    server.kill_with_requests_unread();
    server.start_again();
    // Traffic again after the restart, then a stop with requests in flight.
    server.wait_calls("set", 1000);
    run.signal(libc::SIGINT);
    let out = run.finish();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["interrupted"], true);
    let (sent, replies, failed, _) = identity_holds(&doc);
    assert!(sent > replies && failed > 0, "the restart failed requests: {}", doc["totals"]);
    assert!(n(&doc["faults"], "connections_lost") >= 8, "{}", doc["faults"]);
    assert!(doc["errors"]["io"].as_u64().unwrap() <= failed);
    text_agrees(&stdout(&out), &doc);
}
