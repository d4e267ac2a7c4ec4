//! Hostile and silent servers: fake servers on loopback that never reply, declare
//! absurd lengths, send endless lines, want a password, close mid-reply, dribble, push unasked
//! or are not RESP at all. Every run must end in bounded time with the right named error, no
//! panic, its results written, and exit 1 when nothing succeeded.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Output;
use std::time::{Duration, Instant};

use common::*;

/// What a fake server does with one request on one connection (`n`: data requests so far).
#[derive(Clone, Copy)]
enum Behaviour {
    /// Accepts, reads, never writes.
    Silent,
    /// Control calls answered like Redis; data requests get `*2147483647` and nothing more.
    HugeArray,
    /// Control calls answered; the first data request on a connection gets `+OK`, the next an
    /// endless simple string.
    EndlessLine,
    /// `-NOAUTH` to everything (AUTH with `password` logs in, when it is given).
    WantsPassword(Option<&'static str>),
    /// Control calls answered; a data reply is cut off, then the connection closed.
    ClosesMidReply,
    /// Control calls answered; data replies one byte every 50 ms.
    Dribbles,
    /// Control calls answered; every data reply preceded by an unasked RESP3 push.
    Pushes,
    /// TLS-looking bytes to anything.
    NotResp,
    /// Control calls answered; every other data reply an error (all of them with `true`).
    Errors(bool),
    /// Control calls answered; data requests answered `+OK` until this many, then silence.
    StopsAfter(u64),
    /// Control calls answered; writes refused as on a replica, reads answered.
    ReadOnly,
    /// Everything answered (data `+OK`) except INFO after the first `n` on a connection:
    /// from then on that connection gets no reply at all.
    InfoStallsAfter(u64),
}

/// Answers the control calls a run makes before and beside its load.
fn control(request: &str) -> Option<Vec<u8>> {
    if request.contains("INFO") {
        let body = "# Server\r\nredis_version:0.0.1\r\n# CPU\r\nused_cpu_user:0.1\r\nused_cpu_sys:0.1\r\n";
        Some(format!("${}\r\n{body}\r\n", body.len()).into_bytes())
    } else if request.contains("DBSIZE") {
        Some(b":5\r\n".to_vec())
    } else if request.contains("EXISTS") {
        Some(b":32\r\n".to_vec())
    } else if request.contains("CONFIG") {
        Some(b"-ERR unknown command 'CONFIG'\r\n".to_vec())
    } else {
        None
    }
}

/// Serves one connection; returns when it is closed.
fn serve(mut stream: TcpStream, behaviour: Behaviour) {
    let mut buf = [0u8; 64 * 1024];
    let mut data = 0u64;
    let mut authed = false;
    let mut infos = 0u64;
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            return;
        }
        let request = String::from_utf8_lossy(&buf[..n]).into_owned();
        let reply: Vec<u8> = match behaviour {
            Behaviour::Silent => continue,
            Behaviour::NotResp => vec![0x16, 0x03, 0x01, 0x00, 0x2a, 0x02, 0x00, 0x00, 0x26, 0x03, 0x03],
            Behaviour::WantsPassword(password) => {
                if let Some(pw) = password.filter(|pw| request.contains("AUTH") && request.contains(pw)) {
                    let _ = pw;
                    authed = true;
                    b"+OK\r\n".to_vec()
                } else if !authed {
                    b"-NOAUTH Authentication required.\r\n".to_vec()
                } else {
                    control(&request).unwrap_or_else(|| b"+OK\r\n".to_vec())
                }
            }
            Behaviour::InfoStallsAfter(n) if request.contains("INFO") => {
                infos += 1;
                if infos > n {
                    continue;
                }
                control(&request).unwrap()
            }
            _ if control(&request).is_some() => control(&request).unwrap(),
            Behaviour::HugeArray => b"*2147483647\r\n".to_vec(),
            Behaviour::EndlessLine if data == 0 => b"+OK\r\n".to_vec(),
            Behaviour::EndlessLine => {
                let _ = stream.write_all(b"+");
                let chunk = [b'x'; 16 * 1024];
                while stream.write_all(&chunk).is_ok() {}
                return;
            }
            Behaviour::ClosesMidReply => {
                let _ = stream.write_all(b"$10\r\nhel");
                return;
            }
            Behaviour::Dribbles => {
                for &b in b"+OK\r\n" {
                    std::thread::sleep(Duration::from_millis(50));
                    if stream.write_all(&[b]).is_err() {
                        return;
                    }
                }
                data += 1;
                continue;
            }
            Behaviour::Pushes => b">2\r\n+message\r\n+hello\r\n+OK\r\n".to_vec(),
            Behaviour::Errors(all) if all || data % 2 == 1 => b"-ERR nope\r\n".to_vec(),
            Behaviour::Errors(_) => b"+OK\r\n".to_vec(),
            Behaviour::StopsAfter(n) if data >= n => continue,
            Behaviour::StopsAfter(_) => b"+OK\r\n".to_vec(),
            Behaviour::ReadOnly if request.contains("SET") => {
                b"-READONLY You can't write against a read only replica.\r\n".to_vec()
            }
            Behaviour::ReadOnly => b"$-1\r\n".to_vec(),
            Behaviour::InfoStallsAfter(_) => b"+OK\r\n".to_vec(),
        };
        if !matches!(behaviour, Behaviour::NotResp | Behaviour::WantsPassword(_)) && control(&request).is_none() {
            data += 1;
        }
        if stream.write_all(&reply).is_err() {
            return;
        }
    }
}

/// A fake server on a free port, a thread per connection, for the life of the test process.
fn fake(behaviour: Behaviour) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || serve(stream, behaviour));
        }
    });
    port
}

/// A `--duration 3s` run against `port` with `extra` flags: its output, wall time and JSON
/// (when written).
fn timed_run(port: u16, extra: &[&str]) -> (Output, Duration, Option<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let started = Instant::now();
    let out = respbench()
        .args(["-p", &port.to_string(), "-c", "4", "--threads", "1", "--duration", "3s"])
        .args(["--json", json.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    let doc = json.exists().then(|| read_json(&json));
    (out, took, doc)
}

/// Bounded: a 3-second run ends within 5 seconds whatever the server does.
fn assert_bounded(took: Duration, out: &Output) {
    assert!(took < Duration::from_secs(5), "took {took:?}: {}", stderr(out));
}

fn errors_of(doc: &serde_json::Value, kind: &str) -> u64 {
    doc["errors"][kind].as_u64().unwrap_or(0)
}

#[test]
fn a_server_that_never_replies_is_named_and_the_run_ends_on_time() {
    let port = fake(Behaviour::Silent);
    let (out, took, doc) = timed_run(port, &["--connect-timeout", "300ms"]);
    assert_bounded(took, &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("did not answer DBSIZE within 300ms"), "{err}");
    assert!(err.contains("no request succeeded") && err.contains("timeout 4"), "{err}");
    let text = stdout(&out);
    assert!(text.contains("did not answer INFO within 300ms") && text.contains("INFO unanswered"), "{text}");
    assert!(!text.contains("refused INFO") && !err.contains("refused INFO"), "nothing refused: {text}");
    let doc = doc.expect("results written");
    assert!(errors_of(&doc, "timeout") >= 4, "{}", doc["errors"]);
}

#[test]
fn a_silent_server_costs_the_connect_timeout_once_not_twice() {
    // Default --connect-timeout 5s: the checks before the run spend it; the engine's INFO probe
    // must not wait a second 5 s. The bound is the duration, one deadline and the drain grace
    // (8 s) with 2 s for a busy machine; waiting twice took 13 s.
    let port = fake(Behaviour::Silent);
    let started = Instant::now();
    let out =
        respbench().args(["-p", &port.to_string(), "-c", "4", "--threads", "1", "--duration", "1s"]).output().unwrap();
    let took = started.elapsed();
    let err = stderr(&out);
    assert!(took < Duration::from_secs(1 + 5 + 2 + 2), "took {took:?}: {err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("within 5s (--connect-timeout)"), "{err}");
    assert!(stdout(&out).contains("did not answer INFO within 5s"), "{}", stdout(&out));
}

#[test]
fn an_absurd_array_length_is_a_protocol_error_naming_the_limit() {
    let port = fake(Behaviour::HugeArray);
    let (out, took, doc) = timed_run(port, &[]);
    assert_bounded(took, &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("2147483647") && err.contains("--max-reply-size") && err.contains("byte offset 0"), "{err}");
    assert_eq!(err.matches("protocol error from").count(), 1, "said once: {err}");
    assert!(errors_of(&doc.expect("results written"), "protocol") >= 4);
}

#[test]
fn a_bad_max_reply_size_is_a_usage_error() {
    let out = respbench().args(["--max-reply-size", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--max-reply-size"), "{}", stderr(&out));
}

#[test]
fn an_endless_line_keeps_memory_flat() {
    let port = fake(Behaviour::EndlessLine);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let started = Instant::now();
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &port.to_string(), "-c", "4", "--threads", "1", "--duration", "3s"]).args([
            "--reconnect-backoff",
            "10ms",
            "--json",
            json.to_str().unwrap(),
        ]);
        cmd
    });
    run.wait_lines(1, |l| l.contains("protocol error from"));
    // Sampled while the run goes on (a zombie has no VmRSS: then it has ended).
    let status = format!("/proc/{}/status", run.id());
    let mut peak_kb = 0u64;
    while let Some(kb) = std::fs::read_to_string(&status).ok().and_then(|s| {
        s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    }) {
        peak_kb = peak_kb.max(kb);
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = run.finish();
    assert_bounded(started.elapsed(), &out);
    let err = stderr(&out);
    assert!(peak_kb > 0 && peak_kb < 50 * 1024, "VmRSS peaked at {peak_kb} kB");
    assert!(err.contains("a line longer than the 65536-byte limit at byte offset 0"), "{err}");
    let doc = read_json(&json);
    assert!(errors_of(&doc, "protocol") >= 4, "{}", doc["errors"]);
}

#[test]
fn a_server_that_wants_a_password_is_named_with_the_fix() {
    let port = fake(Behaviour::WantsPassword(None));
    let (out, took, _) = timed_run(port, &[]);
    assert_bounded(took, &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("NOAUTH") && err.contains("the server wants a password: pass -a PASSWORD"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

#[test]
fn the_password_comes_from_the_environment_or_a_file_and_never_reaches_the_output() {
    let port = fake(Behaviour::WantsPassword(Some("s3cret-pw")));
    let (out, _, doc) = timed_run(port, &["--ratio", "1:0"]);
    assert_eq!(out.status.code(), Some(1), "no password given: {}", stderr(&out));
    assert!(doc.is_none());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, "s3cret-pw\n").unwrap();
    for how in ["env", "file", "flag"] {
        let json = dir.path().join(format!("{how}.json"));
        let mut cmd = respbench();
        cmd.args(["-p", &port.to_string(), "-c", "2", "--threads", "1", "-n", "200", "--json", json.to_str().unwrap()]);
        match how {
            "env" => cmd.env("REDISCLI_AUTH", "s3cret-pw"),
            "file" => cmd.env_remove("REDISCLI_AUTH").args(["--password-file", file.to_str().unwrap()]),
            _ => cmd.env_remove("REDISCLI_AUTH").args(["-a", "s3cret-pw"]),
        };
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{how}: {}", stderr(&out));
        let everything = format!("{}{}{}", stdout(&out), stderr(&out), std::fs::read_to_string(&json).unwrap());
        assert!(!everything.contains("s3cret-pw"), "{how}: the password leaked");
    }
}

#[test]
fn a_server_that_closes_mid_reply_fails_every_request_and_exits_1() {
    let port = fake(Behaviour::ClosesMidReply);
    let (out, took, doc) = timed_run(port, &["--reconnect-backoff", "50ms"]);
    assert_bounded(took, &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no request succeeded"), "{err}");
    let doc = doc.expect("results written");
    assert!(errors_of(&doc, "io") >= 4, "{}", doc["errors"]);
}

#[test]
fn a_server_that_dribbles_bytes_is_slow_not_broken() {
    let port = fake(Behaviour::Dribbles);
    let (out, took, doc) = timed_run(port, &[]);
    assert_bounded(took, &out);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = doc.expect("results written");
    assert!(doc["totals"]["count"].as_u64().unwrap_or(0) >= 4, "{}", doc["totals"]);
    assert_eq!(errors_of(&doc, "protocol"), 0);
}

#[test]
fn unasked_push_frames_are_skipped() {
    let port = fake(Behaviour::Pushes);
    let (out, took, doc) = timed_run(port, &[]);
    assert_bounded(took, &out);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = doc.expect("results written");
    assert_eq!(doc["errors"].as_object().map_or(0, |e| e.len()), 0, "{}", doc["errors"]);
}

#[test]
fn a_port_that_does_not_speak_resp_is_named() {
    let port = fake(Behaviour::NotResp);
    let (out, took, _) = timed_run(port, &[]);
    assert_bounded(took, &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("no RESP reply from 127.0.0.1:{port}: got bytes 0x16 0x03 0x01")), "{err}");
    assert!(err.contains("is this a TLS port?"), "{err}");
}

#[test]
fn error_replies_are_not_successes_and_ci_flags_fail_runs_with_errors() {
    let all = fake(Behaviour::Errors(true));
    let out = respbench().args(["-p", &all.to_string(), "-c", "2", "--threads", "1", "-n", "100"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "every reply an error: {}", stderr(&out));
    assert!(stderr(&out).contains("no request succeeded"), "{}", stderr(&out));
    let half = fake(Behaviour::Errors(false));
    for (flags, code) in [
        (&[][..], 0),
        (&["--fail-on-errors"][..], 1),
        (&["--max-error-rate", "0.01"][..], 1),
        (&["--max-error-rate", "0.9"][..], 0),
    ] {
        let out = respbench()
            .args(["-p", &half.to_string(), "-c", "2", "--threads", "1", "-n", "100"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{flags:?}: {}", stderr(&out));
    }
}

#[test]
fn a_counted_run_gives_up_on_a_server_that_stops_answering() {
    let port = fake(Behaviour::StopsAfter(20));
    let started = Instant::now();
    let out = respbench()
        .args(["-p", &port.to_string(), "-c", "4", "--threads", "1", "-n", "100000", "--request-timeout", "300ms"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}: {err}", started.elapsed());
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("did not reply within --request-timeout 300ms").count(), 1, "said once: {err}");
    assert!(err.contains("of the 100000 requests asked for were sent"), "{err}");
}

#[test]
fn a_read_only_replica_is_named_once_with_the_fix() {
    let port = fake(Behaviour::ReadOnly);
    let out = respbench()
        .args(["-p", &port.to_string(), "-c", "4", "--threads", "1", "-n", "400", "--ratio", "1:1"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "the reads succeeded: {err}");
    assert_eq!(err.matches("read-only replica: point respbench at the primary").count(), 1, "said once: {err}");
    assert!(stdout(&out).contains("READONLY"), "{}", stdout(&out));
}

/// A `--duration 3s` run (1-second intervals) against `port`: it must end within the
/// duration plus 2 s (and `slack` for the checks before it) with its results written.
fn run_ends_in_time_with_results(port: u16, slack: Duration, extra: &[&str]) -> (String, serde_json::Value) {
    let (out, took, doc) = timed_run(port, extra);
    let err = stderr(&out);
    assert!(took < Duration::from_secs(3 + 2) + slack, "took {took:?}: {err}");
    assert!(out.status.success(), "{err}");
    let doc = doc.unwrap_or_else(|| panic!("no results written: {err}"));
    assert!(doc["totals"]["count"].as_u64().unwrap_or(0) > 0, "{}", doc["totals"]);
    (stdout(&out), doc)
}

#[test]
fn a_server_that_stalls_info_mid_run_does_not_hold_up_the_run() {
    // The sampler's connection gets its first two INFOs (open, begin), then none: each later
    // reading would have waited 5 s.
    let port = fake(Behaviour::InfoStallsAfter(2));
    let (text, doc) = run_ends_in_time_with_results(port, Duration::ZERO, &[]);
    assert!(text.contains("did not answer INFO within 1s during the run"), "{text}");
    // Missing, not made up: no interval has server figures, nor has the run.
    let series = doc["time_series"].as_array().unwrap();
    assert!(!series.is_empty());
    assert!(series.iter().all(|p| p["server"].is_null()), "{}", doc["time_series"]);
    assert!(doc["server_cpu"].is_null(), "{}", doc["server_cpu"]);
}

#[test]
fn a_server_that_never_answers_info_still_runs_with_its_results() {
    let port = fake(Behaviour::InfoStallsAfter(0));
    let (text, _) = run_ends_in_time_with_results(port, Duration::from_millis(300), &["--connect-timeout", "300ms"]);
    assert!(text.contains("did not answer INFO within 300ms"), "{text}");
}
