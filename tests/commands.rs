//! Any command with placeholders, RESP3 and URIs, against real redis-server processes.

mod common;

use common::*;

#[test]
fn custom_commands_fill_every_placeholder() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_ok(
        &server,
        &[
            "-n",
            "3600",
            "-c",
            "3",
            "--key-max",
            "99",
            "-d",
            "8",
            "--json",
            json.to_str().unwrap(),
            "--command",
            "HSET h:__rand_1st__ f:__rand_1st__ __data__",
            "--command",
            "LPUSH \"list {tag}x\" __rand_int__ __rand_int__",
            "--command",
            "SET user:__key__:name __data__",
            "--command-ratio",
            "3",
            "--command-ratio",
            "1",
            "--command-ratio",
            "2",
            "--command-key-pattern",
            "R",
            "--command-key-pattern",
            "R",
            "--command-key-pattern",
            "P",
        ],
    );
    // Weights 3:1:2, exact over every cycle of each connection's 1200 requests.
    assert_eq!(server.calls("hset"), 1800);
    assert_eq!(server.calls("lpush"), 600);
    assert_eq!(server.calls("set"), 1200);
    // __rand_1st__ is one draw shared within the command, zero-padded to 12 digits.
    let hash = server.cli(&["KEYS", "h:*"]).lines().next().unwrap().to_string();
    let number = hash.strip_prefix("h:").unwrap();
    assert_eq!(number.len(), 12, "{hash}");
    assert_eq!(server.cli(&["HGET", &hash, &format!("f:{number}")]), "xxxxxxxx");
    // {tag} is empty outside cluster mode, a quoted argument keeps its space, and each
    // __rand_int__ is its own draw.
    assert_eq!(server.cli(&["LLEN", "list x"]), "1200");
    let items: Vec<String> = server.cli(&["LRANGE", "list x", "0", "-1"]).lines().map(String::from).collect();
    assert!(items.iter().all(|i| i.len() == 12 && i.parse::<u64>().unwrap() <= 99));
    assert!(items.chunks(2).any(|pair| pair[0] != pair[1]), "two __rand_int__ always drew the same");
    // __key__ inside a longer argument, walked in parallel slices: keys 0..99 once each at most.
    assert_eq!(server.cli(&["EXISTS", "user:key:0:name"]), "1");
    // Statistics per command name.
    let doc = read_json(&json);
    assert_eq!(doc["commands"]["HSET"]["count"], 1800);
    assert_eq!(doc["commands"]["LPUSH"]["count"], 600);
    assert_eq!(doc["commands"]["SET"]["count"], 1200);
}

#[test]
fn custom_reads_count_hits_and_misses() {
    let server = Server::start(&[]);
    run_ok(&server, &["-n", "allkeys", "--key-max", "49"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_ok(
        &server,
        &["-n", "2000", "--key-max", "99", "--command", "GET __key__", "--json", json.to_str().unwrap(), "-q"],
    );
    let get = &read_json(&json)["commands"]["GET"];
    let (hits, misses) = (get["hits"].as_u64().unwrap(), get["misses"].as_u64().unwrap());
    assert_eq!(hits + misses, 2000);
    assert!((700..1300).contains(&hits), "{hits}");
}

#[test]
fn bad_commands_are_usage_errors_on_one_line() {
    for (args, needle) in [
        (&["--command", "SET \"open"][..], "unclosed quote"),
        (&["--command", " "][..], "empty"),
        (&["--command", "GET __key__", "--ratio", "1:1"][..], "--command-ratio"),
        (&["--command", "GET __key__", "--command-ratio", "1", "--command-ratio", "2"][..], "same position"),
        (&["-u", "rediss://h:1", "--cert", "c.pem"][..], "--key"),
        (&["-u", "redis://h:x"][..], "port 'x'"),
        (&["-u", "redis://h", "-p", "5"][..], "--port"),
    ] {
        let out = respbench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn resp3_run_counts_right_and_survives_push_messages() {
    let server = Server::start(&[]);
    run_ok(&server, &["-n", "allkeys", "--key-max", "49"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    // Client-side caching in broadcast mode makes the server push an invalidation to every
    // tracking connection whenever any key changes: replies and pushes interleave.
    run_ok(
        &server,
        &[
            "-3",
            "-n",
            "6000",
            "-c",
            "4",
            "--key-max",
            "99",
            "--json",
            json.to_str().unwrap(),
            "--command",
            "CLIENT TRACKING ON BCAST",
            "--command",
            "SET __key__ __data__",
            "--command",
            "GET __key__",
            "--command-ratio",
            "1",
            "--command-ratio",
            "2",
            "--command-ratio",
            "3",
        ],
    );
    let doc = read_json(&json);
    assert!(doc["errors"].as_object().unwrap().is_empty(), "{}", doc["errors"]);
    assert_eq!(doc["totals"]["count"], 6000);
    let get = &doc["commands"]["GET"];
    assert_eq!(get["count"], 3000);
    assert!(get["misses"].as_u64().unwrap() > 0 && get["hits"].as_u64().unwrap() > 0, "{get}");
    // The connections really spoke RESP3.
    assert_eq!(server.calls("hello"), 4 + 1 + 1 + 1, "workers, control, sampler and the checks each say HELLO 3");
}

#[test]
fn uri_with_acl_user_password_and_database() {
    let server = Server::start(&[]);
    assert_eq!(server.cli(&["ACL", "SETUSER", "bench", "on", ">p@ss", "~*", "+@all"]), "OK");
    let uri = format!("redis://bench:p%40ss@127.0.0.1:{}/5", server.port);
    let out = respbench().args(["-u", &uri, "-n", "allkeys", "--key-max", "19", "-q"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli(&["-n", "5", "DBSIZE"]), "20");
    let socket = format!("unix://bench:p%40ss@{}?db=6", server.socket().display());
    let out = respbench().args(["-u", &socket, "-n", "allkeys", "--key-max", "9", "-q"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli(&["-n", "6", "DBSIZE"]), "10");
    let wrong = format!("valkey://bench:nope@127.0.0.1:{}", server.port);
    let out = respbench().args(["-u", &wrong, "-n", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("WRONGPASS"), "{}", stderr(&out));
    // RESP3 logs in through HELLO.
    let out = respbench().args(["-3", "-u", &uri, "-n", "100", "-q"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_multi_exec_sequence_is_counted_per_command_and_per_unit() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = run_ok(
        &server,
        &[
            "-n",
            "500",
            "-c",
            "5",
            "-P",
            "4",
            "--key-max",
            "49",
            "--json",
            json.to_str().unwrap(),
            "--command",
            "MULTI ; SET key:__rand_int__ __data__ ; 3 INCR counter ; EXEC",
        ],
    );
    // 500 units, each a transaction of one SET and three INCRs.
    assert_eq!(server.calls("multi"), 500);
    assert_eq!(server.calls("exec"), 500);
    assert_eq!(server.calls("set"), 500);
    assert_eq!(server.cli(&["GET", "counter"]), "1500");
    let doc = read_json(&json);
    let commands = &doc["commands"];
    assert_eq!(commands["INCR"]["count"], 1500, "{commands}");
    assert_eq!(commands["MULTI;SET;3 INCR;EXEC"]["count"], 500, "{commands}");
    // The totals count commands, not the unit row on top of them.
    assert_eq!(doc["totals"]["count"], 500 * 6);
    assert!(stdout(&out).contains("MULTI;SET;3 INCR;EXEC"));
}

#[test]
fn inline_commands_reach_the_server() {
    let server = Server::start(&[]);
    run_ok(&server, &["-n", "300", "-c", "3", "--inline", "--command", "SET inline:__key__ v", "--key-max", "9"]);
    assert_eq!(server.calls("set"), 300);
    assert_eq!(server.cli(&["GET", "inline:key:3"]), "v");
}
