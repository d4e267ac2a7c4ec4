//! Stream and queue roles against a real redis-server: XADD producers with a group of
//! XREADGROUP BLOCK consumers read every entry with its end-to-end latency; BZPOPMIN workers fed
//! by one producer tell the wait for data apart from the service time; a role that names
//! nothing to do is one line and exit 2.

mod common;

use common::*;
use serde_json::Value;

/// The one role of a result.
fn role(json: &Value) -> &Value {
    let roles = json["roles"].as_array().expect("a roles array");
    assert_eq!(roles.len(), 1, "{roles:?}");
    &roles[0]
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn us(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The README's Roles section's line for role kind `kind`, split into its arguments.
fn readme_line(kind: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("### Roles").expect("a Roles section")..];
    let line = section
        .lines()
        .find(|l| l.starts_with("respbench ") && l.contains(&format!(":{kind}:")))
        .unwrap_or_else(|| panic!("a respbench line with a {kind} role"));
    line.split_whitespace().skip(1).map(String::from).collect()
}

#[test]
fn xadd_at_500_per_second_with_20_blocked_consumers_is_consumed_entirely() {
    // The README's line, as written, with -p added.
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = readme_line("stream");
    assert!(args.join(" ").contains("orders:stream:consumers=20,rate=500,block=1000"), "{args:?}");
    let out = respbench().current_dir(dir.path()).args(["-p", &server.port_arg()]).args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&dir.path().join("orders.json"));
    let role = role(&doc);
    assert_eq!((role["kind"].as_str(), role["subscribers"].as_u64()), (Some("stream"), Some(20)), "{role}");
    let s = &role["stream"];
    let produced = count(s, "produced");
    assert_eq!(produced, 500, "{s}");
    assert_eq!(count(s, "consumed"), produced, "{s}");
    assert_eq!(count(s, "acked"), produced, "{s}");
    assert_eq!((count(s, "unconsumed"), count(s, "pending")), (0, 0), "{s}");
    assert!(us(&s["end_to_end_latency"], "p99_us") > 0.0, "{s}");
    let text = stdout(&out);
    assert!(text.contains("Role orders (stream): 1 producer(s)"), "{text}");
    assert!(text.contains("end-to-end latency (XADD to XREADGROUP)"), "{text}");
    // Every consumer read from the group, which is gone after the run.
    assert!(server.calls("xreadgroup") >= 20);
    assert_eq!(server.cli(&["XINFO", "GROUPS", "orders:1"]).trim(), "");
}

#[test]
fn noack_consumers_over_resp3_leave_nothing_pending() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let role_arg = "log:stream:producers=2,consumers=3,count=50,block=100,ack=noack,group=readers,size=64";
    run_ok(&server, &["-3", "--role", role_arg, "-n", "2000", "--json", json.to_str().unwrap()]);
    let doc = read_json(&json);
    let s = &role(&doc)["stream"];
    assert_eq!((count(s, "produced"), count(s, "consumed")), (2000, 2000), "{s}");
    assert_eq!((count(s, "acked"), count(s, "pending")), (0, 0), "{s}");
    assert_eq!(server.calls("xack"), 0);
}

#[test]
fn bzpopmin_workers_tell_the_wait_for_data_apart_from_the_service() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = readme_line("queue");
    assert!(args.join(" ").contains("jobs:queue:workers=4,rate=200,command=bzpopmin"), "{args:?}");
    let out = respbench().current_dir(dir.path()).args(["-p", &server.port_arg()]).args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&dir.path().join("jobs.json"));
    let role = role(&doc);
    assert_eq!((role["kind"].as_str(), role["mode"].as_str()), (Some("queue"), Some("bzpopmin")), "{role}");
    let q = &role["queue"];
    let produced = count(q, "produced");
    assert!(produced > 0, "{q}");
    assert_eq!(count(q, "consumed"), produced, "{q}");
    // Four workers for 200 items a second: the workers are mostly there first, so most pops
    // waited for their item, and the wait is far longer than the service once it came.
    assert!(count(q, "waited") > produced / 2, "{q}");
    let (wait, service) = (&q["wait"], &q["service"]);
    assert!(us(wait, "p50_us") > us(service, "p50_us"), "{q}");
    assert!(us(service, "p99_us") > 0.0, "{q}");
    // The blocked pops are no slow requests: the run's requests are the producer's ZADDs.
    assert_eq!(doc["totals"]["count"].as_u64(), Some(produced), "{doc}");
    let text = stdout(&out);
    assert!(text.contains("wait for data (pop sent to item pushed)"), "{text}");
    assert!(text.contains("service (data there to reply)"), "{text}");
}

#[test]
fn list_workers_pop_every_item() {
    let server = Server::start(&[]);
    for pop in ["blpop", "brpop", "blmove"] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("out.json");
        let role_arg = format!("q{pop}:queue:producers=2,workers=3,command={pop}");
        run_ok(&server, &["--role", &role_arg, "-n", "1000", "--json", json.to_str().unwrap()]);
        let doc = read_json(&json);
        let q = &role(&doc)["queue"];
        assert_eq!((count(q, "produced"), count(q, "consumed")), (1000, 1000), "{pop}: {q}");
    }
    // BLMOVE's taken items are removed once taken.
    assert_eq!(server.cli(&["LLEN", "{qblmove}:taken"]).trim(), "0");
}

#[test]
fn a_stream_or_queue_role_with_nothing_to_do_is_one_line_and_exit_2() {
    let server = Server::start(&[]);
    for (role, says) in [
        ("orders", "--role orders names nothing to do: give it a kind"),
        ("orders:stream:consumers=0", "--role orders has producers but no consumers: give it consumers=M"),
        ("jobs:queue:producers=0", "--role jobs has workers but no producers: give it producers=N"),
    ] {
        let out = run(&server, &["--role", role, "-n", "10"]);
        assert_eq!(out.status.code(), Some(2), "{role}");
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
}
