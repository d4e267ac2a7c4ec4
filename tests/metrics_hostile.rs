//! `--metrics-listen` is safe to leave open: it binds only the address given, serves nothing but
//! the metrics (no password, key path or server name from the command line), and scrapers that
//! never send, never read or never stop neither break the run nor grow its threads and
//! descriptors. Against a real redis-server (over TLS with a password for the secrets).

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::*;

const GET: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

/// Sends `request`; the status line and the body.
fn exchange(addr: SocketAddr, request: &[u8]) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(request).unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    (head.lines().next().unwrap_or_default().to_string(), body.to_string())
}

/// The address the run serves its metrics on, once it says so.
fn metrics_addr(run: &mut Watched) -> SocketAddr {
    run.wait_lines(1, |l| l.contains("metrics on http://"));
    let line = run.lines().iter().find(|l| l.contains("metrics on http://")).unwrap();
    line.split("http://").nth(1).and_then(|rest| rest.strip_suffix("/metrics")).unwrap().parse().unwrap()
}

/// A run of `secs` seconds with its endpoint on `listen`, at most 4 connections on 2 threads.
fn bench(server_port: u16, secs: u32, listen: &str, json: &std::path::Path) -> Watched {
    let mut cmd = respbench();
    cmd.args(["-p", &server_port.to_string(), "--duration", &format!("{secs}s"), "-c", "4", "--threads", "2"])
        .args(["--ratio", "1:1", "--key-max", "999", "--progress", "-q", "--json", json.to_str().unwrap()])
        .args(["--metrics-listen", listen, "--metrics-linger", "60s"]);
    Watched::spawn(cmd)
}

/// Waits for the run's final values, scrapes them (which ends its linger) and for its end.
fn end(mut run: Watched, addr: SocketAddr) {
    run.wait_lines(1, |l| l.contains("metrics final"));
    assert_eq!(exchange(addr, GET).0, "HTTP/1.1 200 OK");
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A connection that is refused or never answered: nothing listens there.
fn unreachable(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(5)).is_err()
}

/// The machine's address towards the outside, if it has one (a UDP connect sends nothing).
fn outside_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn the_endpoint_binds_only_the_address_given() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut run = bench(server.port, 2, "127.0.0.1:0", &dir.path().join("r.json"));
    let addr = metrics_addr(&mut run);
    assert_eq!(exchange(addr, GET).0, "HTTP/1.1 200 OK");
    // 127.0.0.2 is loopback too (all of 127/8 on Linux), ::1 is IPv6 loopback: neither is it.
    assert!(unreachable(format!("127.0.0.2:{}", addr.port()).parse().unwrap()));
    assert!(unreachable(format!("[::1]:{}", addr.port()).parse().unwrap()));
    match outside_address() {
        Some(ip) => assert!(unreachable(SocketAddr::new(ip, addr.port())), "reachable on {ip}"),
        None => eprintln!("no address besides loopback here: that part is not checked"),
    }
    end(run, addr);
    // IPv6 loopback given: not reachable over IPv4.
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback here: the [::1] part is not checked");
        return;
    }
    let mut run = bench(server.port, 2, "[::1]:0", &dir.path().join("r6.json"));
    let addr = metrics_addr(&mut run);
    assert!(addr.is_ipv6(), "{addr}");
    assert_eq!(exchange(addr, GET).0, "HTTP/1.1 200 OK");
    assert!(unreachable(format!("127.0.0.1:{}", addr.port()).parse().unwrap()));
    end(run, addr);
}

/// A self-signed certificate for localhost and its key, in `dir`.
fn certificate(dir: &std::path::Path) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert = dir.join("cert.pem");
    let key_file = dir.join("private-key-file.pem");
    std::fs::write(&cert, params.self_signed(&key).unwrap().pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    (cert.to_str().unwrap().to_string(), key_file.to_str().unwrap().to_string())
}

#[test]
fn only_metrics_are_served_and_no_secret_of_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = certificate(dir.path());
    let password = "Pa55-w0rd-never-served";
    let tls_port = free_port();
    let port = tls_port.to_string();
    let server = Server::start(&[
        "--requirepass",
        password,
        "--tls-port",
        &port,
        "--tls-cert-file",
        &cert,
        "--tls-key-file",
        &key,
        "--tls-ca-cert-file",
        &cert,
        "--tls-auth-clients",
        "no",
    ]);
    let json = dir.path().join("secret.json");
    let mut cmd = respbench();
    cmd.args(["-h", "127.0.0.1", "-p", &port, "--tls", "--insecure", "--sni", "db.secret-name.example"])
        .args(["--cert", &cert, "--key", &key, "--user", "default", "-a", password, "-n", "2000", "-c", "2"])
        .args(["--threads", "1", "-q", "--json", json.to_str().unwrap()])
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"]);
    let mut run = Watched::spawn(cmd);
    let addr = metrics_addr(&mut run);
    let secrets = [password, "private-key-file", dir.path().to_str().unwrap(), "secret-name"];
    run.wait_lines(1, |l| l.contains("metrics final"));
    for (request, wanted) in [
        (&b"GET / HTTP/1.1\r\n\r\n"[..], "HTTP/1.1 404 Not Found"),
        (b"GET /config HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found"),
        (b"GET /debug/pprof HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found"),
        (b"PUT /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 405 Method Not Allowed"),
    ] {
        let (status, body) = exchange(addr, request);
        assert_eq!(status, wanted);
        assert!(body.len() < 40 && !secrets.iter().any(|s| body.contains(s)), "{body}");
    }
    // The final page last: reading it ends the run's linger.
    let (status, body) = exchange(addr, GET);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains("respbench_requests_total{command=\"SET\"} "), "{body}");
    for secret in secrets {
        assert!(!body.contains(secret), "the page shows {secret:?}:\n{body}");
    }
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let stats = server.cli_auth(password, &["INFO", "commandstats"]);
    let calls = |c: &str| -> u64 {
        let prefix = format!("cmdstat_{c}:calls=");
        stats.lines().find_map(|l| l.strip_prefix(&prefix)).map_or(0, |r| r.split(',').next().unwrap().parse().unwrap())
    };
    assert_eq!(calls("set") + calls("get"), 2000, "{stats}");
}

/// Threads and open descriptors of process `pid`.
fn threads_and_fds(pid: u32) -> (usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let threads = status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap();
    (threads, std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count())
}

/// A connection whose receive buffer is the kernel's smallest (set before connecting, so the
/// window it offers stays small): it will never read what it asked for.
fn tiny_window(addr: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    let SocketAddr::V4(v4) = addr else { panic!("{addr}: IPv4 only") };
    // SAFETY: a new socket of our own, an int option, and a sockaddr_in that lives across the call.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "{}", std::io::Error::last_os_error());
        let size: libc::c_int = 1;
        let len = size_of::<libc::c_int>() as libc::socklen_t;
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, (&raw const size).cast(), len);
        let target = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: v4.port().to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from(*v4.ip()).to_be() },
            sin_zero: [0; 8],
        };
        let len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let rc = libc::connect(fd, (&raw const target).cast(), len);
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
        TcpStream::from_raw_fd(fd)
    }
}

#[test]
fn hostile_scrapers_neither_break_the_run_nor_grow_it() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let secs = 4;
    let mut run = bench(server.port, secs, "127.0.0.1:0", &json);
    let addr = metrics_addr(&mut run);
    run.wait_intervals(1);
    let pid = run.id();
    let (threads, fds) = threads_and_fds(pid);
    // Scrapes one after another until told to stop; how many answered.
    let stop = Arc::new(AtomicBool::new(false));
    let looping = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut answered = 0;
            while !stop.load(Ordering::Relaxed) {
                let Ok(mut s) = TcpStream::connect(addr) else { continue };
                let mut reply = Vec::new();
                if s.write_all(GET).is_ok() && s.read_to_end(&mut reply).is_ok() && reply.starts_with(b"HTTP/1.1 200") {
                    answered += 1;
                }
            }
            answered
        })
    };
    let silent: Vec<TcpStream> = (0..200).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let stuck: Vec<TcpStream> = (0..50)
        .map(|_| {
            let mut s = tiny_window(addr);
            s.write_all(GET).unwrap();
            s
        })
        .collect();
    // Accepted after all of them: still answered, with the run's counts.
    let (status, body) = exchange(addr, GET);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains("respbench_requests_total{command=\"GET\"} "), "{body}");
    let (threads_now, fds_now) = threads_and_fds(pid);
    assert!(threads_now <= threads, "threads {threads} before the scrapers, {threads_now} under them");
    // At most 64 scrapers are held at once.
    assert!(fds_now <= fds + 64, "descriptors {fds} before the scrapers, {fds_now} under them");
    // The loop stops before the end: the final page is this test's to read (which ends the linger).
    run.wait_intervals(secs as usize - 1);
    stop.store(true, Ordering::Relaxed);
    let answered = looping.join().unwrap();
    assert!(answered > 0);
    run.wait_lines(1, |l| l.contains("metrics final"));
    let (status, end) = exchange(addr, GET);
    assert_eq!(status, "HTTP/1.1 200 OK");
    drop((silent, stuck));
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    // The run ended on time, every interval is there, and its counts are the server's.
    let doc = read_json(&json);
    let duration = doc["duration_secs"].as_f64().unwrap();
    assert!(duration < f64::from(secs) + 1.0, "the run took {duration} s of {secs}");
    assert!(doc["time_series"].as_array().unwrap().len() >= secs as usize, "{}", doc["time_series"]);
    assert_eq!(doc["totals"]["errors"], 0);
    let count = |c: &str| doc["commands"][c]["count"].as_u64().unwrap();
    assert_eq!(count("GET") + count("SET"), server.calls("get") + server.calls("set"));
    for command in ["GET", "SET"] {
        let line = format!("respbench_requests_total{{command=\"{command}\"}} {}\n", count(command));
        assert!(end.contains(&line), "{line} not in\n{end}");
    }
}
