//! The HTML report: one self-contained file (styles and SVG charts inline, no scripts, nothing
//! fetched) built from a result JSON alone, so a result from any machine renders the same.
//! Also the comparison of several results, overlaid.

use std::fmt::Write;

use serde_json::Value;

use super::chart::{self, Chart, Series, XAxis, escape};

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}\
td:first-child,th:first-child{text-align:left}th{background:#f5f5f5}.sub{color:#666}\
.banner{background:#fde2e1;border:1px solid #e99;padding:8px 12px;margin:12px 0;font-weight:600}\
.warn{background:#fff6d6;border:1px solid #e6c65c;padding:6px 12px;margin:6px 0}\
.verdict{background:#eef5ff;border:1px solid #9bc;padding:6px 12px;margin:6px 0}\
.chart{display:block;margin:8px 0}.chart .title{font-weight:600;font-size:14px}\
.chart .grid{stroke:#eee}.chart .frame{fill:none;stroke:#999}.chart .tick,.chart .legend{font-size:11px;fill:#444}\
.chart .label{font-size:12px;fill:#333}code{background:#f5f5f5;padding:1px 4px}";

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn ms(us: &Value) -> String {
    format!("{:.3}", num(us) / 1000.0)
}

/// A unix time in milliseconds as `YYYY-MM-DD HH:MM:SS UTC` (civil calendar, no time zones).
pub fn utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// x positions of a result's timeline: seconds since its start, runs one after another.
fn timeline_x(doc: &Value) -> Vec<f64> {
    let mut t = 0.0;
    doc["time_series"]
        .as_array()
        .map(|points| {
            points
                .iter()
                .map(|p| {
                    t += num(&p["duration_secs"]);
                    t
                })
                .collect()
        })
        .unwrap_or_default()
}

fn series_of(doc: &Value, name: &str, value: impl Fn(&Value) -> Option<f64>) -> Series {
    let xs = timeline_x(doc);
    let points = doc["time_series"]
        .as_array()
        .map(|ps| ps.iter().zip(&xs).filter_map(|(p, &x)| value(p).map(|y| (x, y))).collect())
        .unwrap_or_default();
    Series { name: name.to_string(), points }
}

/// The percentile spectrum of one summary (`totals` or a command), in milliseconds.
fn spectrum(op: &Value, name: &str) -> Series {
    let points = op["latency_spectrum_us"]
        .as_array()
        .map(|ps| ps.iter().map(|p| (num(&p[0]), num(&p[1]) / 1000.0)).collect())
        .unwrap_or_default();
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

fn summary_table(out: &mut String, doc: &Value) {
    out.push_str("<table><tr><th>Type</th><th>Ops/sec</th><th>Hits/sec</th><th>Misses/sec</th><th>Avg. ms</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>Max ms</th><th>KB/sec</th><th>Errors</th></tr>");
    let mut rows: Vec<(String, &Value)> = Vec::new();
    if let Some(commands) = doc["commands"].as_object() {
        rows.extend(commands.iter().map(|(k, v)| (k.clone(), v)));
    }
    rows.push(("Totals".into(), &doc["totals"]));
    for (name, op) in rows {
        let l = &op["latency_us"];
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td></tr>",
            escape(&name),
            num(&op["ops_per_sec"]),
            num(&op["hits_per_sec"]),
            num(&op["misses_per_sec"]),
            ms(&l["mean_us"]),
            ms(&l["p50_us"]),
            ms(&l["p99_us"]),
            ms(&l["p99.9_us"]),
            ms(&l["max_us"]),
            num(&op["kb_per_sec"]),
            op["errors"].as_u64().unwrap_or(0)
        );
    }
    out.push_str("</table>");
}

fn key_values(out: &mut String, object: &Value) {
    out.push_str("<table>");
    if let Some(map) = object.as_object() {
        for (k, v) in map {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Null => "none".into(),
                other => other.to_string(),
            };
            let _ = write!(out, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(&text));
        }
    }
    out.push_str("</table>");
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n",
        escape(title)
    )
}

/// The report of one result.
/// Outages: when connections were down and how long the run took to recover.
fn faults_section(b: &mut String, doc: &Value) {
    let Some(outages) = doc["faults"]["outages"].as_array().filter(|o| !o.is_empty()) else { return };
    b.push_str("<h2>Faults</h2><table><tr><th>run</th><th>down from (s)</th><th>to (s)</th><th>recovered after (s)</th><th>connections</th></tr>");
    for o in outages {
        let (start, end) = (num(&o["start_secs"]), num(&o["end_secs"]));
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{start:.2}</td><td>{end:.2}</td><td>{:.2}</td><td>{}</td></tr>",
            o["run"].as_u64().unwrap_or(0) + 1,
            end - start,
            o["connections"]
        );
    }
    let without = doc["faults"]["seconds_without_success"].as_array().map_or(0, Vec::len);
    let _ = write!(
        b,
        "</table><p>{} reconnect attempts; {without} interval(s) of the time series without a successful reply.</p>",
        doc["faults"]["reconnect_attempts"]
    );
}

/// Cluster mode: what each node did, and the redirects followed.
fn cluster_section(b: &mut String, doc: &Value) {
    let Some(cluster) = doc["cluster"].as_object() else { return };
    let _ = write!(
        b,
        "<h2>Cluster nodes</h2><p>{} MOVED and {} ASK redirects followed.</p><table><tr><th>node</th><th>ops/s</th><th>p50 ms</th><th>p99 ms</th><th>errors</th></tr>",
        cluster["moved"], cluster["asked"]
    );
    for (node, op) in cluster["nodes"].as_object().into_iter().flatten() {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{:.0}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td></tr>",
            escape(node),
            num(&op["ops_per_sec"]),
            num(&op["latency_us"]["p50_us"]) / 1000.0,
            num(&op["latency_us"]["p99_us"]) / 1000.0,
            op["errors"]
        );
    }
    b.push_str("</table>");
}

pub fn render(doc: &Value) -> String {
    let mut b = String::new();
    let server = match doc["server"].as_object() {
        Some(s) => format!("{} {}", s["name"].as_str().unwrap_or("server"), s["version"].as_str().unwrap_or("")),
        None => "server (INFO refused)".into(),
    };
    let target = doc["configuration"]["target"].as_str().unwrap_or("");
    let label = doc["label"].as_str().map(|l| format!("{l}: ")).unwrap_or_default();
    let _ = write!(b, "<h1>{}respbench report: {} at {}</h1>", escape(&label), escape(&server), escape(target));
    let _ = write!(
        b,
        "<p class=\"sub\">respbench {}, started {}, measured {:.2} s; {}</p>",
        escape(doc["tool"]["version"].as_str().unwrap_or("")),
        utc(doc["started_unix_ms"].as_u64().unwrap_or(0)),
        num(&doc["duration_secs"]),
        escape(doc["measurement"]["description"].as_str().unwrap_or(""))
    );
    if doc["interrupted"].as_bool() == Some(true) {
        b.push_str("<div class=\"banner\">INTERRUPTED: the run was stopped early (Ctrl-C); the figures cover the part that ran.</div>");
    }
    if let Some(v) = doc["bottleneck"].as_object() {
        let _ = write!(
            b,
            "<div class=\"verdict\">Bottleneck: <b>{}</b> ({})</div>",
            escape(v["verdict"].as_str().unwrap_or("")),
            escape(v["detail"].as_str().unwrap_or(""))
        );
    }
    for w in doc["warnings"].as_array().into_iter().flatten() {
        let _ = write!(b, "<div class=\"warn\">Warning: {}</div>", escape(w.as_str().unwrap_or("")));
    }
    b.push_str("<h2>Summary</h2>");
    summary_table(&mut b, doc);
    if let Some(rate) = doc["rate"].as_object() {
        let _ = write!(
            b,
            "<p>Open loop: {:.0}/s requested ({}), {:.0}/s achieved; {} of {} sends over {:.0} ms late.</p>",
            num(&rate["requested_per_sec"]),
            escape(rate["arrival"].as_str().unwrap_or("")),
            num(&rate["achieved_per_sec"]),
            rate["late_sends"],
            rate["sends"],
            num(&rate["late_threshold_us"]) / 1000.0
        );
    }
    b.push_str("<h2>Over time</h2>");
    let mut charts = vec![
        Chart {
            id: "throughput",
            title: "Throughput",
            x_label: "seconds",
            y_label: "ops/s",
            x_axis: XAxis::Linear,
            series: vec![series_of(doc, "ops/s", |p| p["ops_per_sec"].as_f64())],
        },
        Chart {
            id: "latency",
            title: "Response time percentiles per interval",
            x_label: "seconds",
            y_label: "ms",
            x_axis: XAxis::Linear,
            series: [("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p99.9_us"), ("max", "max_us")]
                .iter()
                .map(|(name, field)| {
                    series_of(doc, name, |p| {
                        (p["count"].as_u64() > Some(0)).then(|| num(&p["latency_us"][*field]) / 1000.0)
                    })
                })
                .collect(),
        },
        Chart {
            id: "errors",
            title: "Errors per interval",
            x_label: "seconds",
            y_label: "errors",
            x_axis: XAxis::Linear,
            series: vec![series_of(doc, "errors", |p| p["errors"].as_f64())],
        },
    ];
    let cpu = series_of(doc, "server CPU %", |p| p["server"]["cpu"]["total"].as_f64().map(|c| c * 100.0));
    if !cpu.points.is_empty() {
        let main = series_of(doc, "main thread %", |p| p["server"]["cpu"]["main_thread"].as_f64().map(|c| c * 100.0));
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
            series: vec![series_of(doc, "used_memory", |p| {
                p["server"]["used_memory_bytes"].as_f64().map(|m| m / 1048576.0)
            })],
        });
    }
    for c in &charts {
        b.push_str(&chart::svg(c));
    }
    faults_section(&mut b, doc);
    cluster_section(&mut b, doc);
    b.push_str("<h2>Latency percentile spectrum</h2>");
    let mut spectra = vec![spectrum(&doc["totals"], "all commands")];
    if let Some(commands) = doc["commands"].as_object()
        && commands.len() > 1
    {
        spectra.extend(commands.iter().map(|(name, op)| spectrum(op, name)));
    }
    b.push_str(&spectrum_chart(spectra));
    b.push_str("<h2>Configuration</h2>");
    key_values(&mut b, &doc["configuration"]);
    b.push_str("<h2>Environment</h2>");
    let mut env = serde_json::Map::new();
    env.insert("tool".into(), doc["tool"].clone());
    env.insert("server".into(), doc["server"].clone());
    env.insert("client machine".into(), doc["client"]["machine"].clone());
    env.insert("client threads".into(), doc["client"]["threads"].clone());
    env.insert("server (whole run)".into(), doc["server_telemetry"].clone());
    key_values(&mut b, &Value::Object(env));
    page(&format!("respbench: {server} at {target}"), &b)
}

/// Several results side by side: their tables, throughput and spectra overlaid.
pub fn render_compare(results: &[(String, Value)], table: &str) -> String {
    let mut b = String::new();
    let _ = write!(b, "<h1>respbench comparison of {} results</h1>", results.len());
    b.push_str("<h2>Side by side</h2>");
    b.push_str(table);
    for (name, doc) in results {
        if doc["interrupted"].as_bool() == Some(true) {
            let _ = write!(b, "<div class=\"banner\">{}: INTERRUPTED run, partial figures.</div>", escape(name));
        }
    }
    let through = results.iter().map(|(name, doc)| {
        let mut s = series_of(doc, name, |p| p["ops_per_sec"].as_f64());
        s.name = name.clone();
        s
    });
    b.push_str(&chart::svg(&Chart {
        id: "throughput",
        title: "Throughput",
        x_label: "seconds",
        y_label: "ops/s",
        x_axis: XAxis::Linear,
        series: through.collect(),
    }));
    let p99 = results.iter().map(|(name, doc)| {
        series_of(doc, name, |p| (p["count"].as_u64() > Some(0)).then(|| num(&p["latency_us"]["p99_us"]) / 1000.0))
    });
    b.push_str(&chart::svg(&Chart {
        id: "latency",
        title: "p99 response time per interval",
        x_label: "seconds",
        y_label: "ms",
        x_axis: XAxis::Linear,
        series: p99.collect(),
    }));
    b.push_str(&spectrum_chart(results.iter().map(|(name, doc)| spectrum(&doc["totals"], name))));
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
}
