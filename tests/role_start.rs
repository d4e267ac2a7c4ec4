//! A role that starts later into the run (`start=DURATION`), against a real redis-server and
//! valkey-server: its requests appear only in the intervals from its start on while the other
//! role's appear from the first, an open-loop role's schedule begins at its start (no burst of
//! late sends), a closed-loop one's first request goes then, `-n` still completes its count,
//! and a start the run never reaches is one line naming the role, exit 2. A scenario file's
//! `[[phase.role]]` takes `start` as any role's key.

mod common;

use common::roles::{count, roles, run_json};
use common::*;
use serde_json::Value;

on_each_server!(
    an_open_loop_role_starting_later_keeps_its_schedule_from_its_start,
    a_closed_loop_role_starting_later_sends_from_its_start_and_completes_its_count,
    a_start_the_run_never_reaches_is_one_line,
    a_scenario_roles_start_holds_its_requests_until_then,
);

/// Role `name`'s replies in each interval of the run's time series, with the interval's start.
fn series(doc: &Value, name: &str) -> Vec<(f64, u64)> {
    let role = role_named(doc, name);
    let rows: Vec<&str> = role["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let points = doc["time_series"].as_array().expect("a time series");
    points
        .iter()
        .map(|p| {
            let replies = rows.iter().map(|r| p["commands"][*r].as_u64().unwrap_or(0)).sum();
            (p["start_secs"].as_f64().unwrap(), replies)
        })
        .collect()
}

/// Role `name` of a result.
fn role_named<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let all = doc["roles"].as_array().expect("a roles array");
    all.iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no role {name}: {all:?}"))
}

fn an_open_loop_role_starting_later_keeps_its_schedule_from_its_start(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let doc = run_json(
        &server,
        &[
            "--role",
            "early:pubsub:channels=2,rate=200",
            "--role",
            "late:pubsub:channels=2,rate=200,start=1s",
            "--duration",
            "2s",
        ],
    );
    let (early, late) = (series(&doc, "early"), series(&doc, "late"));
    assert!(early[0].1 > 0, "the early role from the first interval: {early:?}");
    assert!(late.iter().all(|&(at, n)| at >= 1.0 || n == 0), "nothing before its start: {late:?}");
    assert!(late.iter().any(|&(at, n)| at >= 1.0 && n > 0), "its requests from its start: {late:?}");
    // Its schedule begins at its start: a second at 200/s (and the one due at its end), not
    // the second before it sent late.
    let sent = count(&role_named(&doc, "late")["totals"], "count");
    // (The run's share of late sends measures the machine, not the schedule: not asserted.)
    assert!(sent <= 202, "{sent} requests: a burst of the schedule before its start");
}

fn a_closed_loop_role_starting_later_sends_from_its_start_and_completes_its_count(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let args = ["--role", "load:mix", "--role", "news:pubsub:channels=2,start=1s", "-c", "1", "--threads", "1"];
    let doc = run_json(&server, &[&args[..], &["--duration", "2s"]].concat());
    let (load, news) = (series(&doc, "load"), series(&doc, "news"));
    assert!(load[0].1 > 0, "the mix from the first interval: {load:?}");
    assert!(news.iter().all(|&(at, n)| at >= 1.0 || n == 0), "nothing before its start: {news:?}");
    assert!(news.iter().any(|&(at, n)| at >= 1.0 && n > 0), "its requests from its start: {news:?}");
    // -n: the late role's count completes.
    let doc = run_json(&server, &[&args[..], &["-n", "50"]].concat());
    let roles = roles(&doc, &["load", "news"]);
    assert_eq!((count(&roles[0]["totals"], "count"), count(&roles[1]["totals"], "count")), (50, 50));
    assert_eq!(roles[1]["start_secs"].as_f64(), Some(1.0), "{}", roles[1]);
}

fn a_start_the_run_never_reaches_is_one_line(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    for (role, says) in [
        ("news:pubsub:start=2s", "--role news: start=2s is not before the run's end"),
        ("news:pubsub:start=soon", "--role news: start=soon"),
        ("load:mix:start=3s", "--role load: start=3s is not before the run's end"),
    ] {
        let out = run(&server, &["--role", role, "--duration", "2s"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{role}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
}

/// A scenario of a pub/sub role from the start and a mix role from 1 s into a 2 s run.
const SCENARIO: &str = r#"
[keyspaces.hot]
prefix = "hot:"
min = 1
max = 20

[mixes.writes]
commands = [{ command = "SET __key__ __data__", keyspace = "hot" }]

[[phase]]
kind = "run"
duration = "2s"

[[phase.role]]
name = "news"
kind = "pubsub"
settings = "channels=2,rate=200"

[[phase.role]]
name = "cache"
kind = "mix"
mix = "writes"
connections = 1
rate = 200
start = "1s"
"#;

fn a_scenario_roles_start_holds_its_requests_until_then(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let (file, json) = (dir.path().join("roles.toml"), dir.path().join("out.json"));
    std::fs::write(&file, SCENARIO).unwrap();
    let (file, path) = (file.to_str().unwrap(), json.to_str().unwrap());
    let out = respbench().args(["run", file, "-p", &server.port_arg(), "--json", path]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let result = &doc["phases"][0]["result"];
    let (news, cache) = (series(result, "news"), series(result, "cache"));
    assert!(news[0].1 > 0, "the pub/sub role from the first interval: {news:?}");
    assert!(cache.iter().all(|&(at, n)| at >= 1.0 || n == 0), "nothing before its start: {cache:?}");
    assert!(cache.iter().any(|&(at, n)| at >= 1.0 && n > 0), "its requests from its start: {cache:?}");
    assert_eq!(role_named(result, "cache")["start_secs"].as_f64(), Some(1.0));
    // A start past the phase's end, and one that is no time: one line naming the role.
    for (start, says) in [("5s", "--role cache: start=5s is not before the run's end"), ("later", "role 'cache'")] {
        let text = SCENARIO.replace("start = \"1s\"", &format!("start = \"{start}\""));
        std::fs::write(file, text).unwrap();
        let out = respbench().args(["run", file, "-p", &server.port_arg()]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{start}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
}
