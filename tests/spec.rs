//! `respbench spec`: the Redis project's benchmark specification files (shortened samples in
//! tests/fixtures/specs, one of each kind) planned without a server, run against a real
//! redis-server, and refused as bad input with the server untouched; specifications whose
//! `clientconfigs` run several tools together (tests/fixtures/specs-clients) run as one run
//! with a role, against redis-server and valkey-server.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{Kind, Server, read_json, respbench, stderr, stdout};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/specs")
}

fn clients(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/specs-clients").join(name).display().to_string()
}

on_each_server!(
    publishers_and_pubsub_sub_bench_subscribers_run_as_a_pubsub_role,
    a_writer_and_bcast_listeners_run_as_a_bcast_tracking_role,
    plain_memtier_clients_together_run_as_mix_roles_each_paced_as_its_own,
);

/// Runs one specification of specs-clients for `time`, its files written to `dir`: the
/// output and respbench's JSON of it.
fn run_clients(server: &Server, name: &str, time: &str, dir: &Path) -> (std::process::Output, serde_json::Value) {
    let out = spec(server, &["--test-time", time, "--output-dir", dir.to_str().unwrap(), &clients(name)]);
    assert!(out.status.success(), "{name}: {}{}", stdout(&out), stderr(&out));
    let summary = read_json(&dir.join("summary.json"));
    let spec_name = summary["specs"][0]["name"].as_str().unwrap().to_string();
    (out, read_json(&dir.join(format!("{spec_name}.json"))))
}

fn count(v: &serde_json::Value, field: &str) -> u64 {
    v[field].as_u64().unwrap_or_else(|| panic!("no {field} in {v}"))
}

fn publishers_and_pubsub_sub_bench_subscribers_run_as_a_pubsub_role(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let (out, doc) = run_clients(&server, "pubsub.yml", "1s", dir.path());
    // memtier's 50 x 4 publishers on the subscribers' 100 channels, one subscriber on each.
    let role = &doc["roles"][0];
    assert_eq!((role["kind"].as_str(), count(role, "connections")), (Some("pubsub"), 200), "{role}");
    assert_eq!((count(role, "channels"), count(role, "subscribers")), (100, 1), "{role}");
    let m = &role["messages"];
    let published = count(m, "published");
    assert!(published > 0, "{m}");
    assert_eq!((count(m, "delivered"), count(m, "expected_deliveries")), (published, published), "{m}");
    assert_eq!((count(m, "lost"), count(m, "duplicated"), count(m, "out_of_order")), (0, 0, 0), "{m}");
    assert_eq!(server.calls("publish"), published, "every PUBLISH is the role's");
    // The line names the role's figures; the notes say what differs from the tools.
    let line = stdout(&out);
    assert!(
        line.contains(&format!("pubsub: {published} published, {published} delivered of {published} expected, 0 lost")),
        "{line}"
    );
    let notes: Vec<&str> = doc["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("40-byte stamp") && n.contains("128 bytes")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("the publishers walk the channels in order")), "{notes:?}");
    assert!(stderr(&out).contains("note: pubsub-sub-bench's 100 connections on 1 channel(s) each"), "{}", stderr(&out));
    let summary = read_json(&dir.path().join("summary.json"));
    assert!(summary["specs"][0]["roles"][0].as_str().unwrap().starts_with("pubsub: "), "{summary}");
}

fn plain_memtier_clients_together_run_as_mix_roles_each_paced_as_its_own(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let (_, doc) = run_clients(&server, "two-mixes.yml", "1s", dir.path());
    let roles = doc["roles"].as_array().unwrap();
    let named: Vec<(&str, &str, &str)> = roles
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["kind"].as_str().unwrap(), r["loop_mode"].as_str().unwrap()))
        .collect();
    assert_eq!(named, [("client1", "mix", "open_loop"), ("client2", "mix", "closed_loop")], "{doc}");
    assert_eq!((count(&roles[0], "connections"), count(&roles[1], "connections")), (1, 10), "{doc}");
    // Each client's requests are its own role's rows, and the server saw both mixes.
    let sent = |r: &serde_json::Value| count(&r["totals"], "count");
    assert!(sent(&roles[0]) > 0 && sent(&roles[1]) > sent(&roles[0]), "{doc}");
    // The spec runner reads INFO itself (topology, keyspace), so the server saw more.
    assert!(server.calls("info") >= sent(&roles[0]), "client1's INFOs reached the server");
    assert_eq!(server.calls("get"), sent(&roles[1]), "every GET is client2's");
    let notes: Vec<&str> = doc["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("each memtier_benchmark client is a role of its own mix")), "{notes:?}");
}

fn a_writer_and_bcast_listeners_run_as_a_bcast_tracking_role(kind: Kind) {
    let server = Server::start_as(kind, &[]);
    let dir = tempfile::tempdir().unwrap();
    let (out, doc) = run_clients(&server, "bcast-tracking.yml", "1s", dir.path());
    let role = &doc["roles"][0];
    assert_eq!(
        (role["kind"].as_str(), count(role, "connections"), count(role, "readers")),
        (Some("tracking"), 16, 100),
        "{role}"
    );
    let t = &role["tracking"];
    assert!(count(t, "invalidations") > 0, "{t}");
    assert_eq!(count(t, "stale_reads"), 0, "{t}");
    // The writers' keys are the spec's, under the listeners' prefix.
    assert!(server.cli(&["EXISTS", "bench:1"]) == "1", "no bench:1 written");
    assert!(stdout(&out).contains("tracking: "), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("tracking role tracking: 16 writers SET bench:1..bench:1000000"), "{err}");
    assert!(err.contains("CLIENT TRACKING on BCAST PREFIX bench:"), "{err}");
}

#[test]
fn a_producer_and_blocked_consumers_run_as_a_queue_or_stream_role() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (_, doc) = run_clients(&server, "bzpopmin.yml", "1s", dir.path());
    let role = &doc["roles"][0];
    assert_eq!(role["kind"].as_str(), Some("queue"), "{role}");
    let q = &role["queue"];
    assert!(count(q, "produced") > 0, "{q}");
    assert_eq!(count(q, "consumed") + count(q, "unconsumed"), count(q, "produced"), "{q}");
    assert!(server.calls("bzpopmin") > 0 && server.calls("zadd") > 0);
    let dir = tempfile::tempdir().unwrap();
    let (_, doc) = run_clients(&server, "xreadgroup.yml", "1s", dir.path());
    let role = &doc["roles"][0];
    let s = &role["stream"];
    assert_eq!(role["kind"].as_str(), Some("stream"), "{role}");
    assert!(count(s, "produced") > 0, "{s}");
    assert_eq!(count(s, "consumed") + count(s, "unconsumed"), count(s, "produced"), "{s}");
    // The spec's own stream and group: the init command made them, the role read them.
    assert!(server.calls("xreadgroup") > 0);
    assert_eq!(server.cli(&["EXISTS", "stream:1"]), "1");
}

#[test]
fn dry_run_shows_each_role_and_refuses_an_unknown_tool_in_one_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/specs-clients");
    let out = respbench().args(["spec", "--dry-run"]).arg(&dir).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}{text}", stderr(&out));
    assert!(text.contains("6 specifications: 5 planned, 1 refused"), "{text}");
    for role in [
        "mix role client1: 1 connection(s), 1 thread(s), pipeline 1, 20 per second",
        "pubsub role pubsub: 100 channels channel-1..channel-100, 1 subscriber(s) on every channel (subscribe), 200 publishers",
        "tracking role tracking: 16 writers SET bench:1..bench:1000000",
        "queue role queue: 1 producers to bzpopmin:key:1, closed loop, items 40 B; 100 workers on BZPOPMIN",
        "stream role stream: 1 producers XADD to stream:1, closed loop, entries 40 B; 100 consumers in group test-group",
        "client: pubsub-sub-bench -clients 100",
        "client: bcast-listener --listener-count 100 --tracking-prefix bench:",
    ] {
        assert!(text.contains(role), "no '{role}' in {text}");
    }
    let refused = "refused: unknown-tool.yml: clientconfigs[1]: tool other-sub-bench is not supported: respbench runs \
                   memtier_benchmark clients, with pubsub-sub-bench subscribers or bcast-listener listeners beside them";
    assert!(text.lines().any(|l| l == refused), "{text}");
}

#[test]
fn an_unknown_tool_is_refused_in_one_line_and_nothing_runs() {
    let server = Server::start(&[]);
    let out = spec(&server, &[&clients("unknown-tool.yml")]);
    // Nothing ran: not a success.
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let line = text.lines().find(|l| l.starts_with("[1/1]")).unwrap();
    assert!(line.ends_with("refused: clientconfigs[1]: tool other-sub-bench is not supported: respbench runs memtier_benchmark clients, with pubsub-sub-bench subscribers or bcast-listener listeners beside them"), "{line}");
    assert_eq!(server.calls("publish"), 0);
}

fn spec(server: &Server, args: &[&str]) -> std::process::Output {
    respbench().args(["spec", "-p", &server.port_arg()]).args(args).output().unwrap()
}

/// Calls per command from INFO commandstats, lower case.
fn commandstats(server: &Server) -> Vec<(String, u64)> {
    server
        .cli(&["INFO", "commandstats"])
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(":calls=")?;
            Some((name.to_string(), rest.split(',').next()?.parse().ok()?))
        })
        .collect()
}

/// Each command's share of the calls of `commands`, in percent, against the spec's.
fn assert_shares(server: &Server, expected: &[(&str, f64)]) {
    let stats = commandstats(server);
    let calls = |c: &str| stats.iter().find(|(n, _)| n == c).map_or(0, |(_, n)| *n);
    let total: u64 = expected.iter().map(|(c, _)| calls(c)).sum();
    assert!(total > 100, "too few calls to judge shares: {stats:?}");
    for (command, share) in expected {
        let seen = 100.0 * calls(command) as f64 / total as f64;
        assert!(
            (seen - share).abs() <= 5.0,
            "{command}: {seen:.1} % of the calls, the spec says {share} % ({stats:?})"
        );
    }
}

#[test]
fn dry_run_plans_the_sample_and_refuses_other_tools_by_name() {
    let out = respbench().args(["spec", "--dry-run"]).arg(fixtures()).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}{text}", stderr(&out));
    assert!(text.contains("5 specifications: 4 planned, 1 refused"), "{text}");
    assert!(text.contains(
        "refused: other-tool.yml: client tool sidekiq-bench: respbench stands in for memtier_benchmark only"
    ));
    // Two plain memtier clients together: a mix role each.
    assert!(text.contains("mix role client1: 1 connection(s), 1 thread(s), pipeline 1, 1 per second"), "{text}");
    assert!(text.contains("mix role client2: 10 connection(s), 1 thread(s), pipeline 1, closed loop"), "{text}");
    // Each step of the preload kind, shown without a server.
    for step in [
        "configuration: CONFIG SET save ''",
        "preload: memtier_benchmark",
        "init: SETBIT users 1000 1",
        "check: 1002 keys",
        "HGETALL 75 %, HEXISTS 25 %",
    ] {
        assert!(text.contains(step), "no '{step}' in {text}");
    }
    // Shortened: --test-time replaces the client's length, --scale shrinks keys and the check.
    let out = respbench()
        .args(["spec", "--dry-run", "--test-time", "1s", "--scale", "0.1", "--filter", "group=hash"])
        .arg(fixtures())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("1 specifications: 1 planned"), "{text}");
    assert!(
        text.contains("keys memtier-1..100,") && text.contains("check: 102 keys") && text.contains(", 1 s;"),
        "{text}"
    );
}

#[test]
fn plain_spec_runs_in_its_ratios_and_writes_memtier_json() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out =
        spec(&server, &["--output-dir", dir.path().to_str().unwrap(), fixtures().join("plain.yml").to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("[1/1] plain-string-set-get-1-4 ok:"), "{}", stdout(&out));
    assert_shares(&server, &[("set", 20.0), ("get", 80.0)]);
    let memtier = read_json(&dir.path().join("plain-string-set-get-1-4.memtier.json"));
    let totals = &memtier["ALL STATS"]["Totals"];
    assert!(totals["Ops/sec"].as_f64().unwrap() > 0.0, "{totals}");
    assert!(totals["Latency"].as_f64().unwrap() > 0.0, "{totals}");
    for p in ["p50.00", "p99.00"] {
        assert!(totals["Percentile Latencies"][p].as_f64().unwrap() > 0.0, "{p}: {totals}");
    }
    let own = read_json(&dir.path().join("plain-string-set-get-1-4.json"));
    assert!(own["totals"]["count"].as_u64().unwrap() > 0);
    for file in ["plain-string-set-get-1-4.html", "plain-string-set-get-1-4.md", "summary.json", "summary.md"] {
        assert!(dir.path().join(file).exists(), "{file}");
    }
}

#[test]
fn preload_init_commands_and_keyspace_check() {
    let server = Server::start(&[]);
    server.cli(&["SET", "left-over", "1"]);
    let file = fixtures().join("preload-init-check.yml");
    // Without --flushall the key left over makes the check miss: the spec stops with the figures.
    let out = spec(&server, &[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("keyspace check: expected 1002 keys, the server holds 1003"), "{}", stdout(&out));
    assert_eq!(server.calls("hgetall"), 0, "the client ran after a missed check");
    server.cli(&["CONFIG", "RESETSTAT"]);
    let out = spec(&server, &["--flushall", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("check 1002 keys of 1002"), "{}", stdout(&out));
    assert_eq!(server.cli(&["GETBIT", "users", "1000"]), "1");
    assert_eq!(server.cli(&["GET", "marker"]), "1");
    assert_eq!(server.calls("hset"), 1000, "the preload writes every key once");
    assert_shares(&server, &[("hgetall", 75.0), ("hexists", 25.0)]);
}

#[test]
fn configuration_parameters_are_set_then_put_back() {
    let server = Server::start(&[]);
    let file = fixtures().join("configuration.yml");
    let get = |name: &str| server.cli(&["CONFIG", "GET", name]).lines().nth(1).unwrap_or_default().to_string();
    let before = (get("maxmemory-policy"), get("hash-max-listpack-entries"));
    assert_eq!(before, ("noeviction".to_string(), "512".to_string()));
    let out = spec(&server, &[file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("CONFIG SET maxmemory-policy 'allkeys-lru' (was 'noeviction')"), "{err}");
    assert!(err.contains("configuration put back: save, maxmemory-policy, hash-max-listpack-entries"), "{err}");
    assert_eq!((get("maxmemory-policy"), get("hash-max-listpack-entries")), before);
    assert_shares(&server, &[("incr", 50.0), ("get", 50.0)]);
    // --keep-config leaves them set.
    let out = spec(&server, &["--keep-config", "--test-time", "200ms", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!((get("maxmemory-policy"), get("hash-max-listpack-entries")), ("allkeys-lru".into(), "64".into()));
}

#[test]
fn bad_files_give_one_line_and_exit_2_with_the_server_untouched() {
    let server = Server::start(&[]);
    let cases = [
        ("malformed.yml", "found unexpected end of stream"),
        ("unknown-version.yml", "version: expected 0.4, got 0.9"),
        ("missing-field.yml", "missing field `redis-topologies`: expected a list of topology names"),
    ];
    for (name, said) in cases {
        let connections = server.info_u64("stats", "total_connections_received");
        let file = fixtures().join("bad").join(name);
        let out = spec(&server, &[file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().filter(|l| !l.contains("nothing was run")).collect();
        assert_eq!(lines.len(), 1, "{name}: {err}");
        assert!(lines[0].contains(name) && lines[0].contains(said), "{name}: {err}");
        // Only this INFO's own connection since the last one: respbench never connected.
        assert_eq!(server.info_u64("stats", "total_connections_received"), connections + 1, "{name}");
    }
}

#[test]
fn summary_html_fits_1280_px() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = spec(
        &server,
        &[
            "--flushall",
            "--test-time",
            "300ms",
            "--output-dir",
            dir.path().to_str().unwrap(),
            fixtures().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    for row in
        ["spec", "plain-string-set-get-1-4", "preload-hash-hgetall-hexists", "refused: client tool sidekiq-bench"]
    {
        assert!(table.contains(row), "{row}: {table}");
    }
    let summary = read_json(&dir.path().join("summary.json"));
    assert_eq!(summary["specs"].as_array().unwrap().len(), 5);
    let html = dir.path().join("summary.html");
    let page = std::fs::read_to_string(&html).unwrap();
    let probe = dir.path().join("probe.html");
    let script = "<script>document.body.setAttribute('data-layout', \
                  document.documentElement.scrollWidth + ' ' + window.innerWidth)</script></body>";
    std::fs::write(&probe, page.replacen("</body>", script, 1)).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let dom = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--window-size=1280,900", "--dump-dom"])
        .arg(format!("file://{}", probe.display()))
        .stdin(Stdio::null())
        .output()
        .expect("chromium is installed (make test installs it)");
    let dom = String::from_utf8_lossy(&dom.stdout);
    let layout = dom.split("data-layout=\"").nth(1).and_then(|s| s.split('"').next()).expect("the probe ran");
    let (scroll, inner) = layout.split_once(' ').unwrap();
    assert_eq!(inner, "1280");
    assert!(scroll.parse::<u32>().unwrap() <= 1280, "the summary is {scroll} px wide in a 1280 px window");
}

#[test]
fn compare_gives_a_verdict_per_spec_from_two_summaries() {
    let server = Server::start(&[]);
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    for dir in &dirs {
        let out = spec(
            &server,
            &[
                "--runs",
                "5",
                "--test-time",
                "200ms",
                "--output-dir",
                dir.path().to_str().unwrap(),
                fixtures().join("plain.yml").to_str().unwrap(),
                fixtures().join("other-tool.yml").to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    // Several runs: memtier's JSON has its per-run sections, as memtier --run-count writes them.
    let memtier = read_json(&dirs[0].path().join("plain-string-set-get-1-4.memtier.json"));
    assert!(memtier["AGGREGATED AVERAGE RESULTS (5 runs)"]["Totals"]["Ops/sec"].as_f64().unwrap() > 0.0);
    let out = respbench().args(["spec", "compare"]).args(dirs.iter().map(|d| d.path())).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}{text}", stderr(&out));
    let plain = text.lines().find(|l| l.starts_with("plain-string-set-get-1-4")).unwrap_or_else(|| panic!("{text}"));
    assert!(
        ["NO SIGNIFICANT CHANGE", "FASTER", "SLOWER"].iter().any(|v| plain.contains(v)) && plain.contains("by ops/sec"),
        "{plain}"
    );
    assert!(text.contains("not judged: refused in the baseline, refused in the candidate"), "{text}");
}
