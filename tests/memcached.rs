//! memcached's text, binary and meta protocols against a real memcached: the counts it
//! records (`stats`) for memtier's command lines and the native flags, hits and misses as
//! the server counts them, an open-loop run's telemetry, SASL, fill, TLS and the refusals.

mod common;

use common::*;
use std::path::PathBuf;

/// respbench against `server`; a subcommand (`fill`) stays first.
fn mc(server: &Memcached, args: &[&str]) -> std::process::Output {
    let (sub, rest) = match args.first() {
        Some(&"fill") => (&args[..1], &args[1..]),
        _ => (&args[..0], args),
    };
    respbench().args(sub).args(["-h", "127.0.0.1", "-p", &server.port_arg()]).args(rest).output().unwrap()
}

fn mc_ok(server: &Memcached, args: &[&str]) -> std::process::Output {
    let out = mc(server, args);
    assert!(out.status.success(), "respbench {args:?}: {}", stderr(&out));
    out
}

#[test]
fn memtier_command_lines_run_unchanged_over_text_and_binary() {
    // Through a link named memtier_benchmark, as a script that calls memtier would.
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("memtier_benchmark");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_respbench"), &link).unwrap();
    for protocol in ["memcache_text", "memcache_binary"] {
        let server = Memcached::start(&[]);
        let port = server.port_arg();
        let args = ["-s", "127.0.0.1", "-p", &port, "-P", protocol, "-c", "5", "-t", "1", "-n", "1000"];
        let out = std::process::Command::new(&link).args(args).args(["--ratio", "1:1"]).output().unwrap();
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        assert!(stdout(&out).contains("Totals"), "{protocol}: {}", stdout(&out));
        assert_eq!((server.stat("cmd_set"), server.stat("cmd_get")), (2500, 2500), "{protocol}");
    }
}

#[test]
fn meta_commands_count_as_sets_and_gets() {
    let server = Memcached::start(&[]);
    mc_ok(&server, &["--protocol", "memcache-meta", "-c", "5", "--threads", "1", "-n", "5000", "--ratio", "1:1", "-q"]);
    assert_eq!((server.stat("cmd_set"), server.stat("cmd_get")), (2500, 2500));
}

#[test]
fn hits_and_misses_match_the_servers_count_in_every_protocol() {
    for protocol in ["memcache-text", "memcache-binary", "memcache-meta"] {
        let server = Memcached::start(&[]);
        let base = ["--protocol", protocol, "-c", "4", "--threads", "1"];
        mc_ok(&server, &[&base[..], &["-n", "allkeys", "--key-max", "499", "-q"]].concat());
        assert_eq!(server.keys().len(), 500, "{protocol}");
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        // Half of the range read is filled; single-key gets, then multi-key gets of 4.
        for multi in [None, Some("4")] {
            let mut args = [&base[..], &["-n", "2000", "--ratio", "0:1", "--key-max", "999"]].concat();
            args.extend(["--json", json.to_str().unwrap(), "-q"]);
            if let Some(n) = multi {
                args.extend(["--multi-key-get", n]);
            }
            let (hits_before, misses_before) = (server.stat("get_hits"), server.stat("get_misses"));
            mc_ok(&server, &args);
            let doc = read_json(&json);
            let (hits, misses) = (doc["totals"]["hits"].as_u64().unwrap(), doc["totals"]["misses"].as_u64().unwrap());
            let what = format!("{protocol} multi {multi:?}");
            assert_eq!(hits, server.stat("get_hits") - hits_before, "{what}");
            assert_eq!(misses, server.stat("get_misses") - misses_before, "{what}");
            assert!(hits > 0 && misses > 0, "{what}: {hits} hits, {misses} misses");
            assert_eq!(doc["totals"]["errors"].as_u64().unwrap_or(0), 0, "{what}");
        }
    }
}

#[test]
fn an_open_loop_run_reports_response_and_service_time_and_the_servers_cpu() {
    let server = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let args = ["--protocol", "memcache-binary", "--rate", "2000", "--duration", "3s", "-c", "8", "--ratio", "1:1"];
    mc_ok(&server, &[&args[..], &["--json", json.to_str().unwrap(), "-q"]].concat());
    let doc = read_json(&json);
    assert!(doc["totals"]["latency_us"]["p99_us"].as_f64().unwrap() > 0.0);
    assert!(doc["totals"]["service_us"]["p99_us"].as_f64().unwrap() > 0.0);
    let points = doc["time_series"].as_array().unwrap();
    assert!(points.iter().any(|p| p["server"]["cpu"]["total"].as_f64().is_some_and(|c| c > 0.0)), "{points:?}");
    let overall = &doc["server_telemetry"];
    assert!(overall["cpu"]["total"].as_f64().unwrap() > 0.0, "{overall}");
    assert!(overall["connected_clients"].as_u64().unwrap() >= 8, "{overall}");
    let count = doc["totals"]["count"].as_u64().unwrap();
    assert!((5000..=6100).contains(&count), "{count} requests at 2000/s for 3 s");
}

#[test]
fn binary_sasl_logs_in_with_the_right_password_and_refuses_a_wrong_one() {
    let server = Memcached::start_sasl("bench", "s3cret");
    let port = server.port_arg();
    let memtier =
        ["memtier", "-s", "127.0.0.1", "-p", &port, "-P", "memcache_binary", "-c", "2", "-t", "1", "-n", "100"];
    let out = respbench().args(memtier).args(["--ratio", "1:1", "--authenticate", "bench:s3cret"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!((server.stat("cmd_set"), server.stat("cmd_get")), (100, 100));
    let out = respbench().args(memtier).args(["--authenticate", "bench:wrong"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let last = err.lines().last().unwrap_or_default();
    assert!(last.contains("refused the login: SASL PLAIN as bench: Auth failure"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("respbench:")).count(), 1, "{err}");
    // No login at all: memcached refuses the first command, named once.
    let out = mc(&server, &["--protocol", "memcache-binary", "-n", "10"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("memcached wants a SASL login: --authenticate USER:PASS"), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    // The text protocol gets no answer from a SASL server: the silence is explained.
    let out = mc(&server, &["--protocol", "memcache-text", "-n", "10", "--connect-timeout", "300ms"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("answers only the binary protocol: --protocol memcache-binary"), "{}", stderr(&out));
}

#[test]
fn fill_leaves_exactly_the_keys_asked_for_and_reaches_a_memory_target() {
    let server = Memcached::start(&["-m", "8"]);
    let args = ["fill", "--protocol", "memcache-text", "--key-prefix", "k-", "--key-min", "10", "--key-max", "259"];
    mc_ok(&server, &args);
    let mut want: Vec<String> = (10..=259).map(|i| format!("k-{i}")).collect();
    want.sort();
    assert_eq!(server.keys(), want);
    assert_eq!(server.stat("cmd_set"), 250);
    let server = Memcached::start(&["-m", "8"]);
    let out = mc_ok(&server, &["fill", "--protocol", "memcache-meta", "--target-fraction", "0.75", "-d", "1000"]);
    let (bytes, limit) = (server.stat("bytes"), server.stat("limit_maxbytes"));
    let fraction = bytes as f64 / limit as f64;
    assert!((0.70..=0.76).contains(&fraction), "{bytes} of {limit}: {}", stdout(&out));
    assert_eq!(server.stat("evictions"), 0);
}

#[test]
fn tls_to_memcached() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name.push(rcgen::DnType::CommonName, "respbench memcached CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca_path = write("ca.crt", &ca.self_signed(&ca_key).unwrap().pem());
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert_path = write("server.crt", &leaf.signed_by(&key, &issuer).unwrap().pem());
    let key_path = write("server.key", &key.serialize_pem());
    let tls_port = free_port();
    let server = Memcached::start_listening(&[], |plain| {
        vec![
            "-Z".into(),
            "-o".into(),
            format!("ssl_chain_cert={},ssl_key={}", cert_path.display(), key_path.display()),
            "-l".into(),
            format!("127.0.0.1:{tls_port}"),
            "-l".into(),
            format!("notls:127.0.0.1:{plain}"),
        ]
    });
    let port = tls_port.to_string();
    for protocol in ["memcache-text", "memcache-binary", "memcache-meta"] {
        let args = ["-p", &port, "--protocol", protocol, "--tls", "--cacert", ca_path.to_str().unwrap()];
        let out = respbench().args(args).args(["-n", "400", "-c", "4", "--ratio", "1:1", "-q"]).output().unwrap();
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
    }
    assert_eq!((server.stat("cmd_set"), server.stat("cmd_get")), (600, 600));
}

#[test]
fn what_memcached_cannot_do_is_refused_on_one_line() {
    let server = Memcached::start(&[]);
    for (args, needle) in [
        (&["--protocol", "memcache-text", "--command", "HSET __key__ f __data__"][..], "cannot send \"HSET\""),
        (&["--protocol", "memcache-meta", "-a", "pw"][..], "has no login"),
        (&["--protocol", "memcache-binary", "-a", "pw"][..], "needs a user"),
        (&["--protocol", "memcache-text", "--db", "2"][..], "memcached has none"),
        (&["--protocol", "memcache"][..], "'memcache' is not one of"),
    ] {
        let out = mc(&server, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(server.stat("cmd_set") + server.stat("cmd_get"), 0);
}

#[test]
fn data_verify_reads_back_over_each_protocol() {
    for protocol in ["memcache_text", "memcache_binary"] {
        let server = Memcached::start(&[]);
        let port = server.port_arg();
        let run = ["memtier", "-s", "127.0.0.1", "-p", &port, "-P", protocol, "-d", "8", "--ratio=1:0"];
        let keys = ["--key-pattern=P:P", "--key-maximum=99", "-n", "allkeys", "--data-verify"];
        let out = respbench().args(run).args(keys).output().unwrap();
        assert!(stderr(&out).contains("Verified 100 keys: 0 mismatches"), "{protocol}: {}", stderr(&out));
        // A get after the set, so that the helper's read ends at its END.
        server.text("set memtier-7 0 0 7\r\nxxxxxxx\r\nget memtier-7\r\n");
        let verify = ["memtier", "-s", "127.0.0.1", "-p", &port, "-P", protocol, "--verify-only", "-d", "8"];
        let out = respbench().args(verify).arg("--key-maximum=99").output().unwrap();
        assert!(stderr(&out).contains("Verified 100 keys: 1 mismatches"), "{protocol}: {}", stderr(&out));
    }
}

#[test]
fn expiry_range_becomes_each_items_exptime_in_every_protocol() {
    let server = Memcached::start(&[]);
    for protocol in ["memcache-text", "memcache-binary", "memcache-meta"] {
        let prefix = format!("{protocol}-");
        let args = ["--protocol", protocol, "-n", "20", "-c", "1", "--ratio", "1:0", "--expiry-range", "100-200"];
        mc_ok(&server, &[&args[..], &["--key-prefix", &prefix, "-q"]].concat());
    }
    let dump = server.text("lru_crawler metadump all\r\n");
    let mut items = 0;
    for line in dump.lines().filter(|l| l.starts_with("key=")) {
        let field = |name: &str| -> i64 {
            let token = line.split(' ').find_map(|t| t.strip_prefix(name)).unwrap();
            token.parse().unwrap()
        };
        let ttl = field("exp=") - field("la=");
        assert!((99..=201).contains(&ttl), "{line}");
        items += 1;
    }
    assert!(items >= 50, "{dump}");
}

#[test]
fn the_wrong_protocol_is_named_on_one_line() {
    let server = Memcached::start(&[]);
    let out = mc(&server, &["-n", "10"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("is this memcached? (add --protocol memcache-text"), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    let redis = Server::start(&[]);
    let out = respbench().args(["-p", &redis.port_arg(), "--protocol", "memcache-meta", "-n", "10"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no memcached reply from"), "{}", stderr(&out));
    assert!(stderr(&out).contains("is this a Redis-protocol server? (drop --protocol)"), "{}", stderr(&out));
}
