//! A reconnect happens in the event loop: while one link logs in again to a server that
//! accepts but never answers the login, the other connections of the same worker keep their
//! latency (before, the worker blocked for the whole connect timeout).

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

/// A forwarded connection's client side, and the bytes it has sent so far.
type Forwarded = Arc<Mutex<Vec<(TcpStream, Arc<AtomicU64>)>>>;

/// A loopback proxy to a real server: connections are forwarded, until `blackhole` is set;
/// from then on new connections are accepted and held, and nothing they send is answered.
struct Proxy {
    port: u16,
    blackhole: Arc<AtomicBool>,
    forwarded: Forwarded,
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    fn start(to: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let blackhole = Arc::new(AtomicBool::new(false));
        let forwarded: Forwarded = Arc::new(Mutex::new(Vec::new()));
        let held = Arc::new(Mutex::new(Vec::new()));
        let (bh, fw, hd) = (blackhole.clone(), forwarded.clone(), held.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if bh.load(Ordering::SeqCst) {
                    hd.lock().unwrap().push(client);
                    continue;
                }
                let server = TcpStream::connect(("127.0.0.1", to)).unwrap();
                let sent = Arc::new(AtomicU64::new(0));
                fw.lock().unwrap().push((client.try_clone().unwrap(), sent.clone()));
                pump(client.try_clone().unwrap(), server.try_clone().unwrap(), Some(sent));
                pump(server, client, None);
            }
        });
        Proxy { port, blackhole, forwarded, held }
    }

    /// Cuts the busiest forwarded connection (a worker's link, not a control connection).
    fn cut_busiest(&self) {
        let forwarded = self.forwarded.lock().unwrap();
        let (busiest, _) = forwarded.iter().max_by_key(|(_, sent)| sent.load(Ordering::SeqCst)).unwrap();
        busiest.shutdown(Shutdown::Both).unwrap();
    }
}

/// Copies `from` to `to` on a thread of its own, counting bytes into `count`.
fn pump(mut from: TcpStream, mut to: TcpStream, count: Option<Arc<AtomicU64>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Some(count) = &count {
                        count.fetch_add(n as u64, Ordering::SeqCst);
                    }
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

#[test]
fn a_link_reconnecting_to_a_silent_server_does_not_stall_its_worker() {
    let server = Server::start(&["--requirepass", "pw"]);
    let proxy = Proxy::start(server.port_arg().parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &proxy.port.to_string(), "-a", "pw", "-c", "4", "--threads", "1", "--duration", "60s"])
            .args(["--connect-timeout", "3s", "--reconnect-backoff", "10ms", "--progress"])
            .args(["--json", json.to_str().unwrap()]);
        cmd
    });
    run.wait_intervals(1);
    // From now on a new connection is accepted and its AUTH never answered.
    proxy.blackhole.store(true, Ordering::SeqCst);
    proxy.cut_busiest();
    run.wait_lines(1, |l| l.contains("lost"));
    wait_for("a reconnect attempt at the proxy", Duration::from_secs(30), || !proxy.held.lock().unwrap().is_empty());
    // Longer than the 3 s an attempt may take: a blocking login would have stalled the worker.
    run.wait_fresh_intervals(4);
    run.signal(libc::SIGINT);
    let out = run.finish();
    let err = stderr(&out);
    let doc = read_json(&json);
    let max_us = doc["totals"]["latency_us"]["max_us"].as_f64().unwrap();
    assert!(max_us < 1_500_000.0, "the other connections waited {max_us} µs: {err}");
    assert!(doc["faults"]["reconnect_attempts"].as_u64().unwrap() >= 1, "{}", doc["faults"]);
    // The three other connections kept working through the attempts.
    let points = doc["time_series"].as_array().unwrap();
    let last = &points[points.len() - 2];
    assert!(last["ops_per_sec"].as_f64().unwrap() > 100.0, "{last}");
}
