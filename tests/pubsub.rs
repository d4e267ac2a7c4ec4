//! A pub/sub role against a real redis-server and valkey-server: every publish reaches every
//! subscriber, a subscriber killed mid-run shows as its lost deliveries, SSUBSCRIBE in a
//! 3-primary cluster delivers every message, and a role that cannot run is one line and exit 2.

mod common;

use std::time::Duration;

use common::roles::*;
use common::*;

on_each_server!(
    ten_channels_five_subscribers_get_every_publish_five_times,
    pattern_subscribers_over_resp3_get_every_publish,
    a_subscriber_killed_mid_run_shows_as_its_lost_deliveries,
    subscribers_dropped_for_their_output_buffer_are_named_and_the_run_fails,
    sharded_subscribers_in_a_cluster_get_every_message,
    a_role_with_nothing_to_do_or_no_publishers_is_one_line_and_exit_2,
    two_role_shards_merge_into_their_sums,
    publishes_left_without_a_reply_at_the_stop_are_unconfirmed,
);

fn ten_channels_five_subscribers_get_every_publish_five_times(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let holds = "news:pubsub:channels=10,subscribers=5,rate=1000 --duration 2s";
    let out = run_readme_line(&server, "pubsub", holds, dir.path());
    let json = dir.path().join("news.json");
    let doc = read_json(&json);
    let role = role(&doc);
    let m = &role["messages"];
    let published = count(m, "published");
    assert!(published > 0, "{m}");
    assert_eq!(role["rate_per_sec"].as_f64(), Some(1000.0), "{role}");
    assert_eq!(count(m, "expected_deliveries"), 5 * published, "{m}");
    assert_eq!(count(m, "delivered"), 5 * published, "{m}");
    assert_eq!(count(m, "fanout_reported"), 5 * published, "{m}");
    assert_eq!((count(m, "lost"), count(m, "duplicated"), count(m, "out_of_order")), (0, 0, 0), "{m}");
    assert!(m["delivery_latency"]["p99_us"].as_f64().unwrap() > 0.0, "{m}");
    assert!(role["totals"]["latency_us"]["p99_us"].as_f64().unwrap() > 0.0, "{role}");
    assert_eq!(count(&role["totals"], "count"), doc["totals"]["count"].as_u64().unwrap());
    let text = stdout(&out);
    assert!(text.contains("Role news (pubsub): 1 publisher(s)"), "{text}");
    // Counted per interval by arrival: the intervals add up to the run's deliveries, each
    // with its delivery latency.
    let over_time = role["over_time"].as_array().expect("over_time");
    assert!(over_time.len() >= 2, "{role}");
    let per_interval: u64 = over_time.iter().map(|p| count(&p["counts"], "delivered")).sum();
    assert_eq!(per_interval, 5 * published, "{role}");
    assert!(over_time.iter().any(|p| p["latency_us"]["p99_us"].as_f64().unwrap_or(0.0) > 0.0), "{role}");
    assert!(text.contains("delivery latency (publish to subscriber)"), "{text}");
    let page = std::fs::read_to_string(dir.path().join("news.html")).unwrap();
    assert!(page.contains("Delivery latency over time"), "{page}");
}

fn pattern_subscribers_over_resp3_get_every_publish(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let role_arg = "feed:pubsub:channels=4,subscribers=3,publishers=2,mode=psubscribe,size=100";
    let out = run_written(&server, &["-3", "--role", role_arg, "-n", "2000"]);
    let m = &role(&out.json)["messages"];
    assert_eq!(count(m, "published"), 2000, "{m}");
    let page = &out.html;
    assert!(
        page.contains("<h2>Roles</h2>")
            && page.contains("<td>feed</td><td>pubsub</td><td>closed loop</td><td>2000</td>"),
        "{page}"
    );
    let table = &out.markdown;
    assert!(table.contains("| feed | pubsub | closed loop | 2000 |"), "{table}");
    assert!(table.contains("| feed | 2000 | 6000 | 6000 | 0 | 0 | 0 |"), "{table}");
    assert_eq!(count(m, "delivered"), 6000, "{m}");
    assert_eq!(count(m, "lost"), 0, "{m}");
}

fn a_subscriber_killed_mid_run_shows_as_its_lost_deliveries(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut command = respbench();
    command.args(["-p", &server.port_arg(), "--role", "news:pubsub:channels=10,subscribers=5,rate=1000"]);
    command.args(["--duration", "2s", "--json", json.to_str().unwrap()]);
    let run = Watched::spawn(command);
    // Once the run's subscribers are counted on the server and publishing has begun.
    wait_for("5 subscribers of news:1", Duration::from_secs(20), || {
        server.cli(&["PUBSUB", "NUMSUB", "news:1"]).lines().last() == Some("5")
    });
    server.wait_calls("publish", 100);
    let list = server.cli(&["CLIENT", "LIST", "TYPE", "pubsub"]);
    let id = list.lines().next().and_then(|l| l.split_whitespace().next()).and_then(|f| f.strip_prefix("id="));
    let killed = server.cli(&["CLIENT", "KILL", "TYPE", "pubsub", "ID", id.expect("a pubsub client")]);
    assert_eq!(killed.trim(), "1");
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let m = &role(&doc)["messages"];
    let (published, delivered, lost) = (count(m, "published"), count(m, "delivered"), count(m, "lost"));
    assert!(lost > 0, "{m}");
    assert_eq!(delivered + lost, 5 * published, "{m}");
    assert!(count(m, "fanout_reported") < 5 * published, "{m}");
    let dropped = m["dropped_subscribers"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{m}");
    assert!(dropped[0].as_str().unwrap().contains("the server closed its connection"), "{m}");
    assert!(stdout(&out).contains("DROPPED: subscriber"), "{}", stdout(&out));
}

fn publishes_left_without_a_reply_at_the_stop_are_unconfirmed(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut command = respbench();
    command.args(["-p", &server.port_arg(), "--role", "news:pubsub:channels=2,subscribers=2,publishers=4"]);
    command.args(["--duration", "60s", "--json", json.to_str().unwrap()]);
    let run = Watched::spawn(command);
    server.wait_calls("publish", 100);
    // From now on the server runs no command: the publishes on their way get no reply.
    assert_eq!(server.cli(&["CLIENT", "PAUSE", "5000", "ALL"]).trim(), "OK");
    run.signal(libc::SIGINT);
    let out = run.finish();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let doc = read_json(&json);
    let m = &role(&doc)["messages"];
    let (published, unconfirmed) = (count(m, "published"), count(m, "unconfirmed_publishes"));
    assert!(published > 0 && unconfirmed > 0, "{m}");
    assert_eq!(count(m, "expected_deliveries"), 2 * published, "{m}");
    let received = count(m, "delivered") - count(m, "duplicated");
    assert!(received <= 2 * (published + unconfirmed), "{m}");
    assert_eq!(count(m, "lost"), (2 * published).saturating_sub(received), "{m}");
    let text = stdout(&out);
    assert!(text.contains(&format!("unconfirmed: {unconfirmed} publishes got no reply")), "{text}");
}

fn subscribers_dropped_for_their_output_buffer_are_named_and_the_run_fails(kind: Kind) {
    // A message larger than the client's 16 KiB reply buffer goes past a 1 KiB limit at once.
    let server = Server::start_as(kind, &["--client-output-buffer-limit", "pubsub 1kb 1kb 0"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let role_arg = "big:pubsub:subscribers=2,size=20000";
    let out = run(&server, &["--role", role_arg, "-n", "20", "--json", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no message was delivered: 20 published, all 40 expected deliveries lost"));
    let doc = read_json(&json);
    let m = &role(&doc)["messages"];
    assert_eq!((count(m, "delivered"), count(m, "lost")), (0, 40), "{m}");
    let dropped = m["dropped_subscribers"].as_array().unwrap();
    assert_eq!(dropped.len(), 2, "{m}");
    // Named as dropped for its output buffer where the server counts such disconnections
    // (Redis 7.2 and later, Valkey); where it does not, the line says so.
    assert!(dropped.iter().all(|d| d.as_str().unwrap().contains("output buffer")), "{m}");
    assert!(stdout(&out).contains("delivery latency: no message was delivered"), "{}", stdout(&out));
}

fn a_role_with_nothing_to_do_or_no_publishers_is_one_line_and_exit_2(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    assert_refused(&server, &["--role", "news"], &["--role news names nothing to do: give it a kind"]);
    let says = "--role news has subscribers but no publishers: give it publishers=N";
    assert_refused(&server, &["--role", "news:pubsub:subscribers=5,publishers=0"], &[says]);
}

fn sharded_subscribers_in_a_cluster_get_every_message(kind: Kind) {
    // 3 primaries, no replicas, joined on loopback.
    let nodes = cluster(kind, 3, 0, &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    run_ok(
        &nodes[0],
        &[
            "--cluster",
            "--role",
            "shard:pubsub:channels=12,subscribers=2,publishers=3,mode=ssubscribe",
            "-n",
            "1200",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let doc = read_json(&json);
    let m = &role(&doc)["messages"];
    assert_eq!(count(m, "published"), 1200, "{m}");
    assert_eq!(count(m, "delivered"), 2400, "{m}");
    assert_eq!(count(m, "lost"), 0, "{m}");
    // The channels spread over the primaries, each published to on its owner.
    let publishing = nodes.iter().filter(|n| n.calls("spublish") > 0).count();
    assert_eq!(publishing, 3);
}

fn two_role_shards_merge_into_their_sums(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let Merged { a, b, merged: m, .. } =
        merged_shards(&server, &["--role", "news:pubsub:channels=3,subscribers=2,publishers=2", "-n", "600"]);
    let (ra, rb, rm) = (&role(&a)["messages"], &role(&b)["messages"], &role(&m)["messages"]);
    for key in
        ["published", "expected_deliveries", "fanout_reported", "delivered", "lost", "duplicated", "out_of_order"]
    {
        assert_eq!(count(rm, key), count(ra, key) + count(rb, key), "{key}: {rm}");
    }
    assert_eq!(count(rm, "delivered"), 2400, "{rm}");
    assert_eq!(count(&role(&m)["totals"], "count"), 1200);
    assert_eq!(role(&m)["connections"].as_u64(), Some(4));
    // The merged delivery histogram holds every delivery of both shards.
    let text = m["histograms"]["roles"]["news"]["delivery"].as_str().expect("a delivery histogram");
    let bytes = base64_decode(text);
    let h: hdrhistogram::Histogram<u64> =
        hdrhistogram::serialization::Deserializer::new().deserialize(&mut std::io::Cursor::new(bytes)).unwrap();
    assert_eq!(h.len(), 2400);
    assert!(rm["delivery_latency"]["p99_us"].as_f64().unwrap() > 0.0, "{rm}");
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).unwrap()
}
