//! `--setup` and the argument spaces against a real redis-server and valkey-server: a script
//! loaded before the run is called by its SHA without a NOSCRIPT; a function, a consumer group
//! and a configuration parameter set up before the run (the parameter put back after it); ten
//! hashes filled with a thousand fields each by walking keys and fields together; and the bad
//! inputs, each one line.

mod common;

use common::*;

on_each_server!(
    a_script_loaded_in_setup_is_called_by_its_sha_without_noscript,
    a_function_a_group_and_a_parameter_are_set_up_and_the_parameter_put_back,
    ten_keys_by_a_thousand_fields_in_order_fill_every_hash,
    a_refused_setup_command_is_one_line_and_nothing_is_measured,
);

/// `key` of the server's INFO commandstats line for `command`, such as `failed_calls`.
fn commandstat(server: &Server, command: &str, key: &str) -> u64 {
    let info = server.cli(&["INFO", "commandstats"]);
    let line = info.lines().find(|l| l.starts_with(&format!("cmdstat_{command}:"))).unwrap_or("");
    line.split([':', ',']).find_map(|kv| kv.strip_prefix(&format!("{key}="))).map_or(0, |v| v.parse().unwrap())
}

fn a_script_loaded_in_setup_is_called_by_its_sha_without_noscript(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let json = server.dir.path().join("evalsha.json");
    let out = run_ok(
        &server,
        &[
            "-c",
            "4",
            "--threads",
            "2",
            "-n",
            "1000",
            "--setup",
            "SCRIPT LOAD \"return 1\"",
            "--command",
            "EVALSHA __setup:1__ 0",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let doc = read_json(&json);
    assert_eq!(doc["errors"].as_object().unwrap().len(), 0, "{}", doc["errors"]);
    assert_eq!(server.calls("evalsha"), 1000, "{}", stderr(&out));
    assert_eq!(commandstat(&server, "evalsha", "failed_calls"), 0);
    assert!(!server.cli(&["INFO", "errorstats"]).contains("NOSCRIPT"));
}

fn a_function_a_group_and_a_parameter_are_set_up_and_the_parameter_put_back(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let library =
        "FUNCTION LOAD REPLACE \"#!lua name=benchlib\nredis.register_function('one', function() return 1 end)\"";
    let out = run_ok(
        &server,
        &[
            "-c",
            "2",
            "-n",
            "200",
            "--setup",
            library,
            "--setup",
            "CONFIG SET maxmemory-policy allkeys-lru",
            "--setup",
            "XGROUP CREATE jobs workers $ MKSTREAM",
            "--command",
            "FCALL one 0",
        ],
    );
    assert_eq!(server.calls("fcall"), 200);
    assert_eq!(commandstat(&server, "fcall", "failed_calls"), 0);
    assert!(server.cli(&["XINFO", "GROUPS", "jobs"]).contains("workers"));
    assert_eq!(server.cli(&["CONFIG", "GET", "maxmemory-policy"]), "maxmemory-policy\nnoeviction");
    assert_eq!(commandstat(&server, "config|set", "calls"), 2, "set, then put back");
    assert!(stderr(&out).contains("configuration put back: maxmemory-policy"), "{}", stderr(&out));
    // Run again: the group is there already (BUSYGROUP), which is what the setup asked for.
    run_ok(&server, &["-n", "10", "--setup", "XGROUP CREATE jobs workers $ MKSTREAM", "--command", "PING"]);
}

fn ten_keys_by_a_thousand_fields_in_order_fill_every_hash(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let args = [
        "-c",
        "2",
        "--threads",
        "1",
        "-n",
        "10000",
        "--key-prefix",
        "h:",
        "--key-min",
        "1",
        "--key-max",
        "10",
        "--command",
        "HSET __key__ __field__ v",
        "--command-key-pattern",
        "P",
        "--field-range",
        "1-1000",
        "--field-pattern",
        "S",
    ];
    run_ok(&server, &args);
    for key in 1..=10 {
        assert_eq!(server.cli(&["HLEN", &format!("h:{key}")]), "1000", "h:{key}");
    }
    assert_eq!(server.cli(&["HEXISTS", "h:7", "field:1000"]), "1");
}

#[test]
fn a_setup_reference_to_nothing_is_one_line_before_connecting() {
    // Nothing listens on the port: the refusal comes before any connection.
    let port = free_port().to_string();
    let out = respbench()
        .args(["-p", &port, "--setup", "PING", "--setup", "PING", "--command", "EVALSHA __setup:3__ 0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("__setup:3__") && err.contains("2 --setup"), "{err}");
}

fn a_refused_setup_command_is_one_line_and_nothing_is_measured(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let out = run(&server, &["-n", "100", "--setup", "SCRIPT LOAD \"retur 1\"", "--command", "EVALSHA __setup:1__ 0"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--setup 1 (SCRIPT LOAD \"retur 1\")"), "{err}");
    assert_eq!(server.calls("evalsha"), 0);
}
