//! Large values sent in place (the write buffer keeps them by reference into the run's value
//! data, `writev` or io_uring's `SENDMSG` hands them to the kernel): the server receives
//! exactly the bytes, through partial writes (a 1 MB write never fits a socket's buffer) and
//! with several values pipelined on one connection.

mod common;

use common::*;

const VALUE: usize = 1_000_000;
const KEYS: u64 = 6;

/// Whether the server holds key `key:N` as `VALUE` bytes of the alphabet only (`alnum`), or
/// exactly `VALUE` x's; a framing slip (a header or CRLF inside a value) fails both.
fn value_ok(server: &Server, n: u64, alnum: bool) -> bool {
    let script = if alnum {
        "local v = redis.call('GET', KEYS[1]) return (v and #v == tonumber(ARGV[1]) and not string.find(v, '[^%w]')) and 1 or 0"
    } else {
        "local v = redis.call('GET', KEYS[1]) return (v == string.rep('x', tonumber(ARGV[1]))) and 1 or 0"
    };
    server.cli(&["EVAL", script, "1", &format!("key:{n}"), &VALUE.to_string()]).trim() == "1"
}

#[test]
fn one_megabyte_values_pipelined_land_whole() {
    let server = Server::start(&[]);
    for random in [true, false] {
        server.cli(&["FLUSHALL"]);
        let sets = server.calls("set");
        let mut args = vec!["-c", "2", "--threads", "1", "-P", "4", "-n", "40", "--ratio", "1:0"];
        args.extend(["-d", "1000000", "--key-min", "0", "--key-max", "5", "--key-pattern", "S:S"]);
        if random {
            args.push("--random-data");
        }
        run_ok(&server, &args);
        assert_eq!(server.calls("set") - sets, 40, "random data: {random}");
        for n in 0..KEYS {
            assert!(value_ok(&server, n, random), "key:{n} is not {VALUE} bytes as sent (random data: {random})");
        }
    }
    // Read back pipelined: every reply a hit of the whole value.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let args = ["-c", "2", "--threads", "1", "-P", "4", "-n", "40", "--ratio", "0:1", "--key-min", "0"];
    run_ok(&server, &[&args[..], &["--key-max", "5", "--json", json.to_str().unwrap()]].concat());
    let get = &read_json(&json)["totals"];
    assert_eq!((get["count"].as_u64(), get["hits"].as_u64()), (Some(40), Some(40)), "{get}");
}
