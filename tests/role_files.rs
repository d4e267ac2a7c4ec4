//! Mix roles (a plain command mix with its own connections, pipeline, keys and rate) beside
//! the other kinds, from the command line, scenario files, `ab` and `capacity`, against real
//! servers: each role keeps its own row in the result; bad input is one line, exit 2.

mod common;

use common::roles::assert_refused;
use common::*;
use serde_json::Value;

on_each_server!(a_mix_role_beside_a_pubsub_role_keeps_its_own_rows);

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The roles of a result, by name, in order.
fn roles<'a>(doc: &'a Value, names: &[&str]) -> Vec<&'a Value> {
    let roles = doc["roles"].as_array().expect("a roles array");
    let got: Vec<&str> = roles.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(got, names, "{roles:?}");
    roles.iter().collect()
}

/// A pub/sub role's every publish delivered to each subscriber, and a mix role's requests its own.
fn pubsub_and_mix_hold(doc: &Value, news: &Value, cache: &Value, subscribers: u64) {
    assert_eq!((news["kind"].as_str(), cache["kind"].as_str()), (Some("pubsub"), Some("mix")));
    let m = &news["messages"];
    let published = count(m, "published");
    assert!(published > 0, "{m}");
    assert_eq!(count(m, "delivered"), subscribers * published, "{m}");
    assert_eq!(count(&news["totals"], "count"), published, "{news}");
    assert!(count(&cache["totals"], "count") > 0, "{cache}");
    assert_eq!(count(&doc["totals"], "count"), published + count(&cache["totals"], "count"), "{doc}");
}

fn a_mix_role_beside_a_pubsub_role_keeps_its_own_rows(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let args = [
        "--role",
        "news:pubsub:channels=4,subscribers=2,rate=500",
        "--role",
        "cache:mix",
        "--command",
        "SET __key__ __data__",
        "--key-prefix",
        "c:",
        "--key-max",
        "50",
        "-c",
        "3",
        "--pipeline",
        "4",
        "--rate",
        "300",
        "--duration",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ];
    run_ok(&server, &args);
    let doc = read_json(&json);
    let r = roles(&doc, &["news", "cache"]);
    pubsub_and_mix_hold(&doc, r[0], r[1], 2);
    assert_eq!(r[1]["commands"], serde_json::json!(["SET"]), "{}", r[1]);
    assert_eq!(count(r[1], "connections"), 3);
    assert_eq!(r[1]["rate_per_sec"].as_f64(), Some(300.0));
    // The mix role wrote its own keys.
    assert!(server.cli(&["EXISTS", "c:1"]).contains('1'), "the mix role's keys");
}

#[test]
fn a_mix_role_with_settings_or_twice_is_one_line() {
    let server = Server::start(&[]);
    assert_refused(&server, &["--role", "cache:mix:connections=3"], &["--role cache:mix takes no settings"]);
    assert_refused(&server, &["--role", "a:mix", "--role", "b:mix"], &["--role b: a names the command line's mix"]);
}
