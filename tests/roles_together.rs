//! Several roles in one run against a real redis-server and valkey-server: a pub/sub role
//! beside a queue role (each at its own rate), beside a stream role (closed loop), two pub/sub
//! roles, a rated role beside a closed-loop one, and a tracking role beside a stream role each
//! keep their own figures, rows, `-n` and mode, and the run's totals are their requests
//! together; two shards of such runs merge into each role's sums, in memtier's JSON too; two
//! roles of one name are one line and exit 2.

mod common;

use common::roles::{Merged, count, merged_shards, roles, run_json, totals_add_up};
use common::*;
use serde_json::json;

on_each_server!(
    a_pubsub_role_and_a_queue_role_at_their_own_rates_keep_their_own_figures,
    a_pubsub_role_and_a_stream_role_in_closed_loop_each_send_their_own_n,
    two_pubsub_roles_each_deliver_every_message_in_their_own_rows,
    a_rated_pubsub_role_beside_a_closed_loop_stream_role_keeps_each_ones_latency_origin,
    a_tracking_role_beside_a_stream_role_keeps_its_cached_reads_apart,
    two_shards_of_a_run_with_two_roles_merge_into_their_sums,
    two_shards_with_two_pubsub_roles_merge_into_each_roles_sums_in_memtiers_json_too,
);

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

fn a_pubsub_role_and_a_queue_role_at_their_own_rates_keep_their_own_figures(kind: Kind) {
    // The README's line, as written, with -p added.
    let server = Server::start_as(kind, &[]);
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
    assert_eq!(doc["measurement"]["mode"], "open_loop");
    assert!(roles.iter().all(|r| r["loop_mode"] == "open_loop" && r["latency_from"] == "intended_send"), "{doc}");
    let text = stdout(&out);
    assert!(text.contains("Role news (pubsub): 1 publisher(s)"), "{text}");
    assert!(text.contains("Role jobs (queue): 1 producer(s)"), "{text}");
}

fn a_pubsub_role_and_a_stream_role_in_closed_loop_each_send_their_own_n(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let doc = run_json(
        &server,
        &[
            "--role",
            "feed:pubsub:channels=4,subscribers=3,size=32",
            "--role",
            "log:stream:producers=2,consumers=3,size=64",
            "-n",
            "1000",
        ],
    );
    let roles = roles(&doc, &["feed", "log"]);
    let (feed, log) = (roles[0], roles[1]);
    // `-n` is each role's own: the publisher's 1,000, the two producers' 1,000 between them.
    let m = &feed["messages"];
    assert_eq!((count(m, "published"), count(m, "delivered")), (1000, 3000), "{m}");
    assert_eq!(count(m, "lost"), 0, "{m}");
    let s = &log["stream"];
    assert_eq!((count(s, "produced"), count(s, "consumed")), (1000, 1000), "{s}");
    assert_eq!(count(s, "pending"), 0, "{s}");
    assert_eq!(server.cli(&["XLEN", "log:1"]).trim(), "1000");
    totals_add_up(&doc, &roles);
    assert_eq!(count(&doc["totals"], "count"), 2000);
    assert_eq!(doc["configuration"]["requests"].as_u64(), Some(2000), "{}", doc["configuration"]);
}

fn two_pubsub_roles_each_deliver_every_message_in_their_own_rows(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let (a, b) = ("a:pubsub:channels=3,subscribers=2", "b:pubsub:channels=2,subscribers=3,publishers=2");
    let out = common::roles::run_written(&server, &["--role", a, "--role", b, "-n", "600"]);
    let doc = &out.json;
    let roles = roles(doc, &["a", "b"]);
    assert_eq!(
        (roles[0]["commands"].clone(), roles[1]["commands"].clone()),
        (json!(["PUBLISH"]), json!(["PUBLISH#2"]))
    );
    for (role, subscribers) in [(roles[0], 2), (roles[1], 3)] {
        let m = &role["messages"];
        assert_eq!(count(m, "published"), 600, "{m}");
        assert_eq!(count(m, "expected_deliveries"), 600 * subscribers, "{m}");
        assert_eq!(count(m, "delivered"), 600 * subscribers, "{m}");
        assert_eq!(count(m, "fanout_reported"), 600 * subscribers, "{m}");
        assert_eq!((count(m, "lost"), count(m, "duplicated"), count(m, "out_of_order")), (0, 0, 0), "{m}");
        assert_eq!(count(&role["totals"], "count"), 600, "{role}");
        // Each role's intervals count its own deliveries, its histogram its own latencies.
        let over_time = role["over_time"].as_array().expect("over_time");
        let per_interval: u64 = over_time.iter().map(|p| count(&p["counts"], "delivered")).sum();
        assert_eq!(per_interval, 600 * subscribers, "{role}");
        let name = role["name"].as_str().unwrap();
        let kept = doc["histograms"]["roles"][name]["delivery"].as_str().expect("the role's histogram");
        assert_eq!(histogram_len(kept), 600 * subscribers);
    }
    totals_add_up(doc, &roles);
    assert!(out.markdown.contains("| a | pubsub | closed loop | 600 |"), "{}", out.markdown);
    assert!(out.markdown.contains("| b | pubsub | closed loop | 600 |"), "{}", out.markdown);
    assert!(out.html.contains("<td>a</td><td>pubsub</td><td>closed loop</td><td>600</td>"), "{}", out.html);
    assert!(out.html.contains("<td>b</td><td>pubsub</td><td>closed loop</td><td>600</td>"), "{}", out.html);
}

fn a_rated_pubsub_role_beside_a_closed_loop_stream_role_keeps_each_ones_latency_origin(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("out.json"), dir.path().join("out.csv"));
    let (news, log) = ("news:pubsub:channels=4,subscribers=2,rate=400", "log:stream:producers=2,consumers=2");
    let args = ["--role", news, "--role", log, "-n", "400", "--json", json.to_str().unwrap(), "--csv"];
    let out = run_ok(&server, &[&args[..], &[csv.to_str().unwrap()]].concat());
    let doc = read_json(&json);
    let roles = roles(&doc, &["news", "log"]);
    let (news, log) = (roles[0], roles[1]);
    assert_eq!((news["loop_mode"].as_str(), news["latency_from"].as_str()), (Some("open_loop"), Some("intended_send")));
    assert_eq!((log["loop_mode"].as_str(), log["latency_from"].as_str()), (Some("closed_loop"), Some("actual_send")));
    // The run as a whole claims neither mode.
    assert_eq!(doc["measurement"]["mode"], "mixed", "{}", doc["measurement"]);
    assert_eq!(doc["measurement"]["latency_from"], "per_role", "{}", doc["measurement"]);
    let m = &news["messages"];
    assert_eq!((count(m, "published"), count(m, "delivered"), count(m, "lost")), (400, 800, 0), "{m}");
    let s = &log["stream"];
    assert_eq!((count(s, "produced"), count(s, "consumed")), (400, 400), "{s}");
    totals_add_up(&doc, &roles);
    let text = stdout(&out);
    assert!(text.contains("Latency in milliseconds; mixed: each role is paced as its own"), "{text}");
    assert!(text.contains("open loop at 400/s, latency from intended send"), "{text}");
    assert!(text.contains("closed loop, latency from actual send"), "{text}");
    let table = std::fs::read_to_string(&csv).unwrap();
    assert!(table.contains("\nnews,pubsub,open_loop,") && table.contains("\nlog,stream,closed_loop,"), "{table}");
}

/// How many latencies a result's encoded histogram holds.
fn histogram_len(text: &str) -> u64 {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
    let h: hdrhistogram::Histogram<u64> =
        hdrhistogram::serialization::Deserializer::new().deserialize(&mut std::io::Cursor::new(bytes)).unwrap();
    h.len()
}

#[test]
fn two_roles_of_one_name_are_one_line_and_exit_2() {
    let out =
        respbench().args(["-p", "1", "--role", "news:pubsub", "--role", "news:queue", "-n", "10"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--role news is given twice: give each role a name of its own"), "{err}");
}

fn a_tracking_role_beside_a_stream_role_keeps_its_cached_reads_apart(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let doc = run_json(
        &server,
        &[
            "--role",
            "cache:tracking:writers=1,readers=2,keys=10,rate=100,size=16",
            "--role",
            "log:stream:consumers=2,rate=100",
            "--duration",
            "1s",
        ],
    );
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

fn two_shards_of_a_run_with_two_roles_merge_into_their_sums(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let (feed, log) = ("feed:pubsub:channels=4,subscribers=3", "log:stream:producers=2,consumers=3");
    let Merged { a, b, merged: m, .. } = merged_shards(&server, &["--role", feed, "--role", log, "-n", "1000"]);
    let (ra, rb, rm) = (roles(&a, &["feed", "log"]), roles(&b, &["feed", "log"]), roles(&m, &["feed", "log"]));
    for k in 0..2 {
        let requests = count(&ra[k]["totals"], "count") + count(&rb[k]["totals"], "count");
        assert_eq!(count(&rm[k]["totals"], "count"), requests, "{}", rm[k]);
        assert_eq!(requests, 2000, "{}", rm[k]);
    }
    assert_eq!(count(&rm[0]["messages"], "delivered"), 6000, "{}", rm[0]);
    assert_eq!((count(&rm[1]["stream"], "produced"), count(&rm[1]["stream"], "consumed")), (2000, 2000));
    totals_add_up(&m, &rm);
}

fn two_shards_with_two_pubsub_roles_merge_into_each_roles_sums_in_memtiers_json_too(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let (one, two) = ("one:pubsub:channels=2,subscribers=2", "two:pubsub:channels=3,subscribers=1,publishers=2");
    let Merged { a, b, merged: m, memtier } = merged_shards(&server, &["--role", one, "--role", two, "-n", "300"]);
    let (ra, rb, rm) = (roles(&a, &["one", "two"]), roles(&b, &["one", "two"]), roles(&m, &["one", "two"]));
    let keys =
        ["published", "expected_deliveries", "fanout_reported", "delivered", "lost", "duplicated", "out_of_order"];
    for k in 0..2 {
        let (ma, mb, mm) = (&ra[k]["messages"], &rb[k]["messages"], &rm[k]["messages"]);
        for key in keys {
            assert_eq!(count(mm, key), count(ma, key) + count(mb, key), "{key}: {mm}");
        }
        assert_eq!(count(&rm[k]["totals"], "count"), 600, "{}", rm[k]);
        let name = rm[k]["name"].as_str().unwrap();
        let kept = m["histograms"]["roles"][name]["delivery"].as_str().expect("the role's histogram");
        assert_eq!(histogram_len(kept), count(mm, "delivered"));
    }
    assert_eq!((count(&rm[0]["messages"], "delivered"), count(&rm[1]["messages"], "delivered")), (1200, 600));
    totals_add_up(&m, &rm);
    // memtier's JSON: the whole run, then a section per role with its own rows and figures.
    assert_eq!(memtier["ALL STATS"]["Totals"]["Count"].as_u64(), Some(1200), "{memtier}");
    for (name, delivered) in [("one", 1200), ("two", 600)] {
        let section = &memtier[format!("ROLE {name} RESULTS")];
        assert_eq!(section["Totals"]["Count"].as_u64(), Some(600), "{section}");
        let role = &section["Role"];
        assert_eq!((role["Name"].as_str(), role["Kind"].as_str()), (Some(name), Some("pubsub")), "{role}");
        assert_eq!((count(role, "delivered"), count(role, "published"), count(role, "lost")), (delivered, 600, 0));
        assert_eq!(role["Loop mode"], "closed_loop", "{role}");
        assert!(section["Totals"]["Percentile Latencies"]["p99.00"].as_f64().unwrap() > 0.0, "{section}");
    }
}
