//! Command lines written for redis-benchmark and valkey-benchmark, run through respbench
//! against a real server and checked on the server.

mod common;

use std::process::{Command, Output, Stdio};

use common::*;

fn bench_cmd(server: &Server) -> Command {
    let mut cmd = respbench();
    cmd.args(["redis-benchmark", "-h", "127.0.0.1", "-p", &server.port_arg()]);
    cmd
}

fn bench(server: &Server, args: &[&str]) -> Output {
    let out = bench_cmd(server).args(args).output().unwrap();
    assert!(out.status.success(), "redis-benchmark {args:?}: {}", stderr(&out));
    out
}

fn keys(server: &Server, pattern: &str) -> Vec<String> {
    server.cli(&["KEYS", pattern]).lines().filter(|l| !l.is_empty()).map(String::from).collect()
}

#[test]
fn the_classic_suite_does_what_redis_benchmark_does() {
    let server = Server::start(&[]);
    let n = 1000u64;
    // Starting the server sent a PING of its own.
    let pings_before = server.calls("ping");
    let out = bench(&server, &["-n", "1000", "-r", "100", "-c", "10", "-q"]);
    let text = stdout(&out);
    let names = [
        "PING_INLINE",
        "PING_MBULK",
        "SET",
        "GET",
        "INCR",
        "LPUSH",
        "RPUSH",
        "LPOP",
        "RPOP",
        "SADD",
        "HSET",
        "SPOP",
        "ZADD",
        "ZPOPMIN",
        "LPUSH (needed to benchmark LRANGE)",
        "LRANGE_100 (first 100 elements)",
        "LRANGE_300 (first 300 elements)",
        "LRANGE_500 (first 500 elements)",
        "LRANGE_600 (first 600 elements)",
        "MSET (10 keys)",
        "MGET (10 keys)",
        "XADD",
    ];
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), names.len(), "{text}");
    for (line, name) in lines.iter().zip(names) {
        assert!(line.starts_with(&format!("{name}: ")) && line.contains(" requests per second, p50="), "{line}");
    }
    // Every test sent its -n requests.
    assert_eq!(server.calls("ping") - pings_before, 2 * n);
    for (command, times) in [
        ("set", 1),
        ("get", 1),
        ("incr", 1),
        ("lpush", 2),
        ("rpush", 1),
        ("lpop", 1),
        ("rpop", 1),
        ("sadd", 1),
        ("hset", 1),
        ("spop", 1),
        ("zadd", 1),
        ("zpopmin", 1),
        ("lrange", 4),
        ("mset", 1),
        ("mget", 1),
        ("xadd", 1),
    ] {
        assert_eq!(server.calls(command), times * n, "{command}");
    }
    // What they left: -r 100 keys of 12 digits; the counters sum to the INCRs; the list pushed
    // 2n, popped 2n, then refilled by n for LRANGE; SPOP and ZPOPMIN emptied what SADD and ZADD
    // (at most 100 members) made; the stream has n entries.
    let string_keys = keys(&server, "key:*");
    assert!(string_keys.len() <= 100 && string_keys.len() > 50, "{}", string_keys.len());
    assert!(string_keys.iter().all(|k| k.len() == 4 + 12), "{string_keys:?}");
    let counters = keys(&server, "counter:*");
    let sum: u64 = counters.iter().map(|k| server.cli(&["GET", k]).parse::<u64>().unwrap()).sum();
    assert_eq!(sum, n);
    assert_eq!(server.cli(&["LLEN", "mylist"]), n.to_string());
    assert_eq!(server.cli(&["EXISTS", "myset"]), "0");
    assert_eq!(server.cli(&["EXISTS", "myzset"]), "0");
    let fields: u64 = server.cli(&["HLEN", "myhash"]).parse().unwrap();
    assert!(fields <= 100 && fields > 50, "{fields}");
    assert_eq!(server.cli(&["XLEN", "mystream"]), n.to_string());
    assert_eq!(server.cli(&["STRLEN", &string_keys[0]]), "3");
}

#[test]
fn without_r_every_request_hits_one_key_and_sets_fill_from_zero() {
    let server = Server::start(&[]);
    bench(&server, &["-n", "500", "-t", "set,incr,sadd,zadd", "-d", "100", "-q"]);
    assert_eq!(server.cli(&["STRLEN", "key:__rand_int__"]), "100");
    assert_eq!(server.cli(&["GET", "counter:__rand_int__"]), "500");
    assert_eq!(server.cli(&["SCARD", "myset"]), "1");
    assert_eq!(server.cli(&["ZSCORE", "myzset", "element:__rand_int__"]), "0");
    assert_eq!(server.dbsize(), 4);
}

#[test]
fn csv_has_redis_benchmarks_columns() {
    let server = Server::start(&[]);
    let out = bench(&server, &["-n", "500", "-t", "set,get,lrange_100", "--csv", "-P", "8"]);
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\
         \"p99_latency_ms\",\"max_latency_ms\""
    );
    let rows: Vec<Vec<String>> =
        lines.map(|l| l.split(',').map(|f| f.trim_matches('"').to_string()).collect()).collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        ["SET", "GET", "LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)"],
        "{text}"
    );
    for row in &rows {
        let numbers: Vec<f64> = row[1..].iter().map(|f| f.parse().unwrap()).collect();
        assert_eq!(numbers.len(), 7);
        assert!(numbers[0] > 0.0, "{row:?}");
        // min <= p50 <= p95 <= p99 <= max
        assert!(numbers[2] <= numbers[3] && numbers[3] <= numbers[4] && numbers[4] <= numbers[5], "{row:?}");
        assert!(numbers[5] <= numbers[6], "{row:?}");
    }
}

#[test]
fn a_multi_exec_sequence_after_the_options() {
    let server = Server::start(&[]);
    let out = bench(
        &server,
        &[
            "-n",
            "400",
            "-r",
            "50",
            "-c",
            "4",
            "--",
            "multi",
            ";",
            "set",
            "key:__rand_int__",
            "__data__",
            ";",
            "incr",
            "counter",
            ";",
            "exec",
        ],
    );
    assert_eq!(server.cli(&["GET", "counter"]), "400");
    assert_eq!(server.calls("multi"), 400);
    assert_eq!(server.calls("exec"), 400);
    assert!(keys(&server, "key:*").len() <= 50);
    // The test is named by its command line, and counted in whole transactions.
    let text = stdout(&out);
    assert!(text.contains("====== multi ; set key:__rand_int__ __data__ ; incr counter ; exec ======"), "{text}");
    assert!(text.contains("400 requests completed"), "{text}");
}

#[test]
fn repeats_in_a_sequence_and_an_eval() {
    let server = Server::start(&[]);
    bench(&server, &["-n", "100", "-q", "SET", "foo", "bar", ";", "4", "GET", "foo"]);
    assert_eq!(server.calls("set"), 100);
    assert_eq!(server.calls("get"), 400);
    let script = "return redis.call('SET', KEYS[1], ARGV[1])";
    bench(&server, &["-n", "300", "-r", "20", "-q", "eval", script, "1", "ev:__rand_int__", "__data__"]);
    assert_eq!(server.calls("eval"), 300);
    let evals = keys(&server, "ev:*");
    assert!(!evals.is_empty() && evals.len() <= 20, "{evals:?}");
    assert_eq!(server.cli(&["GET", &evals[0]]), "xxx");
}

#[test]
fn connection_options_dbnum_resp3_pipeline_and_threads() {
    let server = Server::start(&[]);
    bench(
        &server,
        &["-n", "2000", "-c", "8", "-P", "16", "--threads", "2", "-t", "set", "-r", "1000", "--dbnum", "3", "-q"],
    );
    assert_eq!(server.calls("set"), 2000);
    assert_eq!(server.dbsize(), 0);
    assert!(server.cli(&["-n", "3", "DBSIZE"]).parse::<u64>().unwrap() > 500);
    bench(&server, &["-3", "-n", "200", "-t", "get", "-q"]);
    assert!(server.calls("hello") >= 1);
    // One-dash long options with `=`, as some guides print them.
    bench(&server, &["-n", "100", "-threads=2", "-precision=1", "-t", "ping", "-q"]);
    // A unix socket and a password.
    let locked = Server::start(&["--requirepass", "s3cret"]);
    let socket = locked.socket();
    let out = respbench()
        .args(["redis-benchmark", "-s", socket.to_str().unwrap(), "-a", "s3cret", "-n", "100", "-t", "incr", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(locked.cli_auth("s3cret", &["GET", "counter:__rand_int__"]), "100");
}

#[test]
fn uri_with_acl_user_and_x_reads_the_last_argument_from_stdin() {
    let server = Server::start(&[]);
    assert_eq!(server.cli(&["ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all"]), "OK");
    let uri = format!("redis://bench:pw@127.0.0.1:{}/2", server.port);
    let out = respbench().args(["redis-benchmark", "-u", &uri, "-n", "50", "-t", "set", "-q"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli(&["-n", "2", "EXISTS", "key:__rand_int__"]), "1");
    let mut child = bench_cmd(&server)
        .args(["-n", "10", "-x", "set", "fromstdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"piped value").unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    assert_eq!(server.cli(&["GET", "fromstdin"]), "piped value");
}

#[test]
fn rps_duration_and_warmup() {
    let server = Server::start(&[]);
    let out =
        bench(&server, &["--rps", "2000", "--duration", "1", "--warmup", "1", "-c", "4", "-t", "ping_mbulk", "-q"]);
    // 1 s of warmup and 1 s measured at 2000/s: about 4000 sent, 2000 reported.
    let calls = server.calls("ping") as f64 - 1.0;
    assert!((3400.0..4600.0).contains(&calls), "{calls}");
    let text = stdout(&out);
    let rps: f64 = text.split(": ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((1800.0..2200.0).contains(&rps), "{text}");
}

#[test]
fn loop_and_idle_modes_stop_on_ctrl_c() {
    let server = Server::start(&[]);
    let child =
        bench_cmd(&server).args(["-l", "-n", "200", "-t", "ping", "-q"]).stdout(Stdio::piped()).spawn().unwrap();
    // Each loop sends 200 PING_INLINE and 200 PING_MBULK: past 1,000 the third loop is under
    // way, so the first two have printed their lines.
    server.wait_calls("ping", 1001);
    unsafe_sigint(child.id());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(stdout(&out).lines().filter(|l| l.starts_with("PING_INLINE")).count() >= 2, "{}", stdout(&out));
    let child = bench_cmd(&server).args(["-I", "-c", "7"]).stdout(Stdio::piped()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    // The idle connections and the one asking.
    while server.info_u64("clients", "connected_clients") < 8 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let connected = server.info_u64("clients", "connected_clients");
    // Stop it before judging, so a failed check leaves no process behind.
    unsafe_sigint(child.id());
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    assert_eq!(connected, 8);
}

fn unsafe_sigint(pid: u32) {
    Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap();
}

#[test]
fn links_named_redis_benchmark_and_valkey_benchmark() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for name in ["redis-benchmark", "valkey-benchmark"] {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_respbench"), &link).unwrap();
        let out =
            Command::new(&link).args(["-p", &server.port_arg(), "-n", "100", "-t", "lpush", "-q"]).output().unwrap();
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert!(stdout(&out).starts_with("LPUSH: "));
    }
    assert_eq!(server.cli(&["LLEN", "mylist"]), "200");
}

#[test]
fn help_and_version_in_each_tools_style() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["redis-benchmark", "valkey-benchmark"] {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_respbench"), &link).unwrap();
        let out = Command::new(&link).arg("--help").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let help = stdout(&out);
        assert!(help.starts_with(&format!("Usage: {name} [OPTIONS] [COMMAND ARGS...]")), "{help}");
        assert!(help.contains(&format!("respbench {}'s {name} front-end", env!("CARGO_PKG_VERSION"))), "{help}");
        for option in [" -h <hostname>", " -n <requests>", " -P <numreq>", " --csv", " --version"] {
            assert!(help.contains(option), "{name}: {option} missing");
        }
        let out = Command::new(&link).arg("--version").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let version = stdout(&out);
        assert!(version.starts_with(&format!("{name} respbench-{}", env!("CARGO_PKG_VERSION"))), "{version}");
    }
}

#[test]
fn unsupported_and_unknown_options_are_one_line_usage_errors() {
    for (args, want) in [
        (&["--num-functions", "4"][..], "--num-functions sets valkey-benchmark's FUNCTION LOAD and FCALL tests"),
        (&["--rdma"][..], "no RDMA device"),
        (&["-t", "nope"], "unknown test 'nope'"),
        (&["--frobnicate"], "unknown redis-benchmark option '--frobnicate'"),
        (&["-k", "2"], "'-k'"),
        (&["-c", "zero"], "'zero'"),
    ] {
        let out = respbench().arg("redis-benchmark").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn valkey_counts_n_in_commands_of_a_sequence_and_redis_in_sequences() {
    let server = Server::start(&[]);
    let sequence = ["-n", "4000", "-c", "4", "--", "multi", ";", "set", "k", "v", ";", "incr", "c", ";", "exec"];
    let out = respbench().args(["valkey-benchmark", "-p", &server.port_arg()]).args(sequence).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("multi"), 1000);
    assert_eq!(server.calls("exec"), 1000);
    bench(&server, &sequence);
    assert_eq!(server.calls("multi"), 5000);
}

#[test]
fn idle_mode_stops_when_the_server_refuses_clients() {
    let server = Server::start(&["--maxclients", "2"]);
    let out = bench_cmd(&server).args(["-I", "-c", "5"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("max number of clients"), "{}", stderr(&out));
}

#[test]
fn keepalive_0_user_without_password_and_show_errors() {
    let server = Server::start(&[]);
    let before = server.info_u64("stats", "total_connections_received");
    bench(&server, &["-k", "0", "-c", "1", "-n", "50", "-t", "ping_mbulk", "-q", "--user", "nobody", "-e"]);
    let opened = server.info_u64("stats", "total_connections_received") - before;
    assert!((50..=54).contains(&opened), "{opened} connections for 50 requests");
    let out = bench_cmd(&server).args(["--tls", "--insecure", "--tls-ciphers", "NOPE", "-n", "1"]).output().unwrap();
    assert!(stderr(&out).contains("unknown TLS cipher suite 'NOPE'"), "{}", stderr(&out));
}

fn valkey(server: &Server, args: &[&str]) -> Output {
    let out = respbench().args(["valkey-benchmark", "-p", &server.port_arg()]).args(args).output().unwrap();
    assert!(out.status.success(), "valkey-benchmark {args:?}: {}", stderr(&out));
    out
}

#[test]
fn valkey_function_load_and_fcall_tests_load_and_call_benchlib() {
    let server = Server::start(&[]);
    let args = ["-t", "function_load,fcall", "-n", "200", "-c", "2", "-q", "--num-functions", "3"];
    let out = valkey(&server, &[&args[..], &["--num-keys-in-fcall", "2"]].concat());
    let text = stdout(&out);
    assert!(text.contains("FUNCTION LOAD: ") && text.contains("FCALL: "), "{text}");
    // 200 loads of the 3-function library, then FCALL's own load of foo1 and 200 calls.
    assert_eq!(server.calls("function|load"), 201);
    assert_eq!(server.calls("fcall"), 200);
    let library = server.cli(&["FUNCTION", "LIST", "LIBRARYNAME", "benchlib"]);
    assert!(library.contains("foo1") && !library.contains("foo2"), "{library}");
    // The FUNCTION LOAD test alone leaves its library: foo3 .. foo1.
    valkey(&server, &["-t", "function_load", "-n", "10", "-q", "--num-functions", "3"]);
    let library = server.cli(&["FUNCTION", "LIST", "LIBRARYNAME", "benchlib"]);
    assert!(["foo1", "foo2", "foo3"].iter().all(|f| library.contains(f)), "{library}");
    assert!(!library.contains("foo4"), "{library}");
    // Not in the suite without -t under redis-benchmark's name.
    let out = bench(&server, &["-t", "get", "-n", "10", "-q"]);
    assert!(!stdout(&out).contains("FCALL"));
}

#[test]
fn valkey_mptcp_runs_against_a_tcp_server() {
    let server = Server::start(&[]);
    // redis-server listens on plain TCP: the kernel falls back, and the run works.
    let out = valkey(&server, &["--mptcp", "-t", "ping_mbulk,set", "-n", "500", "-q"]);
    assert!(stdout(&out).contains("SET: "), "{}", stdout(&out));
    assert_eq!(server.calls("set"), 500);
}

#[test]
fn valkey_enable_tracking_turns_client_tracking_on() {
    let server = Server::start(&[]);
    valkey(&server, &["-3", "-t", "get", "-r", "50", "-n", "500", "-q"]);
    assert_eq!(server.info_u64("stats", "tracking_total_keys"), 0);
    // With tracking the server remembers the keys read; SETs by the same clients invalidate
    // them with RESP3 pushes, which the run skips.
    let out = valkey(&server, &["-3", "--enable-tracking", "-t", "set,get", "-r", "50", "-n", "500", "-q"]);
    assert!(server.info_u64("stats", "tracking_total_keys") > 0);
    assert!(!stdout(&out).contains("errors"), "{}", stdout(&out));
    assert_eq!((server.calls("set"), server.calls("get")), (500, 1000));
}

/// Through either name, stderr carries only what the tools print there: nothing after a run
/// that went well (an empty keyspace read included), and a server's refusal in their words.
#[test]
fn stderr_is_the_tools_own() {
    let server = Server::start(&["--maxclients", "2"]);
    let dir = tempfile::tempdir().unwrap();
    let port = server.port_arg();
    for name in ["redis-benchmark", "valkey-benchmark"] {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_respbench"), &link).unwrap();
        let out = Command::new(&link).args(["-p", &port, "-n", "100", "-c", "1", "-t", "get", "-q"]).output().unwrap();
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{name}");
        // Two connections held open (each answered, so the server counts it) fill the server.
        let held: Vec<_> = (0..2).map(|_| answered(server.port).expect("room for it")).collect();
        let out = Command::new(&link).args(["-p", &port, "-n", "100", "-c", "1", "-t", "get", "-q"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.lines().any(|l| l == "Error from server: ERR max number of clients reached"), "{name}: {err}");
        assert!(!err.contains("respbench"), "{name}: {err}");
        drop(held);
        wait_for("room on the server again", std::time::Duration::from_secs(10), || answered(server.port).is_some());
    }
    // A server that wants a password, and an error reply during a test.
    let locked = Server::start(&["--requirepass", "secret"]);
    let out = bench_cmd(&locked).args(["-n", "10", "-t", "get", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err, format!("Node 127.0.0.1:{} replied with error:\nNOAUTH Authentication required.\n", locked.port));
    let open = Server::start(&[]);
    open.cli(&["LPUSH", "alist", "x"]);
    let out = bench_cmd(&open).args(["-n", "10", "-q", "GET", "alist"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("Error from server: WRONGTYPE"), "{}", stderr(&out));
}

#[test]
fn a_server_that_goes_away_ends_the_run_at_once_as_the_tools_do() {
    // The tools never reconnect: a read error ends the run with hiredis's words and exit 1,
    // where respbench's own counted run tries again for about ten seconds.
    let mut server = Server::start(&[]);
    let run = Watched::spawn({
        let mut cmd = bench_cmd(&server);
        cmd.args(["-n", "100000000", "-c", "4", "-t", "get", "-q"]);
        cmd
    });
    server.wait_calls("get", 1000);
    let gone = std::time::Instant::now();
    server.kill();
    let out = run.finish();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    // hiredis's reason: closed, or reset where the server died with requests unread.
    let lines: Vec<&str> = err.lines().collect();
    let said = ["Error: Server closed the connection", "Error: Connection reset by peer"];
    assert!(lines.len() == 1 && said.contains(&lines[0]), "{err}");
    assert!(gone.elapsed() < std::time::Duration::from_secs(5), "the run took {:?} to end", gone.elapsed());
}

/// A connection the server answered PING on, or `None` when it refused it (maxclients).
fn answered(port: u16) -> Option<std::net::TcpStream> {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    conn.write_all(b"PING\r\n").ok()?;
    let mut reply = [0u8; 7];
    conn.read_exact(&mut reply).ok()?;
    (&reply == b"+PONG\r\n").then_some(conn)
}

#[test]
fn options_apply_in_order_and_the_last_setting_wins() {
    // As redis-benchmark's parser: a repeated option keeps its last value, -u sets the parts
    // it has over an earlier -p, and a later -p overrides the URI's port.
    let server = Server::start(&[]);
    let port = server.port_arg();
    let run = |args: &[&str]| {
        let out = respbench().arg("redis-benchmark").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };
    // Starting the server sent a PING of its own.
    let pings = server.calls("ping");
    run(&["-p", "1", "-u", &format!("redis://127.0.0.1:{port}/2"), "-n", "5", "-n", "20", "-t", "ping", "-t", "set"]);
    assert_eq!((server.calls("set"), server.calls("ping")), (20, pings));
    assert_eq!(server.cli(&["-n", "2", "EXISTS", "key:__rand_int__"]), "1");
    run(&["-u", "redis://127.0.0.1:1", "-p", &port, "-P", "2", "-P", "10", "-n", "30", "-t", "incr", "-q"]);
    assert_eq!(server.calls("incr"), 30);
    // --precision as redis-benchmark takes it: below 0 is its default, above 4 is 4.
    run(&["-p", &port, "-n", "10", "-t", "get", "--precision", "9", "--precision", "-1", "-q"]);
    assert_eq!(server.calls("get"), 10);
}

#[test]
fn sequential_hands_out_every_number_once() {
    let server = Server::start(&[]);
    valkey(&server, &["--sequential", "-r", "300", "-n", "300", "-t", "set", "-q"]);
    assert_eq!(server.dbsize(), 300);
    // respbench's own name for it, on a command of its own: the keys 0..299 each once.
    server.cli(&["FLUSHALL"]);
    let out = respbench()
        .args(["-p", &server.port_arg(), "-c", "7", "-n", "300", "--key-min", "0", "--key-max", "299"])
        .args(["--command", "INCR n:__rand_int__", "--rand-sequential"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.dbsize(), 300);
    assert_eq!(server.cli(&["GET", "n:000000000299"]), "1");
}

#[test]
fn rps_prints_valkeys_rps_summary() {
    let server = Server::start(&[]);
    let out = valkey(&server, &["--rps", "500", "-n", "500", "-c", "5", "-t", "ping_mbulk"]);
    let text = stdout(&out);
    let at = text.find("RPS Summary:\n  target RPS: 500.00\n  RPS distribution (reqs/sec):\n").expect(&text);
    let header = text[at..].lines().nth(3).unwrap();
    assert_eq!(header.split_whitespace().collect::<Vec<_>>(), ["avg", "min", "p50", "p95", "p99", "max"]);
    let figures: Vec<f64> = text[at..].lines().nth(4).unwrap().split_whitespace().map(|f| f.parse().unwrap()).collect();
    assert_eq!(figures.len(), 6, "{text}");
    assert!(figures[1] <= figures[2] && figures[2] <= figures[5], "{text}");
    // Without --rps there is none.
    assert!(!stdout(&valkey(&server, &["-n", "100", "-t", "ping_mbulk"])).contains("RPS Summary"));
}

#[test]
fn valkey_version_short_and_n_beside_duration_in_its_words() {
    let out = respbench().args(["valkey-benchmark", "-v"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("valkey-benchmark respbench-"), "{}", stdout(&out));
    for line in [&["-n", "10", "--duration", "2"][..], &["--duration", "2", "-n", "10"]] {
        let out = respbench().args(["valkey-benchmark"]).args(line).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{line:?}");
        assert_eq!(stderr(&out), "Options -n and --duration are mutually exclusive.\n");
    }
}

#[test]
fn a_dataset_lands_byte_for_byte_through_field_placeholders() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("docs.csv");
    std::fs::write(&csv, "id,title,body\n1,\"Hello, world\",\"say \"\"hi\"\"\"\n2,plain,\"a,b,c\"\n3,third,x\n")
        .unwrap();
    let out = respbench()
        .args(["valkey-benchmark", "-p", &server.port_arg(), "--dataset", csv.to_str().unwrap()])
        .args(["-r", "3", "--sequential", "-n", "3", "-c", "1", "-q"])
        .args(["HSET", "doc:__rand_int__", "title", "__field:title__", "body", "__field:body__"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = [("Hello, world", "say \"hi\""), ("plain", "a,b,c"), ("third", "x")];
    for (i, (title, body)) in expected.iter().enumerate() {
        let key = format!("doc:{i:012}");
        assert_eq!(server.cli(&["HGET", &key, "title"]), *title, "{key}");
        assert_eq!(server.cli(&["HGET", &key, "body"]), *body, "{key}");
    }
    // respbench's own flags: --dataset with --dataset-rows, the rows in order.
    server.cli(&["FLUSHALL"]);
    let out = respbench()
        .args(["-p", &server.port_arg(), "-c", "1", "-n", "2", "--dataset", csv.to_str().unwrap()])
        .args(["--dataset-rows", "2", "--command", "RPUSH titles __field:title__"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli(&["LRANGE", "titles", "0", "-1"]), "Hello, world\nplain");
}

#[test]
fn a_malformed_dataset_is_named_and_nothing_is_sent() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("a,b\n1\n", "SET k __field:a__", "dataset bad.csv, line 2: 1 fields where the header has 2 (a short row)"),
        (
            "a,b\n1,\"open\n",
            "SET k __field:a__",
            "dataset bad.csv, line 2, field 'b': a quote is opened and not closed",
        ),
        ("a,b\n1,2\n", "SET k __field:c__", "the commands name __field:c__, which dataset bad.csv does not have"),
    ];
    for (text, command, said) in cases {
        std::fs::write(dir.path().join("bad.csv"), text).unwrap();
        let words: Vec<&str> = command.split(' ').collect();
        let out = respbench()
            .current_dir(dir.path())
            .args(["valkey-benchmark", "-p", &server.port_arg(), "-q", "--dataset", "bad.csv", "-n", "5"])
            .args(&words)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{text:?}: {}", stderr(&out));
        assert!(stderr(&out).starts_with(&format!("Error: {said}")), "{text:?}: {}", stderr(&out));
        let out = respbench()
            .current_dir(dir.path())
            .args(["-p", &server.port_arg(), "--dataset", "bad.csv", "-n", "5", "--command", command])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains(said), "{}", stderr(&out));
    }
    assert_eq!(server.calls("set"), 0);
    // valkey-benchmark's own refusals: no placeholder, __data__ beside a dataset.
    std::fs::write(dir.path().join("ok.csv"), "a\n1\n").unwrap();
    for (words, said) in [
        (&["SET", "k", "v"][..], "Error: Dataset mode requires at least one field placeholder\n"),
        (&["SET", "__field:a__", "__data__"], "Error: __data__ placeholders cannot be used with --dataset option\n"),
    ] {
        let out = respbench()
            .current_dir(dir.path())
            .args(["valkey-benchmark", "-p", &server.port_arg(), "-q", "--dataset", "ok.csv"])
            .args(words)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr(&out).starts_with(said), "{}", stderr(&out));
    }
}

/// valkey-benchmark's `--fuzz` against a private server: it ends on time, every command ends
/// in one counted outcome (a reply by kind, or a lost connection), the server's survival is
/// said, and the CONFIG values it changed are set back.
#[test]
fn valkey_fuzz_counts_every_outcome_and_ends_on_time() {
    let server = Server::start(&[]);
    let hz = server.cli(&["CONFIG", "GET", "hz"]);
    let fuzz = |args: &[&str]| {
        respbench()
            .args(["valkey-benchmark", "-p", &server.port_arg(), "--fuzz", "--seed", "7"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = fuzz(&["--fuzz-mode", "malformed-commands,config-commands", "-n", "600", "-c", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Running fuzzer with 3 clients, 200 commands per client (600 total commands)"), "{text}");
    let line = |label: &str| -> String {
        let found = text.lines().find_map(|l| l.split_once(&format!("] {label}: ")).map(|(_, rest)| rest.to_string()));
        found.unwrap_or_else(|| panic!("no '{label}' line in {text}"))
    };
    // "status 12, bulk 3": the sum of the counts.
    let sum = |counts: &str| -> u64 {
        counts.split(", ").filter(|c| *c != "none").map(|c| c.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum()
    };
    assert_eq!(line("Total commands sent"), "600");
    let outcomes = sum(&line("Replies by kind")) + sum(&line("Error replies by kind")) + sum(&line("Connections lost"));
    assert_eq!(outcomes, 600, "{text}");
    assert!(line("Error replies by kind").contains("ERR"), "{text}");
    let closes: u64 = line("Connections closed by the server after a protocol error reply").parse().unwrap();
    assert!(closes > 0, "{text}");
    assert!(line("Server survived").starts_with("yes"), "{text}");
    assert_eq!(server.cli(&["CONFIG", "GET", "hz"]), hz);
    // Bounded in time: --duration ends a run of 100,000 commands after a second.
    let started = std::time::Instant::now();
    let out = fuzz(&["--duration", "1", "-c", "2", "--fuzz-loglevel", "none"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(8), "took {:?}", started.elapsed());
    assert_eq!(stdout(&out).lines().count(), 1, "only the opening line at none: {}", stdout(&out));
    // An unknown mode is valkey's refusal; the fuzzer is valkey-benchmark's alone.
    let out = fuzz(&["--fuzz-mode", "everything"]);
    assert_eq!((out.status.code(), stderr(&out).trim()), (Some(1), "Invalid fuzz mode: everything"));
    let out = bench_cmd(&server).args(["--fuzz", "-n", "10"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
