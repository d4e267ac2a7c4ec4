//! memtier_benchmark's workload options (issue 13.1) run through respbench against a real
//! redis-server: what the server executed (INFO commandstats) and what it holds afterwards.

mod common;

use common::*;

/// Runs `respbench memtier` with `args` against `server`, one thread and one client unless
/// `args` say otherwise; asserts success.
fn memtier(server: &Server, args: &[&str]) -> std::process::Output {
    let out = respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "-t", "1", "-c", "1", "--hide-histogram"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "memtier {args:?}: {}", stderr(&out));
    out
}

#[test]
fn multi_key_get_sends_mgets_of_n_keys_counted_as_memtier_counts_them() {
    let server = Server::start(&[]);
    // 1:10 with 5 keys per MGET: each cycle is one SET and two MGETs; -n counts MGETs as one.
    memtier(&server, &["--multi-key-get=5", "--ratio=1:10", "-n", "30"]);
    assert_eq!(server.calls("set"), 10);
    assert_eq!(server.calls("mget"), 20);
    assert_eq!(server.calls("get"), 0);
    // Hits and misses are per key: keys 1-5 exist, 6-10 do not.
    let server = Server::start(&[]);
    for k in 1..=5 {
        server.cli(&["SET", &format!("key:{k}"), "v"]);
    }
    let json = server.dir.path().join("mget.json");
    run_ok(
        &server,
        &["--multi-key-get", "5", "--ratio", "0:1", "-n", "4", "-c", "1", "--key-min", "1", "--key-max", "10"]
            .into_iter()
            .chain(["--key-pattern", "S:S", "--json", json.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    let mget = &read_json(&json)["commands"]["MGET"];
    assert_eq!((mget["count"].as_u64(), mget["hits"].as_u64(), mget["misses"].as_u64()), (Some(4), Some(10), Some(10)));
}

#[test]
fn data_offset_writes_and_reads_at_the_offset_with_setrange_and_getrange() {
    let server = Server::start(&[]);
    memtier(
        &server,
        &["--data-offset=100", "-d", "10", "--ratio=1:1", "-n", "20", "--key-maximum=4", "--key-pattern=S:S"],
    );
    assert_eq!(server.calls("setrange"), 10);
    assert_eq!(server.calls("getrange"), 10);
    assert_eq!(server.calls("set") + server.calls("get"), 0);
    // Bytes before the offset are zeros, the value follows them.
    assert_eq!(server.cli(&["STRLEN", "memtier-0"]), "110");
    assert_eq!(server.cli(&["GETRANGE", "memtier-0", "100", "-1"]), "x".repeat(10));
}

#[test]
fn data_size_pattern_s_spreads_the_size_range_over_the_keys() {
    let server = Server::start(&[]);
    let args = ["--data-size-range=10-100", "--data-size-pattern=S", "--key-minimum=0", "--key-maximum=90"];
    memtier(&server, &[&args[..], &["-n", "allkeys", "--ratio=1:0", "--key-pattern=P:P"]].concat());
    assert_eq!(server.dbsize(), 91);
    for (key, len) in [("memtier-0", "10"), ("memtier-45", "55"), ("memtier-90", "100")] {
        assert_eq!(server.cli(&["STRLEN", key]), len, "{key}");
    }
    // R (the default) draws sizes at random within the range.
    let server = Server::start(&[]);
    let args = ["--data-size-range=10-100", "--data-size-pattern=R", "--key-maximum=90"];
    memtier(&server, &[&args[..], &["-n", "allkeys", "--ratio=1:0", "--key-pattern=P:P"]].concat());
    let lens: std::collections::BTreeSet<String> =
        (0..=90).map(|k| server.cli(&["STRLEN", &format!("memtier-{k}")])).collect();
    assert!(lens.len() > 10, "sizes not spread: {lens:?}");
}

#[test]
fn wait_ratio_mixes_waits_after_sets() {
    let server = Server::start(&[]);
    // SET:WAIT 2:1 on a SET-only mix: 30 requests are 20 SETs and 10 WAITs (WAIT 0 0 answers :0 at once).
    let out =
        memtier(&server, &["--wait-ratio=2:1", "--num-slaves=0-0", "--wait-timeout=0-0", "--ratio=1:0", "-n", "30"]);
    assert_eq!(server.calls("set"), 20);
    assert_eq!(server.calls("wait"), 10);
    assert!(!stdout(&out).is_empty());
    // Replicas and timeout are drawn from their ranges; a standalone server waits out the timeout.
    memtier(&server, &["--wait-ratio=1:1", "--num-slaves=1-2", "--wait-timeout=1-3", "--ratio=1:0", "-n", "4"]);
    assert_eq!(server.calls("wait"), 12);
    let bad = respbench().args(["memtier", "-p", &server.port_arg(), "--wait-ratio=x"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("'x'"), "{}", stderr(&bad));
}
