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

/// Puts one value of `len` bytes at `key`, made by the server itself.
fn put_value(server: &Server, key: &str, len: usize) {
    let script = "return redis.call('SET', KEYS[1], string.rep('v', tonumber(ARGV[1])))";
    assert_eq!(server.cli(&["EVAL", script, "1", key, &len.to_string()]).trim(), "OK");
}

/// A run of `args` against `server`: its JSON result.
fn json_of(server: &Server, args: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_ok(server, &[args, &["-q", "--json", json.to_str().unwrap()]].concat());
    read_json(&json)
}

#[test]
fn a_megabyte_reply_over_many_receives_is_counted_to_the_byte() {
    // Each reply arrives in many pieces (the socket's buffer, io_uring's pooled receives), one
    // by one at pipeline 1 and back to back at 4: every reply a hit, every byte counted.
    let server = Server::start(&[]);
    put_value(&server, "big:one", VALUE);
    let reply = (format!("${VALUE}\r\n").len() + VALUE + 2) as u64;
    for pipeline in ["1", "4"] {
        let args = ["-c", "2", "--threads", "1", "-P", pipeline, "-n", "24", "--command", "GET big:one"];
        let doc = json_of(&server, &args);
        let (get, totals) = (&doc["commands"]["GET"], &doc["totals"]);
        assert_eq!((get["count"].as_u64(), get["hits"].as_u64()), (Some(24), Some(24)), "-P {pipeline}: {get}");
        assert_eq!(get["bytes_in"].as_u64(), Some(24 * reply), "-P {pipeline}: {get}");
        assert_eq!((totals["errors"].as_u64(), totals["failed"].as_u64()), (Some(0), Some(0)), "-P {pipeline}");
    }
}

#[test]
fn an_error_reply_after_large_replies_is_seen() {
    // LPUSH on a string key is answered WRONGTYPE, between and after the 1 MB GET replies on
    // the same pipelined connections: each error counted as one, each value whole.
    let server = Server::start(&[]);
    put_value(&server, "big:one", VALUE);
    let args = ["-c", "2", "--threads", "1", "-P", "4", "-n", "40", "--command", "GET big:one"];
    let doc = json_of(&server, &[&args[..], &["--command-ratio", "3", "--command", "LPUSH big:one x"]].concat());
    let (get, push) = (&doc["commands"]["GET"], &doc["commands"]["LPUSH"]);
    assert_eq!((get["count"].as_u64(), get["hits"].as_u64(), get["errors"].as_u64()), (Some(30), Some(30), Some(0)));
    assert_eq!((push["count"].as_u64(), push["errors"].as_u64()), (Some(10), Some(10)), "{push}");
    let reply = (format!("${VALUE}\r\n").len() + VALUE + 2) as u64;
    assert_eq!(get["bytes_in"].as_u64(), Some(30 * reply), "{get}");
    assert_eq!(doc["totals"]["failed"].as_u64(), Some(0));
    assert_eq!(server.cli(&["STRLEN", "big:one"]).trim(), VALUE.to_string());
}

#[test]
fn a_large_body_whose_last_piece_is_short_ends_the_run() {
    // A 65,536-byte value's reply is one loopback segment and a few bytes more: its body's last
    // bytes come in a piece of their own, shorter than a header's peek, with the CRLF behind
    // them in the socket. The drop of those bytes does not drain the socket; the run reads the
    // CRLF and goes on, rather than waiting for an arrival that already came.
    let server = Server::start(&[]);
    for (len, pipeline) in [(65_536, "1"), (65_536, "3"), (131_072, "1"), (65_600, "1")] {
        put_value(&server, "big:edge", len);
        let args = ["-c", "2", "--threads", "1", "-P", pipeline, "-n", "60", "--command", "GET big:edge"];
        let get = &json_of(&server, &args)["commands"]["GET"];
        assert_eq!(
            (get["count"].as_u64(), get["hits"].as_u64()),
            (Some(60), Some(60)),
            "{len} bytes, -P {pipeline}: {get}"
        );
    }
}
