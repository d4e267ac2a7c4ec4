//! Several roles in one run against a real redis-server: a pub/sub role beside a queue role
//! (each at its own rate), beside a stream role (closed loop), and a tracking role beside a
//! stream role each keep their own figures, and the run's totals are their requests together;
//! roles that cannot share a run are one line and exit 2.

mod common;

use common::*;
use serde_json::Value;

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The roles of a result, by name, in the command line's order.
fn roles<'a>(doc: &'a Value, names: &[&str]) -> Vec<&'a Value> {
    let roles = doc["roles"].as_array().expect("a roles array");
    let got: Vec<&str> = roles.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(got, names, "{roles:?}");
    roles.iter().collect()
}

/// Each role's requests are its own rows, and the run's totals are theirs added up.
fn totals_add_up(doc: &Value, roles: &[&Value]) {
    let requests: u64 = roles.iter().map(|r| count(&r["totals"], "count")).sum();
    assert_eq!(count(&doc["totals"], "count"), requests, "{}", doc["totals"]);
    for role in roles {
        let rows = role["commands"].as_array().expect("the role's rows");
        let own: u64 = rows.iter().map(|row| count(&doc["commands"][row.as_str().unwrap()], "count")).sum();
        assert_eq!(count(&role["totals"], "count"), own, "{role}");
    }
}

/// The README's Roles section's line with several roles, split into its arguments.
fn readme_line() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("### Roles").expect("a Roles section")..];
    let line = section
        .lines()
        .find(|l| l.starts_with("respbench ") && l.matches("--role ").count() > 1)
        .expect("a respbench line with several roles");
    line.split_whitespace().skip(1).map(String::from).collect()
}

#[test]
fn a_pubsub_role_and_a_queue_role_at_their_own_rates_keep_their_own_figures() {
    // The README's line, as written, with -p added.
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = readme_line();
    let line = args.join(" ");
    assert!(line.contains("--role news:pubsub:channels=10,subscribers=5,rate=1000"), "{line}");
    assert!(line.contains("--role jobs:queue:workers=4,rate=200 --duration 2s --json roles.json"), "{line}");
    let out = respbench().current_dir(dir.path()).args(["-p", &server.port_arg()]).args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json = dir.path().join("roles.json");
    let doc = read_json(&json);
    let roles = roles(&doc, &["news", "jobs"]);
    let (news, jobs) = (roles[0], roles[1]);
    assert_eq!((news["kind"].as_str(), jobs["kind"].as_str()), (Some("pubsub"), Some("queue")));
    assert_eq!(news["commands"], serde_json::json!(["PUBLISH"]), "{news}");
    assert_eq!(jobs["commands"], serde_json::json!(["RPUSH"]), "{jobs}");
    let m = &news["messages"];
    let published = count(m, "published");
    assert!(published > 0, "{m}");
    assert_eq!(count(m, "delivered"), 5 * published, "{m}");
    assert_eq!(count(m, "expected_deliveries"), 5 * published, "{m}");
    assert_eq!((count(m, "lost"), count(m, "duplicated"), count(m, "out_of_order")), (0, 0, 0), "{m}");
    assert_eq!(count(&news["totals"], "count"), published, "{news}");
    let q = &jobs["queue"];
    let produced = count(q, "produced");
    assert!(produced > 0, "{q}");
    assert_eq!(count(q, "consumed"), produced, "{q}");
    assert_eq!(count(&jobs["totals"], "count"), produced, "{jobs}");
    // Each role keeps its own rate: 1,000 publishes a second beside 200 pushes.
    assert!(published > 3 * produced, "{published} publishes, {produced} pushes");
    assert!(news["stream"].is_null() && news["queue"].is_null() && jobs["messages"].is_null(), "{doc}");
    totals_add_up(&doc, &roles);
    // The run's one rate is the roles' together.
    assert_eq!(doc["configuration"]["rate_per_sec"].as_f64(), Some(1200.0));
    let text = stdout(&out);
    assert!(text.contains("Role news (pubsub): 1 publisher(s)"), "{text}");
    assert!(text.contains("Role jobs (queue): 1 producer(s)"), "{text}");
}

#[test]
fn a_pubsub_role_and_a_stream_role_in_closed_loop_share_the_run_exactly() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    run_ok(
        &server,
        &[
            "--role",
            "feed:pubsub:channels=4,subscribers=3,size=32",
            "--role",
            "log:stream:producers=2,consumers=3,size=64",
            "-n",
            "3000",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let doc = read_json(&json);
    let roles = roles(&doc, &["feed", "log"]);
    let (feed, log) = (roles[0], roles[1]);
    // Three connections share the 3,000 requests: the publisher's 1,000, the producers' 2,000.
    let m = &feed["messages"];
    assert_eq!((count(m, "published"), count(m, "delivered")), (1000, 3000), "{m}");
    assert_eq!(count(m, "lost"), 0, "{m}");
    let s = &log["stream"];
    assert_eq!((count(s, "produced"), count(s, "consumed")), (2000, 2000), "{s}");
    assert_eq!(count(s, "pending"), 0, "{s}");
    assert_eq!(server.cli(&["XLEN", "log:1"]).trim(), "2000");
    totals_add_up(&doc, &roles);
    assert_eq!(count(&doc["totals"], "count"), 3000);
}

#[test]
fn roles_that_cannot_share_a_run_are_one_line_and_exit_2() {
    for (roles, says) in [
        (["news:pubsub", "news:queue"], "--role news is given twice: give each role a name of its own"),
        (
            ["a:pubsub:channels=2", "b:pubsub:channels=3"],
            "--role b: a is this run's pubsub role already (a run holds one role of each kind): run b on its own",
        ),
        (
            ["a:pubsub:rate=100", "b:stream"],
            "--role b: closed loop beside a at a rate: give b a rate (rate=N), or a none",
        ),
    ] {
        let out = respbench().args(["-p", "1", "--role", roles[0], "--role", roles[1], "-n", "10"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{roles:?}");
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn a_tracking_role_beside_a_stream_role_keeps_its_cached_reads_apart() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    run_ok(
        &server,
        &[
            "--role",
            "cache:tracking:writers=1,readers=2,keys=10,rate=100,size=16",
            "--role",
            "log:stream:consumers=2,rate=100",
            "--duration",
            "1s",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let doc = read_json(&json);
    let roles = roles(&doc, &["cache", "log"]);
    let (cache, log) = (roles[0], roles[1]);
    assert_eq!(
        (cache["commands"].clone(), log["commands"].clone()),
        (serde_json::json!(["SET"]), serde_json::json!(["XADD"]))
    );
    let t = &cache["tracking"];
    assert!(count(t, "reads") > 0 && count(t, "invalidations") > 0, "{t}");
    assert_eq!(count(t, "stale_reads"), 0, "{t}");
    let s = &log["stream"];
    assert_eq!(count(s, "consumed"), count(s, "produced"), "{s}");
    assert_eq!(count(&log["totals"], "count"), count(s, "produced"), "{log}");
    assert!(cache["stream"].is_null() && log["tracking"].is_null(), "{doc}");
    totals_add_up(&doc, &roles);
}

#[test]
fn two_shards_of_a_run_with_two_roles_merge_into_their_sums() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let shard = |name: &str| {
        let json = dir.path().join(name);
        let (feed, log) = ("feed:pubsub:channels=4,subscribers=3", "log:stream:producers=2,consumers=3");
        run_ok(&server, &["--role", feed, "--role", log, "-n", "3000", "--json", json.to_str().unwrap()]);
        json
    };
    let (a, b) = (shard("a.json"), shard("b.json"));
    let merged = dir.path().join("merged.json");
    let out = respbench().arg("merge").args([&a, &b]).arg("--json").arg(&merged).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (a, b, m) = (read_json(&a), read_json(&b), read_json(&merged));
    let (ra, rb, rm) = (roles(&a, &["feed", "log"]), roles(&b, &["feed", "log"]), roles(&m, &["feed", "log"]));
    for k in 0..2 {
        let requests = count(&ra[k]["totals"], "count") + count(&rb[k]["totals"], "count");
        assert_eq!(count(&rm[k]["totals"], "count"), requests, "{}", rm[k]);
    }
    assert_eq!(count(&rm[0]["totals"], "count"), 2000);
    assert_eq!(count(&rm[1]["totals"], "count"), 4000);
    assert_eq!(count(&rm[0]["messages"], "delivered"), 6000, "{}", rm[0]);
    assert_eq!((count(&rm[1]["stream"], "produced"), count(&rm[1]["stream"], "consumed")), (4000, 4000));
    totals_add_up(&m, &rm);
}
