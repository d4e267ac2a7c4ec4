//! Faults a real server cannot be made to produce: a scripted fake server on a free port that
//! answers the handshake like Redis, then sends bytes that are not RESP. The tool must count
//! the failure by kind, finish, and still write its results: never panic.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::*;

/// A fake server: answers INFO with a minimal CPU section and any other command with `garbage`.
fn fake_server(garbage: &'static [u8]) -> (u16, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stopping.load(Ordering::SeqCst) {
                break;
            }
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let request = String::from_utf8_lossy(&buf[..n]);
                    let reply: Vec<u8> = if request.contains("INFO") {
                        let body =
                            "# Server\r\nredis_version:0.0.1\r\n# CPU\r\nused_cpu_user:0.1\r\nused_cpu_sys:0.1\r\n";
                        format!("${}\r\n{body}\r\n", body.len()).into_bytes()
                    } else if request.contains("DBSIZE") {
                        b":5\r\n".to_vec()
                    } else if request.contains("EXISTS") {
                        b":32\r\n".to_vec()
                    } else if request.contains("CONFIG") {
                        b"-ERR unknown command\r\n".to_vec()
                    } else {
                        garbage.to_vec()
                    };
                    if stream.write_all(&reply).is_err() {
                        break;
                    }
                }
            });
        }
    });
    (port, stop)
}

#[test]
fn malformed_replies_are_counted_as_protocol_errors_and_the_run_still_reports() {
    for garbage in [&b"?not resp at all\r\n"[..], b"$99999999999\r\n", b"*1\r\n*1\r\n$-7\r\n", b"+OK\r\n+OK\r\n+OK\r\n"]
    {
        let (port, stop) = fake_server(garbage);
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let out = respbench()
            .args(["-p", &port.to_string(), "-n", "200", "-c", "3", "--json", json.to_str().unwrap()])
            .output()
            .unwrap();
        stop.store(true, Ordering::SeqCst);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{garbage:?}: {err}");
        // Nothing succeeded: exit 1 (the results are written all the same). Extra replies come
        // after a good one, which counts: then the run itself succeeded.
        let expected = if garbage.starts_with(b"+OK") { 0 } else { 1 };
        assert_eq!(out.status.code(), Some(expected), "{garbage:?}: {err}");
        let doc = read_json(&json);
        let protocol = doc["errors"]["protocol"].as_u64().unwrap_or(0);
        assert!(protocol >= 3, "{garbage:?}: {} protocol errors: {}", protocol, doc["errors"]);
        assert!(stdout(&out).contains("protocol"), "{garbage:?}: {}", stdout(&out));
    }
}
