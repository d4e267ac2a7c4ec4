//! End-to-end tests of the core engine against real redis-server processes.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::*;

#[test]
fn allkeys_fill_writes_every_key_once_with_the_requested_size() {
    let server = Server::start(&[]);
    let out =
        run_ok(&server, &["-n", "allkeys", "--key-min", "100", "--key-max", "5099", "-d", "77", "-c", "7", "-P", "8"]);
    assert_eq!(server.dbsize(), 5000);
    // Exactly one SET per key: the fill never writes a key twice.
    assert_eq!(server.calls("set"), 5000);
    for key in ["key:100", "key:2600", "key:5099"] {
        assert_eq!(server.cli(&["STRLEN", key]), "77", "{key}");
    }
    assert_eq!(server.cli(&["EXISTS", "key:99"]), "0");
    assert_eq!(server.cli(&["EXISTS", "key:5100"]), "0");
    assert!(stdout(&out).contains("Sets"), "{}", stdout(&out));
}

#[test]
fn ratio_one_to_four_is_what_the_server_sees() {
    let server = Server::start(&[]);
    run_ok(&server, &["-n", "10000", "--ratio", "1:4", "-c", "5", "--key-max", "999"]);
    assert_eq!(server.calls("set"), 2000);
    assert_eq!(server.calls("get"), 8000);
}

/// Keys of the GETs the server's MONITOR stream shows while `args` run (expecting `n`).
fn monitored_keys(server: &Server, args: &[&str], n: usize) -> Vec<u64> {
    monitored(server, args, n)
        .iter()
        .filter_map(|(_, line)| {
            line.split("\"GET\" \"key:").nth(1).map(|rest| rest.trim_end_matches('"').parse().unwrap())
        })
        .collect()
}

#[test]
fn gaussian_pattern_concentrates_around_the_median() {
    let server = Server::start(&[]);
    let keys = monitored_keys(
        &server,
        &[
            "-n",
            "4000",
            "--ratio",
            "0:1",
            "--key-pattern",
            "G",
            "--key-max",
            "9999",
            "--key-median",
            "5000",
            "--key-stddev",
            "100",
            "-c",
            "4",
        ],
        4000,
    );
    assert_eq!(keys.len(), 4000);
    let within = |d: u64| keys.iter().filter(|&&k| k.abs_diff(5000) <= d).count() as f64 / keys.len() as f64;
    assert!((0.63..0.73).contains(&within(100)), "within 1 sd: {}", within(100));
    assert!(within(300) > 0.99, "within 3 sd: {}", within(300));
}

#[test]
fn zipf_pattern_favours_the_first_keys_by_its_law() {
    let server = Server::start(&[]);
    let keys = monitored_keys(
        &server,
        &["-n", "6000", "--ratio", "0:1", "--key-pattern", "Z", "--zipf-exponent", "1", "--key-max", "999", "-c", "3"],
        6000,
    );
    assert_eq!(keys.len(), 6000);
    let mut counts: HashMap<u64, usize> = HashMap::new();
    for k in &keys {
        *counts.entry(*k).or_default() += 1;
    }
    let share = |k: u64| *counts.get(&k).unwrap_or(&0) as f64 / keys.len() as f64;
    // s = 1 over 1000 ranks: P(rank 1) = 1 / H(1000) ≈ 0.134, P(rank 2) half of that.
    assert!((0.11..0.16).contains(&share(0)), "key 0: {}", share(0));
    assert!((0.05..0.085).contains(&share(1)), "key 1: {}", share(1));
    let top10: f64 = (0..10).map(share).sum();
    assert!((0.35..0.43).contains(&top10), "top 10: {top10}");
}

#[test]
fn duration_run_stops_on_time_and_writes_a_timeline() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let started = Instant::now();
    let out = run_ok(&server, &["--duration", "2s", "-c", "4", "--json", json.to_str().unwrap()]);
    let wall = started.elapsed();
    // The measured phase is checked below; the process as a whole adds connecting and writing.
    assert!(wall < Duration::from_secs_f64(3.5), "took {wall:?}");
    let doc = read_json(&json);
    let secs = doc["duration_secs"].as_f64().unwrap();
    assert!((1.8..2.2).contains(&secs), "measured {secs} s");
    assert_eq!(doc["interrupted"], false);
    let series = doc["time_series"].as_array().unwrap();
    assert!((2..=3).contains(&series.len()), "{} intervals", series.len());
    let summed: u64 = series.iter().map(|p| p["count"].as_u64().unwrap()).sum();
    assert_eq!(summed, doc["totals"]["count"].as_u64().unwrap());
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["server"]["name"], "redis");
    // No live line when stderr is not a terminal (warnings about the empty keyspace may be there).
    assert!(!stderr(&out).contains('\r'), "{}", stderr(&out));
}

#[test]
fn closed_loop_latency_obeys_littles_law() {
    // Mean latency x throughput = requests in flight (connections x pipeline).
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_ok(&server, &["--duration", "2s", "-c", "4", "-P", "4", "--threads", "1", "--json", json.to_str().unwrap()]);
    let doc = read_json(&json);
    let mean_s = doc["totals"]["latency_us"]["mean_us"].as_f64().unwrap() / 1e6;
    let rate = doc["totals"]["ops_per_sec"].as_f64().unwrap();
    let in_flight = mean_s * rate;
    assert!((14.4..17.6).contains(&in_flight), "Little's law gives {in_flight} in flight, expected 16");
}

#[test]
fn sigint_still_writes_results_marked_interrupted() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &server.port_arg(), "--duration", "30s", "-c", "4", "--json", json.to_str().unwrap()])
            .arg("--progress");
        cmd
    });
    run.wait_intervals(1);
    run.signal(libc::SIGINT);
    let out = run.finish();
    assert_eq!(out.status.code(), Some(130));
    let doc = read_json(&json);
    assert_eq!(doc["interrupted"], true);
    assert!(doc["totals"]["count"].as_u64().unwrap() > 0);
    assert!(doc["duration_secs"].as_f64().unwrap() < 5.0);
    assert!(stdout(&out).contains("INTERRUPTED"), "{}", stdout(&out));
}

#[test]
fn wrong_password_is_one_line_and_exit_1() {
    let server = Server::start(&["--requirepass", "sesame"]);
    let out = run(&server, &["-a", "wrong", "-n", "10"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("refused the login") && err.contains("WRONGPASS"), "{err}");
    // The right password works.
    run_ok(&server, &["-a", "sesame", "-n", "100", "-q"]);
}

#[test]
fn closed_port_is_one_line_and_exit_1() {
    let port = free_port().to_string();
    let out = respbench().args(["-p", &port, "-n", "10"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("cannot connect to 127.0.0.1:{port}")), "{err}");
}

#[test]
fn acl_user_database_and_unix_socket() {
    let server = Server::start(&[]);
    assert_eq!(server.cli(&["ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all"]), "OK");
    let socket = server.socket();
    let out = respbench()
        .args(["-s", socket.to_str().unwrap(), "--user", "bench", "-a", "pw", "--db", "3"])
        .args(["-n", "allkeys", "--key-max", "99", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli(&["-n", "3", "DBSIZE"]), "100");
    assert_eq!(server.dbsize(), 0);
    let bad =
        respbench().args(["-p", &server.port_arg(), "--user", "bench", "-a", "nope", "-n", "1"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("WRONGPASS"), "{}", stderr(&bad));
}

#[test]
fn hits_and_misses_are_counted() {
    let server = Server::start(&[]);
    run_ok(&server, &["-n", "allkeys", "--key-max", "49"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    // Keys 0..=99: half exist.
    run_ok(&server, &["-n", "4000", "--ratio", "0:1", "--key-max", "99", "--json", json.to_str().unwrap()]);
    let doc = read_json(&json);
    let get = &doc["commands"]["GET"];
    let (hits, misses) = (get["hits"].as_u64().unwrap(), get["misses"].as_u64().unwrap());
    assert_eq!(hits + misses, 4000);
    // The check before the run looks up 32 sampled keys of the range with one EXISTS, which the
    // server counts as hits and misses too; the rest are the run's GETs, one for one.
    let (server_hits, server_misses) =
        (server.info_u64("stats", "keyspace_hits"), server.info_u64("stats", "keyspace_misses"));
    assert_eq!(server_hits + server_misses, 4000 + 32);
    assert!(server_hits >= hits && server_hits - hits <= 32, "client {hits}, server {server_hits}");
    assert!((1600..2400).contains(&hits), "{hits}");
}

#[test]
fn server_errors_are_counted_by_kind_without_stopping() {
    let server = Server::start(&[]);
    // A list where strings are expected: every GET of key:0 is WRONGTYPE.
    server.cli(&["RPUSH", "key:0", "x"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = run_ok(
        &server,
        &["-n", "500", "--ratio", "0:1", "--key-max", "1", "-c", "2", "--json", json.to_str().unwrap()],
    );
    let doc = read_json(&json);
    let wrongtype = doc["errors"]["server:WRONGTYPE"].as_u64().unwrap();
    assert!((150..350).contains(&wrongtype), "{wrongtype}");
    assert_eq!(doc["totals"]["count"], 500);
    // The text names them as error replies (requests answered), apart from requests failed.
    assert!(stdout(&out).contains(&format!("error replies: {wrongtype} (WRONGTYPE {wrongtype})")), "{}", stdout(&out));
}

#[test]
fn value_sizes_expiry_and_random_data() {
    let server = Server::start(&[]);
    run_ok(
        &server,
        &[
            "-n",
            "allkeys",
            "--key-max",
            "299",
            "--data-size-range",
            "10-20",
            "--expiry-range",
            "100-200",
            "--random-data",
        ],
    );
    for k in [0, 150, 299] {
        let key = format!("key:{k}");
        let len: u64 = server.cli(&["STRLEN", &key]).parse().unwrap();
        assert!((10..=20).contains(&len), "{key}: {len}");
        let ttl: u64 = server.cli(&["TTL", &key]).parse().unwrap();
        assert!((90..=200).contains(&ttl), "{key}: ttl {ttl}");
        assert_ne!(server.cli(&["GET", &key]), "x".repeat(len as usize));
    }
    run_ok(&server, &["-n", "allkeys", "--key-prefix", "w:", "--key-max", "199", "--data-size-list", "8:1,64:1"]);
    let sizes: Vec<String> = (0..200).map(|k| server.cli(&["STRLEN", &format!("w:{k}")])).collect();
    assert!(sizes.iter().all(|s| s == "8" || s == "64"));
    assert!(sizes.iter().any(|s| s == "8") && sizes.iter().any(|s| s == "64"));
}

#[test]
fn quiet_prints_one_line_and_seed_repeats_the_keys() {
    let server = Server::start(&[]);
    let out =
        run_ok(&server, &["-n", "1000", "-q", "--seed", "42", "--ratio", "1:0", "--key-max", "999999", "-c", "1"]);
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("requests per second"));
    let first: std::collections::BTreeSet<String> = server.cli(&["KEYS", "*"]).lines().map(String::from).collect();
    server.cli(&["FLUSHALL"]);
    run_ok(&server, &["-n", "1000", "-q", "--seed", "42", "--ratio", "1:0", "--key-max", "999999", "-c", "1"]);
    let second: std::collections::BTreeSet<String> = server.cli(&["KEYS", "*"]).lines().map(String::from).collect();
    assert_eq!(first, second);
}

#[test]
fn usage_errors_exit_2_with_one_line_naming_the_value() {
    for (args, needle) in [
        (&["-P", "0"][..], "'0'"),
        (&["-c", "many"][..], "'many'"),
        (&["--duration", "soon"][..], "'soon'"),
        (&["-n", "5", "--duration", "1s"][..], "--duration"),
        (&["--key-pattern", "Q"][..], "'Q'"),
        (&["--ratio", "0:0"][..], "'0:0'"),
        (&["--key-min", "9", "--key-max", "1"][..], "--key-min 9"),
        (&["--no-such-flag"][..], "--no-such-flag"),
        // -3 is RESP3 now: the count is missing.
        (&["-n", "-3"][..], "--requests"),
    ] {
        let out = respbench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn help_lists_the_flags_without_a_short_h() {
    let out = respbench().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = stdout(&out);
    for flag in [
        "--host",
        "--port",
        "--socket",
        "--password",
        "--user",
        "--db",
        "--connections",
        "--threads",
        "--pipeline",
        "--requests",
        "--duration",
        "--ratio",
        "--key-prefix",
        "--key-min",
        "--key-max",
        "--key-pattern",
        "--key-median",
        "--key-stddev",
        "--zipf-exponent",
        "--data-size",
        "--data-size-range",
        "--data-size-list",
        "--random-data",
        "--expiry-range",
        "--seed",
        "--json",
        "--quiet",
        "--rate",
        "--arrival",
        "--warmup",
        "--runs",
        "--hdr-log",
        "--html",
        "--csv",
        "--csv-timeline",
        "--markdown",
        "--label",
        "--command",
        "--command-ratio",
        "--command-key-pattern",
        "--uri",
        "--resp3",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
    assert!(help.contains("-h, --host"));
}
