//! Reports people look at, from real runs: the HTML report (checked in headless Chromium), CSV,
//! Markdown, `respbench report` from a saved result, and `respbench compare`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

/// Where screenshots are kept for people to look at after the tests.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The window width the pages must fit without scrolling sideways.
const WINDOW_WIDTH: u32 = 1280;

/// What Chromium made of a page.
struct Loaded {
    /// The DOM after loading (with the layout probe's attribute on `<body>`).
    dom: String,
    /// Chromium's log of both loads.
    log: String,
    /// `document.documentElement.scrollWidth` and `window.innerWidth` in a 1280 px window.
    scroll_width: u32,
    inner_width: u32,
}

/// Loads `html` in headless Chromium in a 1280 px wide window, and saves a screenshot to `png`.
/// The page has no script of its own, so the DOM is dumped from a copy with one added at the
/// end of `<body>`: it runs once everything above it is parsed, forces layout, and writes the
/// page's width onto `<body>` for `--dump-dom` to carry out.
fn chromium(html: &Path, png: &Path) -> Loaded {
    let profile = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("</body>"), "{}: no </body>", html.display());
    let probe = profile.path().join("probe.html");
    let script = "<script>document.body.setAttribute('data-layout', \
                  document.documentElement.scrollWidth + ' ' + window.innerWidth)</script></body>";
    std::fs::write(&probe, page.replacen("</body>", script, 1)).unwrap();
    let base = |page: &Path, height: u32, extra: &[&str]| {
        let mut cmd = Command::new("chromium");
        cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
            .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(["--enable-logging=stderr", "--v=0", "--hide-scrollbars"])
            .arg(format!("--window-size={WINDOW_WIDTH},{height}"))
            .args(extra)
            .arg(format!("file://{}", page.display()))
            .stdin(Stdio::null());
        cmd.output().expect("chromium is installed (make test installs it)")
    };
    let dom = base(&probe, 900, &["--dump-dom"]);
    assert!(dom.status.success(), "chromium --dump-dom failed: {}", String::from_utf8_lossy(&dom.stderr));
    // Tall enough to show most of a report to whoever opens the artifact.
    let shot = base(html, 4000, &[&format!("--screenshot={}", png.display())]);
    assert!(shot.status.success(), "chromium --screenshot failed");
    let log = format!("{}{}", String::from_utf8_lossy(&dom.stderr), String::from_utf8_lossy(&shot.stderr));
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    let layout = dom
        .split("data-layout=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("the layout probe did not run: {log}"));
    let (scroll, inner) = layout.split_once(' ').unwrap();
    Loaded { scroll_width: scroll.parse().unwrap(), inner_width: inner.parse().unwrap(), dom, log }
}

/// The text a person sees: the DOM without `<script>` and `<style>` elements and without tags,
/// entities decoded.
fn visible_text(dom: &str) -> String {
    let mut rest = dom.to_string();
    for element in ["script", "style"] {
        let (open, close) = (format!("<{element}"), format!("</{element}>"));
        while let Some(start) = rest.find(&open) {
            let end = rest[start..].find(&close).map_or(rest.len(), |e| start + e + close.len());
            rest.replace_range(start..end, " ");
        }
    }
    let mut text = String::new();
    let mut in_tag = false;
    for c in rest.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// Every chart in the rendered DOM, with the point counts of its series.
fn charts(dom: &str) -> Vec<(String, Vec<usize>)> {
    dom.split("<svg")
        .skip(1)
        .map(|svg| {
            let id = svg.split("id=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("").to_string();
            let body = svg.split("</svg>").next().unwrap();
            let counts =
                body.split("data-points=\"").skip(1).map(|s| s.split('"').next().unwrap().parse().unwrap()).collect();
            (id, counts)
        })
        .collect()
}

fn assert_renders_cleanly(html: &Path, name: &str, expected_charts: &[&str]) -> String {
    let png = artifacts().join(format!("{name}.png"));
    let Loaded { dom, log, scroll_width, inner_width } = chromium(html, &png);
    assert!(!log.contains("CONSOLE"), "console messages while loading {name}: {log}");
    // Fits a 1280 px window: nothing makes the page scroll sideways.
    assert_eq!(inner_width, WINDOW_WIDTH, "{name}: the window is not {WINDOW_WIDTH} px wide");
    assert!(scroll_width <= WINDOW_WIDTH, "{name} is {scroll_width} px wide in a {WINDOW_WIDTH} px window");
    // Written for people: no JSON anywhere in what the page shows.
    let text = visible_text(&dom);
    for json in ["{\"", "\":", "[{", "[[", "\"}", "}]"] {
        if let Some(at) = text.find(json) {
            let context: String = text[text.floor_char_boundary(at.saturating_sub(80))..].chars().take(160).collect();
            panic!("{name} shows JSON ({json}): ...{context}...");
        }
    }
    assert!(std::fs::metadata(&png).unwrap().len() > 20_000, "screenshot of {name} is nearly empty");
    let found = charts(&dom);
    for id in expected_charts {
        let (_, series) = found.iter().find(|(i, _)| i == id).unwrap_or_else(|| panic!("{name}: no chart {id}"));
        assert!(
            !series.is_empty() && series.iter().all(|&n| n > 0),
            "{name}: chart {id} has an empty series: {series:?}"
        );
    }
    // Self-contained: nothing is fetched.
    assert!(!dom.contains("src=\"http") && !dom.contains("href=\"http"), "{name} loads something from the network");
    dom
}

fn run_with_outputs(server: &Server, dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let json = dir.join(format!("{name}.json"));
    let mut args = vec!["--json", json.to_str().unwrap(), "-c", "4", "--key-max", "1999"];
    args.extend_from_slice(extra);
    run_ok(server, &args);
    json
}

#[test]
fn html_report_of_a_real_run_renders_in_chromium_with_every_chart_filled() {
    let server = Server::start(&[]);
    run_ok(&server, &["-n", "allkeys", "--key-max", "999"]);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("run.html");
    let json = run_with_outputs(
        &server,
        dir.path(),
        "run",
        &["--duration", "2500ms", "--html", html.to_str().unwrap(), "--label", "baseline"],
    );
    let dom = assert_renders_cleanly(
        &html,
        "report",
        &["throughput", "latency", "errors", "server-cpu", "server-memory", "spectrum"],
    );
    assert!(dom.contains("baseline: respbench report: redis"), "title missing");
    assert!(dom.contains("Bottleneck:") && dom.contains("Summary") && dom.contains("Configuration"));
    // The environment as tables: a row per client thread, the command mix by name.
    let doc = read_json(&json);
    let threads = dom.split("<h3>Client threads</h3>").nth(1).and_then(|s| s.split("</table>").next()).unwrap();
    assert_eq!(
        threads.matches("<tr>").count(),
        1 + doc["client"]["threads"].as_array().unwrap().len(),
        "one row per client thread: {threads}"
    );
    let mix = dom.split("<h3>Command mix</h3>").nth(1).and_then(|s| s.split("</table>").next()).unwrap();
    assert!(mix.contains("<code>GET</code>") && mix.contains("<code>SET</code>"), "{mix}");
    assert!(dom.contains("used memory") && dom.contains("MiB"), "the server's figures are not labelled");
    // Built from the JSON alone: `respbench report` renders the very same page.
    let again = dir.path().join("again.html");
    let out = respbench().args(["report", json.to_str().unwrap(), "-o", again.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&html).unwrap(), std::fs::read(&again).unwrap());
    // Long unbroken tokens (a label, a command line, a warning) wrap inside the page.
    let mut long = doc.clone();
    let token = "x".repeat(400);
    long["label"] = format!("label-{token}").into();
    long["configuration"]["commands"][0]["name"] = format!("SET key:__key__ {token}").into();
    long["warnings"] = serde_json::json!([format!("warning-{token}")]);
    long["client"]["machine"]["hostname"] = format!("host-{token}").into();
    let long_json = dir.path().join("long.json");
    std::fs::write(&long_json, serde_json::to_vec(&long).unwrap()).unwrap();
    let long_html = dir.path().join("long.html");
    let out =
        respbench().args(["report", long_json.to_str().unwrap(), "-o", long_html.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dom = assert_renders_cleanly(&long_html, "report-long-tokens", &["throughput", "spectrum"]);
    assert!(dom.contains(&format!("SET key:__key__ {token}")), "the long command is not shown whole");
}

#[test]
fn csv_and_markdown_carry_the_runs_numbers() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (csv, timeline, md) = (dir.path().join("s.csv"), dir.path().join("t.csv"), dir.path().join("s.md"));
    let json = run_with_outputs(
        &server,
        dir.path(),
        "run",
        &[
            "--duration",
            "2s",
            "--csv",
            csv.to_str().unwrap(),
            "--csv-timeline",
            timeline.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    let doc = read_json(&json);
    let csv = std::fs::read_to_string(&csv).unwrap();
    let totals = csv.lines().find(|l| l.starts_with("Totals,")).unwrap();
    assert_eq!(totals.split(',').nth(1).unwrap(), doc["totals"]["count"].to_string());
    assert_eq!(csv.lines().count(), 4, "{csv}");
    let timeline = std::fs::read_to_string(&timeline).unwrap();
    assert_eq!(timeline.lines().count(), 1 + doc["time_series"].as_array().unwrap().len());
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| Type | Ops/sec |") && md.contains("| Totals |"), "{md}");
    // `report` with no output prints the Markdown.
    let out = respbench().args(["report", json.to_str().unwrap()]).output().unwrap();
    assert_eq!(stdout(&out), md);
}

#[test]
fn compare_sets_results_side_by_side_with_ratios_and_prices() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let a = run_with_outputs(&server, dir.path(), "small", &["-n", "20000", "-P", "1"]);
    let b = run_with_outputs(&server, dir.path(), "large", &["-n", "20000", "-P", "8", "--label", "big"]);
    let html = dir.path().join("compare.html");
    let out = respbench()
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--price", "small=0.5,big=2"])
        .args(["--html", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (da, db) = (read_json(&a), read_json(&b));
    let ops = |d: &serde_json::Value| d["totals"]["ops_per_sec"].as_f64().unwrap();
    let p99 = |d: &serde_json::Value| d["totals"]["latency_us"]["p99_us"].as_f64().unwrap();
    let row: Vec<&str> = text.lines().find(|l| l.starts_with("big ")).unwrap().split_whitespace().collect();
    // big  ops ratio p50 ratio p99 ratio p99.9 ratio errors per$ ratio
    assert_eq!(row[1], format!("{:.0}", ops(&db)));
    assert_eq!(row[2], format!("{:.2}", ops(&db) / ops(&da)));
    assert_eq!(row[6], format!("{:.2}", p99(&db) / p99(&da)));
    assert_eq!(row[10], format!("{:.0}", ops(&db) / 2.0));
    assert_eq!(row[11], format!("{:.2}", (ops(&db) / 2.0) / (ops(&da) / 0.5)));
    let first: Vec<&str> = text.lines().find(|l| l.starts_with("small ")).unwrap().split_whitespace().collect();
    assert_eq!(first[2], "1.00");
    let dom = assert_renders_cleanly(&html, "compare", &["throughput", "latency", "spectrum"]);
    let throughput = charts(&dom).into_iter().find(|(id, _)| id == "throughput").unwrap();
    assert_eq!(throughput.1.len(), 2, "one series per result");
    // A price for a name that is not there is a clear usage error.
    let bad =
        respbench().args(["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--price", "nope=1"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("'nope'") && stderr(&bad).lines().count() == 1, "{}", stderr(&bad));
}

#[test]
fn an_interrupted_run_renders_and_says_so() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("cut.json"), dir.path().join("cut.html"));
    let mut run =
        Watched::spawn({
            let mut cmd = respbench();
            cmd.args(["-p", &server.port_arg(), "--duration", "30s", "-c", "2", "--json", json.to_str().unwrap()])
                .args(["--html", html.to_str().unwrap(), "--progress"]);
            cmd
        });
    // Two whole intervals, so that every chart has points to draw.
    run.wait_intervals(2);
    run.signal(libc::SIGINT);
    let out = run.finish();
    assert_eq!(out.status.code(), Some(130));
    let dom = assert_renders_cleanly(&html, "interrupted", &["throughput", "spectrum"]);
    assert!(dom.contains("INTERRUPTED"), "the report does not say the run was interrupted");
}

#[test]
fn report_and_compare_reject_bad_input_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"not\": \"ours\"}").unwrap();
    for args in [
        vec!["report", junk.to_str().unwrap()],
        vec!["report", "/no/such/file.json"],
        vec!["compare", junk.to_str().unwrap(), junk.to_str().unwrap()],
        vec!["compare", "one.json"],
    ] {
        let out = respbench().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out).lines().count(), 1, "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_pubsub_roles_html_report_shows_its_delivery_latency_over_time_in_chromium() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("news.html");
    let role = "news:pubsub:channels=10,subscribers=5,rate=1000";
    run_ok(&server, &["--role", role, "--duration", "2s", "--html", html.to_str().unwrap()]);
    let dom = assert_renders_cleanly(&html, "pubsub", &["delivery-latency", "deliveries"]);
    let text = visible_text(&dom);
    assert!(text.contains("Delivery latency over time: news (publish to subscriber)"), "{text}");
    // One point per interval of the 2 s run, for each of p50, p99 and p99.9.
    let found = charts(&dom);
    let (_, series) = found.iter().find(|(id, _)| id == "delivery-latency").unwrap();
    assert_eq!(series.len(), 3, "{series:?}");
    assert!(series.iter().all(|&n| n >= 2), "{series:?}");
}
