//! `respbench report A.json B.json ...`: results set side by side, one file per target (instance
//! types, say), with each measured phase's ops/s and latencies and, when the scenario gave its
//! `[price]`, operations per unit of currency (ops/s × 3600 / price per hour). Works on the
//! saved results alone: scenario results and single runs both.

use std::fmt::Write as _;

use super::chart::escape;
use crate::report::document::{Document, PhaseResult, ResultFile};

/// One row: a measured phase of one file (or a single run).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub file: String,
    pub phase: String,
    pub ops_per_sec: f64,
    /// p50, p99 and p99.9 in milliseconds (`None` for a capacity search's answer).
    pub latency_ms: Option<[f64; 3]>,
    /// Price per hour and its currency.
    pub price: Option<(f64, String)>,
}

impl Row {
    /// Operations one unit of currency buys: a full hour at this rate over the hourly price.
    pub fn ops_per_currency(&self) -> Option<f64> {
        self.price.as_ref().map(|(per_hour, _)| self.ops_per_sec * 3600.0 / per_hour)
    }
}

/// The figures of a run: its totals' ops/s and latencies.
fn figures(doc: &Document) -> (f64, Option<[f64; 3]>) {
    let t = &doc.totals;
    let ms = |us: f64| us / 1000.0;
    (t.ops_per_sec, Some([ms(t.latency_us.p50_us), ms(t.latency_us.p99_us), ms(t.latency_us.p999_us)]))
}

/// The figures of a phase: a capacity search's answer, else its run's totals.
fn phase_figures(result: &PhaseResult) -> Option<(f64, Option<[f64; 3]>)> {
    match result.capacity_per_sec() {
        Some(rate) => Some((rate, None)),
        None => result.run().map(figures),
    }
}

/// The rows of every file, in order: a scenario's measured phases (fills and warmups measure
/// nothing worth comparing), or a single run's totals.
pub fn rows(files: &[(String, ResultFile)]) -> Vec<Row> {
    let mut out = Vec::new();
    for (name, file) in files {
        let row = |phase: &str, (ops_per_sec, latency_ms): (f64, Option<[f64; 3]>), price: Option<(f64, String)>| Row {
            file: name.clone(),
            phase: phase.to_string(),
            ops_per_sec,
            latency_ms,
            price,
        };
        match file {
            ResultFile::Scenario(doc) => {
                let price = doc.scenario.price.as_ref().map(|p| (p.per_hour, p.currency.clone()));
                out.extend(
                    doc.phases
                        .iter()
                        .filter(|p| !matches!(p.kind.as_str(), "fill" | "warmup"))
                        .filter_map(|p| Some(row(&p.name, phase_figures(p.result.as_ref()?)?, price.clone()))),
                );
            }
            ResultFile::Run(doc) => out.push(row(doc.label.as_deref().unwrap_or("run"), figures(doc), None)),
        }
    }
    out
}

const HEADERS: [&str; 8] = ["file", "phase", "ops/s", "p50 ms", "p99 ms", "p99.9 ms", "price/h", "ops per price"];

fn cells(r: &Row) -> [String; 8] {
    let ms = |i: usize| r.latency_ms.map_or("-".to_string(), |l| format!("{:.3}", l[i]));
    [
        r.file.clone(),
        r.phase.clone(),
        format!("{:.0}", r.ops_per_sec),
        ms(0),
        ms(1),
        ms(2),
        r.price.as_ref().map_or("-".into(), |(p, c)| format!("{p} {c}")),
        r.ops_per_currency().map_or("-".into(), |o| format!("{o:.0}")),
    ]
}

/// The table as aligned text (stdout).
pub fn text(rows: &[Row]) -> String {
    let table: Vec<[String; 8]> = std::iter::once(HEADERS.map(String::from)).chain(rows.iter().map(cells)).collect();
    let widths: Vec<usize> =
        (0..HEADERS.len()).map(|i| table.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in &table {
        for (i, cell) in row.iter().enumerate() {
            let _ = if i < 2 {
                write!(out, "{cell:<w$}  ", w = widths[i])
            } else {
                write!(out, "{cell:>w$}  ", w = widths[i])
            };
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    }
    if rows.iter().any(|r| r.price.is_some()) {
        out.push_str("ops per price: operations one unit of currency buys, ops/s x 3600 / price per hour\n");
    }
    out
}

/// The table and where each file came from, as the body of a page (`respbench compare`'s
/// page adds its verdicts after it).
pub fn body(rows: &[Row], files: &[(String, ResultFile)]) -> String {
    let mut table = String::from("<table><tr>");
    for h in HEADERS {
        let _ = write!(table, "<th>{h}</th>");
    }
    table.push_str("</tr>\n");
    for r in rows {
        table.push_str("<tr>");
        for c in cells(r) {
            let _ = write!(table, "<td>{}</td>", escape(&c));
        }
        table.push_str("</tr>\n");
    }
    table.push_str("</table>");
    let mut sources = String::from("<ul>");
    for (name, file) in files {
        let what = match file {
            ResultFile::Scenario(doc) => format!(
                "scenario <code>{}</code>, SHA-256 <code>{}</code>",
                escape(&doc.scenario.file),
                escape(&doc.scenario.sha256)
            ),
            ResultFile::Run(_) => "a single run".to_string(),
        };
        let _ = write!(sources, "<li>{}: {what}</li>", escape(name));
    }
    sources.push_str("</ul>");
    format!(
        "<h1>Results compared</h1>\n<div class=\"scroll\">{table}</div>\n<p>ops per price: the operations one unit \
         of currency buys at the measured rate, ops/s &times; 3600 / the scenario's price per hour.</p>\n\
         <h2>Files</h2>{sources}\n"
    )
}

/// The comparison page (`respbench report A.json B.json -o`): the table, and where each file
/// came from.
pub fn html(rows: &[Row], files: &[(String, ResultFile)]) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>respbench comparison</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;\
         padding:4px 8px;text-align:right}}td:first-child,td:nth-child(2){{text-align:left}}</style></head><body>\n\
         {}</body></html>\n",
        body(rows, files)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ops_per_price_is_an_hour_at_the_rate_over_the_price() {
        let doc = json!({
            "scenario": {"file": "a.toml", "sha256": "x", "price": {"per_hour": 2.0, "currency": "EUR"}},
            "phases": [
                {"name": "fill", "kind": "fill", "result": {"totals": {"ops_per_sec": 9.0}}},
                {"name": "run", "kind": "run", "result": {"totals": {"ops_per_sec": 1000.0,
                    "latency_us": {"p50_us": 100.0, "p99_us": 200.0, "p99.9_us": 300.0}}}},
            ],
        });
        let rows = rows(&[("a".into(), ResultFile::Scenario(Box::new(serde_json::from_value(doc).unwrap())))]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].ops_per_currency(), Some(1_800_000.0));
        let text = text(&rows);
        assert!(text.contains("1800000") && text.contains("2 EUR") && text.contains("0.300"), "{text}");
    }
}
