//! Command lines written for memtier_benchmark, run through respbench against a real server.

mod common;

use common::*;

fn memtier(server: &Server, args: &[&str]) -> std::process::Output {
    let out = respbench().args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg()]).args(args).output().unwrap();
    assert!(out.status.success(), "memtier {args:?}: {}", stderr(&out));
    out
}

#[test]
fn memtier_fill_leaves_exactly_the_key_range() {
    let server = Server::start(&[]);
    memtier(
        &server,
        &[
            "-n",
            "allkeys",
            "--key-pattern=P:P",
            "--ratio=1:0",
            "--key-minimum=1",
            "--key-maximum=5000",
            "-d",
            "64",
            "-c",
            "5",
            "-t",
            "2",
            "--hide-histogram",
        ],
    );
    assert_eq!(server.dbsize(), 5000);
    assert_eq!(server.calls("set"), 5000);
    assert_eq!(server.cli(&["STRLEN", "memtier-1"]), "64");
    assert_eq!(server.cli(&["EXISTS", "memtier-5000"]), "1");
    assert_eq!(server.cli(&["EXISTS", "memtier-0"]), "0");
}

#[test]
fn memtier_counts_requests_per_client_and_clients_per_thread() {
    let server = Server::start(&[]);
    // Gaussian 1:1 with --key-stddev: 2 threads x 3 clients x 100 requests.
    memtier(
        &server,
        &[
            "--ratio",
            "1:1",
            "--key-pattern",
            "G:G",
            "--key-stddev",
            "50",
            "--key-maximum",
            "10000",
            "-n",
            "100",
            "-c",
            "3",
            "-t",
            "2",
        ],
    );
    assert_eq!(server.calls("set") + server.calls("get"), 600);
    assert_eq!(server.calls("set"), 300);
    let keys: Vec<u64> =
        server.cli(&["KEYS", "memtier-*"]).lines().map(|k| k.trim_start_matches("memtier-").parse().unwrap()).collect();
    assert!(keys.iter().all(|k| k.abs_diff(5000) < 400), "gaussian keys far from the median: {keys:?}");
}

#[test]
fn memtier_pipelined_gets_with_distinct_client_seeds_and_single_dash_options() {
    let server = Server::start(&[]);
    memtier(&server, &["--ratio=0:1", "--pipeline=16", "--distinct-client-seed", "-n", "1000", "-c", "5", "-t", "2"]);
    assert_eq!(server.calls("get"), 10_000);
    // Options printed with one dash, as some guides do.
    memtier(&server, &["-clients=3", "-threads=1", "-requests=100", "-ratio=1:0"]);
    assert_eq!(server.calls("set"), 300);
}

#[test]
fn memtier_run_count_repeats_and_reports_the_spread() {
    let server = Server::start(&[]);
    let out = memtier(&server, &["-x", "3", "-n", "200", "-c", "2", "-t", "1"]);
    // memtier's report: the best, the worst and the average of the runs.
    let text = stdout(&out);
    for title in ["BEST RUN RESULTS", "WORST RUN RESULTS", "AGGREGATED AVERAGE RESULTS (3 runs)"] {
        assert!(text.contains(title), "{title}: {text}");
    }
    assert_eq!(server.calls("set") + server.calls("get"), 1200);
}

#[test]
fn memtier_authenticate_with_an_acl_user_and_select_db() {
    let server = Server::start(&[]);
    assert_eq!(server.cli(&["ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all"]), "OK");
    memtier(
        &server,
        &[
            "-a",
            "bench:pw",
            "--select-db",
            "2",
            "-n",
            "allkeys",
            "--key-maximum",
            "99",
            "--key-minimum",
            "0",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(server.cli(&["-n", "2", "DBSIZE"]), "100");
}

/// A link named memtier_benchmark to the binary under test, in a directory of its own.
fn memtier_link() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("memtier_benchmark");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_respbench"), &link).unwrap();
    (dir, link)
}

#[test]
fn a_link_named_memtier_benchmark_speaks_memtier() {
    let server = Server::start(&[]);
    let (_dir, link) = memtier_link();
    // memtier's -h is the host, not help.
    let out = std::process::Command::new(&link)
        .args(["-h", "127.0.0.1", "-p", &server.port_arg(), "-c", "2", "-t", "1", "-n", "100", "--ratio=1:0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 200);
}

#[test]
fn memtier_help_and_version() {
    let (_dir, link) = memtier_link();
    let out = std::process::Command::new(&link).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = stdout(&out);
    assert!(help.starts_with("Usage: memtier_benchmark [options]"), "{help}");
    assert!(help.contains("respbench") && help.contains("memtier_benchmark front-end"), "{help}");
    for option in
        ["-h, --host=ADDR", "--ratio=RATIO", "--key-pattern=PATTERN", "--distinct-client-seed", "-v, --version"]
    {
        assert!(help.contains(option), "{option} missing: {help}");
    }
    for flag in ["--version", "-v"] {
        let out = std::process::Command::new(&link).arg(flag).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", stderr(&out));
        let first = stdout(&out).lines().next().unwrap_or_default().to_string();
        assert!(first.starts_with("memtier_benchmark v="), "{flag}: {first}");
        assert!(first.contains(&format!("respbench {}", env!("CARGO_PKG_VERSION"))), "{flag}: {first}");
    }
    // The same through `respbench memtier`.
    let out = respbench().args(["memtier", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("--test-time=SECS"));
    // memcached's protocols are offered, not marked unsupported.
    assert!(stdout(&out).contains("memcache_text or memcache_binary"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("not supported"), "{}", stdout(&out));
}

#[test]
fn memtier_options_not_supported_yet_are_named_on_one_line() {
    for (args, needle) in [
        (
            &["memtier", "--protocol", "memcache"][..],
            "'memcache' (redis, resp2, resp3, memcache_text or memcache_binary)",
        ),
        (&["memtier", "--data-size-pattern", "Q"][..], "'Q'"),
        (&["memtier", "--print-percentiles", "50,101"][..], "'101' is not a percentile"),
        (&["memtier", "--no-such-thing"][..], "'--no-such-thing'"),
        (&["memtier", "-c", "zero"][..], "'zero'"),
    ] {
        let out = respbench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out).lines().count(), 1, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

/// The keys memtier_benchmark 2.x writes in each command's block and in Totals.
const MEMTIER_BLOCK_KEYS: [&str; 11] = [
    "Count",
    "Ops/sec",
    "Hits/sec",
    "Misses/sec",
    "Latency",
    "Average Latency",
    "Min Latency",
    "Max Latency",
    "KB/sec",
    "Time-Serie",
    "Percentile Latencies",
];

fn histogram_count(encoded: &str) -> u64 {
    use base64::Engine;
    use hdrhistogram::serialization::Deserializer;
    let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).unwrap();
    let h: hdrhistogram::Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
    h.len()
}

#[test]
fn memtier_json_out_file_has_memtiers_layout() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("memtier.json");
    let text = dir.path().join("memtier.txt");
    let out = memtier(
        &server,
        &[
            "-n",
            "300",
            "-c",
            "2",
            "-t",
            "2",
            "--ratio=1:3",
            "--key-maximum=100",
            "--json-out-file",
            json.to_str().unwrap(),
            "-o",
            text.to_str().unwrap(),
            "--print-percentiles",
            "50,90,99.9",
        ],
    );
    // -o takes the text report; nothing on stdout.
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let report = std::fs::read_to_string(&text).unwrap();
    assert!(report.contains("p90") && report.contains("p99.9"), "{report}");
    let doc = read_json(&json);
    let top: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(top, ["configuration", "run information", "ALL STATS"]);
    assert_eq!(doc["configuration"]["clients"], 2);
    assert_eq!(doc["configuration"]["threads"], 2);
    assert_eq!(doc["configuration"]["ratio"], "1:3");
    assert_eq!(doc["run information"]["Requests per client"], 300);
    let stats = &doc["ALL STATS"];
    let sections: Vec<&str> = stats.as_object().unwrap().keys().map(String::as_str).collect();
    // Without --hide-histogram, each command's latency distribution follows.
    assert_eq!(sections, ["Runtime", "Sets", "Gets", "Waits", "Totals", "SET", "GET", "WAIT"]);
    assert_eq!(stats["Runtime"]["Time unit"], "MILLISECONDS");
    for block in ["Sets", "Gets", "Waits", "Totals"] {
        for key in MEMTIER_BLOCK_KEYS {
            assert!(stats[block].get(key).is_some(), "{block} lacks {key}");
        }
    }
    let totals = &stats["Totals"];
    assert_eq!(totals["Count"], 1200);
    assert_eq!(stats["Sets"]["Count"], 300);
    assert_eq!(stats["Gets"]["Count"], 900);
    let gets = &stats["Gets"];
    let rate = gets["Hits/sec"].as_f64().unwrap() + gets["Misses/sec"].as_f64().unwrap();
    assert!((rate - gets["Ops/sec"].as_f64().unwrap()).abs() < 1.0, "{gets}");
    let pct = &totals["Percentile Latencies"];
    for key in ["p50.00", "p90.00", "p99.90"] {
        assert!(pct[key].as_f64().unwrap() > 0.0, "{key}: {pct}");
    }
    // The compressed histogram is HdrHistogram's own encoding, with every reply in it, and
    // the per-second series adds up to the count.
    assert_eq!(histogram_count(pct["Histogram log format"]["Compressed Histogram"].as_str().unwrap()), 1200);
    let series = totals["Time-Serie"].as_object().unwrap();
    assert_eq!(series.values().map(|s| s["Count"].as_u64().unwrap()).sum::<u64>(), 1200);
    assert!(series["0"].get("p50.00").is_some());
}

#[test]
fn memtier_json_with_runs_and_commands() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("runs.json");
    memtier(
        &server,
        &[
            "-x",
            "3",
            "-n",
            "100",
            "-c",
            "1",
            "-t",
            "1",
            "--command=LPUSH mylist __data__",
            "--json-out-file",
            json.to_str().unwrap(),
        ],
    );
    let doc = read_json(&json);
    let top: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        top,
        [
            "configuration",
            "run information",
            "BEST RUN RESULTS",
            "WORST RUN RESULTS",
            "AGGREGATED AVERAGE RESULTS (3 runs)"
        ]
    );
    assert_eq!(doc["BEST RUN RESULTS"]["Lpushs"]["Count"], 100);
    assert_eq!(doc["AGGREGATED AVERAGE RESULTS (3 runs)"]["Totals"]["Count"], 300);
    assert!(
        doc["BEST RUN RESULTS"]["Totals"]["Ops/sec"].as_f64() >= doc["WORST RUN RESULTS"]["Totals"]["Ops/sec"].as_f64()
    );
    assert_eq!(server.cli(&["LLEN", "mylist"]), "300");
}

/// Runs memtier's command line without judging the outcome.
fn memtier_raw(server: &Server, args: &[&str]) -> std::process::Output {
    respbench().args(["memtier", "-p", &server.port_arg()]).args(args).output().unwrap()
}

/// The server's count of connections accepted so far.
fn connections_received(server: &Server) -> u64 {
    server.info_u64("stats", "total_connections_received")
}

#[test]
fn memtier_uri_debug_and_show_config() {
    let server = Server::start(&[]);
    assert_eq!(server.cli(&["ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all"]), "OK");
    let uri = format!("redis://bench:pw@127.0.0.1:{}/3", server.port);
    let out = respbench()
        .args(["memtier", "-u", &uri, "-n", "allkeys", "--key-maximum=49", "-c", "1", "-t", "1", "-D", "--show-config"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli(&["-n", "3", "DBSIZE"]), "50");
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.contains(&format!("uri = {uri}\n")) && text.contains("clients = 1\n"), "{text}");
    assert!(err.contains("Configuration values"), "{err}");
    assert!(err.contains("debug: connected to 127.0.0.1"), "{err}");
    for bad in ["redis://127.0.0.1:port", "http://127.0.0.1"] {
        let out = respbench().args(["memtier", "--uri", bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = stderr(&out);
        assert!(err.lines().count() == 1 && err.contains("error") && err.contains(bad), "{err}");
    }
}

#[test]
fn memtier_clients_share_one_random_sequence_unless_distinct_client_seed() {
    let server = Server::start(&[]);
    let hset = |key: &str, extra: &[&str]| {
        let command = format!("--command=HSET {key} __key__ v");
        let mut args = vec![command.as_str(), "--command-key-pattern=Z", "--key-maximum=1000000"];
        args.extend(["-c", "10", "-t", "1", "-n", "1000"]);
        args.extend(extra);
        let out = memtier(&server, &args);
        server.cli(&["HLEN", key]).parse::<u64>().map(|n| (n, stderr(&out))).unwrap()
    };
    let (same, err) = hset("same", &[]);
    // respbench's note on it is in its JSON, on stderr only with --notes (memtier's stderr is memtier's).
    assert!(!err.contains("--distinct-client-seed"), "{err}");
    let (distinct, _) = hset("distinct", &["--distinct-client-seed"]);
    assert_eq!(server.calls("hset"), 20_000);
    // Ten clients replaying one sequence touch the keys of one client's 1,000 draws.
    assert!(same <= 1000 && distinct > 2 * same, "same {same}, distinct {distinct}");
    // Without --randomize the sequence is memtier's constant one: the same again.
    let (again, _) = hset("again", &[]);
    assert_eq!(again, same);
}

#[test]
fn memtier_reconnect_interval_reopens_connections() {
    let server = Server::start(&[]);
    let before = connections_received(&server);
    memtier(&server, &["-c", "2", "-t", "1", "-n", "100", "--ratio=1:0", "--reconnect-interval=10"]);
    assert_eq!(server.calls("set"), 200);
    // Two connections (and the probes), each reopened after every 10 replies: about 20 more.
    let opened = connections_received(&server) - before;
    assert!((18..=26).contains(&opened), "{opened} connections");
}

#[test]
fn memtier_reconnect_on_error_comes_back_and_says_so() {
    let mut server = Server::start(&[]);
    let child = respbench()
        .args(["memtier", "-p", &server.port_arg(), "-c", "2", "-t", "1", "--test-time=4", "--ratio=1:0"])
        .args(["--reconnect-on-error", "--max-reconnect-attempts=20", "--connection-timeout=1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_calls("set", 100);
    server.kill();
    server.start_again();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // In memtier 2.3's words (shard_connection.cpp), and none of respbench's.
    let err = stderr(&out);
    assert!(err.contains(", attempting reconnection 1/20 in 1.00 seconds..."), "{err}");
    assert!(err.contains("Reconnection successful after "), "{err}");
    assert!(!err.contains("respbench"), "{err}");
    // Back on the new server: SETs went on there.
    assert!(server.calls("set") > 0);
}

#[test]
fn memtier_connection_jitter_and_ipv4() {
    let server = Server::start(&[]);
    let started = std::time::Instant::now();
    memtier_ok_raw(
        &server,
        &[
            "-4",
            "-s",
            "localhost",
            "-c",
            "4",
            "-t",
            "1",
            "-n",
            "10",
            "--thread-conn-start-min-jitter-micros=100000",
            "--thread-conn-start-max-jitter-micros=150000",
        ],
    );
    // Three pauses of at least 100 ms between the four connections.
    assert!(started.elapsed() >= std::time::Duration::from_millis(300), "{:?}", started.elapsed());
    assert_eq!(server.calls("set") + server.calls("get"), 40);
}

fn memtier_ok_raw(server: &Server, args: &[&str]) {
    let out = memtier_raw(server, args);
    assert!(out.status.success(), "memtier {args:?}: {}", stderr(&out));
}

/// Under memtier's name a fatal signal prints memtier 2.3's bug report: its markers, the
/// crashing thread marked in the stack section, the client's connections, then the process
/// dies of the signal.
#[test]
fn a_crash_under_memtiers_name_prints_memtiers_bug_report() {
    use std::os::unix::process::ExitStatusExt;
    let server = Server::start(&[]);
    let (_dir, link) = memtier_link();
    let mut command = std::process::Command::new(&link);
    command.args(["-p", &server.port_arg(), "-t", "2", "-c", "2", "--test-time", "60", "--ratio", "1:0"]);
    let run = Watched::spawn(command);
    server.wait_calls("set", 100);
    run.signal(libc::SIGSEGV);
    let out = run.finish();
    assert_eq!(out.status.signal(), Some(libc::SIGSEGV), "the process dies of the signal: {:?}", out.status);
    let err = stderr(&out);
    let report = &err[err.find("=== MEMTIER_BENCHMARK BUG REPORT START").expect(&err)..];
    let lines: Vec<&str> = report.lines().collect();
    let stamped = |rest: &str| lines.iter().any(|l| l.split_once(" # ").is_some_and(|(_, r)| r.starts_with(rest)));
    assert_eq!(lines[0], "=== MEMTIER_BENCHMARK BUG REPORT START: Cut & paste starting from here ===");
    for rest in [
        "memtier_benchmark crashed by signal: 11",
        "Crashed running signal <SIGSEGV>",
        "Signal code: ",
        "Fault address: ",
        "--- STACK TRACE (all threads)",
        "Thread ",
        "--- INFO OUTPUT",
        "--- CLIENT LIST OUTPUT",
        "For more information, please check the core dump if available.",
    ] {
        assert!(stamped(rest), "no {rest:?} in:\n{report}");
    }
    assert!(report.contains("(current/crashing thread):"), "{report}");
    assert!(report.contains("(worker thread 1):") || report.contains("(worker thread 0):"), "{report}");
    // The client's own connections: four clients to the server.
    let conns = lines.iter().filter(|l| l.contains(&format!("addr=127.0.0.1:{} ", server.port))).count();
    assert!(conns >= 4, "{report}");
    assert!(lines.contains(&"=== MEMTIER_BENCHMARK BUG REPORT END. Make sure to include from START to END. ==="));
    assert!(!err.contains("RESPBENCH"), "{err}");
}

/// The crash report lists each connection as its worker last showed it: under memtier's name
/// in memtier's words and order (`thread= client= conn= addr= local_port= state= pending=
/// last_cmd=`), natively in respbench's. With the server's writes paused each connection
/// holds its SETs in flight (at least the one the server blocks, at most the pipeline), and
/// the local ports are the clients the server blocks.
#[test]
fn a_crash_report_lists_each_connection_with_its_requests_in_flight() {
    use std::os::unix::process::ExitStatusExt;
    let server = Server::start(&[]);
    let (_dir, link) = memtier_link();
    let port = server.port_arg();
    let flags = ["-p", &port, "--pipeline", "16", "--ratio", "1:0"];
    let memtier = [&flags[..], &["-t", "2", "-c", "2", "--test-time", "60"]].concat();
    let native = [&flags[..], &["--threads", "2", "-c", "4", "--duration", "60s"]].concat();
    for (program, args) in [(link.as_os_str(), memtier), (env!("CARGO_BIN_EXE_respbench").as_ref(), native)] {
        let mut command = std::process::Command::new(program);
        command.args(&args);
        let run = Watched::spawn(command);
        server.wait_calls("set", 100);
        assert_eq!(server.cli(&["CLIENT", "PAUSE", "20000", "WRITE"]), "OK");
        // The run's four connections, each blocked on a SET.
        let blocked = || -> Vec<String> {
            let list = server.cli(&["CLIENT", "LIST"]);
            let ports = list.lines().filter(|l| l.contains(" flags=b ") && l.contains(" cmd=set "));
            ports
                .filter_map(|l| l.split(" addr=").nth(1)?.split(' ').next()?.rsplit(':').next().map(String::from))
                .collect()
        };
        wait_for("four blocked clients", std::time::Duration::from_secs(10), || blocked().len() == 4);
        let mut ports = blocked();
        run.signal(libc::SIGSEGV);
        let out = run.finish();
        assert_eq!(server.cli(&["CLIENT", "UNPAUSE"]), "OK");
        assert_eq!(out.status.signal(), Some(libc::SIGSEGV), "{:?}", out.status);
        let err = stderr(&out);
        let under_memtier = program == link.as_os_str();
        let (section, keys) = if under_memtier {
            (
                "--- CLIENT LIST OUTPUT",
                ["thread", "client", "conn", "addr", "local_port", "state", "pending", "last_cmd"],
            )
        } else {
            ("--- CONNECTIONS", ["thread", "client", "link", "server", "local_port", "state", "in_flight", "oldest"])
        };
        let after = &err[err.find(section).unwrap_or_else(|| panic!("no {section}:\n{err}"))..];
        let lines: Vec<Vec<(&str, &str)>> = after
            .lines()
            .skip(1)
            .map_while(|l| l.split_once(" # ").filter(|(_, rest)| rest.starts_with("thread=")).map(|(_, rest)| rest))
            .map(|rest| rest.split(' ').filter_map(|kv| kv.split_once('=')).collect())
            .collect();
        assert_eq!(lines.len(), 4, "{after}");
        let mut clients = Vec::new();
        let mut local_ports = Vec::new();
        for line in &lines {
            assert_eq!(line.iter().map(|(k, _)| *k).collect::<Vec<_>>(), keys, "{after}");
            let value = |i: usize| line[i].1;
            clients.push((value(0).to_string(), value(1).to_string()));
            assert_eq!((value(2), value(3), value(5)), ("0", &*format!("127.0.0.1:{port}"), "connected"), "{after}");
            let pending: u32 = value(6).parse().unwrap();
            assert!((1..=16).contains(&pending), "{after}");
            assert_eq!(value(7), "SET", "{after}");
            local_ports.push(value(4).to_string());
        }
        if under_memtier {
            let order = [("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")].map(|(t, c)| (t.to_string(), c.to_string()));
            assert_eq!(clients, order, "memtier's order: by thread, then client:\n{after}");
        }
        local_ports.sort();
        ports.sort();
        assert_eq!(local_ports, ports, "{after}");
    }
}

/// memtier's stderr is memtier's lines: respbench's notes (the shared key sequence) and the
/// empty-keyspace warning stay out of it, and go into respbench's JSON; `--notes` says them.
#[test]
fn memtier_stderr_has_only_memtiers_lines_and_the_json_keeps_the_notes() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let args = ["-n", "20", "-c", "1", "-t", "1", "--ratio", "0:1", "--respbench-json", json.to_str().unwrap()];
    let out = memtier(&server, &args);
    let err = stderr(&out);
    assert!(!err.contains("respbench") && !err.contains("note:") && !err.contains("warning:"), "{err}");
    let doc = read_json(&json);
    let said =
        |key: &str, needle: &str| doc[key].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains(needle));
    assert!(said("notes", "same random key sequence"), "{}", doc["notes"]);
    assert!(said("warnings", "empty"), "{}", doc["warnings"]);
    let out = memtier(&server, &[&args[..], &["--notes"]].concat());
    let err = stderr(&out);
    assert!(err.contains("memtier_benchmark: note: every client") && err.contains("respbench: warning:"), "{err}");
}
