//! A tracking role against a real redis-server: cached readers serve most reads locally, hear
//! every write as an invalidation, and never serve a stale value, in each tracking mode; a role
//! the server cannot run is one line and exit 2.

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

/// The README's tracking command line, split into its arguments.
fn readme_line() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("### Roles").expect("a Roles section")..];
    let line = section.lines().find(|l| l.starts_with("respbench ") && l.contains(":tracking:")).expect("a line");
    line.split_whitespace().skip(1).map(String::from).collect()
}

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

#[test]
fn one_writer_at_100_sets_a_second_over_10_keys_with_cached_readers() {
    // The README's line, as written, with -p added.
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = readme_line();
    assert!(args.join(" ").contains("cache:tracking:writers=1,readers=4,keys=10,rate=100"), "{args:?}");
    let out = respbench().current_dir(dir.path()).args(["-p", &server.port_arg()]).args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
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

#[test]
fn broadcast_and_opt_in_readers_with_small_caches_stay_fresh() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for (mode, settings) in [("bcast", "mode=bcast,cache=4"), ("optin", "mode=optin,cache=5")] {
        let (json, markdown, html) =
            (dir.path().join("out.json"), dir.path().join("out.md"), dir.path().join("out.html"));
        let role_arg = format!("kv:tracking:readers=2,keys=10,rate=200,{settings}");
        run_ok(
            &server,
            &[
                "--role",
                &role_arg,
                "-n",
                "200",
                "--json",
                json.to_str().unwrap(),
                "--markdown",
                markdown.to_str().unwrap(),
                "--html",
                html.to_str().unwrap(),
            ],
        );
        let doc = read_json(&json);
        let role = role(&doc);
        assert_eq!(role["mode"].as_str(), Some(mode), "{role}");
        assert_eq!(count(&role["totals"], "count"), 200, "{role}");
        assert_cached_and_fresh(&role["tracking"]);
        let table = std::fs::read_to_string(&markdown).unwrap();
        assert!(table.contains("| Role | Reads | Local hits |") && table.contains("| kv | "), "{table}");
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("<th>stale reads</th>") && page.contains("<td>kv</td>"), "{mode}");
    }
    // The opt-in readers asked for each fetch to be tracked.
    assert!(server.calls("client|caching") > 0);
}

#[test]
fn a_tracking_role_the_server_cannot_run_is_one_line_and_exit_2() {
    // A server that refuses HELLO (RESP2 only).
    let server = Server::start(&["--rename-command", "HELLO", ""]);
    let out = run(&server, &["--role", "cache:tracking:keys=10", "-n", "10"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--role cache: the server refused HELLO 3") && err.contains("Redis 6 or later"), "{err}");
    // A memcached protocol has no tracking at all.
    let out = run(&server, &["--protocol", "memcache-text", "--role", "cache:tracking:keys=10", "-n", "10"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--role cache: a tracking role needs a Redis-protocol server speaking RESP3"), "{err}");
    let out = run(&server, &["--role", "cache:tracking:writers=0", "-n", "10"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--role cache has readers but no writers"), "{}", stderr(&out));
}
