//! Stream and queue roles against a real redis-server and valkey-server: XADD producers with a
//! group of XREADGROUP BLOCK consumers read every entry with its end-to-end latency; BZPOPMIN
//! workers fed by one producer tell the wait for data apart from the service time; a role that
//! names nothing to do is one line and exit 2.

mod common;

use common::roles::*;
use common::*;

on_each_server!(
    xadd_at_500_per_second_with_20_blocked_consumers_is_consumed_entirely,
    noack_consumers_over_resp3_leave_nothing_pending,
    bzpopmin_workers_tell_the_wait_for_data_apart_from_the_service,
    list_workers_pop_every_item,
    a_stream_or_queue_role_with_nothing_to_do_is_one_line_and_exit_2,
);

fn xadd_at_500_per_second_with_20_blocked_consumers_is_consumed_entirely(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_readme_line(&server, "stream", "orders:stream:consumers=20,rate=500,block=1000", dir.path());
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

fn noack_consumers_over_resp3_leave_nothing_pending(kind: Kind) {
    let server = Server::start_as(kind, &[]);
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

fn bzpopmin_workers_tell_the_wait_for_data_apart_from_the_service(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_readme_line(&server, "queue", "jobs:queue:workers=4,rate=200,command=bzpopmin", dir.path());
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

fn list_workers_pop_every_item(kind: Kind) {
    let server = Server::start_as(kind, &[]);
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

fn a_stream_or_queue_role_with_nothing_to_do_is_one_line_and_exit_2(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    for (role, says) in [
        ("orders", "--role orders names nothing to do: give it a kind"),
        ("orders:stream:consumers=0", "--role orders has producers but no consumers: give it consumers=M"),
        ("jobs:queue:producers=0", "--role jobs has workers but no producers: give it producers=N"),
    ] {
        assert_refused(&server, &["--role", role], &[says]);
    }
}
