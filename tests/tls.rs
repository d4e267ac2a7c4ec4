//! TLS against a real redis-server with a TLS port, certificates made here with rcgen: a
//! verified run, a wrong CA, a wrong name, skipping verification, client certificates, and
//! kernel receive timestamps read through TLS on both I/O paths.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

/// A CA, a server certificate for localhost and 127.0.0.1, and a client certificate, in `dir`.
struct Certs {
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
    other_ca: PathBuf,
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn ca(name: &str) -> (CertificateParams, KeyPair, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    let pem = params.self_signed(&key).unwrap().pem();
    (params, key, pem)
}

fn make_certs(dir: &Path) -> Certs {
    let (ca_params, ca_key, ca_pem) = ca("respbench test CA");
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |names: Vec<String>| {
        let params = CertificateParams::new(names).unwrap();
        let key = KeyPair::generate().unwrap();
        (params.signed_by(&key, &issuer).unwrap().pem(), key.serialize_pem())
    };
    let (server_pem, server_key) = leaf(vec!["localhost".into(), "127.0.0.1".into()]);
    let (client_pem, client_key) = leaf(vec!["respbench-client".into()]);
    let (_, _, other_pem) = ca("some other CA");
    Certs {
        ca: write(dir, "ca.crt", &ca_pem),
        server_cert: write(dir, "server.crt", &server_pem),
        server_key: write(dir, "server.key", &server_key),
        client_cert: write(dir, "client.crt", &client_pem),
        client_key: write(dir, "client.key", &client_key),
        other_ca: write(dir, "other-ca.crt", &other_pem),
    }
}

/// A redis-server with a TLS port beside its plain one (the plain one serves redis-cli).
fn tls_server(certs: &Certs, auth_clients: bool) -> (Server, u16) {
    let tls_port = free_port();
    let args = tls_args(certs, tls_port, auth_clients);
    let server = Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    (server, tls_port)
}

/// redis-server's options for a TLS port with our certificates.
fn tls_args(certs: &Certs, tls_port: u16, auth_clients: bool) -> Vec<String> {
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();
    vec![
        "--tls-port".into(),
        tls_port.to_string(),
        "--tls-cert-file".into(),
        path(&certs.server_cert),
        "--tls-key-file".into(),
        path(&certs.server_key),
        "--tls-ca-cert-file".into(),
        path(&certs.ca),
        "--tls-auth-clients".into(),
        if auth_clients { "yes" } else { "no" }.into(),
    ]
}

fn bench(tls_port: u16, args: &[&str]) -> std::process::Output {
    respbench().args(["-h", "127.0.0.1", "-p", &tls_port.to_string()]).args(args).output().unwrap()
}

#[test]
fn verified_tls_run_and_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (server, tls_port) = tls_server(&certs, false);
    let ca = certs.ca.to_str().unwrap();
    // Verified against our CA; 100 connections handshake at once.
    let out = bench(tls_port, &["--tls", "--cacert", ca, "-n", "5000", "-c", "100", "--ratio", "1:1", "-P", "4", "-q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("set") + server.calls("get"), 5000);
    assert!(server.info_u64("stats", "total_connections_received") >= 100);
    // A wrong CA: refused, and the message says why.
    let out = bench(tls_port, &["--tls", "--cacert", certs.other_ca.to_str().unwrap(), "-n", "10"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("unknown CA") && err.lines().count() == 1, "{err}");
    // A name the certificate does not carry.
    let out = bench(tls_port, &["--tls", "--cacert", ca, "--sni", "db.example.com", "-n", "10"]);
    assert!(stderr(&out).contains("not valid for the name 'db.example.com'"), "{}", stderr(&out));
    // Skipping verification works with any CA, under both spellings.
    for flag in ["--tls-skip-verify", "--insecure"] {
        let out = bench(tls_port, &["--tls", flag, "-n", "200", "-q"]);
        assert!(out.status.success(), "{flag}: {}", stderr(&out));
    }
    // A plain-text port spoken to in TLS says so.
    let out = respbench().args(["-p", &server.port_arg(), "--tls", "--insecure", "-n", "1"]).output().unwrap();
    assert!(stderr(&out).contains("is TLS enabled on that port?"), "{}", stderr(&out));
}

#[test]
fn tls_replies_carry_kernel_receive_timestamps_on_both_io_paths() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (_server, tls_port) = tls_server(&certs, false);
    let _stamping = stamping_on();
    let ca = certs.ca.to_str().unwrap();
    let uring = respbench().args(["--io", "uring", "--help"]).output().unwrap().status.success();
    for io in if uring { &["epoll", "uring"][..] } else { &["epoll"][..] } {
        let json = dir.path().join(format!("{io}.json"));
        let args =
            ["--tls", "--cacert", ca, "-n", "4000", "-c", "4", "--threads", "1", "--ratio", "1:3", "--timestamps"];
        let out = bench(tls_port, &[&args[..], &["--io", io, "--json", json.to_str().unwrap()]].concat());
        assert!(out.status.success(), "--io {io}: {}", stderr(&out));
        assert!(!stderr(&out).contains("timestamps"), "--io {io}: {}", stderr(&out));
        assert!(stdout(&out).contains("client share of p99: "), "--io {io}: {}", stdout(&out));
        let doc = read_json(&json);
        let totals = &doc["totals"];
        let parts = &totals["latency_parts_us"];
        // The stamp is the TCP socket's, under the TLS records: every reply carries one (or
        // nearly): the kernel stamps from the start, held on by `stamping_on`.
        let (count, decomposed) = (totals["count"].as_u64().unwrap(), parts["count"].as_u64().unwrap_or(0));
        assert!(decomposed * 100 >= count * 95, "--io {io}: {decomposed} of {count} replies decomposed");
        let wire = parts["wire_and_server"]["p50_us"].as_f64().unwrap();
        let response = totals["latency_us"]["p50_us"].as_f64().unwrap();
        assert!(0.0 < wire && wire <= response, "--io {io}: wire and server p50 {wire} us, response {response} us");
        assert!(doc["server_latency"]["wire_and_server_unavailable"].is_null(), "--io {io}: {}", doc["server_latency"]);
    }
}

#[test]
fn rediss_uri_and_client_certificates() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (server, tls_port) = tls_server(&certs, true);
    let ca = certs.ca.to_str().unwrap();
    // Without a client certificate the server refuses the handshake.
    let out = bench(tls_port, &["--tls", "--cacert", ca, "-n", "10"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("client certificate"), "{}", stderr(&out));
    let (cert, key) = (certs.client_cert.to_str().unwrap(), certs.client_key.to_str().unwrap());
    let uri = format!("rediss://localhost:{tls_port}/3");
    let out = respbench()
        .args(["-u", &uri, "--cacert", ca, "--cert", cert, "--key", key, "-n", "allkeys", "--key-max", "499", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli(&["-n", "3", "DBSIZE"]), "500");
    // --cert without --key is a usage error.
    let out = bench(tls_port, &["--tls", "--cert", cert, "-n", "1"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn front_ends_speak_tls() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (server, tls_port) = tls_server(&certs, true);
    let (ca, cert, key) =
        (certs.ca.to_str().unwrap(), certs.client_cert.to_str().unwrap(), certs.client_key.to_str().unwrap());
    let port = tls_port.to_string();
    let out = respbench()
        .args(["memtier", "-s", "localhost", "-p", &port, "--tls", "--cacert", ca, "--cert", cert, "--key", key])
        .args(["-n", "50", "-c", "2", "-t", "2", "--ratio=1:0", "--hide-histogram"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 200);
    let out = respbench()
        .args(["redis-benchmark", "-h", "127.0.0.1", "-p", &port, "--tls", "--insecure", "--cert", cert, "--key", key])
        .args(["-n", "300", "-t", "incr", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli(&["GET", "counter:__rand_int__"]), "300");
}

#[test]
fn a_tls_cluster_fill_spreads_over_its_shards() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    // TLS ports low enough for their cluster bus (port + 10000) to exist.
    let tls_ports: Vec<u16> = std::iter::repeat_with(free_port).filter(|p| *p < 55000).take(3).collect();
    let nodes: Vec<Server> = tls_ports
        .iter()
        .map(|&p| {
            let mut args = tls_args(&certs, p, false);
            args.extend(
                ["--tls-cluster", "yes", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
                    .map(String::from),
            );
            Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>())
        })
        .collect();
    let ca = certs.ca.to_str().unwrap();
    let addrs: Vec<String> = tls_ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let out = std::process::Command::new("redis-cli")
        .args(["--tls", "--cacert", ca, "--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-yes"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while !nodes.iter().all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok")) {
        assert!(std::time::Instant::now() < deadline, "the TLS cluster did not settle");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Seeded over TLS, the map names the nodes' TLS ports, and every link speaks TLS.
    let seed = tls_ports[0].to_string();
    let out = respbench()
        .args(["-p", &seed, "--tls", "--cacert", ca, "--cluster", "-n", "allkeys", "--key-max", "2999", "-c", "4"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let sizes: Vec<u64> = nodes.iter().map(Server::dbsize).collect();
    assert_eq!(sizes.iter().sum::<u64>(), 3000, "{sizes:?}");
    assert!(sizes.iter().all(|&s| s > 700), "{sizes:?}");
    assert!(stdout(&out).contains(&format!("127.0.0.1:{}", tls_ports[2])), "{}", stdout(&out));
}

#[test]
fn memtier_tls_protocols_choose_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let tls_port = free_port();
    let mut args = tls_args(&certs, tls_port, false);
    args.extend(["--tls-protocols".into(), "TLSv1.3".into()]);
    let server = Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let memtier = |protocols: &str| {
        respbench()
            .args(["memtier", "-s", "127.0.0.1", "-p", &tls_port.to_string(), "--tls"])
            .args(["--cacert", certs.ca.to_str().unwrap(), "--tls-protocols", protocols])
            .args(["-n", "10", "-c", "1", "-t", "1", "--ratio=1:0"])
            .output()
            .unwrap()
    };
    let out = memtier("TLSv1.2,TLSv1.3");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 10);
    // The server speaks only 1.3: a client held to 1.2 is refused, and says it was the handshake.
    let out = memtier("TLSv1.2");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("TLS handshake"), "{}", stderr(&out));
    // Versions rustls does not speak are a usage error naming them.
    let out = memtier("TLSv1.1");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("error") && err.contains("TLSv1.1") && err.contains("1.2 and 1.3"), "{err}");
}

#[test]
fn front_ends_verify_the_chain_but_not_the_host_name() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (server, tls_port) = tls_server(&certs, false);
    let (ca, other) = (certs.ca.to_str().unwrap(), certs.other_ca.to_str().unwrap());
    let port = tls_port.to_string();
    // The certificate names localhost and 127.0.0.1, not db.example.com.
    let run = |front: &[&str], ca: &str| {
        respbench()
            .args(front)
            .arg("--notes")
            .args(["-p", &port, "--tls", "--cacert", ca, "--sni", "db.example.com"])
            .args(if front[0] == "memtier" {
                &["-n", "10", "-c", "1", "-t", "1", "--ratio=1:0"][..]
            } else {
                &["-n", "10", "-t", "set", "-q"]
            })
            .output()
            .unwrap()
    };
    for front in [&["memtier", "-s", "127.0.0.1"][..], &["redis-benchmark", "-h", "127.0.0.1"], &["valkey-benchmark"]] {
        let out = run(front, ca);
        assert!(out.status.success(), "{front:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("not its host name"), "{front:?}: {}", stderr(&out));
        // Without --notes a front-end's stderr is the original's: nothing on success (memtier:
        // its own lines).
        let quiet = respbench()
            .args(front)
            .args(["-p", &port, "--tls", "--cacert", ca, "--sni", "db.example.com"])
            .args(if front[0] == "memtier" { &["-n", "10", "-c", "1", "-t", "1"][..] } else { &["-n", "10", "-q"] })
            .output()
            .unwrap();
        assert!(quiet.status.success(), "{front:?}: {}", stderr(&quiet));
        let err = stderr(&quiet);
        if front[0] == "memtier" {
            assert!(!err.contains("note") && !err.contains("respbench"), "{front:?}: {err}");
        } else {
            assert_eq!(err, "", "{front:?}");
        }
        // The chain still counts: another CA is refused.
        let out = run(front, other);
        assert_eq!(out.status.code(), Some(1), "{front:?}");
        assert!(stderr(&out).contains("unknown CA"), "{front:?}: {}", stderr(&out));
    }
    assert!(server.calls("set") >= 30);
    // respbench's own command line checks the name, says what the certificate is valid for and
    // how to go on.
    let out = bench(tls_port, &["--tls", "--cacert", ca, "--sni", "db.example.com", "-n", "10"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("localhost") && err.contains("--sni NAME") && err.contains("--tls-skip-hostname"), "{err}");
    let out = bench(tls_port, &["--tls", "--cacert", ca, "--sni", "db.example.com", "--tls-skip-hostname", "-n", "10"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// redis-benchmark's and valkey-benchmark's front-end over TLS with client certificates
/// required: no PING of its own on a new connection, OpenSSL cipher strings, and a server at
/// its client limit reported in the tools' words.
#[test]
fn benchmark_front_ends_over_tls_as_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let tls_port = free_port();
    let mut args = tls_args(&certs, tls_port, true);
    args.extend(["--maxclients".into(), "4".into()]);
    let server = Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let (ca, cert, key) =
        (certs.ca.to_str().unwrap(), certs.client_cert.to_str().unwrap(), certs.client_key.to_str().unwrap());
    let port = tls_port.to_string();
    let tool = |name: &str, extra: &[&str]| {
        respbench()
            .args([name, "-h", "127.0.0.1", "-p", &port, "--tls", "--cacert", ca, "--cert", cert, "--key", key])
            .args(extra)
            .output()
            .unwrap()
    };
    // The classic suite: the PINGs are the two PING tests' requests, none per connection.
    let pings = server.calls("ping");
    let out = tool("redis-benchmark", &["-c", "3", "-n", "100", "-q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("ping") - pings, 200);
    // OpenSSL's cipher strings, mapped onto rustls's suites.
    for ciphers in ["DEFAULT", "DEFAULT:-AES128-SHA256", "HIGH"] {
        let out = tool("valkey-benchmark", &["--tls-ciphers", ciphers, "-c", "2", "-n", "20", "-t", "set", "-q"]);
        assert!(out.status.success(), "--tls-ciphers {ciphers}: {}", stderr(&out));
    }
    // More clients than the server takes: its refusal during the handshake is the tools' read
    // error, one line.
    for name in ["redis-benchmark", "valkey-benchmark"] {
        let out = tool(name, &["-c", "12", "-n", "1000", "-t", "get", "-q"]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        let said = ["Error: Server closed the connection", "Error: Connection reset by peer"];
        assert!(err.lines().count() == 1 && said.contains(&err.trim_end()), "{name}: {err}");
    }
}
