//! Signals from schedulers: SIGTERM stops every subcommand and front-end with
//! 128 + the signal (not 130 whatever came), and a stopped run lets the replies already in
//! flight arrive before it writes its results, so that what the server did and what the
//! report counts agree.

mod common;

use common::*;

/// Starts `args` in the background, waits until the server has executed `n` SETs (the run is
/// under way), sends SIGTERM and returns the output.
fn sigterm_once_loaded(server: &Server, args: &[&str], n: u64) -> std::process::Output {
    let run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(args);
        cmd
    });
    server.wait_calls("set", n);
    run.signal(libc::SIGTERM);
    run.finish()
}

#[test]
fn fill_exits_143_on_sigterm() {
    let server = Server::start(&[]);
    let port = server.port_arg();
    let out = sigterm_once_loaded(
        &server,
        &["fill", "-p", &port, "--key-max", "100000000", "-c", "2", "--threads", "1", "-d", "8"],
        1000,
    );
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
}

#[test]
fn capacity_exits_143_on_sigterm() {
    let server = Server::start(&[]);
    let port = server.port_arg();
    let out = sigterm_once_loaded(
        &server,
        &["capacity", "-p", &port, "--slo", "p99=50ms", "--start-rate", "500", "--duration", "30s", "--ratio", "1:0"],
        100,
    );
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
}

#[test]
fn the_redis_benchmark_front_end_exits_143_on_sigterm() {
    let server = Server::start(&[]);
    let port = server.port_arg();
    let out =
        sigterm_once_loaded(&server, &["redis-benchmark", "-p", &port, "-t", "set", "-n", "100000000", "-q"], 1000);
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
}

#[test]
fn sighup_gives_129_for_fill_too() {
    let server = Server::start(&[]);
    let port = server.port_arg();
    let run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["fill", "-p", &port, "--key-max", "100000000", "-c", "2", "--threads", "1", "-d", "8"]);
        cmd
    });
    server.wait_calls("set", 1000);
    run.signal(libc::SIGHUP);
    let out = run.finish();
    assert_eq!(out.status.code(), Some(129), "{}", stderr(&out));
}

/// Starts a run that INCRs one counter, waits for `intervals` of its progress lines, sends
/// SIGTERM and checks that every INCR the server executed was counted in the JSON.
fn sigterm_counts_what_was_in_flight(extra: &[&str]) {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &server.port_arg(), "--duration", "60s", "--threads", "1", "--progress"])
            .args(["--command", "INCR counter", "--json", json.to_str().unwrap()])
            .args(extra);
        cmd
    });
    run.wait_intervals(2);
    run.signal(libc::SIGTERM);
    let out = run.finish();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["interrupted"], true);
    let counted = doc["totals"]["count"].as_u64().unwrap();
    let executed: u64 = server.cli(&["GET", "counter"]).parse().unwrap();
    assert!(counted > 0);
    // Nothing lost and nothing made up: replies in flight at the signal arrived and counted.
    assert_eq!(counted, executed, "{}", stderr(&out));
    assert_eq!(doc["errors"].as_object().map_or(0, |e| e.len()), 0, "{}", doc["errors"]);
}

#[test]
fn sigterm_during_a_pipelined_run_counts_the_replies_in_flight() {
    sigterm_counts_what_was_in_flight(&["-c", "4", "-P", "16"]);
}

#[test]
fn sigterm_during_a_paced_run_counts_the_replies_in_flight() {
    sigterm_counts_what_was_in_flight(&["-c", "4", "-P", "4", "--rate", "20000"]);
}

#[test]
fn a_second_signal_exits_at_once() {
    // A server that accepts and never answers: the checks before the run wait out their
    // 5-second deadline, so the first SIGTERM has nothing to stop yet; the second ends it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &port.to_string(), "-c", "1", "--duration", "60s"]);
        cmd
    });
    let (_held, _) = listener.accept().unwrap();
    let signalled = std::time::Instant::now();
    run.signal(libc::SIGTERM);
    // The first must be taken before the second is sent: a signal still pending would merge
    // with the second into one. Taken = no longer in the process's pending set.
    let status = format!("/proc/{}/status", run.id());
    wait_for("the first SIGTERM taken", std::time::Duration::from_secs(10), || {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        let pending = text.lines().find_map(|l| l.strip_prefix("ShdPnd:")).map(str::trim).unwrap_or("0");
        u64::from_str_radix(pending, 16).is_ok_and(|bits| bits & (1 << (libc::SIGTERM - 1)) == 0)
    });
    run.signal(libc::SIGTERM);
    let out = run.finish();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(signalled.elapsed() < std::time::Duration::from_secs(4), "took {:?}", signalled.elapsed());
}
