//! memtier_benchmark command lines read with getopt's rules and run
//! against a real redis-server: a repeated option keeps its last value, `--uri` meets `--port`,
//! percentiles 0 and 100, and each `--command`'s own key pattern. The expected keys and figures
//! are those memtier_benchmark 2.3.0 (built from its source) gave for the same command lines
//! (docs/compatibility.md, "Key patterns of arbitrary commands").

mod common;

use std::collections::BTreeMap;

use common::*;

/// `respbench memtier` against `server` with `args` (the server's address first, so that
/// `args` may repeat it); asserts success.
fn memtier(server: &Server, args: &[&str]) -> std::process::Output {
    let out = respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "--hide-histogram"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "memtier {args:?}: {}", stderr(&out));
    out
}

/// The key numbers under `prefix` (`prefix` + number) and the value each holds.
fn numbered(server: &Server, prefix: &str) -> BTreeMap<u64, String> {
    let keys = server.cli(&["KEYS", &format!("{prefix}*")]);
    keys.lines()
        .filter(|k| !k.is_empty())
        .map(|k| (k[prefix.len()..].parse().unwrap(), server.cli(&["GET", k])))
        .collect()
}

#[test]
fn a_repeated_option_keeps_its_last_value() {
    let server = Server::start(&[]);
    let json = server.dir.path().join("last.json");
    let json_arg = format!("--json-out-file={}", json.display());
    let args = ["-p", "1", "-p", &server.port_arg(), "-t", "1", "-c", "1", "-c", "2", "-n", "5", "-n", "10"];
    let more = ["--pipeline=2", "--pipeline=10", "--key-prefix", "a:", "--key-prefix", "b:", "--ratio", "1:0"];
    let last = ["--ratio", "1:1", "--key-maximum=50", "--key-pattern=S:S", "--key-pattern=P:P", &json_arg];
    memtier(&server, &[&args[..], &more, &last].concat());
    // Two clients of ten requests, half SETs: memtier 2.3 wrote b:0-4 and b:26-30 (its P
    // slices of 0-50 are 0-25 and 26-50).
    assert_eq!((server.calls("set"), server.calls("get")), (10, 10));
    let keys: Vec<u64> = numbered(&server, "b:").into_keys().collect();
    assert_eq!(keys, [0, 1, 2, 3, 4, 26, 27, 28, 29, 30]);
    assert_eq!(server.cli(&["KEYS", "a:*"]), "");
    let config = &read_json(&json)["configuration"];
    for (field, value) in [("pipeline", "10"), ("clients", "2"), ("requests", "10"), ("key_pattern", "\"P:P\"")] {
        assert_eq!(config[field].to_string(), value, "{field}");
    }
}

#[test]
fn the_uri_overrides_the_parts_it_names_with_memtiers_warnings() {
    let server = Server::start(&[]);
    let port = server.port_arg();
    // The URI's port and database win over -p 1 and the default 0; memtier 2.3 says so on stderr.
    let uri = format!("redis://127.0.0.1:{port}/3");
    let run = ["-t", "1", "-c", "1", "-n", "10", "--ratio=1:0", "--key-pattern=S:S"];
    let out = memtier(&server, &[&["-p", "1", "--uri", &uri][..], &run].concat());
    let err = stderr(&out);
    assert!(err.contains("warning: both URI and --host/--server specified, URI takes precedence.\n"), "{err}");
    assert!(err.contains("warning: both URI and --port specified, URI takes precedence.\n"), "{err}");
    assert_eq!((server.cli(&["-n", "3", "DBSIZE"]).as_str(), server.dbsize()), ("10", 0));
    // A URI without a port keeps --port (memtier 2.3 connects to it, and still warns).
    let out = respbench()
        .args(["memtier", "-p", &port, "--uri=redis://127.0.0.1", "-t", "1", "-c", "1", "-n", "7", "--ratio=1:0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("warning: both URI and --port specified"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("--host/--server"), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 17);
}

#[test]
fn percentiles_0_and_100_are_the_lowest_and_highest_latency() {
    let server = Server::start(&[]);
    let json = server.dir.path().join("p.json");
    let list = "--print-percentiles=0,10,20,30,40,50,60,70,80,90,95,100";
    let json_arg = format!("--json-out-file={}", json.display());
    let out = memtier(&server, &["-t", "1", "-c", "1", "-n", "300", list, &json_arg]);
    let text = stdout(&out);
    assert!(text.contains("      p0 Latency     p10 Latency"), "{text}");
    assert!(text.contains("     p95 Latency    p100 Latency       KB/sec"), "{text}");
    let totals = &read_json(&json)["ALL STATS"]["Totals"];
    let percentiles = totals["Percentile Latencies"].as_object().unwrap();
    // memtier 2.3's keys for this list (in the list's order).
    let mut keys: Vec<&str> = percentiles.keys().map(String::as_str).filter(|k| k.starts_with('p')).collect();
    keys.sort_unstable();
    let mut want = vec!["p0.000", "p10.00", "p100.0", "p20.00", "p30.00", "p40.00"];
    want.extend(["p50.00", "p60.00", "p70.00", "p80.00", "p90.00", "p95.00"]);
    assert_eq!(keys, want);
    let ms = |v: &serde_json::Value| v.as_f64().unwrap();
    // The same figures within the histogram's resolution (3 significant digits) and rounding.
    let close = |a: f64, b: f64| (a - b).abs() <= 0.002_f64.max(b * 0.002);
    let (p0, min) = (ms(&percentiles["p0.000"]), ms(&totals["Min Latency"]));
    let (p100, max) = (ms(&percentiles["p100.0"]), ms(&totals["Max Latency"]));
    assert!(close(p0, min) && close(p100, max), "p0 {p0} min {min}, p100 {p100} max {max}");
    assert!(ms(&percentiles["p0.000"]) <= ms(&percentiles["p50.00"]));
}

/// Two INCR commands, `a:` with pattern `a` and `b:` with `b`, two clients of 50 requests over
/// keys 1-100 (extra `args` after); the hits on each key of each command.
fn two_commands(a: &str, b: &str, args: &[&str]) -> [BTreeMap<u64, String>; 2] {
    let server = Server::start(&[]);
    let range = ["-t", "1", "-c", "2", "-n", "50", "--key-prefix=", "--key-minimum=1", "--key-maximum=100"];
    let commands = ["--command=INCR a:__key__", "--command-key-pattern", a, "--command=INCR b:__key__"];
    memtier(&server, &[&range[..], &commands, &["--command-key-pattern", b], args].concat());
    [numbered(&server, "a:"), numbered(&server, "b:")]
}

#[test]
fn each_command_draws_keys_from_its_own_pattern_over_the_whole_range() {
    for a in ["R", "S", "G", "Z"] {
        for b in ["R", "S", "G", "Z"] {
            let counts = two_commands(a, b, &[]);
            for (pattern, hits) in [a, b].into_iter().zip(counts) {
                let total: u64 = hits.values().map(|v| v.parse::<u64>().unwrap()).sum();
                let what = format!("{a}{b}: {pattern} {hits:?}");
                // 25 requests from each client: every command its own share.
                assert_eq!(total, 50, "{what}");
                assert!(hits.keys().all(|k| (1..=100).contains(k)), "{what}");
                let mean = hits.iter().map(|(k, v)| k * v.parse::<u64>().unwrap()).sum::<u64>() / 50;
                match pattern {
                    // Its own walk from the range's start, both clients alike (memtier 2.3:
                    // 1-25, whatever the other command's pattern).
                    "S" => assert_eq!(hits, (1..=25).map(|k| (k, "2".to_string())).collect(), "{what}"),
                    // Clients share one random sequence: 25 draws at most, spread over the range.
                    "R" => assert!(hits.len() <= 25 && (25..=75).contains(&mean), "{what}"),
                    // Around the middle, within three standard deviations (100/6).
                    "G" => assert!(hits.keys().all(|k| (1..=100).contains(k)) && (35..=65).contains(&mean), "{what}"),
                    // Zipf: the low keys take most draws (memtier 2.3: key 1 in every run).
                    "Z" => assert!(hits.contains_key(&1) && mean < 40, "{what}"),
                    _ => unreachable!(),
                }
            }
        }
    }
}

#[test]
fn parallel_is_all_or_none_and_splits_the_range_as_memtier() {
    // memtier 2.3 with -c 3 over 1-100: slices 1-34, 35-68 and 69-100, each client 5 keys.
    let server = Server::start(&[]);
    let range = ["-t", "1", "-c", "3", "-n", "10", "--key-prefix=", "--key-minimum=1", "--key-maximum=100"];
    let commands = ["--command=SET a:__key__ x", "--command-key-pattern=P", "--command=SET b:__key__ y"];
    memtier(&server, &[&range[..], &commands, &["--command-key-pattern=P"]].concat());
    let want: Vec<u64> = [1..=5, 35..=39, 69..=73].into_iter().flatten().collect();
    assert_eq!(numbered(&server, "a:").into_keys().collect::<Vec<_>>(), want);
    assert_eq!(numbered(&server, "b:").into_keys().collect::<Vec<_>>(), want);
    // P with another pattern: memtier refuses ("parallel key-pattern must be configured to all
    // commands"), and so do we.
    for other in ["R", "S", "G", "Z"] {
        let out = respbench()
            .args(["memtier", "-p", &server.port_arg(), "-n", "1", "--command=GET a", "--command-key-pattern=P"])
            .args(["--command=GET b", &format!("--command-key-pattern={other}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "P{other}");
        assert!(stderr(&out).contains("parallel key pattern (P) must be given to every --command"));
    }
}

#[test]
fn ratio_and_key_pattern_go_with_the_command_before_them() {
    // memtier 2.3: the S and the ratio 3 are b's; a keeps R and 1.
    let server = Server::start(&[]);
    let range = ["-t", "1", "-c", "1", "-n", "40", "--key-prefix=", "--key-minimum=1", "--key-maximum=1000"];
    let commands = ["--command=SET a:__key__ x", "--command=SET b:__key__ y", "--command-key-pattern=S"];
    memtier(&server, &[&range[..], &commands, &["--command-ratio=3"]].concat());
    assert_eq!(numbered(&server, "b:").into_keys().collect::<Vec<_>>(), (1..=30).collect::<Vec<u64>>());
    assert_eq!(server.cli(&["KEYS", "a:*"]).lines().count(), 10);
    let out = respbench().args(["memtier", "--command-ratio=2", "--command=GET a"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn words_that_are_not_options_are_ignored_as_memtier_ignores_them() {
    let server = Server::start(&[]);
    // A `--command` quoted badly in a script: its other words are left outside the option.
    let line = ["--command=LASTSAVE", "__key__", "__data__", "-n", "20", "-c", "1", "-t", "1"];
    let out = memtier(&server, &line);
    assert!(!stderr(&out).contains("ignored"), "said without --notes: {}", stderr(&out));
    assert_eq!(server.calls("lastsave"), 20);
    let out = memtier(&server, &[&line[..], &["--notes"]].concat());
    let note = stderr(&out).lines().find(|l| l.contains("not options are ignored")).map(str::to_string);
    assert_eq!(
        note.as_deref(),
        Some(
            "memtier_benchmark: note: words that are not options are ignored, as memtier_benchmark ignores them: '__key__' '__data__'"
        )
    );
}
