//! The HTML report: one self-contained file (styles and SVG charts inline, no scripts, nothing
//! fetched) built from a result alone, so a result from any machine renders the same.
//! Also the comparison of several results, overlaid.

use std::fmt::Write;

use super::chart::{self, Chart, Series, XAxis, escape};
use crate::report::document::{Document, OpSummary, Point};

mod labelled;
mod parts;
mod roles;
mod series;
mod server_latency;

use series::{Figure, series_of};

/// Laid out for a window of 1280 px or less: nothing is wider than the page. Long tokens wrap
/// anywhere, except numbers and headers, so a long command line squeezes its own column and not
/// the figures beside it; wide tables scroll inside their own box; charts scale to the column.
const STYLE: &str = "*{box-sizing:border-box}\
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px;overflow-wrap:anywhere}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}h3{font-size:15px;margin:16px 0 4px}\
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right;vertical-align:top}\
td:first-child,th:first-child{text-align:left}th{background:#f5f5f5}.sub{color:#666}\
.scroll{max-width:100%;overflow-x:auto}th{overflow-wrap:normal}.scroll td+td,table.mix td+td{white-space:nowrap}\
table.kv{width:100%;max-width:760px;table-layout:fixed}table.kv th{width:40%;text-align:left;font-weight:600}table.kv td{text-align:left}\
table.kv table{margin:0}table.mix td,table.mix th{text-align:left}ul{margin:0;padding-left:18px}\
.banner{background:#fde2e1;border:1px solid #e99;padding:8px 12px;margin:12px 0;font-weight:600}\
.warn{background:#fff6d6;border:1px solid #e6c65c;padding:6px 12px;margin:6px 0}\
.verdict{background:#eef5ff;border:1px solid #9bc;padding:6px 12px;margin:6px 0}\
.chart{display:block;width:100%;height:auto;margin:12px 0}.chart .title{font-weight:600;font-size:15px}\
.chart .grid{stroke:#eee}.chart .frame{fill:none;stroke:#999}.chart .tick,.chart .legend{font-size:12px;fill:#444}\
.chart .label{font-size:13px;fill:#333}code{background:#f5f5f5;padding:1px 4px}";

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// A unix time in milliseconds as `YYYY-MM-DD HH:MM:SS UTC` (by jiff).
pub fn utc(unix_ms: u64) -> String {
    match jiff::Timestamp::from_millisecond(i64::try_from(unix_ms).unwrap_or(i64::MAX)) {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
        Err(_) => format!("{unix_ms} ms after 1970 (past the calendar's end)"),
    }
}

/// An interval's response-time figure, in milliseconds, when it had requests.
fn interval_ms(p: &Point, figure: Figure) -> Option<f64> {
    (p.totals.count > 0).then(|| figure(&p.totals.latency_us) / 1000.0)
}

/// The percentile spectrum of one summary (`totals` or a command), in milliseconds.
fn spectrum(op: &OpSummary, name: &str) -> Series {
    let points = op.latency_spectrum_us.iter().flatten().map(|&(p, us)| (p, us / 1000.0)).collect();
    Series { name: name.to_string(), points }
}

/// The spectrum chart of the series that have points.
fn spectrum_chart(series: impl IntoIterator<Item = Series>) -> String {
    chart::svg(&Chart {
        id: "spectrum",
        title: "Response time by percentile",
        x_label: "percentile",
        y_label: "ms",
        x_axis: XAxis::Percentile,
        series: series.into_iter().filter(|s| !s.points.is_empty()).collect(),
    })
}

fn summary_table(out: &mut String, doc: &Document) {
    out.push_str("<div class=\"scroll\"><table><tr><th>Type</th><th>Ops/sec</th><th>Hits/sec</th><th>Misses/sec</th><th>Avg. ms</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>Max ms</th><th>KB/sec</th><th>Errors</th></tr>");
    for (name, op) in doc.rows() {
        let l = &op.latency_us;
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td></tr>",
            escape(name),
            op.ops_per_sec,
            op.hits_per_sec,
            op.misses_per_sec,
            ms(l.mean_us),
            ms(l.p50_us),
            ms(l.p99_us),
            ms(l.p999_us),
            ms(l.max_us),
            op.kb_per_sec,
            op.errors
        );
    }
    out.push_str("</table></div>");
}

pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n",
        escape(title)
    )
}

/// Outages: when connections were down and how long the run took to recover.
fn faults_section(b: &mut String, doc: &Document) {
    let faults = &doc.faults;
    if faults.outages.is_empty() {
        return;
    }
    b.push_str("<h2>Faults</h2><div class=\"scroll\"><table><tr><th>run</th><th>down from (s)</th><th>to (s)</th><th>recovered after (s)</th><th>connections</th></tr>");
    for o in &faults.outages {
        let (start, end) = (o.start_secs, o.end_secs);
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{start:.2}</td><td>{end:.2}</td><td>{:.2}</td><td>{}</td></tr>",
            o.run + 1,
            end - start,
            o.connections
        );
    }
    let without = faults.seconds_without_success.len();
    let _ = write!(
        b,
        "</table></div><p>{} connections lost; {} reconnect attempts; {without} interval(s) of the time series \
         without a successful reply.</p>",
        faults.connections_lost, faults.reconnect_attempts
    );
}

/// Cluster mode: what each node did, and the redirects followed.
fn cluster_section(b: &mut String, doc: &Document) {
    let Some(cluster) = &doc.cluster else { return };
    let _ = write!(
        b,
        "<h2>Cluster nodes</h2><p>{} MOVED and {} ASK redirects followed.</p><div class=\"scroll\"><table><tr><th>node</th><th>ops/s</th><th>p50 ms</th><th>p99 ms</th><th>errors</th></tr>",
        cluster.moved, cluster.asked
    );
    for (node, op) in &cluster.nodes {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{:.0}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td></tr>",
            escape(node),
            op.ops_per_sec,
            op.latency_us.p50_us / 1000.0,
            op.latency_us.p99_us / 1000.0,
            op.errors
        );
    }
    b.push_str("</table></div>");
}

/// Errors by kind, when there were any.
fn errors_section(b: &mut String, doc: &Document) {
    if doc.errors.is_empty() {
        return;
    }
    b.push_str("<h2>Errors by kind</h2><table><tr><th>kind</th><th>requests</th></tr>");
    for (kind, n) in &doc.errors {
        let _ = write!(b, "<tr><td>{}</td><td>{n}</td></tr>", escape(kind));
    }
    let t = &doc.totals;
    let _ = write!(
        b,
        "</table><p>{} requests sent = {} replies + {} failed + {} abandoned at the end.</p>",
        t.sent, t.count, t.failed, t.abandoned
    );
}

/// `--runs`: each run's headline figures and their spread.
fn runs_section(b: &mut String, doc: &Document) {
    if doc.runs.len() <= 1 {
        return;
    }
    b.push_str("<h2>Runs</h2><div class=\"scroll\"><table><tr><th>run</th><th>seconds</th><th>requests</th><th>ops/s</th><th>p50 ms</th><th>p99 ms</th><th>errors</th></tr>");
    for (i, r) in doc.runs.iter().enumerate() {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{:.2}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            r.duration_secs,
            r.count,
            r.ops_per_sec,
            ms(r.p50_us),
            ms(r.p99_us),
            r.errors
        );
    }
    b.push_str("</table></div>");
    let Some(spread) = &doc.repetition else { return };
    b.push_str("<h3>Spread over the runs</h3><div class=\"scroll\"><table><tr><th>figure</th><th>median</th><th>min</th><th>max</th><th>mean</th><th>95 % confidence interval of the mean</th></tr>");
    for (name, s) in [("ops/s", &spread.ops_per_sec), ("p99 (µs)", &spread.p99_us)] {
        let n = labelled::number;
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} to {}</td></tr>",
            escape(name),
            n(s.median),
            n(s.min),
            n(s.max),
            n(s.mean),
            n(s.ci95_low),
            n(s.ci95_high)
        );
    }
    b.push_str("</table></div>");
}

/// The charts of the timeline: throughput, response time, errors, and the server when sampled.
fn timeline_charts(doc: &Document) -> Vec<Chart<'_>> {
    let figures: [(&str, Figure); 4] =
        [("p50", |l| l.p50_us), ("p99", |l| l.p99_us), ("p99.9", |l| l.p999_us), ("max", |l| l.max_us)];
    let mut charts = vec![
        Chart {
            id: "throughput",
            title: "Throughput",
            x_label: "seconds",
            y_label: "ops/s",
            x_axis: XAxis::Linear,
            series: vec![series_of(doc, "ops/s", |p| Some(p.totals.ops_per_sec))],
        },
        Chart {
            id: "latency",
            title: "Response time percentiles per interval",
            x_label: "seconds",
            y_label: "ms",
            x_axis: XAxis::Linear,
            series: figures.iter().map(|(name, figure)| series_of(doc, name, |p| interval_ms(p, *figure))).collect(),
        },
        Chart {
            id: "errors",
            title: "Errors per interval",
            x_label: "seconds",
            y_label: "errors",
            x_axis: XAxis::Linear,
            series: vec![series_of(doc, "errors", |p| Some(p.totals.errors as f64))],
        },
    ];
    let cpu = series_of(doc, "server CPU %", |p| p.server.map(|s| s.cpu.total * 100.0));
    if !cpu.points.is_empty() {
        let main = series_of(doc, "main thread %", |p| p.server.and_then(|s| s.cpu.main_thread).map(|c| c * 100.0));
        let mut series = vec![cpu];
        if !main.points.is_empty() {
            series.push(main);
        }
        charts.push(Chart {
            id: "server-cpu",
            title: "Server CPU",
            x_label: "seconds",
            y_label: "% of a core",
            x_axis: XAxis::Linear,
            series,
        });
        charts.push(Chart {
            id: "server-memory",
            title: "Server memory",
            x_label: "seconds",
            y_label: "MiB",
            x_axis: XAxis::Linear,
            series: vec![series_of(doc, "used_memory", |p| p.server.map(|s| s.used_memory_bytes as f64 / 1048576.0))],
        });
    }
    charts
}

/// The page's heading: what was measured, where, when, and anything to read first.
fn heading(b: &mut String, doc: &Document) -> (String, String) {
    let server = match &doc.server {
        Some(s) => format!("{} {}", s.name, s.version),
        None if doc.warnings.iter().any(|w| w.contains("refused INFO")) => "server (INFO refused)".into(),
        None => "server (INFO unanswered)".into(),
    };
    let target = doc.configuration.target.clone();
    let label = doc.label.as_ref().map(|l| format!("{l}: ")).unwrap_or_default();
    let _ = write!(b, "<h1>{}respbench report: {} at {}</h1>", escape(&label), escape(&server), escape(&target));
    let _ = write!(
        b,
        "<p class=\"sub\">respbench {}, started {}, measured {:.2} s; {}</p>",
        escape(&doc.tool.version),
        utc(doc.started_unix_ms),
        doc.duration_secs,
        escape(&doc.measurement.description)
    );
    if doc.interrupted {
        b.push_str("<div class=\"banner\">INTERRUPTED: the run was stopped early (Ctrl-C); the figures cover the part that ran.</div>");
    }
    let _ = write!(
        b,
        "<div class=\"verdict\">Bottleneck: <b>{}</b> ({})</div>",
        escape(&doc.bottleneck.name()),
        escape(&doc.bottleneck.detail)
    );
    for w in &doc.warnings {
        let _ = write!(b, "<div class=\"warn\">Warning: {}</div>", escape(w));
    }
    (server, target)
}

/// The report of one result.
pub fn render(doc: &Document) -> String {
    let mut b = String::new();
    let (server, target) = heading(&mut b, doc);
    b.push_str("<h2>Summary</h2>");
    summary_table(&mut b, doc);
    roles::html(&mut b, doc);
    if let Some(rate) = &doc.rate {
        let _ = write!(
            b,
            "<p>Open loop: {:.0}/s requested ({}), {:.0}/s achieved; {} of {} sends over {:.0} ms late{}.</p>",
            rate.requested_per_sec,
            escape(&rate.arrival),
            rate.achieved_per_sec,
            rate.late_sends,
            rate.sends,
            rate.late_threshold_us / 1000.0,
            rate.wakeups_said()
        );
    }
    server_latency::html(&mut b, doc);
    b.push_str("<h2>Over time</h2>");
    for c in &timeline_charts(doc) {
        b.push_str(&chart::svg(c));
    }
    parts::section(&mut b, doc);
    runs_section(&mut b, doc);
    errors_section(&mut b, doc);
    faults_section(&mut b, doc);
    cluster_section(&mut b, doc);
    b.push_str("<h2>Latency percentile spectrum</h2>");
    let mut spectra = vec![spectrum(&doc.totals, "all commands")];
    if doc.commands.len() > 1 {
        spectra.extend(doc.commands.iter().map(|(name, op)| spectrum(op, name)));
    }
    b.push_str(&spectrum_chart(spectra));
    b.push_str("<h2>Configuration</h2>");
    labelled::configuration(&mut b, &doc.configuration);
    b.push_str("<h2>Environment</h2>");
    labelled::environment(&mut b, doc);
    page(&format!("respbench: {server} at {target}"), &b)
}

/// `respbench compare`'s page: the table, `verdicts` (the verdict sections, `report::ab::html`)
/// and the results' timelines and spectra overlaid.
pub fn render_compare(results: &[(String, Document)], table: &str, verdicts: &str) -> String {
    let mut b = String::new();
    let _ = write!(b, "<h1>respbench comparison of {} results</h1>", results.len());
    b.push_str("<h2>Side by side</h2><div class=\"scroll\">");
    b.push_str(table);
    b.push_str("</div>");
    for (name, doc) in results {
        if doc.interrupted {
            let _ = write!(b, "<div class=\"banner\">{}: INTERRUPTED run, partial figures.</div>", escape(name));
        }
    }
    b.push_str(verdicts);
    b.push_str("<h2>Over time</h2>");
    let through = results.iter().map(|(name, doc)| series_of(doc, name, |p| Some(p.totals.ops_per_sec)));
    b.push_str(&chart::svg(&Chart {
        id: "throughput",
        title: "Throughput",
        x_label: "seconds",
        y_label: "ops/s",
        x_axis: XAxis::Linear,
        series: through.collect(),
    }));
    let p99 = results.iter().map(|(name, doc)| series_of(doc, name, |p| interval_ms(p, |l| l.p99_us)));
    b.push_str(&chart::svg(&Chart {
        id: "latency",
        title: "p99 response time per interval",
        x_label: "seconds",
        y_label: "ms",
        x_axis: XAxis::Linear,
        series: p99.collect(),
    }));
    b.push_str("<h2>Latency percentile spectrum</h2>");
    b.push_str(&spectrum_chart(results.iter().map(|(name, doc)| spectrum(&doc.totals, name))));
    page("respbench comparison", &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_795_321_142_478), "2026-11-22 04:19:02 UTC");
    }

    /// Every optional section at once, so that none of them lets JSON through to the page.
    #[test]
    fn no_section_shows_json() {
        let doc = serde_json::json!({
            "tool": {"name": "respbench", "version": "9"},
            "server": {"name": "redis", "version": "7", "mode": "cluster", "os": "Linux"},
            "configuration": {"target": "h:1", "commands": [{"name": "GET", "weight": 1, "key_pattern": "Z"}],
                              "value_size": {"range": {"min": 1, "max": 9}}, "expiry_range_secs": null},
            "commands": {"GET": {"ops_per_sec": 1.0}},
            "totals": {"ops_per_sec": 1.0},
            "errors": {"MOVED": 2, "timeout": 1},
            "rate": {"requested_per_sec": 10.0, "achieved_per_sec": 9.0, "arrival": "poisson", "sends": 9,
                     "late_sends": 1, "late_threshold_us": 1000.0, "late_wakeups": 2, "late_wakeup_max_ms": 3.5},
            "runs": [{"duration_secs": 1.0, "count": 5, "ops_per_sec": 5.0, "p50_us": 1.0, "p99_us": 2.0, "errors": 0},
                     {"duration_secs": 1.0, "count": 6, "ops_per_sec": 6.0, "p50_us": 1.0, "p99_us": 2.0, "errors": 0}],
            "repetition": {"ops_per_sec": {"runs": 2, "median": 5.5, "min": 5.0, "max": 6.0, "mean": 5.5,
                                           "ci95_low": 1.0, "ci95_high": 9.0}},
            "faults": {"outages": [{"run": 0, "start_secs": 0.5, "end_secs": 0.9, "connections": 2}],
                       "reconnect_attempts": 3, "seconds_without_success": [{"run": 0, "index": 0}]},
            "cluster": {"moved": 1, "asked": 0, "nodes": {"h:1": {"ops_per_sec": 1.0, "errors": 0}}},
            "client": {"threads": [{"cpu_secs": 0.5, "runqueue_wait_secs": 0.0, "wall_secs": 1.0}],
                       "machine": {"hostname": "m", "cores": 2, "os": "linux", "arch": "x86_64"}},
            "server_telemetry": {"cpu": {"total": 0.5, "main_thread": 0.4}, "used_memory_bytes": 1048576,
                                 "hit_ratio": null, "new_gauge": [1, 2], "peak_used_memory_bytes": 2097152},
            "time_series": [{"duration_secs": 1.0, "ops_per_sec": 1.0, "count": 1, "latency_us": {"p99_us": 5.0}}]
        });
        let page = render(&serde_json::from_value(doc).unwrap());
        let body = page.split("</style>").nth(1).unwrap();
        let mut text = String::new();
        let mut in_tag = false;
        for c in body.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                _ if !in_tag => text.push(c),
                _ => {}
            }
        }
        let text = text.replace("&quot;", "\"");
        for json in ["{\"", "\":", "[{", "[[", "\"}", "}]"] {
            assert!(!text.contains(json), "{json} in {text}");
        }
        let woke = "the machine woke the client 2 times over 1 ms after its time, at worst 3.5 ms late";
        for shown in ["Runs", "Errors by kind", "Faults", "Cluster nodes", "Z (zipf)", "1 to 9 bytes", "2 MiB", woke] {
            assert!(text.contains(shown), "{shown} missing from {text}");
        }
    }
}
