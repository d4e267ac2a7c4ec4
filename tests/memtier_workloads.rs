//! memtier_benchmark's workload options run through respbench against a real
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
        &["--multi-key-get", "5", "--ratio", "0:5", "-n", "4", "-c", "1", "--key-min", "1", "--key-max", "10"]
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

/// A MONITOR capture: a header, a SET with escaped bytes, a GET, a malformed line, an RPUSH
/// with a space inside an argument, and a line that is no command.
const CAPTURE: &str = "OK\n\
    1700000000.123456 [0 127.0.0.1:5000] \"SET\" \"mon:k1\" \"a\\x00b\\\"c\"\n\
    1700000000.223456 [0 127.0.0.1:5000] \"GET\" \"mon:k1\"\n\
    1700000000.323456 [0 127.0.0.1:5000] \"SET\" \"broken\n\
    1700000000.423456 [0 127.0.0.1:5000] \"rpush\" \"mon:list\" \"x y\"\n\
    \n";

fn capture(server: &Server) -> String {
    let path = server.dir.path().join("monitor.txt");
    std::fs::write(&path, CAPTURE).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn monitor_input_replays_a_given_line_with_its_bytes() {
    let server = Server::start(&[]);
    let file = capture(&server);
    let out = memtier(&server, &["--monitor-input", &file, "--command=__monitor_line1__", "-n", "5"]);
    assert_eq!(server.calls("set"), 5);
    // a, NUL, b, quote, c.
    assert_eq!(server.cli(&["STRLEN", "mon:k1"]), "5");
    let err = stderr(&out);
    assert!(err.contains("Loaded 3 monitor commands from 6 total lines"), "{err}");
    assert!(err.contains("warning: skipping malformed monitor command at line 4"), "{err}");
    memtier(&server, &["--monitor-input", &file, "--command=__monitor_line4__", "-n", "2"]);
    assert_eq!(server.cli(&["LRANGE", "mon:list", "0", "-1"]), "x y\nx y");
}

#[test]
fn monitor_line_at_picks_lines_in_order_or_at_random() {
    let server = Server::start(&[]);
    let file = capture(&server);
    // In order: the three valid commands twice each.
    memtier(&server, &["--monitor-input", &file, "--command=__monitor_line@__", "-n", "6"]);
    assert_eq!((server.calls("set"), server.calls("get"), server.calls("rpush")), (2, 2, 2));
    // The order is shared by all clients, as memtier's one counter: two clients of two
    // requests send lines 1, 2, 3, 1 between them (each its own first would be 1, 2, 1, 2).
    let server = Server::start(&[]);
    memtier(&server, &["--monitor-input", &file, "--command=__monitor_line@__", "-n", "2", "-c", "2"]);
    assert_eq!((server.calls("set"), server.calls("get"), server.calls("rpush")), (2, 1, 1));
    let server = Server::start(&[]);
    memtier(&server, &["--monitor-input", &file, "--command=__monitor_line@__", "--monitor-pattern=R", "-n", "300"]);
    let (set, get, rpush) = (server.calls("set"), server.calls("get"), server.calls("rpush"));
    assert_eq!(set + get + rpush, 300);
    assert!(set > 50 && get > 50 && rpush > 50, "{set} {get} {rpush}");
}

#[test]
fn monitor_placeholders_that_name_nothing_are_errors() {
    let server = Server::start(&[]);
    let file = capture(&server);
    for (placeholder, want) in [
        ("__monitor_lineX__", "invalid monitor placeholder '__monitor_lineX__'"),
        ("__monitor_line9__", "__monitor_line1__ to __monitor_line4__"),
        ("__monitor_line3__", "malformed"),
    ] {
        let out = respbench()
            .args(["memtier", "-p", &server.port_arg(), "--monitor-input", &file, "--command", placeholder])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{placeholder}");
        assert!(stderr(&out).contains(want), "{placeholder}: {}", stderr(&out));
    }
    let out = respbench().args(["memtier", "-p", &server.port_arg(), "--command=__monitor_line1__"]).output().unwrap();
    assert!(stderr(&out).contains("--monitor-input"), "{}", stderr(&out));
}

#[test]
fn scan_incremental_iteration_follows_the_cursor_in_rows_per_iteration() {
    let server = Server::start(&[]);
    memtier(&server, &["-n", "allkeys", "--ratio=1:0", "--key-pattern=P:P", "--key-maximum=199"]);
    assert_eq!(server.dbsize(), 200);
    let json = server.dir.path().join("scan.json");
    let scan = |extra: &[&str]| {
        let mut args = vec!["--command", "SCAN 0 COUNT 10", "--scan-incremental-iteration", "-n", "30", "-c", "1"];
        args.extend_from_slice(extra);
        args.extend(["--json", json.to_str().unwrap()]);
        run_ok(&server, &args);
        let doc = read_json(&json);
        let count = |row: &str| doc["commands"][row]["count"].as_u64().unwrap_or(0);
        (count("SCAN 0"), count("SCAN <cursor>"))
    };
    // Two continuations per cycle: SCAN 0, SCAN c1, SCAN c2, SCAN 0, ...
    assert_eq!(scan(&["--scan-incremental-max-iterations", "2"]), (10, 20));
    assert_eq!(server.calls("scan"), 30);
    // Without a maximum, a cycle ends when the server returns cursor 0: 200 keys by about 10
    // take about 20 SCANs, so 30 requests start a second cycle.
    let (first, next) = scan(&[]);
    assert_eq!(first + next, 30);
    assert!(first >= 2 && next >= 15, "{first} {next}");
    let bad = respbench()
        .args(["memtier", "-p", &server.port_arg(), "--command=SCAN 0", "--scan-incremental-iteration", "--pipeline=2"])
        .output()
        .unwrap();
    assert!(stderr(&bad).contains("--pipeline 1"), "{}", stderr(&bad));
}

/// memtier's export format: three items, one with a quote, a newline and a NUL in its data,
/// one that expires.
const EXPORT: &[u8] = b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n\
    0, 0, 0, 7, 0, 0, 1, 5, \"imp:1\", \"hello\"\n\
    0, 0, 0, 8, 0, 0, 1, 5, \"imp:2\", \"a\"\"b\nc\0\"\n\
    0, 0, 100, 5, 0, 0, 1, 5, \"imp:3\", \"exp\"\n";

fn export(server: &Server) -> String {
    let path = server.dir.path().join("export.csv");
    std::fs::write(&path, EXPORT).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn data_import_writes_the_files_items() {
    let server = Server::start(&[]);
    let file = export(&server);
    memtier(&server, &["--data-import", &file, "--ratio=1:0", "-n", "3"]);
    // The item that expires goes as memtier sends it, with SETEX.
    assert_eq!((server.calls("set"), server.calls("setex")), (2, 1));
    assert_eq!(server.cli(&["GET", "imp:1"]), "hello");
    assert_eq!(server.cli(&["STRLEN", "imp:2"]), "6");
    let ttl: i64 = server.cli(&["TTL", "imp:3"]).parse().unwrap();
    assert!((1..=100).contains(&ttl), "{ttl}");
    // --no-expiry drops the file's expiry; --generate-keys takes keys from the generator.
    let server = Server::start(&[]);
    memtier(&server, &["--data-import", &file, "--no-expiry", "--ratio=1:0", "-n", "3"]);
    assert_eq!(server.cli(&["TTL", "imp:3"]), "-1");
    let server = Server::start(&[]);
    memtier(
        &server,
        &["--data-import", &file, "--generate-keys", "--ratio=1:0", "--key-pattern=S:S", "--key-maximum=2", "-n", "3"],
    );
    assert_eq!(server.cli(&["GET", "memtier-0"]), "hello");
    assert_eq!(server.cli(&["GET", "memtier-2"]), "exp");
    assert_eq!(server.cli(&["EXISTS", "imp:1"]), "0");
}

#[test]
fn data_verify_counts_mismatches_after_a_run_or_alone() {
    let server = Server::start(&[]);
    let file = export(&server);
    let out = memtier(&server, &["--data-import", &file, "--ratio=1:0", "-n", "3", "--data-verify"]);
    assert!(stderr(&out).contains("Verified 3 keys: 0 mismatches"), "{}", stderr(&out));
    server.cli(&["SET", "imp:2", "tampered"]);
    let verify = |args: &[&str]| {
        respbench().args(["memtier", "-p", &server.port_arg(), "--verify-only"]).args(args).output().unwrap()
    };
    let out = verify(&["--data-import", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("Verified 3 keys: 1 mismatches"), "{}", stderr(&out));
    // Generated values: every key of the range that was written holds 'x' times -d.
    let server = Server::start(&[]);
    let run = ["-d", "8", "--ratio=1:0", "--key-pattern=P:P", "--key-maximum=99"];
    let out = memtier(&server, &[&run[..], &["-n", "allkeys", "--data-verify"]].concat());
    assert!(stderr(&out).contains("Verified 100 keys: 0 mismatches"), "{}", stderr(&out));
    server.cli(&["SET", "memtier-7", "xxxxxxx"]);
    let out = respbench()
        .args(["memtier", "-p", &server.port_arg(), "--verify-only", "-d", "8", "--key-maximum=99"])
        .output()
        .unwrap();
    assert!(stderr(&out).contains("Verified 100 keys: 1 mismatches"), "{}", stderr(&out));
}

/// README.import's example row (single quotes are bytes of the key and the data, counted in
/// nkey and nbytes), unquoted keys and data, and a quoted key with a doubled quote.
const README_IMPORT: &[u8] = b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n\
    0, 0, 60, 19, 200, 0, 1, 11, 'doxrpshny', 'asdfghjklqwerty'\n\
    0, 0, 0, 7, 0, 0, 1, 5, plain, \"hello\"\n\
    0, 0, 0, 7, 0, 0, 1, 5, key:2, world\r\n\
    0, 0, 30, 5, 0, 0, 1, 4, \"q\"\"k3\", \"abc\"\n";

#[test]
fn data_import_reads_memtiers_documented_csv_and_expires_with_setex() {
    let server = Server::start(&[]);
    let path = server.dir.path().join("readme.csv");
    std::fs::write(&path, README_IMPORT).unwrap();
    memtier(&server, &["--data-import", path.to_str().unwrap(), "--ratio=1:0", "-n", "4"]);
    // memtier 2.3 with this file: two SETEX (the rows with an exptime) and two SET.
    assert_eq!((server.calls("setex"), server.calls("set")), (2, 2));
    for (key, value) in [("'doxrpshny'", "'asdfghjklqwerty'"), ("plain", "hello"), ("key:2", "world"), ("q\"k3", "abc")]
    {
        assert_eq!(server.cli(&["GET", key]), value, "{key}");
    }
    let ttl = |key: &str| server.cli(&["TTL", key]).parse::<i64>().unwrap();
    assert!((1..=60).contains(&ttl("'doxrpshny'")) && (1..=30).contains(&ttl("q\"k3")));
    assert_eq!((ttl("plain"), ttl("key:2")), (-1, -1));
    // A key whose length is not nkey names the line.
    std::fs::write(&path, b"dumpflags, time, exptime\n0, 0, 0, 7, 0, 0, 1, 4, plain, hello\n").unwrap();
    let out = respbench()
        .args(["memtier", "-p", &server.port_arg(), "--data-import", path.to_str().unwrap(), "-n", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("readme.csv:2: the key is 5 bytes, nkey says 4"), "{}", stderr(&out));
}
