//! Latency decomposed by kernel receive timestamps, against a real redis-server,
//! on both I/O paths: the parts are there and add up, a client stopped for 300 ms with a reply
//! in flight shows in its receive lag and not in the wire-and-server time, a stopped server
//! the other way round (each bounded by its max), the text line and the warning appear when
//! they should, a paced client stopped in its wait counts a late wake-up, and a unix socket
//! says it has none.

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
    let _stamping = stamping_on();
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
        // Every reply (or nearly): the kernel stamps from the start, held on by `stamping_on`.
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

/// A run at a low, steady load (open loop, `rate` requests a second over two connections, one
/// thread, GETs alone, kernel timestamps on by default) whose data connections are known. It
/// runs until the test has made its stops and ends it (SIGINT), so that a busy machine cannot
/// end it before them: `--duration` only bounds a failure.
struct Steady {
    run: Watched,
    json: std::path::PathBuf,
    _dir: tempfile::TempDir,
    /// The server's port and the client ports of the run's data connections.
    server_port: u16,
    ports: Vec<u16>,
    server_waited_ms: f64,
    softirq_waited_ms: f64,
    steal_ms: f64,
}

impl Steady {
    /// Starts the run on `io` and waits until both its data connections have sent GETs (the
    /// server's CLIENT LIST names their last command; the telemetry connection's is INFO).
    fn start(server: &Server, io: &str, rate: &str) -> Steady {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let args = ["--rate", rate, "-c", "2", "--threads", "1", "--ratio", "0:1", "--pipeline", "100"];
        let run = Watched::spawn({
            let mut cmd = respbench();
            cmd.args(["-p", &server.port_arg(), "--duration", "60s", "--io", io]).args(args);
            cmd.args(["--json", json.to_str().unwrap()]);
            cmd
        });
        let mut ports = Vec::new();
        wait_for("the run's two data connections to send GETs", std::time::Duration::from_secs(30), || {
            ports = server
                .cli(&["CLIENT", "LIST"])
                .lines()
                .filter(|l| l.contains(" cmd=get "))
                .filter_map(|l| l.split(" addr=").nth(1)?.split(' ').next()?.rsplit(':').next()?.parse().ok())
                .collect();
            ports.len() == 2
        });
        let (server_waited_ms, softirq_waited_ms, steal_ms) =
            (runqueue_wait_ms(server.pid()), softirq_wait_ms(), steal_ms());
        Steady { run, json, _dir: dir, server_port: server.port, ports, server_waited_ms, softirq_waited_ms, steal_ms }
    }

    /// Whether bytes wait unread in a socket of the run's data connections: at the server's end
    /// (a request the server has not read) or at the client's (a reply the client has not).
    fn waiting(&self, at_server: bool) -> bool {
        let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
        let port = |addr: &str| u16::from_str_radix(addr.rsplit(':').next()?, 16).ok();
        tcp.lines().skip(1).any(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(remote)) = (port(f[1]), port(f[2])) else { return false };
            let queued = f[4].split(':').nth(1).and_then(|q| u64::from_str_radix(q, 16).ok()) > Some(0);
            let (ours, theirs) = if at_server { (remote, local) } else { (local, remote) };
            queued && theirs == self.server_port && self.ports.contains(&ours)
        })
    }

    /// Waits for the run's end: its result, and how long the server, the client's threads,
    /// this test and the kernel's softirq threads (which deliver loopback packets when the
    /// machine is busy) waited for a core meanwhile, in milliseconds (schedstat).
    fn finish(self, server: &Server, test_waited_ms: f64) -> (Value, Waits) {
        // Once what was held is read: nothing waits at either end of the data connections.
        until("the held requests and replies to be read", || !self.waiting(true) && !self.waiting(false));
        self.run.signal(libc::SIGINT);
        let out = self.run.finish();
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        let doc = read_json(&self.json);
        let threads = doc["client"]["threads"].as_array().unwrap();
        let client_ms = threads.iter().map(|t| us(&t["runqueue_wait_secs"]) * 1000.0).sum();
        let server_ms = runqueue_wait_ms(server.pid()) - self.server_waited_ms;
        let softirq_ms = softirq_wait_ms() - self.softirq_waited_ms;
        let steal_ms = steal_ms() - self.steal_ms;
        (doc, Waits { server_ms, client_ms, test_ms: test_waited_ms, softirq_ms, steal_ms })
    }
}

/// How long each process behind a figure waited for a core over the run, in milliseconds, and
/// how long the machine's own cores were taken by its host (steal time: a virtual machine's
/// core held by the hypervisor, which no run queue inside the machine shows).
#[derive(Debug)]
struct Waits {
    server_ms: f64,
    client_ms: f64,
    test_ms: f64,
    softirq_ms: f64,
    steal_ms: f64,
}

impl Waits {
    /// Judges a figure `value_us` against its `bound_us`. A miss passes only where the machine
    /// explains it: the processes in `which` waited for a core, with the host's steal time, at
    /// least the amount by which the figure missed, and the figure stays under `fault_us`, what
    /// a fault in the decomposition would show (the whole stop in the part that was not stopped,
    /// or the stop counted twice). Any other miss fails, saying which it is.
    fn judge(&self, value_us: f64, bound_us: f64, fault_us: f64, what: &str, which: &[&str]) {
        if value_us < bound_us {
            return;
        }
        let waited: f64 = self.steal_ms
            + which
                .iter()
                .map(|w| match *w {
                    "server" => self.server_ms,
                    "client" => self.client_ms,
                    "softirq" => self.softirq_ms,
                    _ => self.test_ms,
                })
                .sum::<f64>();
        let excess_ms = (value_us - bound_us) / 1000.0;
        let explained = waited >= excess_ms;
        let judged = if explained {
            format!(
                "the machine can explain it: the {which:?} waited {waited:.1} ms for a core over the run, with steal"
            )
        } else {
            format!("NOT the machine: the {which:?} waited only {waited:.1} ms for a core over the run, with steal")
        };
        if explained && value_us < fault_us {
            eprintln!("{what}: over {bound_us} us by {excess_ms:.1} ms, passed ({judged}; {self:?})");
            return;
        }
        panic!("{what} (bound {bound_us} us, a fault at {fault_us} us; {judged}; {self:?})");
    }
}

/// Milliseconds the machine's cores have been taken by its host so far, in all (the steal
/// column of /proc/stat, in ticks of 10 ms).
fn steal_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu = stat.lines().next().unwrap_or_default();
    cpu.split_whitespace().nth(8).and_then(|t| t.parse::<f64>().ok()).unwrap_or(0.0) * 10.0
}

/// Milliseconds the process `pid` has waited for a core, over all its threads (the second
/// field of /proc/PID/task/*/schedstat).
fn runqueue_wait_ms(pid: u32) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0.0 };
    let waited_ns: u64 = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    waited_ns as f64 / 1e6
}

/// The file `name` of each of the client `pid`'s worker threads (`respbench-w*`) under
/// /proc/PID/task.
fn worker_files(pid: u32, name: &str) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .filter_map(Result::ok)
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("respbench-w")))
        .filter_map(|t| std::fs::read_to_string(t.path().join(name)).ok())
        .collect()
}

/// How many times the client's worker threads have been given a core so far (schedstat).
fn worker_runs(pid: u32) -> u64 {
    let runs = worker_files(pid, "schedstat");
    runs.iter().filter_map(|s| s.split_whitespace().nth(2)?.parse::<u64>().ok()).sum()
}

/// Whether every worker thread of the stopped client `pid` stopped in its wait for events
/// (`/proc/PID/task/TID/syscall` names the system call a stopped thread is in; `-1` in user
/// space): whatever it had to send went in that call or before it.
fn in_wait(pid: u32) -> bool {
    let waits = [libc::SYS_io_uring_enter, libc::SYS_epoll_pwait2, libc::SYS_epoll_pwait, libc::SYS_epoll_wait];
    let calls = worker_files(pid, "syscall");
    !calls.is_empty()
        && calls.iter().all(|call| {
            let number = call.split_whitespace().next().and_then(|n| n.parse::<libc::c_long>().ok());
            number.is_some_and(|n| waits.contains(&n))
        })
}

/// Milliseconds the kernel's softirq threads (`ksoftirqd/N`) have waited for a core, in all.
fn softirq_wait_ms() -> f64 {
    let procs = std::fs::read_dir("/proc").unwrap().filter_map(Result::ok);
    let softirq = procs
        .filter(|p| std::fs::read_to_string(p.path().join("comm")).is_ok_and(|comm| comm.starts_with("ksoftirqd/")));
    softirq.filter_map(|p| p.file_name().to_str()?.parse().ok()).map(runqueue_wait_ms).sum()
}

/// This thread's wait for a core so far, in milliseconds.
fn own_wait_ms() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().nth(1).and_then(|w| w.parse::<f64>().ok()).unwrap_or(0.0) / 1e6
}

/// How often the stops' steps look: they are timed in fractions of a millisecond (the 10 ms
/// polls of `wait_for` would show in the figures), yet each look reads /proc files, so looking
/// every 50 µs took most of a core (1.0-4.7 s of CPU in 1.5-4.5 s runs), which the server and
/// the client then waited for.
const POLL: std::time::Duration = std::time::Duration::from_micros(250);

/// Polls `check` every [`POLL`] until it holds; panics naming `what` after 10 s.
fn until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !check() {
        assert!(std::time::Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(POLL);
    }
}

/// Polls `check` every [`POLL`] until it holds (true) or `limit` has passed (false).
fn within(limit: std::time::Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Sends `signal` to `pid` and, for SIGSTOP, waits until the threads that matter have
/// stopped: the server's main thread, the client's workers (`respbench-w*`). Not every thread:
/// respbench's journal writer runs at nice 19 and, on a busy machine, may stop much later.
fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) on a process this test started.
    unsafe { libc::kill(pid as i32, signal) };
    if signal != libc::SIGSTOP {
        return;
    }
    until("the process to stop", || {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return true };
        tasks.filter_map(Result::ok).all(|task| {
            let read = |name: &str| std::fs::read_to_string(task.path().join(name)).unwrap_or_default();
            let main = task.file_name().to_str() == Some(&pid.to_string());
            if !main && !read("comm").starts_with("respbench-w") {
                return true;
            }
            let stat = read("stat");
            let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
            matches!(state, Some("T" | "t") | None)
        })
    });
}

/// The bound "about 300 ms" allows a stopped part, in microseconds: the stop's own 300 ms
/// plus what waking and a loaded machine add.
const ABOUT_300_MS: std::ops::Range<f64> = 299_000.0..360_000.0;
/// The bound on the part that was not stopped, in microseconds.
const UNDER_10_MS: f64 = 10_000.0;
/// Where a miss is a fault whatever the machine did: the part that was not stopped holding a
/// third of the stop, in microseconds (a fault in the decomposition puts the whole stop there).
const A_THIRD_OF_THE_STOP: f64 = 100_000.0;
/// Where a miss of the stopped part is a fault: the stop counted twice, in microseconds.
const TWICE_THE_STOP: f64 = 600_000.0;

#[test]
fn a_stopped_client_holds_replies_in_its_receive_lag() {
    let server = Server::start(&[]);
    for io in paths() {
        // At 4,000 requests a second a request is in flight a good part of the time.
        let run = Steady::start(&server, io, "4000");
        let (before, began) = (own_wait_ms(), std::time::Instant::now());
        // A reply in flight when the client stops: stop it at whatever moment and keep the
        // stop once a reply arrives while it is stopped; else let it go and stop it again. The
        // server is never held, so the held reply's wire and server time is its own. A stop
        // that holds nothing is ended at once, or after 1 ms where the worker stopped in its
        // wait: a stop that came between a send's clock read and its system call (below) holds
        // that request, whose reply then arrives only once the client runs again (about 1 run
        // in 15 per path with 20 ms stops), so its wire and server time carries that stop's
        // length, plus the client's time to run again, which must stay under the bound (a
        // reply comes back in well under a millisecond here).
        let held = (0..2000).any(|_| {
            signal(run.run.id(), libc::SIGSTOP);
            // Held only where the worker stopped in its wait: a request's send time is the clock
            // read just before the system call that hands its bytes to the kernel, so a stop
            // between the two (in user space) would hold an unsent request that the client
            // already counts as sent, and its wire and server time would carry the stop.
            let held = in_wait(run.run.id()) && within(std::time::Duration::from_millis(1), || run.waiting(false));
            if !held {
                // Let it run and read what came late before the next stop: no stop holds a
                // reply twice, and the stops never run into one another (a worker stopped again
                // before it ran would hold what it read before the first for all of them).
                let ran = worker_runs(run.run.id());
                signal(run.run.id(), libc::SIGCONT);
                until("the client to run again", || worker_runs(run.run.id()) > ran);
                until("the client to read the replies that came late", || !run.waiting(false));
            }
            held
        });
        assert!(held, "{io}: no reply arrived at the stopped client in 2000 stops");
        std::thread::sleep(std::time::Duration::from_millis(300));
        signal(run.run.id(), libc::SIGCONT);
        let test_waited = own_wait_ms() - before;
        eprintln!("--io {io}: the stops took {:?}", began.elapsed());
        let (doc, waits) = run.finish(&server, test_waited);
        let parts = &doc["totals"]["latency_parts_us"];
        let (receive_max, wire_max) = (us(&parts["receive_lag"]["max_us"]), us(&parts["wire_and_server"]["max_us"]));
        eprintln!("--io {io}: receive lag max {receive_max} us, wire and server max {wire_max} us; {waits:?}");
        // The reply waited from before the 300 ms began until after they ended.
        assert!(receive_max >= ABOUT_300_MS.start, "{io}: receive lag max {receive_max} us: {parts}");
        let what = format!("{io}: receive lag max {receive_max} us, over about 300 ms");
        waits.judge(receive_max, ABOUT_300_MS.end, TWICE_THE_STOP, &what, &["client", "test"]);
        // Under io_uring too: a request's send time is the submit that handed its bytes to the
        // kernel, even one queued behind a send in flight when the stop came.
        let what = format!("{io}: wire and server max {wire_max} us while the client was stopped");
        waits.judge(wire_max, UNDER_10_MS, A_THIRD_OF_THE_STOP, &what, &["server", "client", "test", "softirq"]);
    }
}

#[test]
fn a_paced_worker_the_machine_runs_late_counts_its_late_wake_up() {
    let server = Server::start(&[]);
    for io in paths() {
        let run = Steady::start(&server, io, "4000");
        // Stopped in its wait (its next send a fraction of a millisecond away) for 20 ms: the
        // machine not running a sleeping client, as a busy host or another process does.
        let stopped = (0..2000).any(|_| {
            signal(run.run.id(), libc::SIGSTOP);
            if in_wait(run.run.id()) {
                return true;
            }
            let ran = worker_runs(run.run.id());
            signal(run.run.id(), libc::SIGCONT);
            until("the client to run again", || worker_runs(run.run.id()) > ran);
            false
        });
        assert!(stopped, "{io}: the worker was never stopped in its wait in 2000 stops");
        std::thread::sleep(std::time::Duration::from_millis(20));
        signal(run.run.id(), libc::SIGCONT);
        let (doc, _) = run.finish(&server, 0.0);
        let rate = &doc["rate"];
        let (late, worst) = (rate["late_wakeups"].as_u64().unwrap(), us(&rate["late_wakeup_max_ms"]));
        // Woken about 20 ms after its time (less what was left of its sleep when it stopped).
        assert!(late >= 1 && worst >= 15.0, "{io}: {rate}");
        assert_eq!(doc["client"]["threads"][0]["late_wakeups"].as_u64(), Some(late), "{io}");
    }
}

#[test]
fn a_stopped_server_shows_in_the_wire_and_server_time() {
    let server = Server::start(&[]);
    for io in paths() {
        let run = Steady::start(&server, io, "200");
        let (before, began) = (own_wait_ms(), std::time::Instant::now());
        // A request in flight when the server stops: it waits at the server for the stop,
        // which lasts until one is seen waiting and then 300 ms: a request sent just before
        // the stop waits the whole of it, so the bound is taken from the stop's own length.
        signal(server.pid(), libc::SIGSTOP);
        let stopped = std::time::Instant::now();
        until("a request waiting at the stopped server", || run.waiting(true));
        std::thread::sleep(std::time::Duration::from_millis(300));
        signal(server.pid(), libc::SIGCONT);
        let stop_us = stopped.elapsed().as_secs_f64() * 1e6;
        let test_waited = own_wait_ms() - before;
        eprintln!(
            "--io {io}: the stop took {:?} ({:?} with the wait for a request)",
            stopped.elapsed(),
            began.elapsed()
        );
        let (doc, waits) = run.finish(&server, test_waited);
        let parts = &doc["totals"]["latency_parts_us"];
        let (receive_max, wire_max) = (us(&parts["receive_lag"]["max_us"]), us(&parts["wire_and_server"]["max_us"]));
        eprintln!("--io {io}: wire and server max {wire_max} us, receive lag max {receive_max} us; {waits:?}");
        assert!(wire_max >= ABOUT_300_MS.start, "{io}: wire and server max {wire_max} us: {parts}");
        // What waking and a loaded machine may add, over the stop's own length.
        let bound = stop_us + (ABOUT_300_MS.end - 300_000.0);
        let what = format!("{io}: wire and server max {wire_max} us, over the stop's {stop_us:.0} us");
        waits.judge(wire_max, bound, stop_us + TWICE_THE_STOP - 300_000.0, &what, &["server", "test", "softirq"]);
        let what = format!("{io}: receive lag max {receive_max} us while the server was stopped");
        waits.judge(receive_max, UNDER_10_MS, A_THIRD_OF_THE_STOP, &what, &["client", "softirq"]);
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
