//! Every kind of role's figures in every output, against a real redis-server and valkey-server: the CSV's role
//! table, the Markdown and HTML tables, the metrics endpoint's counters and latencies equal to
//! the result's, StatsD's gauges, a run killed outright whose journal `recover` brings back with
//! the role's figures, and two shards of each kind of role merged into the one run's sums.

mod common;

use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::Value;

on_each_server!(
    the_csv_has_a_row_per_role_with_its_figures,
    the_metrics_end_with_the_results_role_figures_and_statsd_hears_them,
    a_killed_role_run_is_recovered_with_its_role_figures,
    stream_queue_and_tracking_roles_have_their_figures_in_csv_markdown_and_html,
    the_metrics_and_statsd_end_with_every_kinds_figures,
    two_stream_role_shards_merge_into_their_sums,
    two_queue_role_shards_merge_into_their_sums,
    two_tracking_role_shards_merge_into_their_sums,
    a_journals_run_end_brings_back_a_stream_roles_figures_and_histogram,
    two_pubsub_roles_have_their_own_rows_in_csv_metrics_and_statsd,
    a_killed_run_of_two_pubsub_roles_is_recovered_with_each_ones_figures,
);

/// Two pub/sub roles of one run, at their own rates.
const TWO: [&str; 4] =
    ["--role", "a:pubsub:channels=2,subscribers=2,rate=200", "--role", "b:pubsub:channels=3,rate=100"];

const ROLE: &str = "news:pubsub:channels=4,subscribers=2,rate=400";

fn messages(doc: &Value) -> &Value {
    &doc["roles"][0]["messages"]
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn the_csv_has_a_row_per_role_with_its_figures(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let (json_arg, csv_arg) = (json.to_str().unwrap(), csv.to_str().unwrap());
    run_ok(&server, &["--role", ROLE, "-n", "400", "--json", json_arg, "--csv", csv_arg]);
    let doc = read_json(&json);
    let m = messages(&doc);
    let text = std::fs::read_to_string(&csv).unwrap();
    let (_, roles) = text.split_once("\n\n").expect("a role table after the summary");
    let mut lines = roles.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {text}"))];
    assert_eq!((row[0], row[1]), ("news", "pubsub"));
    for key in ["published", "delivered", "lost", "duplicated", "out_of_order"] {
        assert_eq!(cell(key), count(m, key).to_string(), "{key}: {text}");
    }
    assert_eq!(cell("delivered"), "800");
    let p99 = m["delivery_latency"]["p99_us"].as_f64().unwrap() / 1000.0;
    assert_eq!(cell("delivery_p99_ms"), format!("{p99:.3}"));
    assert!(header.contains(&"delivery_p50_ms") && header.contains(&"delivery_p999_ms"), "{text}");
}

fn scrape(addr: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    reply.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// The value of the sample that starts with `prefix` (its name and labels as written).
fn sample(text: &str, prefix: &str) -> f64 {
    let line = text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("{prefix} in {text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

fn the_metrics_end_with_the_results_role_figures_and_statsd_hears_them(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let statsd = UdpSocket::bind("127.0.0.1:0").unwrap();
    statsd.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let statsd_port = statsd.local_addr().unwrap().port().to_string();
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--role", ROLE, "--duration", "2s", "--progress", "-q"])
        .args(["--json", json.to_str().unwrap(), "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"])
        .args(["--statsd-host", "127.0.0.1", "--statsd-port", &statsd_port, "--statsd-run-label", "t"]);
    let end = scraped_at_the_end(cmd);
    let doc = read_json(&json);
    let m = messages(&doc);
    for figure in ["published", "delivered", "duplicated", "out_of_order", "lost", "expected_deliveries"] {
        let at = format!("respbench_role_messages_total{{role=\"news\",kind=\"pubsub\",figure=\"{figure}\"}}");
        assert_eq!(sample(&end, &at), count(m, figure) as f64, "{figure}: {end}");
    }
    let at = "respbench_role_latency_seconds_count{role=\"news\",latency=\"delivery\"}";
    assert_eq!(sample(&end, at), count(m, "delivered") as f64, "{end}");
    // StatsD: the role's gauges beside memtier's.
    let mut seen = String::new();
    let mut buf = [0u8; 2048];
    while !(seen.contains(".role.news.delivered:") && seen.contains(".role.news.lost:")) {
        let n = statsd.recv(&mut buf).expect("StatsD packets");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        seen.push('\n');
    }
    assert!(seen.contains(".role.news.delivery_p99_ms:"), "{seen}");
    assert!(seen.contains(&format!(".role.news.lost:{}|g", count(m, "lost"))), "{seen}");
}

/// Runs `cmd` (with `--metrics-listen`) to its successful end; the metrics its last scrape read.
fn scraped_at_the_end(cmd: std::process::Command) -> String {
    let mut run = Watched::spawn(cmd);
    run.wait_lines(1, |l| l.contains("metrics on http://"));
    let addr = common_metrics_addr(&run);
    run.wait_lines(1, |l| l.contains("metrics final"));
    let end = scrape(&addr);
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    end
}

/// The address a run printed for its metrics.
fn common_metrics_addr(run: &Watched) -> String {
    run.lines()
        .iter()
        .find_map(|l| l.split("http://").nth(1))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap()
        .to_string()
}

/// The result `respbench recover` makes of `journal` (written beside it).
fn recovered(journal: &Path) -> Value {
    let json = journal.with_extension("recovered.json");
    let out =
        respbench().args(["recover", journal.to_str().unwrap(), "--json", json.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    read_json(&json)
}

fn journal_intervals(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
    whole.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|l| l["line"] == "interval").collect()
}

fn a_killed_role_run_is_recovered_with_its_role_figures(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.journal");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--role", ROLE, "--duration", "60s", "--json", json.to_str().unwrap()]);
    let run = Watched::spawn(cmd);
    wait_for("3 journaled intervals", Duration::from_secs(60), || journal_intervals(&journal).len() >= 3);
    run.signal(libc::SIGKILL);
    let _ = run.finish();
    let journaled = journal_intervals(&journal);
    let delivered: u64 = journaled.iter().map(|l| l["roles"][0]["counts"]["delivered"].as_u64().unwrap()).sum();
    let published: u64 = journaled.iter().map(|l| l["ops"][0]["count"].as_u64().unwrap()).sum();
    assert!(delivered > 0, "{journaled:?}");
    let doc = recovered(&journal);
    let m = messages(&doc);
    assert_eq!(count(m, "delivered"), delivered, "{m}");
    assert_eq!(count(m, "published"), published, "{m}");
    assert_eq!(count(m, "expected_deliveries"), 2 * published, "{m}");
    assert!(m["delivery_latency"]["p99_us"].as_f64().unwrap() > 0.0, "{m}");
    assert_eq!(doc["roles"][0]["over_time"].as_array().unwrap().len(), journaled.len());
}

/// A role of each other kind: its name, `--role` argument, requests, and the object its figures
/// are in.
const KINDS: [(&str, &str, &str, &str); 3] = [
    ("orders", "orders:stream:consumers=3,block=100", "300", "stream"),
    ("jobs", "jobs:queue:workers=2,command=bzpopmin", "300", "queue"),
    ("kv", "kv:tracking:readers=2,keys=10,rate=200", "200", "tracking"),
];

/// Each kind's figures the outputs must carry: counts by the JSON's name, and the latency
/// percentile `NAME_p99_ms` with the JSON object holding its summary.
fn kind_figures(kind: &str) -> (&'static [&'static str], &'static str, &'static str) {
    match kind {
        "stream" => (&["produced", "consumed", "acked", "unconsumed", "pending"], "end_to_end", "end_to_end_latency"),
        // Closed loop, the items are mostly there before the pop: its wait may well be 0.
        "queue" => (&["produced", "consumed", "unconsumed", "waited", "empty_pops"], "service", "service"),
        _ => (&["reads", "local_hits", "invalidations", "stale_reads"], "invalidation_delay", "invalidation_delay"),
    }
}

fn stream_queue_and_tracking_roles_have_their_figures_in_csv_markdown_and_html(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    for (name, role, n, kind) in KINDS {
        let path = |ext: &str| dir.path().join(format!("{name}.{ext}"));
        let (json, csv, md, html) = (path("json"), path("csv"), path("md"), path("html"));
        let mut args = vec!["--role", role, "-n", n];
        for (flag, p) in [("--json", &json), ("--csv", &csv), ("--markdown", &md), ("--html", &html)] {
            args.extend([flag, p.to_str().unwrap()]);
        }
        run_ok(&server, &args);
        let doc = read_json(&json);
        let figures = &doc["roles"][0][kind];
        let (counts, latency, summary) = kind_figures(kind);
        let text = std::fs::read_to_string(&csv).unwrap();
        let (_, roles) = text.split_once("\n\n").expect("a role table after the summary");
        let mut lines = roles.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        let cell = |c: &str| row[header.iter().position(|h| *h == c).unwrap_or_else(|| panic!("{c}: {text}"))];
        assert_eq!((row[0], row[1]), (name, kind), "{text}");
        for key in counts {
            assert_eq!(cell(key), count(figures, key).to_string(), "{kind} {key}: {text}");
        }
        let p99 = figures[summary]["p99_us"].as_f64().unwrap() / 1000.0;
        assert!(p99 > 0.0, "{figures}");
        assert_eq!(cell(&format!("{latency}_p99_ms")), format!("{p99:.3}"), "{text}");
        // The tables read the same list: a heading per figure, a row per role.
        let markdown = std::fs::read_to_string(&md).unwrap();
        let heading = latency.replace('_', " ");
        let capitalised = heading[..1].to_uppercase() + &heading[1..];
        assert!(markdown.contains(&format!("| {capitalised} p99 ms |")), "{markdown}");
        assert!(markdown.contains(&format!("| {name} | {} |", count(figures, counts[0]))), "{markdown}");
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains(&format!("<th>{heading} p99 ms</th>")), "{kind}");
        assert!(page.contains(&format!("<td>{name}</td><td>{}</td>", count(figures, counts[0]))), "{kind}");
        // The result keeps the latency's histogram, holding every latency measured.
        let kept = doc["histograms"]["roles"][name][latency].as_str().expect("the role's histogram");
        assert!(!histogram(kept).is_empty(), "{kind}");
    }
}

fn histogram(text: &str) -> hdrhistogram::Histogram<u64> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
    hdrhistogram::serialization::Deserializer::new().deserialize(&mut std::io::Cursor::new(bytes)).unwrap()
}

fn the_metrics_and_statsd_end_with_every_kinds_figures(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    for (name, role, n, kind) in KINDS {
        let json = dir.path().join(format!("{name}.json"));
        let statsd = UdpSocket::bind("127.0.0.1:0").unwrap();
        statsd.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let statsd_port = statsd.local_addr().unwrap().port().to_string();
        let mut cmd = respbench();
        cmd.args(["-p", &server.port_arg(), "--role", role, "-n", n, "-q", "--json", json.to_str().unwrap()])
            .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"])
            .args(["--statsd-host", "127.0.0.1", "--statsd-port", &statsd_port, "--statsd-run-label", "t"]);
        let end = scraped_at_the_end(cmd);
        let doc = read_json(&json);
        let figures = &doc["roles"][0][kind];
        let (counts, latency, _) = kind_figures(kind);
        for figure in counts.iter().filter(|f| **f != "pending") {
            let at = format!("respbench_role_messages_total{{role=\"{name}\",kind=\"{kind}\",figure=\"{figure}\"}}");
            assert_eq!(sample(&end, &at), count(figures, figure) as f64, "{figure}: {end}");
        }
        let measured = match kind {
            "tracking" => count(figures, "invalidations_timed"),
            _ => count(figures, "consumed"),
        };
        let at = format!("respbench_role_latency_seconds_count{{role=\"{name}\",latency=\"{latency}\"}}");
        assert_eq!(sample(&end, &at), measured as f64, "{end}");
        if kind == "stream" {
            let at = format!("respbench_role_figure{{role=\"{name}\",kind=\"stream\",figure=\"pending\"}}");
            assert_eq!(sample(&end, &at), count(figures, "pending") as f64, "{end}");
        }
        // StatsD: every figure at the run's end, as a gauge.
        let (mut seen, mut buf) = (String::new(), [0u8; 2048]);
        let last = format!(".role.{name}.{latency}_p999_ms:");
        while !seen.contains(&last) {
            let got = statsd.recv(&mut buf).expect("StatsD packets");
            seen.push_str(&String::from_utf8_lossy(&buf[..got]));
            seen.push('\n');
        }
        for figure in counts {
            assert!(seen.contains(&format!(".role.{name}.{figure}:{}|g", count(figures, figure))), "{figure}: {seen}");
        }
    }
}

/// Runs `role` twice against a `kind` server as two shards of one run, merges them, and returns
/// the shards' results and the merged one.
fn merged_shards(kind: Kind, role: &str, n: &str) -> (Value, Value, Value) {
    let server = Server::start_as(kind, &[]);
    let m = common::roles::merged_shards(&server, &["--role", role, "-n", n]);
    (m.a, m.b, m.merged)
}

/// The merged role's latency `what` (its summary in `summary`) is the one of the shards'
/// histograms added up, holding `n` latencies.
fn assert_latency_of_the_sum(docs: (&Value, &Value, &Value), (role, kind): (&str, &str), what: &str, n: u64) {
    let (a, b, m) = docs;
    let kept = |doc: &Value| histogram(doc["histograms"]["roles"][role][what].as_str().expect("a histogram"));
    let mut sum = kept(a);
    sum.add(kept(b)).unwrap();
    let merged = kept(m);
    assert_eq!((merged.len(), sum.len()), (n, n));
    let summary = match (kind, what) {
        ("stream", _) | ("queue", "end_to_end") => "end_to_end_latency",
        (_, what) => what,
    };
    let l = &m["roles"][0][kind][summary];
    for (q, key) in [(0.5, "p50_us"), (0.99, "p99_us"), (0.999, "p99.9_us")] {
        assert_eq!(l[key].as_f64().unwrap(), sum.value_at_quantile(q) as f64 / 1000.0, "{what} {key}: {l}");
    }
}

fn two_stream_role_shards_merge_into_their_sums(kind: Kind) {
    let (a, b, m) = merged_shards(kind, "orders:stream:consumers=2,block=100", "300");
    let (sa, sb, sm) = (&a["roles"][0]["stream"], &b["roles"][0]["stream"], &m["roles"][0]["stream"]);
    for key in ["produced", "consumed", "acked", "unconsumed", "pending"] {
        assert_eq!(count(sm, key), count(sa, key) + count(sb, key), "{key}: {sm}");
    }
    assert_eq!(count(sm, "consumed"), 600, "{sm}");
    assert_eq!(count(&m["roles"][0]["totals"], "count"), 600);
    assert_latency_of_the_sum((&a, &b, &m), ("orders", "stream"), "end_to_end", 600);
}

fn two_queue_role_shards_merge_into_their_sums(kind: Kind) {
    let (a, b, m) = merged_shards(kind, "jobs:queue:workers=2,command=bzpopmin", "300");
    let (qa, qb, qm) = (&a["roles"][0]["queue"], &b["roles"][0]["queue"], &m["roles"][0]["queue"]);
    for key in ["produced", "consumed", "unconsumed", "waited", "empty_pops"] {
        assert_eq!(count(qm, key), count(qa, key) + count(qb, key), "{key}: {qm}");
    }
    assert_eq!(count(qm, "consumed"), 600, "{qm}");
    for what in ["wait", "service", "end_to_end"] {
        assert_latency_of_the_sum((&a, &b, &m), ("jobs", "queue"), what, 600);
    }
}

fn two_tracking_role_shards_merge_into_their_sums(kind: Kind) {
    let (a, b, m) = merged_shards(kind, "kv:tracking:readers=2,keys=10,rate=200", "200");
    let (ta, tb, tm) = (&a["roles"][0]["tracking"], &b["roles"][0]["tracking"], &m["roles"][0]["tracking"]);
    let keys = ["reads", "local_hits", "server_reads", "invalidations", "flushes", "stale_reads"];
    for key in keys.into_iter().chain(["invalidations_timed", "invalidations_untimed"]) {
        assert_eq!(count(tm, key), count(ta, key) + count(tb, key), "{key}: {tm}");
    }
    assert_eq!(count(tm, "stale_reads"), 0, "{tm}");
    let ratio = count(tm, "local_hits") as f64 / count(tm, "reads") as f64;
    assert_eq!(tm["hit_ratio"].as_f64().unwrap(), ratio, "{tm}");
    let timed = count(tm, "invalidations_timed");
    assert!(timed > 0, "{tm}");
    assert_latency_of_the_sum((&a, &b, &m), ("kv", "tracking"), "invalidation_delay", timed);
}

fn a_journals_run_end_brings_back_a_stream_roles_figures_and_histogram(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    // What a stream role's run says at its end: its figures and its histogram.
    let full = dir.path().join("full.json");
    run_ok(&server, &["--role", "orders:stream:consumers=2,block=100", "-n", "300", "--json", full.to_str().unwrap()]);
    let full = read_json(&full);
    // A run of the same role killed outright, its journal then given that end's line: `recover`
    // takes the role's figures from it (a run's end journals them, as `run_ended`'s `roles`).
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.journal");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--role", "orders:stream:consumers=2,block=100,rate=200"]).args([
        "--duration",
        "60s",
        "--json",
        json.to_str().unwrap(),
    ]);
    let run = Watched::spawn(cmd);
    wait_for("2 journaled intervals", Duration::from_secs(60), || journal_intervals(&journal).len() >= 2);
    run.signal(libc::SIGKILL);
    let _ = run.finish();
    let text = std::fs::read_to_string(&journal).unwrap();
    let whole = &text[..=text.rfind('\n').unwrap()];
    let ended = serde_json::json!({
        "line": "run_ended",
        "run": 0,
        "elapsed_secs": 2.0,
        "roles": [full["roles"][0]],
        "role_histograms": full["histograms"]["roles"],
    });
    std::fs::write(&journal, format!("{whole}{ended}\n")).unwrap();
    let doc = recovered(&journal);
    let (s, journaled) = (&doc["roles"][0]["stream"], &full["roles"][0]["stream"]);
    for key in ["produced", "consumed", "acked", "unconsumed"] {
        assert_eq!(count(s, key), count(journaled, key), "{key}: {s}");
    }
    assert_eq!(s["end_to_end_latency"], journaled["end_to_end_latency"], "{s}");
    let kept = doc["histograms"]["roles"]["orders"]["end_to_end"].as_str().expect("the role's histogram");
    assert_eq!(histogram(kept).len(), count(s, "consumed"));
}

fn two_pubsub_roles_have_their_own_rows_in_csv_metrics_and_statsd(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let statsd = UdpSocket::bind("127.0.0.1:0").unwrap();
    statsd.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let statsd_port = statsd.local_addr().unwrap().port().to_string();
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg()]).args(TWO).args(["--duration", "2s", "--progress", "-q"]);
    cmd.args(["--json", json.to_str().unwrap(), "--csv", csv.to_str().unwrap()])
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"])
        .args(["--statsd-host", "127.0.0.1", "--statsd-port", &statsd_port, "--statsd-run-label", "t"]);
    let end = scraped_at_the_end(cmd);
    let doc = read_json(&json);
    let table = std::fs::read_to_string(&csv).unwrap();
    let (_, rows) = table.split_once("\n\n").expect("a role table after the summary");
    let mut lines = rows.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mut heard = String::new();
    let mut buf = [0u8; 2048];
    while !(heard.contains(".role.a.lost:") && heard.contains(".role.b.lost:")) {
        let n = statsd.recv(&mut buf).expect("StatsD packets");
        heard.push_str(&String::from_utf8_lossy(&buf[..n]));
        heard.push('\n');
    }
    for (k, (name, subscribers)) in [("a", 2), ("b", 1)].into_iter().enumerate() {
        let role = &doc["roles"][k];
        assert_eq!(role["name"], name);
        let m = &role["messages"];
        let published = count(m, "published");
        assert!(published > 0, "{m}");
        assert_eq!((count(m, "delivered"), count(m, "lost")), (subscribers * published, 0), "{m}");
        let row = rows.iter().find(|r| r[0] == name).unwrap_or_else(|| panic!("{name}: {table}"));
        let cell = |figure: &str| row[header.iter().position(|h| *h == figure).unwrap()];
        for figure in ["published", "delivered", "lost"] {
            assert_eq!(cell(figure), count(m, figure).to_string(), "{figure}: {table}");
            let at = format!("respbench_role_messages_total{{role=\"{name}\",kind=\"pubsub\",figure=\"{figure}\"}}");
            assert_eq!(sample(&end, &at), count(m, figure) as f64, "{figure}: {end}");
        }
        let at = format!("respbench_role_latency_seconds_count{{role=\"{name}\",latency=\"delivery\"}}");
        assert_eq!(sample(&end, &at), count(m, "delivered") as f64, "{end}");
        assert!(heard.contains(&format!(".role.{name}.delivered:")), "{heard}");
        assert!(heard.contains(&format!(".role.{name}.lost:0|g")), "{heard}");
    }
}

fn a_killed_run_of_two_pubsub_roles_is_recovered_with_each_ones_figures(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.journal");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg()]).args(TWO).args(["--duration", "60s", "--json", json.to_str().unwrap()]);
    let run = Watched::spawn(cmd);
    wait_for("3 journaled intervals", Duration::from_secs(60), || journal_intervals(&journal).len() >= 3);
    run.signal(libc::SIGKILL);
    let _ = run.finish();
    let journaled = journal_intervals(&journal);
    let doc = recovered(&journal);
    for (k, (name, subscribers)) in [("a", 2), ("b", 1)].into_iter().enumerate() {
        let of_role = |l: &Value| l["roles"].as_array().unwrap().iter().find(|r| r["name"] == name).cloned();
        let delivered: u64 = journaled.iter().filter_map(of_role).map(|r| count(&r["counts"], "delivered")).sum();
        // Each role's PUBLISH is its own row: `a`'s the first, `b`'s the second.
        let published: u64 = journaled.iter().map(|l| l["ops"][k]["count"].as_u64().unwrap()).sum();
        assert!(delivered > 0, "{journaled:?}");
        let role = &doc["roles"][k];
        assert_eq!(role["name"], name);
        let m = &role["messages"];
        assert_eq!((count(m, "delivered"), count(m, "published")), (delivered, published), "{m}");
        assert_eq!(count(m, "expected_deliveries"), subscribers * published, "{m}");
        assert_eq!(role["over_time"].as_array().unwrap().len(), journaled.len(), "{role}");
    }
}
