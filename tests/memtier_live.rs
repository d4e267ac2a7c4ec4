//! What the memtier front-end shows while a run runs, against a real redis-server: memtier's
//! Prometheus exporter (`--prometheus-port`, served by respbench's metrics endpoint) scraped
//! by Debian's real `prometheus`, and `--realtime-latencies`' block per second.

mod common;

use std::time::Duration;

use common::prom::{Daemon, installed};
use common::*;
use serde_json::Value;

#[test]
fn prometheus_port_zero_prints_memtiers_line_and_prometheus_ends_with_the_json_totals() {
    let Some(prometheus) = installed("prometheus") else { return };
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("mb.json");
    let mut cmd = respbench();
    cmd.args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "-c", "2", "-t", "1", "-n", "3000"])
        .args(["--ratio=1:3", "--key-maximum=500", "--hide-histogram", "--prometheus-port", "0"])
        .args(["--prometheus-run-label=bench=a", "--prometheus-latency-buckets=0.0001,0.001,0.01,1"])
        .arg(format!("--json-out-file={}", json.display()))
        // respbench's own: the run keeps its final values until a scrape has read them.
        .arg("--metrics-linger=300s");
    let mut run = Watched::spawn(cmd);
    let line = run.stdout_line(|l| l.starts_with("Prometheus exporter listening on "));
    let target = line
        .strip_prefix("Prometheus exporter listening on http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("{line}"));
    let prom = Daemon::scraping(&prometheus, "memtier", &format!("127.0.0.1:{target}"));
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let totals = &doc["ALL STATS"]["Totals"];
    let count = totals["Count"].as_f64().unwrap();
    assert_eq!(count, 6000.0, "{totals}");
    let last = |metric: &str| -> Option<f64> {
        let query = format!("last_over_time({metric}{{job=\"memtier\",bench=\"a\"}}[1h])");
        let answer: Value = prom.query(&query);
        answer["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    };
    wait_for("Prometheus to hold the final operation count", Duration::from_secs(120), || {
        last("memtier_ops_total") == Some(count)
    });
    assert_eq!(last("memtier_latency_seconds_count"), Some(count));
    assert_eq!(last("memtier_errors_total"), Some(0.0));
    assert_eq!(last("memtier_run"), Some(1.0));
    let hits = last("memtier_hits_total").unwrap();
    let misses = last("memtier_misses_total").unwrap();
    assert_eq!(hits + misses, server.calls("get") as f64);
    assert_eq!(server.calls("set") + server.calls("get"), 6000);
}

#[test]
fn prometheus_options_are_checked_before_anything_connects() {
    for (flags, wanted) in [
        (vec!["--prometheus-port=70000"], "'70000' is not a port"),
        (vec!["--prometheus-port=0", "--prometheus-bind-addr=localhost"], "not a numeric IPv4 or IPv6 address"),
        (vec!["--prometheus-bind-addr=127.0.0.1"], "--prometheus-bind-addr needs --prometheus-port"),
        (vec!["--prometheus-port=0", "--prometheus-run-label=x"], "NAME=VALUE"),
        (vec!["--prometheus-port=0", "--prometheus-latency-buckets=0.1,0.01"], "must ascend"),
        (vec!["--prometheus-port=0", "--metrics-listen=127.0.0.1:0"], "cannot be used with"),
    ] {
        let out = respbench().args(["memtier", "-n", "1"]).args(&flags).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(wanted), "{flags:?}: {}", stderr(&out));
    }
    // respbench's own flags they become.
    for (flags, wanted) in [
        (vec!["--metrics-label", "command=x"], "a label the metrics carry already"),
        (vec!["--metrics-buckets", "0.1,x"], "'x' is not a bucket bound"),
    ] {
        let out = respbench().args(["-n", "1"]).args(&flags).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(wanted), "{flags:?}: {}", stderr(&out));
    }
    let labels: Vec<String> = (0..17).map(|i| format!("--prometheus-run-label=l{i}=v")).collect();
    let out = respbench().args(["memtier", "-n", "1", "--prometheus-port=0"]).args(&labels).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("at most 16"), "{}", stderr(&out));
}

#[test]
fn realtime_latencies_print_a_block_per_second() {
    let server = Server::start(&[]);
    let mut cmd = respbench();
    cmd.args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "-c", "2", "-t", "1", "--test-time=3"])
        .args(["--ratio=1:1", "--key-maximum=100", "--hide-histogram", "--realtime-latencies"])
        .arg("--print-percentiles=50,99,99.9,99.99");
    let mut run = Watched::spawn(cmd);
    // A block for each of the three seconds, as each ends.
    run.wait_lines(3, |l| l.contains("] throughput "));
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let blocks: Vec<Vec<&str>> = err
        .split_inclusive('\n')
        .filter(|l| l.starts_with("[RUN #1 ") && l.contains("s] "))
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .chunk_by(|_, b| !b.contains("] throughput "))
        .map(<[&str]>::to_vec)
        .collect();
    assert_eq!(blocks.len(), 3, "{err}");
    let mut seconds = Vec::new();
    for block in &blocks {
        // Every line of a block carries the tick's tag: the run, its share done, its second.
        let tag = &block[0][..=block[0].find(']').unwrap()];
        assert!(block.iter().all(|l| l.starts_with(tag)), "{tag}: {block:?}");
        let words: Vec<&str> = tag.trim_matches(['[', ']']).split_whitespace().collect();
        assert!(words[2].ends_with('%') && words[3].ends_with('s'), "{tag}");
        seconds.push(words[3].trim_end_matches('s').parse::<u64>().unwrap());
        assert!(block[0].contains(" ops/sec ") && block[0].contains("(avg: "), "{block:?}");
        assert!(block[0].contains("miss ") && block[0].ends_with("%)"), "{block:?}");
        // Three percentiles a line: two lines for this tick, two for the run so far.
        let rows = ["latency [inst    ]  p50 ", "latency [inst    ]  p99.99 ", "latency [overall ]  p50 "];
        for (line, row) in block[1..].iter().zip(rows) {
            assert!(line.contains(row), "{line}");
        }
        assert!(block[4].contains("latency [overall ]  p99.99 ") && block[4].ends_with(" ms"), "{block:?}");
        assert_eq!(block.len(), 5, "{block:?}");
    }
    assert!(seconds.windows(2).all(|w| w[0] < w[1]), "{seconds:?}");
    // The progress line is not printed as well.
    assert!(!err.contains(" ops, "), "{err}");
}

#[test]
fn command_reads_count_hits_and_misses_and_warn_over_the_threshold() {
    let server = Server::start(&[]);
    // Keys 1 to 10 exist; GETs draw from 1 to 100: about nine in ten miss.
    for k in 1..=10 {
        server.cli(&["SET", &format!("memtier-{k}"), "v"]);
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("mb.json");
    let memtier = |extra: &[&str]| {
        respbench()
            .args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "-c", "2", "-t", "1", "-n", "200"])
            .args(["--command=GET __key__", "--command=PING", "--key-minimum=1", "--key-maximum=100"])
            .args(["--hide-histogram", &format!("--json-out-file={}", json.display())])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = memtier(&["--miss-rate-threshold=50"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let all = read_json(&json)["ALL STATS"].clone();
    let (hits, misses) = (all["Gets"]["Hits/sec"].as_f64().unwrap(), all["Gets"]["Misses/sec"].as_f64().unwrap());
    assert!(hits > 0.0 && misses > hits, "{all}");
    assert_eq!(all["Totals"]["Misses/sec"].as_f64(), Some(misses));
    assert_eq!(all["Pings"]["Misses/sec"].as_f64(), Some(0.0));
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("WARNING: ")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].starts_with("WARNING: GET miss rate ") && warnings[0].contains("--miss-rate-threshold 50%"));
    // Under the threshold, or not tracked: no warning, and off leaves the hits out.
    let out = memtier(&["--miss-rate-threshold=100"]);
    assert!(out.status.success() && !stderr(&out).contains("WARNING"), "{}", stderr(&out));
    let out = memtier(&["--command-miss-tracking=off", "--miss-rate-threshold=0"]);
    assert!(out.status.success() && !stderr(&out).contains("WARNING"), "{}", stderr(&out));
    assert_eq!(read_json(&json)["ALL STATS"]["Gets"]["Misses/sec"].as_f64(), Some(0.0));
}

#[test]
fn commands_without_one_reply_each_are_refused_and_skipped_in_a_capture() {
    for command in ["SUBSCRIBE ch", "ssubscribe ch", "MONITOR", "SYNC", "PSYNC ? -1"] {
        let out = respbench().args(["memtier", "-n", "1", &format!("--command={command}")]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert!(stderr(&out).contains("cannot be benchmarked"), "{command}: {}", stderr(&out));
    }
    let out = respbench().args(["memtier", "-n", "1", "--run-count=4294967296"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("monitor.txt");
    std::fs::write(
        &capture,
        "OK\n1.0 [0 127.0.0.1:1] \"HELLO\" \"3\"\n1.1 [0 127.0.0.1:1] \"SUBSCRIBE\" \"ch\"\n\
         1.2 [0 127.0.0.1:1] \"SET\" \"k\" \"v\"\n1.3 [0 127.0.0.1:1] \"MONITOR\"\n1.4 [0 127.0.0.1:1] \"GET\" \"k\"\n",
    )
    .unwrap();
    let out = respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "-c", "1", "-t", "1", "-n", "20"])
        .args([&format!("--monitor-input={}", capture.display()), "--command=__monitor_line@__", "--hide-histogram"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("3 unreplayable line(s) skipped") && err.contains("Loaded 2 monitor commands"), "{err}");
    assert_eq!((server.calls("set"), server.calls("get")), (10, 10));
    assert_eq!(server.calls("subscribe") + server.calls("hello") + server.calls("monitor"), 0);
}

#[test]
fn read_preference_is_taken_where_respbench_honours_it_and_refused_in_one_line_elsewhere() {
    let server = Server::start(&[]);
    let port = server.port_arg();
    let memtier = |extra: &[&str]| {
        respbench()
            .args(["memtier", "-s", "127.0.0.1", "-p", &port, "-c", "1", "-t", "1", "-n", "10", "--hide-histogram"])
            .args(extra)
            .output()
            .unwrap()
    };
    for ok in [
        &["--read-preference=primary"][..],
        &["--read-preference=secondaryPreferred", "--read-server=127.0.0.1:6380"],
        &["--read-preference=secondary", "--read-preference-fallback=primary"],
        &["--command=GET __key__", "--command-is-read"],
    ] {
        let out = memtier(ok);
        assert!(out.status.success(), "{ok:?}: {}", stderr(&out));
    }
    for (refused, wanted) in [
        (&["--read-preference=nearest"][..], "does not choose replicas by their latency"),
        (&["--read-preference=secondary"], "give --read-preference-fallback=primary"),
        (&["--read-preference=any"], "'any' (primary, secondary"),
        (&["--read-preference-fallback=later"], "'later' (error, queue or primary)"),
        (&["--read-server=nohost"], "'nohost' is not HOST:PORT"),
        (&["--command=SET __key__ x", "--command-is-read"], "only the reads it knows"),
        (&["--command-is-read"], "none was given"),
    ] {
        let out = memtier(refused);
        assert_eq!(out.status.code(), Some(2), "{refused:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(wanted) && err.lines().count() == 1, "{refused:?}: {err}");
    }
    assert!(server.calls("get") >= 10);
}
