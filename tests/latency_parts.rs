//! Latency decomposed by kernel receive timestamps (issue 25), against a real redis-server,
//! on both I/O paths: the parts are there and add up, a stopped client shows in its own lags
//! and a stopped server in the wire-and-server time, the text line and the warning appear
//! when they should, and a unix socket says it has none.

mod common;

use common::*;
use serde_json::Value;

/// The paths each test runs on (io_uring where this kernel has it).
fn paths() -> Vec<&'static str> {
    let probe = respbench().args(["--io", "uring", "--help"]).output().unwrap();
    if probe.status.success() { vec!["epoll", "uring"] } else { vec!["epoll"] }
}

fn us(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

/// Starts a run that reports every interval, waits for its first, freezes `pid` for 300 ms
/// (the fault itself), and waits for the run's end.
fn freeze_during(args: &[&str], pid: Option<u32>) -> (std::process::Output, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(args).args(["--json", json.to_str().unwrap(), "--progress"]);
        cmd
    });
    run.wait_intervals(1);
    let pid = pid.unwrap_or(run.id());
    // SAFETY: kill(2) on a process this test started.
    unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: as above.
    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    (out, doc, dir)
}

#[test]
fn the_parts_are_kept_and_add_up_to_the_response_time() {
    let server = Server::start(&[]);
    for io in paths() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let args = ["-n", "6000", "-c", "4", "--threads", "1", "--ratio", "1:3", "--key-max", "999", "--timestamps"];
        let out = run_ok(&server, &[&args[..], &["--io", io, "--json", json.to_str().unwrap()]].concat());
        let text = stdout(&out);
        assert!(text.contains("client share of p99: "), "{io}: {text}");
        let doc = read_json(&json);
        let bound = us(&doc["measurement"]["clock_offset_bound_us"]);
        assert!(bound < 1000.0, "{io}: clock offset bound {bound} us");
        let totals = &doc["totals"];
        let parts = &totals["latency_parts_us"];
        // Every reply (or nearly: the kernel starts stamping a moment after the first socket asks).
        let (count, decomposed) = (totals["count"].as_u64().unwrap(), parts["count"].as_u64().unwrap());
        assert!(decomposed * 100 >= count * 95, "{io}: {decomposed} of {count} replies decomposed");
        // Closed loop: no wait for a slot, so the three means add up to the mean response time
        // (exact sums; the response histogram's mean is within its 3 digits) of those replies.
        let sum = us(&parts["send_lag"]["mean_us"])
            + us(&parts["wire_and_server"]["mean_us"])
            + us(&parts["receive_lag"]["mean_us"]);
        let mean = us(&totals["latency_us"]["mean_us"]);
        let slack =
            0.01 * mean + bound + (count - decomposed) as f64 * us(&totals["latency_us"]["max_us"]) / count as f64;
        assert!((sum - mean).abs() <= slack, "{io}: parts add up to {sum} us, the mean is {mean} us");
        let share = us(&parts["client_share_of_p99"]);
        assert!((0.0..=1.0).contains(&share), "{io}: {share}");
        for name in ["GET", "SET"] {
            assert!(doc["commands"][name]["latency_parts_us"]["count"].as_u64().unwrap() > 0, "{io}: {name}");
        }
        let points = doc["time_series"].as_array().unwrap();
        assert!(points.iter().any(|p| p["latency_parts_us"]["count"].as_u64() > Some(0)), "{io}: no interval parts");
    }
}

#[test]
fn a_stopped_client_shows_in_its_own_lags_and_is_warned_about() {
    let server = Server::start(&[]);
    for io in paths() {
        // Open loop (timestamps on by default): requests fall due while the client is stopped,
        // and go late, all at once (the pipeline has room: none waits for a slot).
        let args = ["-p", &server.port_arg(), "--rate", "1000", "--duration", "3s", "-c", "4", "--pipeline", "200"];
        let (out, doc, _dir) = freeze_during(&[&args[..], &["--io", io]].concat(), None);
        let parts = &doc["totals"]["latency_parts_us"];
        let send_lag_max = us(&parts["send_lag"]["max_us"]);
        assert!(send_lag_max >= 250_000.0, "{io}: send lag max {send_lag_max} us");
        let wire_p99 = us(&parts["wire_and_server"]["p99_us"]);
        assert!(wire_p99 < 100_000.0, "{io}: wire and server p99 {wire_p99} us");
        // A tenth of the requests were due during the stop: p99 is the client's.
        assert!(us(&parts["client_share_of_p99"]) > 0.5, "{io}: {parts}");
        let text = stdout(&out);
        assert!(text.contains("of client delay (") && text.contains("add threads or load machines"), "{io}: {text}");
        assert!(doc["bottleneck"]["detail"].as_str().unwrap().contains("the client added"), "{io}");
    }
}

#[test]
fn a_stopped_client_holds_replies_in_its_receive_lag() {
    let server = Server::start(&[]);
    for io in paths() {
        // Closed loop: every connection has a request in flight when the client stops.
        let args = ["-p", &server.port_arg(), "--duration", "3s", "-c", "4", "--threads", "1", "--timestamps"];
        let (_, doc, _dir) = freeze_during(&[&args[..], &["--io", io]].concat(), None);
        let parts = &doc["totals"]["latency_parts_us"];
        let receive_max = us(&parts["receive_lag"]["max_us"]);
        assert!(receive_max >= 250_000.0, "{io}: receive lag max {receive_max} us");
        // p99, not max: on a shared machine a stray stall of either side can reach the max.
        let wire_p99 = us(&parts["wire_and_server"]["p99_us"]);
        assert!(wire_p99 < 100_000.0, "{io}: wire and server p99 {wire_p99} us");
    }
}

#[test]
fn a_stopped_server_shows_in_the_wire_and_server_time() {
    let server = Server::start(&[]);
    for io in paths() {
        let args = ["-p", &server.port_arg(), "--duration", "3s", "-c", "4", "--threads", "1", "--timestamps"];
        let (_, doc, _dir) = freeze_during(&[&args[..], &["--io", io]].concat(), Some(server.pid()));
        let parts = &doc["totals"]["latency_parts_us"];
        let wire_max = us(&parts["wire_and_server"]["max_us"]);
        assert!(wire_max >= 250_000.0, "{io}: wire and server max {wire_max} us");
        // p99, not max: on a shared machine a stray stall of the client can reach the max.
        let receive_p99 = us(&parts["receive_lag"]["p99_us"]);
        assert!(receive_p99 < 100_000.0, "{io}: receive lag p99 {receive_p99} us");
    }
}

#[test]
fn without_timestamps_or_over_a_unix_socket_nothing_is_invented() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("off.json");
    let out =
        run_ok(&server, &["-n", "2000", "--timestamps", "off", "--rate", "5000", "--json", json.to_str().unwrap()]);
    assert!(!stdout(&out).contains("client share"), "{}", stdout(&out));
    let doc = read_json(&json);
    assert!(
        doc["totals"].get("latency_parts_us").is_none() && doc["measurement"].get("clock_offset_bound_us").is_none()
    );
    for io in paths() {
        let json = dir.path().join(format!("unix-{io}.json"));
        let out = respbench()
            .args(["-s", server.socket().to_str().unwrap(), "-n", "2000", "--timestamps", "--io", io])
            .args(["--json", json.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let said = stderr(&out);
        assert_eq!(said.matches("not available on a unix socket").count(), 1, "{io}: {said}");
        let doc = read_json(&json);
        assert!(doc["totals"].get("latency_parts_us").is_none(), "{io}");
        assert!(doc["notes"].to_string().contains("not available on a unix socket"), "{io}");
    }
}
