//! Open loop and the truth about latency, against real redis-server processes: rates kept,
//! schedules followed, stalls visible, warmup excluded, interval logs, repeated runs,
//! bottleneck verdicts and the capacity search.

mod common;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use common::*;

/// Gaps between consecutive sends of the client, in seconds: from the loopback device
/// (`common::capture`, needs CAP_NET_RAW), or else as the server's MONITOR saw the commands,
/// which adds the server's own wake-ups. A segment carrying several commands (sends batched
/// within the timer's grain) counts as one arrival here and as several at the server.
fn gaps(server: &Server, args: &[&str], expected: usize) -> Vec<f64> {
    let stamps: Vec<f64> = match capture::Capture::start(server.port) {
        Some(capture) => {
            run_ok(server, args);
            capture.finish()
        }
        None => monitored(server, args, expected).iter().map(|(t, _)| *t).collect(),
    };
    stamps.windows(2).map(|w| w[1] - w[0]).collect()
}

/// Gaps as [`gaps`] gives them, and whether the client or the server waited for a core more
/// than 10 % of the run (their run-queue wait: the client's from its JSON, the server's from
/// /proc/PID/task/*/schedstat). Then the gaps measure the machine's neighbours as much as the
/// pacer, and their spread is not judged: the count and the mean still are. The wake-ups alone
/// (2,000 a second) wait 2-5 % here, idle or beside one CPU hog; a build beside the suite made
/// it 17-31 %. Nor when over 2 % of the client's sends left over 1 ms late by its own delay
/// (`rate.late_sends_own`): a VM's host taking the cores (steal time) holds the client with no
/// run-queue wait its guest can see; seen here, a plain sleep over 1 ms late 61 times in 6,000
/// (against none to 8 otherwise) and 7-30 % of these sends late, against 0.1-1 %. Nor when the
/// host held the machine's cores over 5 % of the run (the run's `steal_secs`).
fn gaps_and_contention(server: &Server, args: &[&str], expected: usize) -> (Vec<f64>, bool) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let (gaps, contention) = watched(server, || {
        let gaps = gaps(server, &[args, &["--json", json.to_str().unwrap()]].concat(), expected);
        (gaps, read_json(&json))
    });
    if contention.any() {
        eprintln!("spread not judged: {contention}");
    }
    (gaps, contention.any())
}

/// What besides the client set a timed run's pace: the shares of the run the client and the
/// server waited for a core (their run-queue waits: the client's from its JSON, the server's
/// from /proc/PID/task/*/schedstat), the share of its sends over 1 ms late by its own delay,
/// and the share the host held the machine's cores (steal).
struct Contention {
    client: f64,
    server: f64,
    held: f64,
    stolen: f64,
}

impl Contention {
    /// Over 10 % waiting for a core, 2 % of sends late by the client's own delay or 5 % steal:
    /// then a timing figure measures the machine's neighbours as much as respbench.
    fn any(&self) -> bool {
        self.server > 0.10 || self.client > 0.10 || self.held > 0.02 || self.stolen > 0.05
    }
}

impl std::fmt::Display for Contention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the client waited for a core {:.1}% of its run, the server {:.1}%; \
             {:.1}% of its sends were over 1 ms late by its own delay; the host held the cores {:.1}%",
            self.client * 100.0,
            self.server * 100.0,
            self.held * 100.0,
            self.stolen * 100.0
        )
    }
}

/// Runs `run` (which returns its run's JSON beside what it keeps) and says how contended the
/// machine was while it ran.
fn watched<T>(server: &Server, run: impl FnOnce() -> (T, Value)) -> (T, Contention) {
    let server_waited = || runqueue_wait_secs(server.pid());
    let before = server_waited();
    let started = std::time::Instant::now();
    let (kept, doc) = run();
    let server = (server_waited() - before) / started.elapsed().as_secs_f64();
    let thread = &doc["client"]["threads"][0];
    let client = thread["runqueue_wait_secs"].as_f64().unwrap() / thread["wall_secs"].as_f64().unwrap();
    let rate = &doc["rate"];
    let held = rate["late_sends_own"].as_f64().unwrap() / rate["sends"].as_f64().unwrap();
    (kept, Contention { client, server, held, stolen: stolen_share(&doc) })
}

/// Seconds the process `pid` has waited for a core, over all its threads.
fn runqueue_wait_secs(pid: u32) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0.0 };
    let waited_ns: u64 = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    waited_ns as f64 / 1e9
}

fn mean_and_cv(v: &[f64]) -> (f64, f64) {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
    (mean, var.sqrt() / mean)
}

/// The share of a run's time (its JSON's first client thread) the hypervisor held the
/// machine's cores: its steal.
fn stolen_share(doc: &Value) -> f64 {
    let thread = &doc["client"]["threads"][0];
    thread["steal_secs"].as_f64().unwrap() / thread["wall_secs"].as_f64().unwrap()
}

/// Runs `run` (which returns its run's JSON) again, up to three times in all, while the
/// hypervisor held the machine's cores over 5 % of the run (its steal, which neither the
/// client's CPU nor its run-queue wait counts): a timing figure taken then judges the host.
fn unstolen<T>(what: &str, mut run: impl FnMut() -> (T, Value)) -> (T, Value) {
    let mut tries = 0;
    loop {
        tries += 1;
        let (kept, doc) = run();
        let stolen = stolen_share(&doc);
        if stolen <= 0.05 || tries == 3 {
            return (kept, doc);
        }
        eprintln!("the hypervisor held the cores {:.0} % of {what}: run again", stolen * 100.0);
    }
}

#[test]
fn fixed_rate_is_delivered_within_two_percent() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let (out, doc) = unstolen("a run at 5000/s", || {
        let out =
            run_ok(&server, &["--rate", "5000", "--duration", "3s", "-c", "10", "--json", json.to_str().unwrap()]);
        (out, read_json(&json))
    });
    let achieved = doc["totals"]["ops_per_sec"].as_f64().unwrap();
    assert!((achieved - 5000.0).abs() / 5000.0 < 0.02, "achieved {achieved}/s");
    assert_eq!(doc["measurement"]["mode"], "open_loop");
    assert_eq!(doc["rate"]["requested_per_sec"], 5000.0);
    // Kernel timestamps are on in open loop: the late sends say how many were the client's own.
    let (late, own) = (doc["rate"]["late_sends"].as_u64().unwrap(), doc["rate"]["late_sends_own"].as_u64());
    assert!(own.is_some_and(|own| own <= late), "{}", doc["rate"]);
    let text = stdout(&out);
    assert!(text.contains("Service time (from the actual send)") && text.contains("5000/s requested"), "{text}");
}

#[test]
fn paced_epoll_keeps_time_with_the_timerfd_older_kernels_wait_on() {
    // Kernels before 5.11 have no epoll_pwait2: epoll_wait's whole milliseconds and a timerfd
    // for the microseconds. Without the timerfd a paced send would leave up to 1 ms late.
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut cmd = respbench();
    cmd.env("RESPBENCH_EPOLL_TIMERFD", "1").args(["-p", &server.port_arg(), "--io", "epoll", "--rate", "2000"]);
    cmd.args(["--duration", "2s", "-c", "2", "--threads", "1", "-q", "--json", json.to_str().unwrap()]);
    // A run while the server or the client waited for cores (a neighbour's load) or the host
    // held them measures the machine, not the timer: its lag is not judged, and it is run
    // again, up to three times in all.
    for tries in 1.. {
        let (doc, contention) = watched(&server, || {
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            let doc = read_json(&json);
            (doc.clone(), doc)
        });
        let rate = &doc["rate"];
        let achieved = rate["achieved_per_sec"].as_f64().unwrap();
        // A run the machine held back sends what fell due late, and those due in its last
        // moments may miss the deadline (the host holding the cores 36 %: 1,902/s): its rate
        // is judged only within 10 %.
        let within = if contention.any() { 0.10 } else { 0.02 };
        assert!((achieved - 2000.0).abs() / 2000.0 < within, "achieved {achieved}/s while {contention}");
        if contention.any() {
            eprintln!("a run at 2000/s while {contention}: its lag is not judged, its rate within 10 %");
            if tries < 3 {
                continue;
            }
            break;
        }
        // Sends leave on time (microseconds), not at epoll_wait's next millisecond.
        let p50 = rate["send_lag_us"]["p50_us"].as_f64().unwrap();
        assert!(p50 < 250.0, "send lag p50 {p50} us: {rate}");
        break;
    }
}

#[test]
fn many_paced_connections_keep_their_rate() {
    // 2,000 connections at 4,000/s on one thread: a wake-up must touch only the connections
    // with a send due. (A sweep of all 2,000 on every wake-up keeps the thread busy: measured,
    // it ran 99.7 % of the time where 20 connections ran 22 %.)
    raise_open_files(4096);
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let paced = |conns: &str| {
        let json = dir.path().join(format!("run-{conns}.json"));
        let args = ["--rate", "4000", "--duration", "3s", "-c", conns, "--threads", "1", "--ratio", "1:4"];
        run_ok(&server, &[&args[..], &["--json", json.to_str().unwrap()]].concat());
        read_json(&json)
    };
    let (few, doc) = (paced("20"), paced("2000"));
    let achieved = doc["totals"]["ops_per_sec"].as_f64().unwrap();
    assert!((achieved - 4000.0).abs() / 4000.0 < 0.02, "achieved {achieved}/s");
    let rate = &doc["rate"];
    let (late, sends) = (rate["late_sends"].as_u64().unwrap(), rate["sends"].as_u64().unwrap());
    assert!(sends >= 11_500, "{sends} sends");
    // Its own CPU (not the time it waited for a core) against the same schedule over 20
    // connections on this machine and build: what the CPU costs here cancels out, a
    // sweep does not.
    let thread = |doc: &Value| doc["client"]["threads"][0].clone();
    let secs = |t: &Value, k: &str| t[k].as_f64().unwrap();
    let busy = |t: &Value| secs(t, "cpu_secs") / secs(t, "wall_secs");
    let (many, base) = (thread(&doc), thread(&few));
    assert!(
        busy(&many) < 2.0 * busy(&base),
        "2,000 connections kept the worker busy {:.0}% of the time, 20 connections {:.0}%: {many} against {base}",
        busy(&many) * 100.0,
        busy(&base) * 100.0
    );
    // Lateness is the machine's as much as ours while other processes kept the worker waiting
    // for a core (its run-queue wait) or the hypervisor held the cores (steal: on a loaded
    // host a third of the run, and sends tens of milliseconds late): the sends due in those
    // waits, and as many again caught up after them, are excused.
    let waited = secs(&many, "runqueue_wait_secs") + secs(&many, "steal_secs");
    let excused = (4000.0 * 2.0 * waited) as u64;
    assert!(
        late <= sends / 100 + excused,
        "{late} of {sends} sends over 1 ms late, {excused} excused by run-queue waits and steal: {rate} {many}"
    );
}

/// Raises this process's soft open-file limit (inherited by the programs it starts) to `want`,
/// or as far as the hard limit allows.
fn raise_open_files(want: u64) {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read or write only the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < want {
            lim.rlim_cur = want.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

#[test]
fn constant_arrivals_are_evenly_spaced() {
    let server = Server::start(&[]);
    // One connection at 1000/s: the server should see a command every millisecond.
    let args = ["--rate", "1000", "--duration", "2s", "-c", "1", "-P", "8"];
    let (gaps, contended) = gaps_and_contention(&server, &args, 2000);
    assert!(gaps.len() > 1900, "{} gaps", gaps.len());
    let (mean, cv) = mean_and_cv(&gaps);
    assert!((mean - 0.001).abs() < 0.00003, "mean gap {mean}");
    if contended {
        return;
    }
    let mut sorted = gaps.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    assert!((median - 0.001).abs() < 0.0001, "median gap {median}");
    // Low jitter: most gaps within 0.2 ms of the schedule.
    let close = gaps.iter().filter(|g| (*g - 0.001).abs() < 0.0002).count() as f64 / gaps.len() as f64;
    assert!(close > 0.9, "only {close} of gaps within 0.2 ms (cv {cv})");
}

#[test]
fn poisson_arrivals_have_exponential_gaps() {
    let server = Server::start(&[]);
    let args = ["--rate", "2000", "--arrival", "poisson", "--duration", "3s", "-c", "1", "-P", "32"];
    let (gaps, contended) = gaps_and_contention(&server, &args, 6000);
    assert!(gaps.len() > 5700, "{} gaps", gaps.len());
    let (mean, _) = mean_and_cv(&gaps);
    assert!((mean - 0.0005).abs() < 0.000025, "mean gap {mean}");
    if contended {
        return;
    }
    // A gap of 20 means has a chance of e^-20 (2 in a billion) in an exponential schedule: one
    // is the machine holding the client (a late wake-up, a preemption; this VM wakes a sleeper
    // over 1 ms late about once in a thousand sleeps, 10-20 ms now and then), and alone it moves
    // the coefficient of variation by 0.1. A few are left out of the spread, and counted.
    let stalls = gaps.iter().filter(|g| **g > 20.0 * mean).count();
    assert!(stalls <= 3, "{stalls} gaps over {} ms", 20.0 * mean * 1e3);
    let gaps: Vec<f64> = gaps.into_iter().filter(|g| *g <= 20.0 * mean).collect();
    let (mean, cv) = mean_and_cv(&gaps);
    // An exponential distribution has a coefficient of variation of 1 and its median at mean x ln 2.
    assert!((0.9..1.15).contains(&cv), "coefficient of variation {cv}");
    let below_median = gaps.iter().filter(|g| **g < mean * std::f64::consts::LN_2).count() as f64 / gaps.len() as f64;
    assert!((0.46..0.54).contains(&below_median), "{below_median} below the exponential median");
    // Kolmogorov-Smirnov against Exp(mean) on the gaps above a threshold (minus the threshold:
    // exponential gaps are memoryless). Below it, the timer's wake-up and the server's batching
    // of commands read together blur the shortest gaps.
    let threshold = 0.5 * mean;
    let mut tail: Vec<f64> = gaps.iter().filter(|g| **g > threshold).map(|g| g - threshold).collect();
    tail.sort_by(f64::total_cmp);
    let n = tail.len() as f64;
    assert!(n > 0.5 * gaps.len() as f64, "{n} of {} gaps above {threshold}", gaps.len());
    let d = tail
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let cdf = 1.0 - (-g / mean).exp();
            (cdf - i as f64 / n).abs().max((cdf - (i + 1) as f64 / n).abs())
        })
        .fold(0.0, f64::max);
    assert!(d < 0.04, "KS distance {d}");
}

#[test]
fn a_frozen_server_shows_in_response_time_not_service_time() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &server.port_arg(), "--rate", "2000", "--duration", "6s", "-c", "10", "--ratio", "0:1"])
            .args(["--json", json.to_str().unwrap(), "--progress"]);
        cmd
    });
    run.wait_intervals(2);
    unsafe { libc::kill(server.pid() as i32, libc::SIGSTOP) };
    // Frozen for a second (the fault itself), while a sixth of the run's requests fall due.
    std::thread::sleep(Duration::from_secs(1));
    unsafe { libc::kill(server.pid() as i32, libc::SIGCONT) };
    let out = run.finish();
    assert!(out.status.success());
    let doc = read_json(&json);
    let response_p99 = doc["totals"]["latency_us"]["p99_us"].as_f64().unwrap();
    let service_p99 = doc["totals"]["service_us"]["p99_us"].as_f64().unwrap();
    // About a sixth of the requests were due during the freeze: p99 must show it.
    assert!(response_p99 >= 500_000.0, "response p99 {response_p99} us");
    assert!(service_p99 < 50_000.0, "service p99 {service_p99} us");
    // The achieved rate still matches: the late requests were sent, not dropped.
    let count = doc["totals"]["count"].as_u64().unwrap();
    assert!(count > 11_500, "{count} replies");
}

#[test]
fn warmup_is_kept_out_of_the_counts() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_ok(&server, &["-n", "3000", "--ratio", "0:1", "--warmup", "1s", "-c", "2", "--json", json.to_str().unwrap()]);
    let doc = read_json(&json);
    assert_eq!(doc["totals"]["count"], 3000);
    let served = server.calls("get");
    assert!(served > 4000, "the server saw only {served} GETs: no warmup load?");
    assert!(served < 3000 + 400_000);
    assert_eq!(doc["configuration"]["warmup_secs"], 1.0);
    // A timed run measures its duration after the warmup.
    run_ok(&server, &["--duration", "1s", "--warmup", "500ms", "-c", "2", "--json", json.to_str().unwrap()]);
    let secs = read_json(&json)["duration_secs"].as_f64().unwrap();
    assert!((0.9..1.1).contains(&secs), "{secs}");
}

#[test]
fn hdr_interval_log_parses_with_the_hdrhistogram_reader() {
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (json, log) = (dir.path().join("run.json"), dir.path().join("run.hlog"));
    run_ok(
        &server,
        &[
            "--rate",
            "3000",
            "--duration",
            "2500ms",
            "-c",
            "4",
            "--json",
            json.to_str().unwrap(),
            "--hdr-log",
            log.to_str().unwrap(),
        ],
    );
    let bytes = std::fs::read(&log).unwrap();
    let mut deserializer = Deserializer::new();
    let mut counts = std::collections::HashMap::new();
    // Per tag: the sum of every value logged (mean × count), for the mean over the run.
    let mut sums = std::collections::HashMap::new();
    let mut intervals = 0;
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(h) = entry.expect("a valid log line") {
            let tag = h.tag().expect("every histogram is tagged").as_str().to_string();
            let decoded = base64_decode(h.encoded_histogram());
            let hist: hdrhistogram::Histogram<u64> = deserializer.deserialize(&mut decoded.as_slice()).unwrap();
            *sums.entry(tag.clone()).or_insert(0.0) += hist.mean() * hist.len() as f64;
            *counts.entry(tag).or_insert(0) += hist.len();
            intervals += 1;
        }
    }
    let doc = read_json(&json);
    let total = doc["totals"]["count"].as_u64().unwrap();
    assert_eq!(counts["response"], total);
    assert_eq!(counts["service"], total);
    // Microseconds: the log's mean over the run is the JSON's (whole microseconds in the log,
    // so within 1 µs or 10 %), whatever the machine made the latencies.
    for (tag, field) in [("response", "latency_us"), ("service", "service_us")] {
        let logged = sums[tag] / counts[tag] as f64;
        let reported = doc["totals"][field]["mean_us"].as_f64().unwrap();
        let close = (logged - reported).abs() <= 1.0 || (0.9..1.1).contains(&(logged / reported));
        assert!(close, "{tag}: the log's mean {logged} µs, the JSON's {reported} µs");
    }
    assert!((6..=8).contains(&intervals), "{intervals} histograms");
}

/// Standard base64, as the interval log writes it.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = text.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in clean.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &c)| acc | (u32::from(value(c)) << (18 - 6 * i)));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[test]
fn repeated_runs_report_their_spread() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = run_ok(&server, &["-n", "4000", "--runs", "3", "-c", "4", "--json", json.to_str().unwrap()]);
    let doc = read_json(&json);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert!(runs.iter().all(|r| r["count"] == 4000));
    assert_eq!(doc["totals"]["count"], 12000);
    let spread = &doc["repetition"]["ops_per_sec"];
    let (min, median, max) =
        (spread["min"].as_f64().unwrap(), spread["median"].as_f64().unwrap(), spread["max"].as_f64().unwrap());
    assert!(min <= median && median <= max);
    assert!(spread["ci95_low"].as_f64().unwrap() <= spread["ci95_high"].as_f64().unwrap());
    assert!(doc["repetition"]["p99_us"]["median"].as_f64().unwrap() > 0.0);
    assert!(stdout(&out).contains("Runs: 3."), "{}", stdout(&out));
}

#[test]
fn a_starved_client_is_called_client_bound() {
    // The server has core 0 to itself; respbench gets one thread, many connections and a deep
    // pipeline, at the lowest priority on core 1 beside a busy loop: it cannot keep up.
    let server = Server::start_pinned("0", &[]);
    let mut hog = Command::new("taskset").args(["-c", "1", "sh", "-c", "while :; do :; done"]).spawn().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = Command::new("taskset")
        .args(["-c", "1", "nice", "-n", "19", env!("CARGO_BIN_EXE_respbench")])
        .args(["-p", &server.port_arg(), "--threads", "1", "-c", "200", "-P", "32", "--duration", "2s"])
        .args(["--ratio", "0:1", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let _ = hog.kill();
    let _ = hog.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["bottleneck"]["verdict"], "client-bound", "{}", doc["bottleneck"]);
    assert!(stdout(&out).contains("WARNING: the client set the pace"), "{}", stdout(&out));
}

#[test]
fn a_light_load_is_neither_bound() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_ok(&server, &["--rate", "1000", "--duration", "1500ms", "-c", "2", "--json", json.to_str().unwrap()]);
    let doc = read_json(&json);
    assert_eq!(doc["bottleneck"]["verdict"], "neither");
    let cpu = doc["server_cpu"]["main_thread"].as_f64().unwrap();
    assert!(cpu < 0.5, "server main thread {cpu}");
    let points = doc["time_series"].as_array().unwrap();
    assert!(points.iter().any(|p| p["server"]["cpu"]["total"].as_f64().is_some()));
}

/// Runs the capacity search and returns the rate it reports.
fn capacity(server: &Server, run: &[&str], slo: &str) -> f64 {
    let out = Command::new("taskset")
        .args(["-c", "1", env!("CARGO_BIN_EXE_respbench")])
        // Within 25 %: enough for what the test checks (half holds, 2.5 times misses), in half
        // the steps of a 4 % search (each two seconds, a miss tried twice).
        .args(["capacity", "-p", &server.port_arg(), "--slo", slo, "--start-rate", "16000", "--precision", "25"])
        .args(run)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text.lines().find(|l| l.starts_with("Capacity: ")).unwrap_or_else(|| panic!("{text}"));
    line["Capacity: ".len()..].split(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("{text}"))
}

/// Whether a fixed-rate run holds `percentile` <= `bound_us` and delivers 95 % of the rate. A
/// run during which the hypervisor held the machine's cores over 5 % of the time (its steal)
/// judges the machine, not the rate: it is run again, up to three times in all.
fn holds(server: &Server, run: &[&str], rate: f64, percentile: &str, bound_us: f64) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("step.json");
    let rate = format!("{rate:.0}");
    let port = server.port_arg();
    let mut args = vec!["-c", "1", env!("CARGO_BIN_EXE_respbench"), "-p", &port, "--rate", &rate];
    args.extend(["--json", json.to_str().unwrap()]);
    args.extend_from_slice(run);
    let ((), doc) = unstolen(&format!("a run at {rate}/s"), || {
        let out = Command::new("taskset").args(&args).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        ((), read_json(&json))
    });
    let latency = doc["totals"]["latency_us"][percentile].as_f64().unwrap();
    let achieved = doc["totals"]["ops_per_sec"].as_f64().unwrap();
    latency <= bound_us && achieved >= 0.95 * rate.parse::<f64>().unwrap()
}

#[test]
fn capacity_search_finds_a_rate_that_holds_by_hand() {
    // The search's precision is proven on a synthetic server in src/cli/capacity/search.rs (within
    // 5 % of the knee, flaky steps included). Against a real one, this machine's capacity moves
    // 10-15 % between consecutive two-second runs and the median latency at the knee swings
    // from 0.15 to 5 ms, so here the test checks what holds through that noise: the rate found
    // leaves room when run by hand (half of it holds), and a rate well past it does not.
    let server = Server::start_pinned("0", &[]);
    let run = ["--duration", "2s", "-c", "4", "-P", "16", "--threads", "1", "--ratio", "0:1", "--key-max", "999"];
    let found = capacity(&server, &run, "p50=5ms");
    assert!(found >= 16000.0, "capacity {found}");
    let holds_twice =
        |rate: f64| holds(&server, &run, rate, "p50_us", 5_000.0) || holds(&server, &run, rate, "p50_us", 5_000.0);
    assert!(holds_twice(found * 0.5), "half the capacity found ({found}/s) misses when run by hand");
    assert!(!holds_twice(found * 2.5), "2.5 times the capacity found ({found}/s) still holds when run by hand");
}

#[test]
fn capacity_usage_errors_are_one_line() {
    for (args, needle) in [
        (&["capacity", "--slo", "p99"][..], "'p99'"),
        (&["capacity", "--slo", "p99=1ms", "--rate", "5"][..], "--rate"),
        (&["capacity"][..], "--slo"),
        (&["--warmup", "1s", "-n", "allkeys"][..], "--warmup"),
        (&["--arrival", "poisson"][..], "--rate"),
        (&["--rate", "0"][..], "'0'"),
    ] {
        let out = respbench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let help = respbench().args(["capacity", "--help"]).output().unwrap();
    assert!(help.status.success());
    for flag in ["--slo", "--start-rate", "--max-rate", "--precision", "--duration"] {
        assert!(stdout(&help).contains(flag), "capacity --help lacks {flag}");
    }
}

#[test]
fn capacity_stops_at_its_ceiling_when_every_rate_holds() {
    let server = Server::start(&[]);
    let out = respbench()
        .args(["capacity", "-p", &server.port_arg(), "--slo", "p99.9=1s", "--start-rate", "500", "--max-rate", "1500"])
        .args(["--duration", "500ms", "-c", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // 500 holds, 1000 holds, then the ceiling 1500 holds: no rate above it is tried.
    assert!(text.contains("Capacity: 1500 requests per second hold p99.9<=1000 ms"), "{text}");
    assert_eq!(text.lines().filter(|l| l.ends_with("holds")).count(), 3, "{text}");
}
