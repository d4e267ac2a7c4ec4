//! Signals from schedulers (issue 14): SIGTERM stops every subcommand and front-end with
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
