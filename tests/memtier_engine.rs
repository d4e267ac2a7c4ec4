//! memtier_benchmark's engine-level features against a real redis-server: the client
//! staircase, per-connection rate limiting, live StatsD metrics and signals.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;

/// One connection that asks the server a field of INFO again and again.
struct Probe {
    stream: TcpStream,
    /// GETs the server had answered at the last `mark`.
    gets_before: u64,
}

impl Probe {
    fn open(server: &Server) -> Probe {
        let stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Probe { stream, gets_before: 0 }
    }

    fn info_u64(&mut self, section: &str, field: &str) -> u64 {
        self.info(section)
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .unwrap_or_else(|| panic!("INFO {section} has no {field}"))
            .trim()
            .parse()
            .unwrap()
    }

    /// Calls of a command so far, from INFO commandstats.
    fn calls(&mut self, command: &str) -> u64 {
        let prefix = format!("cmdstat_{command}:calls=");
        let info = self.info("commandstats");
        info.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
            .unwrap_or(0)
    }

    /// Remembers how many GETs the server has answered (before starting a run).
    fn mark(&mut self) {
        self.gets_before = self.calls("get");
    }

    /// Waits (bounded) until the server has answered some GETs since `mark`: the run is under way.
    fn wait_for_load(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.calls("get") < self.gets_before + 20 {
            assert!(Instant::now() < deadline, "the run never sent a GET");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn info(&mut self, section: &str) -> String {
        self.stream.write_all(format!("INFO {section}\r\n").as_bytes()).unwrap();
        let mut reply = Vec::new();
        let mut buf = [0u8; 8192];
        // A bulk string: `$len\r\n`, the body, `\r\n`.
        loop {
            let n = self.stream.read(&mut buf).unwrap();
            assert!(n > 0, "the server closed the probe");
            reply.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&reply);
            if let Some((head, body)) = text.split_once("\r\n") {
                let len: usize = head[1..].parse().unwrap();
                if body.len() >= len + 2 {
                    return body[..len].to_string();
                }
            }
        }
    }
}

#[test]
fn staircase_adds_connections_in_steps() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut child = respbench()
        .args(["-p", &server.port_arg(), "--threads", "2", "-c", "6", "--connections-start", "2"])
        .args(["--connections-step", "2", "--step-duration", "1s", "--duration", "3500ms"])
        .args(["--rate", "600", "--json", json.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The server's own count of clients while the run goes on (the probe is one of them).
    let mut probe = Probe::open(&server);
    let mut seen: Vec<u64> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the run did not end");
        let n = probe.info_u64("clients", "connected_clients");
        if seen.last() != Some(&n) {
            seen.push(n);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(child.wait().unwrap().success(), "{stderr}");
    let top = *seen.iter().max().unwrap();
    let first = |v: u64| seen.iter().position(|&s| s == v).unwrap_or_else(|| panic!("{v} never seen in {seen:?}"));
    assert!(first(top - 4) < first(top - 2) && first(top - 2) < first(top), "{seen:?}");

    let doc = read_json(&json);
    let active: Vec<u64> =
        doc["time_series"].as_array().unwrap().iter().map(|p| p["active_connections"].as_u64().unwrap()).collect();
    assert_eq!(active[..4], [2, 4, 6, 6], "{active:?}");
    assert_eq!(doc["configuration"]["ramp"]["start"], 2);
    // Each step's connections send at their share of the rate: 100/s each.
    let counts: Vec<u64> =
        doc["time_series"].as_array().unwrap().iter().map(|p| p["count"].as_u64().unwrap()).collect();
    for (i, (&n, &a)) in counts.iter().zip(&active).take(3).enumerate() {
        let expected = 100 * a;
        assert!(n.abs_diff(expected) <= expected / 10 + 2, "interval {i}: {n} replies, expected {expected}");
    }
}

#[test]
fn staircase_flags_must_come_together_with_a_duration() {
    let out = respbench().args(["--connections-start", "2", "--duration", "1s"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("go together"), "{}", stderr(&out));
    let out = respbench()
        .args(["-c", "4", "--connections-start", "2", "--connections-step", "1", "--step-duration", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("needs --duration"), "{}", stderr(&out));
    let out = respbench().args(["memtier", "--clients-start=1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn rate_limiting_is_per_connection() {
    let server = Server::start(&[]);
    // 4 connections at 50 requests per second each, for 2 seconds: 400 GETs.
    let out = respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "-t", "2", "-c", "2"])
        .args(["--rate-limiting=50", "--test-time=2", "--ratio=0:1", "--hide-histogram"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let gets = server.calls("get");
    assert!(gets.abs_diff(400) <= 20, "{gets} GETs, expected 400");
}

/// Starts respbench with `args` in the background, its output captured.
fn spawn(args: &[&str]) -> std::process::Child {
    respbench().args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
}

fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn ctrl_c_on_the_memtier_front_end_says_so_and_still_writes_the_json() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("memtier.json");
    let port = server.port_arg();
    let child = spawn(&[
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-c",
        "2",
        "--test-time=60",
        "--rate-limiting=200",
        "--ratio=1:1",
        &format!("--json-out-file={}", json.display()),
    ]);
    let mut probe = Probe::open(&server);
    probe.mark();
    probe.wait_for_load();
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.starts_with("[RUN #1] Interrupted by user (Ctrl+C) after "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.ends_with(" secs, stopping threads..."), "{line}");
    let doc = read_json(&json);
    assert_eq!(doc["ALL STATS"]["Runtime"]["Interrupted"], "true", "{doc}");
    assert!(doc["ALL STATS"]["Totals"]["Count"].as_u64().unwrap() > 0);
}

#[test]
fn sigterm_and_sighup_stop_like_ctrl_c_with_their_own_exit_status() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let json = dir.path().join(format!("{sig}.json"));
        let mut probe = Probe::open(&server);
        probe.mark();
        let args = format!(
            "-p {} -c 2 --threads 1 --duration 60s --rate 400 --ratio 1:1 --json {}",
            server.port,
            json.display()
        );
        let child = spawn(&args.split(' ').collect::<Vec<_>>());
        probe.wait_for_load();
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "signal {sig}: {}", stderr(&out));
        let doc = read_json(&json);
        assert_eq!(doc["interrupted"], true);
        assert!(doc["totals"]["count"].as_u64().unwrap() > 0);
        assert!(!stdout(&out).is_empty(), "the text report is still printed");
    }
}

#[test]
fn a_fatal_signal_ends_the_run_with_a_bug_report() {
    use std::os::unix::process::ExitStatusExt;
    let server = Server::start(&[]);
    for sig in [libc::SIGSEGV, libc::SIGABRT] {
        let port = server.port_arg();
        let mut probe = Probe::open(&server);
        probe.mark();
        let child = spawn(&["-p", &port, "-c", "2", "--threads", "1", "--duration", "60s", "--rate", "400"]);
        probe.wait_for_load();
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.signal(), Some(sig), "the process dies of the signal: {:?}", out.status);
        let err = stderr(&out);
        let name = if sig == libc::SIGSEGV { "SIGSEGV" } else { "SIGABRT" };
        for needle in [
            "=== RESPBENCH BUG REPORT START",
            &format!("Crashed running signal <{name}>"),
            &format!("Sent by process: {}", std::process::id()),
            "--- STACK TRACE",
            "respbench(",
            "respbench_version:",
            &format!("command_line:{} -p {port}", env!("CARGO_BIN_EXE_respbench")),
            "--- SERVER INFO OUTPUT",
            "redis_version:",
            "--- CLIENT LIST OUTPUT",
            "cmd=",
            "=== RESPBENCH BUG REPORT END",
        ] {
            assert!(err.contains(needle), "no {needle:?} in:\n{err}");
        }
    }
}

/// Every datagram a UDP socket receives while `child` runs.
fn datagrams(socket: &std::net::UdpSocket, child: &mut std::process::Child) -> Vec<String> {
    socket.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the run did not end");
        match socket.recv(&mut buf) {
            Ok(n) => got.push(String::from_utf8(buf[..n].to_vec()).unwrap()),
            // Quiet: stop once the sender has exited (its datagrams are all queued by then).
            Err(_) if child.try_wait().unwrap().is_some() => return got,
            Err(_) => {}
        }
    }
}

#[test]
fn statsd_metrics_and_graphite_events_have_memtiers_names() {
    let server = Server::start(&[]);
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let graphite = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let graphite_port = graphite.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in graphite.incoming() {
            let mut request = String::new();
            stream.unwrap().read_to_string(&mut request).unwrap();
            tx.send(request).unwrap();
        }
    });
    let args = format!(
        "memtier -s 127.0.0.1 -p {} -t 1 -c 2 --test-time=2 --rate-limiting=100 --statsd-host=127.0.0.1 \
         --statsd-port={} --statsd-run-label=nightly --graphite-port={graphite_port} --print-percentiles=50,99.9",
        server.port,
        udp.local_addr().unwrap().port()
    );
    let mut child = spawn(&args.split(' ').collect::<Vec<_>>());
    let packets = datagrams(&udp, &mut child);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let mut names = std::collections::BTreeSet::new();
    for packet in &packets {
        let (name, rest) = packet.split_once(':').unwrap_or_else(|| panic!("{packet}"));
        let (value, kind) = rest.split_once('|').unwrap_or_else(|| panic!("{packet}"));
        let name = name.strip_prefix("memtier.nightly.").unwrap_or_else(|| panic!("{packet}"));
        assert!(value.parse::<f64>().is_ok(), "{packet}");
        assert_eq!(kind, if name.starts_with("latency") && name.ends_with("_ms") { "ms" } else { "g" }, "{packet}");
        names.insert(name.to_string());
    }
    for name in [
        "ops_sec",
        "ops_sec_avg",
        "bytes_sec",
        "bytes_sec_avg",
        "latency_ms",
        "latency_avg_ms",
        "connections",
        "progress_pct",
        "latency_p50",
        "latency_p99_9",
    ] {
        assert!(names.contains(name), "no {name} in {names:?}");
    }
    let ops: Vec<&String> = packets.iter().filter(|p| p.starts_with("memtier.nightly.ops_sec:")).collect();
    // 2 connections at 100 requests per second.
    let value = |p: &str| p.split([':', '|']).nth(1).unwrap().parse::<u64>().unwrap();
    assert!(ops.iter().any(|p| value(p).abs_diff(200) <= 40), "{ops:?}");
    assert_eq!(ops.last().unwrap().as_str(), "memtier.nightly.ops_sec:0|g", "zeroed when the run ends");
    assert!(packets.contains(&"memtier.nightly.connections:2|g".to_string()), "{packets:?}");

    let started = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let completed = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(started.starts_with("POST /events/ HTTP/1.1\r\n"), "{started}");
    assert!(started.ends_with(
        r#"{"what":"Benchmark Started","tags":"memtier,start,run:nightly","data":"threads=1 connections=2 run=1"}"#
    ));
    assert!(completed.ends_with(r#"{"what":"Benchmark Completed","tags":"memtier,end,run:nightly","data":"run=1"}"#));
}

#[test]
fn a_closed_graphite_port_is_one_warning_not_a_hang() {
    let server = Server::start(&[]);
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let closed = free_port().to_string();
    let statsd_port = udp.local_addr().unwrap().port().to_string();
    let started = Instant::now();
    let out = run_ok(
        &server,
        &[
            "-n",
            "200",
            "-c",
            "2",
            "--statsd-host",
            "127.0.0.1",
            "--statsd-port",
            &statsd_port,
            "--graphite-port",
            &closed,
        ],
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let warnings: Vec<String> = stderr(&out).lines().filter(|l| l.contains("Graphite")).map(String::from).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains(&format!("127.0.0.1:{closed}")), "{warnings:?}");
}
