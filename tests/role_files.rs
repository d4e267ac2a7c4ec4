//! Mix roles (a plain command mix with its own connections, pipeline, keys and rate) beside
//! the other kinds, from the command line, scenario files, `ab` and `capacity`, against real
//! servers: each role keeps its own row in the result; bad input is one line, exit 2.

mod common;

use common::roles::assert_refused;
use common::*;
use serde_json::Value;

on_each_server!(
    a_mix_role_beside_a_pubsub_role_keeps_its_own_rows,
    a_scenario_runs_a_pubsub_role_and_a_mix_role,
    ab_runs_the_same_roles_on_both_sides,
    capacity_searches_the_named_roles_rate
);

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

/// A scenario with a pub/sub role and a mix role of its own keys, pipeline and rate.
const SCENARIO: &str = r#"
[keyspaces.hot]
prefix = "hot:"
min = 1
max = 20

[values.small]
size = "8"

[mixes.writes]
commands = [{ command = "SET __key__ __data__", keyspace = "hot" }]

[[phase]]
kind = "run"
duration = "1s"

[[phase.role]]
name = "news"
kind = "pubsub"
settings = "channels=4,subscribers=3,rate=400"

[[phase.role]]
name = "cache"
kind = "mix"
mix = "writes"
values = "small"
connections = 2
pipeline = 4
rate = 200
"#;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn a_scenario_runs_a_pubsub_role_and_a_mix_role(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "roles.toml", SCENARIO);
    let json = dir.path().join("out.json");
    let out =
        respbench().args(["run", &file, "-p", &server.port_arg(), "--json", json.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let result = &doc["phases"][0]["result"];
    let r = roles(result, &["news", "cache"]);
    pubsub_and_mix_hold(result, r[0], r[1], 3);
    assert_eq!((count(r[1], "connections"), r[1]["rate_per_sec"].as_f64()), (2, Some(200.0)), "{}", r[1]);
    assert_eq!(server.cli(&["STRLEN", "hot:1"]).trim(), "8", "the mix role's keys and values");
}

/// `respbench run FILE` of `text` (no server needed: refused before connecting); asserts
/// exit 2 with one line holding each of `says`.
fn assert_file_refused(text: &str, says: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bad.toml", text);
    let out = respbench().args(["run", &file, "-p", &free_port().to_string()]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(says.iter().all(|s| err.contains(s)), "{err}");
}

#[test]
fn a_scenario_role_that_cannot_run_is_one_line_naming_it() {
    let run = "[mixes.m]\nset = 1\n[[phase]]\nkind = \"run\"\nduration = \"1s\"\n";
    let cases: [(String, &[&str]); 5] = [
        (
            format!("{run}[[phase.role]]\nname = \"c\"\nkind = \"mix\"\n"),
            &["role 'c' names nothing to do: give it mix"],
        ),
        (
            format!("{run}[[phase.role]]\nname = \"n\"\nkind = \"pubsub\"\nconnections = 3\n"),
            &["role 'n': 'connections' is a mix role's key"],
        ),
        (
            format!("{run}[[phase.role]]\nname = \"n\"\nkind = \"pubsub\"\nsettings = \"publishers=0\"\n"),
            &["--role n has subscribers but no publishers: give it publishers=N"],
        ),
        (
            format!("{run}[[phase.role]]\nname = \"c\"\nkind = \"mix\"\nmix = \"m\"\nsettings = \"x=1\"\n"),
            &["role 'c': a mix role takes its run keys"],
        ),
        (
            format!("{run}[[phase.role]]\nname = \"c\"\nkind = \"mix\"\nmix = \"nope\"\n"),
            &["'nope' is not defined under [mixes]"],
        ),
    ];
    for (text, says) in &cases {
        assert_file_refused(text, says);
    }
}

/// ab's roles, held by both sides; each side's own mix as the `cache` role.
const AB_ROLES: [&str; 4] = ["--role", "news:pubsub:channels=2,subscribers=2,rate=200", "--role", "cache:mix"];

fn ab_runs_the_same_roles_on_both_sides(kind: Kind) {
    let (a, b) = (Server::start_as(kind, &[]), Server::start_as(kind, &[]));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ab.json");
    let side = |s: &Server| format!("-p {} --command 'SET k __data__' -c 2 --rate 100", s.port);
    let out = respbench()
        .args(["ab", "--a", &side(&a), "--b", &side(&b)])
        .args(AB_ROLES)
        .args(["--rounds", "2", "--round-duration", "300ms", "--warmup", "0", "--seed", "1"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    for side in ["a", "b"] {
        let rounds = doc[side]["rounds"].as_array().expect("rounds");
        assert_eq!(rounds.len(), 2, "{}", doc[side]);
    }
    // Both sides ran both roles: publishes and the mix's SETs on each server.
    for s in [&a, &b] {
        assert!(s.calls("publish") > 0 && s.calls("set") > 0, "publish and set on :{}", s.port);
    }
    // A warm-up before each round would leave some of the pub/sub role's messages unmatched.
    let out = respbench().args(["ab", "--a", &side(&a), "--b", &side(&b)]).args(AB_ROLES).output().unwrap();
    let err = stderr(&out);
    assert_eq!((out.status.code(), err.trim().lines().count()), (Some(2), 1), "{err}");
    assert!(err.contains("--a: role news (pubsub) counts every message over each round: give ab --warmup 0"), "{err}");
}

fn capacity_searches_the_named_roles_rate(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("capacity.json");
    let base = ["capacity", "-p", &server.port_arg(), "--slo", "p99=500ms", "--duration", "300ms"];
    let roles = ["--role", "news:pubsub:channels=2,subscribers=2,rate=50", "--role", "cache:mix"];
    let out = respbench()
        .args(base)
        .args(roles)
        .args(["--command", "SET __key__ x", "--start-rate", "100", "--max-rate", "200", "--search-role", "cache"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let steps = doc["capacity"]["steps"].as_array().expect("steps");
    let requested: Vec<f64> = steps.iter().map(|s| s["requested_per_sec"].as_f64().unwrap()).collect();
    assert_eq!(requested, [100.0, 200.0], "{doc}");
    // Each step's achieved rate is the searched role's alone (the publishes are not counted).
    for s in steps {
        let achieved = s["achieved_per_sec"].as_f64().unwrap();
        assert!(achieved < s["requested_per_sec"].as_f64().unwrap() * 1.2, "{s}");
    }
    assert!(server.calls("publish") > 0, "the pub/sub role ran at its own rate");
    // Several roles and no --search-role: which rate to search is the user's to say.
    let out = respbench().args(base).args(roles).output().unwrap();
    let err = stderr(&out);
    assert_eq!((out.status.code(), err.trim().lines().count()), (Some(2), 1), "{err}");
    assert!(err.contains("name it with --search-role NAME (one of news, cache)"), "{err}");
}
