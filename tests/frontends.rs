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
    assert!(stdout(&out).contains("Runs: 3."), "{}", stdout(&out));
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

#[test]
fn a_link_named_memtier_benchmark_speaks_memtier() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("memtier_benchmark");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_respbench"), &link).unwrap();
    let out = std::process::Command::new(&link)
        .args(["-p", &server.port_arg(), "-n", "10", "-c", "2", "-t", "1", "--ratio", "1:0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 20);
}

#[test]
fn memtier_options_not_supported_yet_are_named_on_one_line() {
    for (args, needle) in [
        (&["memtier", "--tls"][..], "--tls is not supported yet"),
        (&["memtier", "--json-out-file", "x.json"][..], "--json-out-file is not supported yet"),
        (&["memtier", "--no-such-thing"][..], "'--no-such-thing'"),
        (&["memtier", "-c", "zero"][..], "'zero'"),
    ] {
        let out = respbench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out).lines().count(), 1, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}
