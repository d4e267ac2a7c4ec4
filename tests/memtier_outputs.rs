//! memtier_benchmark's outputs from respbench's memtier front-end, compared with what memtier
//! 2.3 wrote for the same command lines (tests/fixtures/memtier-2.3/README.md): key sets, value
//! types and layouts, not numbers.

mod common;
mod memtier_shape;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{Server, read_json, respbench, stderr, stdout};
use memtier_shape::{assert_same_as_fixture, shape};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memtier-2.3").join(name)
}

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// Runs the memtier front-end in `dir` (relative file names land there).
fn memtier(server: &Server, dir: &Path, args: &[&str]) -> std::process::Output {
    let out = respbench()
        .current_dir(dir)
        .args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg()])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "memtier {args:?}: {}", stderr(&out));
    out
}

fn assert_same_shape(ours: &Path, theirs: &str) {
    assert_same_as_fixture(&read_json(ours), theirs);
}

/// A text with its figures masked and runs of spaces folded: its layout.
fn layout(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut masked = String::new();
        let mut in_number = false;
        for c in line.chars() {
            let numeric = c.is_ascii_digit() || (in_number && c == '.');
            if numeric {
                if !in_number {
                    masked.push('N');
                }
            } else {
                masked.push(c);
            }
            in_number = numeric;
        }
        // memtier's sizes change unit with the figure (0.00KB, 7.80MB).
        let masked = masked.replace("NKB", "NB").replace("NMB", "NB").replace("NGB", "NB");
        lines.push(masked.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" "));
    }
    lines
}

/// The table part of a report (everything before the latency distribution) has memtier's
/// layout, and column widths: each line as long as memtier's.
fn assert_same_tables(ours: &str, theirs: &str) {
    let cut = |t: &str| t.split("\n\nRequest Latency Distribution").next().unwrap().to_string();
    let (ours, theirs) = (cut(ours), cut(theirs));
    assert_eq!(layout(&ours), layout(&theirs), "ours:\n{ours}\nmemtier:\n{theirs}");
    for (a, b) in ours.lines().zip(theirs.lines()) {
        if a.starts_with('=') || a.starts_with('-') || a.starts_with("Type") {
            assert_eq!(a, b);
        }
    }
}

/// The distribution: the same header, one `NAME msec percent` line per step, `---` between.
fn assert_distribution(ours: &str, names: &[&str]) {
    let (_, dist) = ours.split_once("\n\nRequest Latency Distribution\n").expect("a distribution");
    let mut lines = dist.lines();
    assert_eq!(lines.next(), Some("Type     <= msec         Percent"));
    assert_eq!(lines.next(), Some("-".repeat(72).as_str()));
    let mut seen = Vec::new();
    for line in lines {
        if line == "---" {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.len(), 3, "{line}");
        assert_eq!(format!("{:<6} {:>8} {:>12}", words[0], words[1], words[2]), line);
        assert!(words[1].parse::<f64>().is_ok() && words[2].parse::<f64>().is_ok(), "{line}");
        if seen.last() != Some(&words[0]) {
            seen.push(words[0]);
        }
    }
    assert_eq!(seen, names);
}

#[test]
fn basic_run_json_text_and_progress_lines_are_memtiers() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = memtier(
        &server,
        dir.path(),
        &[
            "-c",
            "5",
            "-t",
            "2",
            "-n",
            "2000",
            "--ratio=1:4",
            "--key-maximum=10000",
            "-d",
            "100",
            "--json-out-file=basic.json",
        ],
    );
    assert_same_shape(&dir.path().join("basic.json"), "basic.json");
    let text = stdout(&out);
    assert_same_tables(&text, &fixture_text("basic.stdout.txt"));
    assert_distribution(&text, &["SET", "GET", "WAIT"]);
    assert!(text.ends_with("WAIT      0.000      100.000\n"), "{text}");
    // stderr: memtier's lines in memtier's order, the progress line rewritten with \r.
    let err = stderr(&out);
    let expected = [
        "Json file basic.json created...",
        "Writing results to stdout",
        "[RUN #1] Preparing benchmark client...",
        "[RUN #1] Launching threads now...",
        "[RUN #1 100%,",
        "Saving JSON output file: basic.json",
        "Json file closed.",
    ];
    let mut at = 0;
    for line in expected {
        let found = err[at..].find(line).unwrap_or_else(|| panic!("{line:?} missing after byte {at}:\n{err}"));
        at += found + line.len();
    }
    let last = err.split('\r').rev().nth(1).unwrap();
    let progress = last.rsplit('\n').next().unwrap();
    assert_eq!(
        layout(progress),
        layout(fixture_text("basic.stderr.txt").split('\r').next().unwrap().lines().last().unwrap())
    );
    assert!(err.ends_with("msec latency\r\n\nSaving JSON output file: basic.json\nJson file closed.\n"), "{err:?}");
}

#[test]
fn run_count_with_print_all_runs_prints_and_writes_every_run() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = memtier(
        &server,
        dir.path(),
        &[
            "-c",
            "5",
            "-t",
            "1",
            "-n",
            "500",
            "--ratio=1:1",
            "-x",
            "2",
            "--print-all-runs",
            "--json-out-file=runs.json",
            "--hide-histogram",
        ],
    );
    assert_same_shape(&dir.path().join("runs.json"), "runs.json");
    let text = stdout(&out);
    assert_same_tables(&text, &fixture_text("runs.stdout.txt"));
    assert!(!text.contains("Request Latency Distribution"));
    let doc = read_json(&dir.path().join("runs.json"));
    assert_eq!(doc["RUN #1 RESULTS"]["Totals"]["Count"], 2500);
    assert_eq!(doc["RUN #2 RESULTS"]["Totals"]["Count"], 2500);
    assert_eq!(doc["AGGREGATED AVERAGE RESULTS (2 runs)"]["Totals"]["Count"], 5000);
    assert_eq!(doc["configuration"]["print-all-runs"], "true");
    // The runs' byte counts add up, and each reply's latency is in its run's sum.
    let totals = &doc["RUN #1 RESULTS"]["Totals"];
    let series = totals["Time-Serie"].as_object().unwrap();
    assert_eq!(series.values().map(|s| s["Count"].as_u64().unwrap()).sum::<u64>(), 2500);
    assert!(series.values().map(|s| s["Bytes TX"].as_u64().unwrap()).sum::<u64>() > 2500 * 20);
}

#[test]
fn command_stats_breakdown_by_line_is_memtiers() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = memtier(
        &server,
        dir.path(),
        &[
            "-c",
            "2",
            "-t",
            "1",
            "-n",
            "300",
            "--command=SET __key__ __data__",
            "--command=GET __key__",
            "--command-stats-breakdown=line",
            "--json-out-file=commands-line.json",
            "--hide-histogram",
        ],
    );
    assert_same_shape(&dir.path().join("commands-line.json"), "commands-line.json");
    assert_same_tables(&stdout(&out), &fixture_text("commands-line.stdout.txt"));
    // By command name (the default), two SET lines make one row; by line, two.
    let by = |breakdown: &str| {
        let out = memtier(
            &server,
            dir.path(),
            &[
                "-c",
                "1",
                "-t",
                "1",
                "-n",
                "100",
                "--command=SET a __data__",
                "--command=SET b __data__",
                "--command=GET a",
                breakdown,
                "--json-out-file=by.json",
            ],
        );
        let doc = read_json(&dir.path().join("by.json"));
        (stdout(&out), doc["ALL STATS"]["Sets"]["Count"].as_u64().unwrap())
    };
    let (text, sets) = by("--command-stats-breakdown=command");
    assert_eq!(text.lines().filter(|l| l.starts_with("Sets ")).count(), 1, "{text}");
    assert_distribution(&text, &["SET", "GET"]);
    assert!(sets > 0);
    let (text, _) = by("--command-stats-breakdown=line");
    assert_eq!(text.lines().filter(|l| l.starts_with("Sets ")).count(), 2, "{text}");
    assert_distribution(&text, &["SET", "GET"]);
}

#[test]
fn hdr_file_prefix_writes_memtiers_percentile_tables_and_logs() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = memtier(
        &server,
        dir.path(),
        &["-c", "2", "-t", "1", "-n", "200", "--ratio=1:1", "--hdr-file-prefix=hdr", "--hide-histogram"],
    );
    let err = stderr(&out);
    for stem in ["hdr_FULL_RUN_1", "hdr_GET_command_run_1", "hdr_SET_command_run_1"] {
        assert!(err.contains(&format!("HDR latency histogram results to {stem}.txt...")), "{err}");
        assert!(err.contains(&format!("in HistogramLogProcessor format to {stem}.hgrm...")), "{err}");
        // The percentile table: memtier's header, lines and footer.
        let ours = std::fs::read_to_string(dir.path().join(format!("{stem}.txt"))).unwrap();
        let theirs = fixture_text("hdr_FULL_RUN_1.txt");
        let (ours_l, theirs_l) = (layout(&ours), layout(&theirs));
        assert_eq!(ours_l[..2], theirs_l[..2]);
        assert_eq!(ours_l[ours_l.len() - 4..], theirs_l[theirs_l.len() - 4..], "{ours}");
        for line in &ours_l[2..ours_l.len() - 3] {
            assert!(line == "N N N N" || line == "N N N inf", "{line}");
        }
        let last = ours.lines().rev().nth(3).unwrap();
        assert!(last.contains(" 1.000000 ") && last.ends_with("inf"), "{last}");
        // The log: memtier's header lines and one interval with the whole run's histogram.
        let log = std::fs::read_to_string(dir.path().join(format!("{stem}.hgrm"))).unwrap();
        let fixture_log = fixture_text("hdr_FULL_RUN_1.hgrm");
        let (ours_h, theirs_h) = (layout(&log), layout(&fixture_log));
        assert_eq!(ours_h[1], theirs_h[1]);
        assert_eq!(ours_h[3], theirs_h[3]);
        // The start time in seconds, then as a date (its day and month change with the clock).
        assert!(ours_h[2].starts_with("#[StartTime: N (seconds since epoch), ") && ours_h[2].ends_with(" GMT N]"));
        let interval: Vec<&str> = log.lines().last().unwrap().split(',').collect();
        assert_eq!(interval.len(), 4);
        assert!(interval[3].starts_with("HISTFAAAA"), "{log}");
    }
    let full = std::fs::read_to_string(dir.path().join("hdr_FULL_RUN_1.txt")).unwrap();
    assert!(full.contains("Total count    =          400]"), "{full}");
}

#[test]
fn a_staircase_writes_memtiers_active_clients_and_configuration() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = ["-t", "1", "-c", "3", "--clients-start=1", "--clients-step=1", "--step-duration=1", "--test-time=4"];
    let out =
        memtier(&server, dir.path(), &[&args[..], &["--json-out-file=staircase.json", "--hide-histogram"]].concat());
    assert_same_shape(&dir.path().join("staircase.json"), "staircase.json");
    assert_same_tables(&stdout(&out), &fixture_text("staircase.stdout.txt"));
    let doc = read_json(&dir.path().join("staircase.json"));
    let config = &doc["configuration"];
    assert_eq!(
        (&config["clients_start"], &config["clients_step"], &config["step_duration"]),
        (&1.into(), &1.into(), &1.into())
    );
    // One more client per second, up to -c, as memtier's own file shows.
    let active = doc["ALL STATS"]["Active Clients"].as_object().unwrap();
    let per_thread: Vec<u64> = active.values().map(|a| a["Clients per thread"].as_u64().unwrap()).collect();
    assert_eq!(per_thread, [1, 2, 3, 3]);
}

#[test]
fn multi_key_get_rows_are_memtiers_gets_with_a_shorter_last_mget() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // Ten cycles of 1:10 with 3 keys: a SET, then MGETs of 3, 3, 3 and 1 keys (memtier's
    // create_mget_request), each MGET one request of the Gets row.
    let args = ["-c", "1", "-t", "1", "-n", "50", "--ratio=1:10", "--multi-key-get=3", "--json-out-file=m.json"];
    let out = memtier(&server, dir.path(), &args);
    assert_eq!((server.calls("set"), server.calls("mget"), server.calls("get")), (10, 40, 0));
    // Every key of the GET ratio read once: 100 keys over the 40 MGETs.
    let keys = server.info_u64("stats", "keyspace_hits") + server.info_u64("stats", "keyspace_misses");
    assert_eq!(keys, 100);
    let doc = read_json(&dir.path().join("m.json"));
    let stats = &doc["ALL STATS"];
    assert_eq!((stats["Sets"]["Count"].as_u64(), stats["Gets"]["Count"].as_u64()), (Some(10), Some(40)));
    assert!(stats.get("Mgets").is_none() && stats["GET"].as_array().is_some_and(|a| a.len() > 1), "{stats}");
    assert_eq!(doc["configuration"]["multi_key_get"], 3);
    let text = stdout(&out);
    let gets = text.lines().find(|l| l.starts_with("Gets ")).unwrap();
    assert!(!gets.contains("---"), "{text}");
    assert_distribution(&text, &["SET", "GET", "WAIT"]);
}

#[test]
fn scan_incremental_iteration_rows_are_named_as_memtier_names_them() {
    let server = Server::start(&[]);
    for k in 0..100 {
        server.cli(&["SET", &format!("k{k}"), "v"]);
    }
    let dir = tempfile::tempdir().unwrap();
    let args = ["-c", "1", "-t", "1", "-n", "30", "--command=SCAN 0 COUNT 10", "--scan-incremental-iteration"];
    let more = ["--scan-incremental-max-iterations=2", "--json-out-file=s.json"];
    let out = memtier(&server, dir.path(), &[&args[..], &more[..]].concat());
    assert_eq!(server.calls("scan"), 30);
    // memtier names the rows after its commands' display names, "SCAN 0" and "SCAN <cursor>":
    // blocks "Scan 0s" and "Scan <cursor>s", distributions "SCAN 0" and "SCAN <cursor>".
    let stats = &read_json(&dir.path().join("s.json"))["ALL STATS"];
    assert_eq!((stats["Scan 0s"]["Count"].as_u64(), stats["Scan <cursor>s"]["Count"].as_u64()), (Some(10), Some(20)));
    assert!(stats["SCAN 0"].is_array() && stats["SCAN <cursor>"].is_array(), "{stats}");
    let text = stdout(&out);
    // The Type column is as wide as the longest name plus one, as memtier's.
    let header = text.lines().find(|l| l.starts_with("Type")).unwrap();
    assert!(header.starts_with(&format!("{:<14} {:>12} ", "Type", "Ops/sec")), "{header:?}");
    for row in ["Scan 0s ", "Scan <cursor>s ", "Totals "] {
        assert!(text.lines().any(|l| l.starts_with(row)), "{row}: {text}");
    }
    let (_, dist) = text.split_once("Request Latency Distribution").unwrap();
    assert!(dist.contains("\nSCAN 0 ") && dist.contains("\nSCAN <cursor> "), "{dist}");
}

#[test]
fn client_stats_writes_memtiers_per_client_csv_files() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = ["-c", "2", "-t", "2", "-n", "200", "--ratio=1:1", "-x", "2", "--client-stats=cs", "--hide-histogram"];
    memtier(&server, dir.path(), &args);
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let expected: Vec<String> =
        ["1-0-0", "1-0-1", "1-1-0", "1-1-1", "2-0-0", "2-0-1", "2-1-0", "2-1-1"].map(|s| format!("cs-{s}.csv")).into();
    assert_eq!(names, expected);
    let theirs = fixture_text("clientstats-1-0-0.csv");
    let sections = |t: &str| -> Vec<String> {
        t.lines().filter(|l| !l.starts_with(|c: char| c.is_ascii_digit() || c == ' ')).map(String::from).collect()
    };
    let mut requests = 0;
    for name in &names {
        let ours = std::fs::read_to_string(dir.path().join(name)).unwrap();
        // memtier's header line and columns, then its sections in its order.
        assert_eq!(ours.lines().take(2).collect::<Vec<_>>(), theirs.lines().take(2).collect::<Vec<_>>());
        assert_eq!(sections(&ours), sections(&theirs), "{name}:\n{ours}");
        let columns = theirs.lines().nth(1).unwrap().split(',').count();
        for row in ours.lines().skip(2).take_while(|l| !l.is_empty()) {
            let cells: Vec<&str> = row.split(',').collect();
            assert_eq!(cells.len(), columns, "{row}");
            // memtier's "%u.%06u" seconds of average latency.
            assert!(cells[2].len() >= 8 && cells[2].as_bytes()[cells[2].len() - 7] == b'.', "{row}");
            requests += cells[1].parse::<u64>().unwrap() + cells[6].parse::<u64>().unwrap();
        }
        for line in ours.lines().filter(|l| l.starts_with(' ')) {
            let (msec, percent) = line.split_once(',').unwrap();
            assert!(msec.len() == 8 && msec.trim().parse::<f64>().is_ok() && percent.parse::<f64>().is_ok(), "{line}");
        }
    }
    // Every request of both runs is in one client's rows, as the server counted them.
    assert_eq!(requests, server.calls("set") + server.calls("get"));
    assert_eq!(requests, 2 * 4 * 200);
}

#[test]
fn the_configuration_block_says_what_the_command_line_set() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "40",
        "--ratio=1:4",
        "--multi-key-get=2",
        "--wait-ratio=4:1",
        "--num-slaves=0-0",
        "--wait-timeout=1-3",
        "--reconnect-interval=15",
        "--connection-timeout=3",
        "--thread-conn-start-min-jitter-micros=10",
        "--thread-conn-start-max-jitter-micros=50",
        "--key-pattern=S:R",
        "--data-size-range=10-20",
        "--data-size-pattern=S",
        "--rate-limiting=2000",
        "-D",
        "-4",
        "--client-stats=cs",
        "--json-out-file=c.json",
    ];
    memtier(&server, dir.path(), &args);
    let doc = read_json(&dir.path().join("c.json"));
    let c = &doc["configuration"];
    let expected = serde_json::json!({
        "ratio": "1:4", "multi_key_get": 2, "wait-ratio": "4:1", "num-slaves": "0:0", "wait-timeout": "1-3",
        "reconnect_interval": 15, "connection_timeout": 3, "thread_conn_start_min_jitter_micros": 10,
        "thread_conn_start_max_jitter_micros": 50, "key_pattern": "S:R", "data_size_range": "10:20",
        "data_size_pattern": "S", "rate_limit": 2000, "debug": 1, "address family": "AF_INET",
        "client_stats": "cs", "data_offset": 0, "no-expiry": "false", "uri": "", "data_import": null,
    });
    for (key, value) in expected.as_object().unwrap() {
        assert_eq!(&c[key], value, "{key}");
    }
    // The types stay memtier's (the key set is checked against memtier's files elsewhere).
    assert_same_shape_of(c, &read_json(&fixture("basic.json"))["configuration"], &["client_stats"]);
}

/// The same keys with the same types, but for `differ`.
fn assert_same_shape_of(ours: &Value, theirs: &Value, differ: &[&str]) {
    let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
    shape(ours, String::new(), &mut a);
    shape(theirs, String::new(), &mut b);
    for k in differ {
        a.remove(&format!("/{k}"));
        b.remove(&format!("/{k}"));
    }
    assert_eq!(a, b);
}
