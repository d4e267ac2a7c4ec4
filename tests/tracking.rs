//! A tracking role against a real redis-server and valkey-server: cached readers serve most
//! reads locally, hear every write as an invalidation, and never serve a stale value, in each
//! tracking mode; a role the server cannot run is one line and exit 2.

mod common;

use common::roles::*;
use common::*;
use serde_json::Value;

on_each_server!(
    one_writer_at_100_sets_a_second_over_10_keys_with_cached_readers,
    broadcast_and_opt_in_readers_with_small_caches_stay_fresh,
    a_tracking_role_the_server_cannot_run_is_one_line_and_exit_2,
);

/// The figures every honest run shows: reads served locally, invalidations heard and timed,
/// no stale read.
fn assert_cached_and_fresh(t: &Value) {
    assert!(count(t, "local_hits") > 0, "{t}");
    assert!(count(t, "server_reads") > 0, "{t}");
    assert_eq!(count(t, "reads"), count(t, "local_hits") + count(t, "server_reads"), "{t}");
    assert!(count(t, "invalidations") > 0, "{t}");
    assert!(t["invalidations_per_sec"].as_f64().unwrap() > 0.0, "{t}");
    assert_eq!(count(t, "stale_reads"), 0, "{t}");
    assert!(t["dropped_readers"].as_array().unwrap().is_empty(), "{t}");
}

fn one_writer_at_100_sets_a_second_over_10_keys_with_cached_readers(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_readme_line(&server, "tracking", "cache:tracking:writers=1,readers=4,keys=10,rate=100", dir.path());
    let doc = read_json(&dir.path().join("cache.json"));
    let role = role(&doc);
    assert_eq!((role["kind"].as_str(), role["mode"].as_str()), (Some("tracking"), Some("default")), "{role}");
    let t = &role["tracking"];
    assert_cached_and_fresh(t);
    // Every key fits in the cache: the most of the reads are local.
    assert!(t["hit_ratio"].as_f64().unwrap() > 0.5, "{t}");
    assert!(count(t, "invalidations_timed") > 0, "{t}");
    assert!(t["invalidation_delay"]["p99_us"].as_f64().unwrap() > 0.0, "{t}");
    let sets = count(&role["totals"], "count");
    assert!(sets > 0 && count(&role["totals"], "errors") == 0, "{role}");
    // Each reader holds a key between its writes: at most one invalidation a write per reader.
    assert!(count(t, "invalidations") <= 4 * sets, "{t} after {sets} SETs");
    let text = stdout(&out);
    assert!(text.contains("Role cache (tracking): 1 writer(s)"), "{text}");
    assert!(text.contains("0 stale reads") && text.contains("invalidation delay (write to invalidation)"), "{text}");
}

fn broadcast_and_opt_in_readers_with_small_caches_stay_fresh(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    for (mode, settings) in [("bcast", "mode=bcast,cache=4"), ("optin", "mode=optin,cache=5")] {
        let role_arg = format!("kv:tracking:readers=2,keys=10,rate=200,{settings}");
        let out = run_written(&server, &["--role", &role_arg, "-n", "200"]);
        let role = role(&out.json);
        assert_eq!(role["mode"].as_str(), Some(mode), "{role}");
        assert_eq!(count(&role["totals"], "count"), 200, "{role}");
        assert_cached_and_fresh(&role["tracking"]);
        let table = &out.markdown;
        assert!(table.contains("| Role | Reads | Local hits |") && table.contains("| kv | "), "{table}");
        let page = &out.html;
        assert!(page.contains("<th>stale reads</th>") && page.contains("<td>kv</td>"), "{mode}");
    }
    // The opt-in readers asked for each fetch to be tracked.
    assert!(server.calls("client|caching") > 0);
}

fn a_tracking_role_the_server_cannot_run_is_one_line_and_exit_2(kind: Kind) {
    // A server that refuses HELLO (RESP2 only).
    let server = Server::start_as(kind, &["--rename-command", "HELLO", ""]);
    let says = ["--role cache: the server refused HELLO 3", "Redis 6 or later"];
    assert_refused(&server, &["--role", "cache:tracking:keys=10"], &says);
    // A memcached protocol has no tracking at all.
    let says = "--role cache: a tracking role needs a Redis-protocol server speaking RESP3";
    assert_refused(&server, &["--protocol", "memcache-text", "--role", "cache:tracking:keys=10"], &[says]);
    assert_refused(&server, &["--role", "cache:tracking:writers=0"], &["--role cache has readers but no writers"]);
}
