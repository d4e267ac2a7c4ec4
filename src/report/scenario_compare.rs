//! `respbench report A.json B.json ...`: results set side by side, one file per target (instance
//! types, say), with each measured phase's ops/s and latencies and, when the scenario gave its
//! `[price]`, operations per unit of currency (ops/s × 3600 / price per hour). Works on the
//! JSON alone: scenario results and single runs both.

use std::fmt::Write as _;

use serde_json::Value;

use super::chart::escape;

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

/// The figures of one result (`totals` of a run's JSON).
fn figures(result: &Value) -> Option<(f64, Option<[f64; 3]>)> {
    let capacity = &result["capacity"]["requests_per_sec"];
    if let Some(rate) = capacity.as_f64() {
        return Some((rate, None));
    }
    let t = &result["totals"];
    let ops = t["ops_per_sec"].as_f64()?;
    let ms = |k: &str| t["latency_us"][k].as_f64().unwrap_or(0.0) / 1000.0;
    Some((ops, Some([ms("p50_us"), ms("p99_us"), ms("p99.9_us")])))
}

/// The rows of every file, in order: a scenario's measured phases (fills and warmups measure
/// nothing worth comparing), or a single run's totals.
pub fn rows(files: &[(String, Value)]) -> Vec<Row> {
    let mut out = Vec::new();
    for (name, doc) in files {
        let price = doc["scenario"]["price"]["per_hour"]
            .as_f64()
            .map(|p| (p, doc["scenario"]["price"]["currency"].as_str().unwrap_or("USD").to_string()));
        let row = |phase: &str, result: &Value| {
            figures(result).map(|(ops_per_sec, latency_ms)| Row {
                file: name.clone(),
                phase: phase.to_string(),
                ops_per_sec,
                latency_ms,
                price: price.clone(),
            })
        };
        match doc["phases"].as_array() {
            Some(phases) => out.extend(
                phases
                    .iter()
                    .filter(|p| !matches!(p["kind"].as_str(), Some("fill" | "warmup")))
                    .filter_map(|p| row(p["name"].as_str().unwrap_or(""), &p["result"])),
            ),
            None => out.extend(row(doc["label"].as_str().unwrap_or("run"), doc)),
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

/// The comparison page: the table, and where each file came from.
pub fn html(rows: &[Row], files: &[(String, Value)]) -> String {
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
    for (name, doc) in files {
        let what = match doc["scenario"]["file"].as_str() {
            Some(file) => format!(
                "scenario <code>{}</code>, SHA-256 <code>{}</code>",
                escape(file),
                escape(doc["scenario"]["sha256"].as_str().unwrap_or(""))
            ),
            None => "a single run".to_string(),
        };
        let _ = write!(sources, "<li>{}: {what}</li>", escape(name));
    }
    sources.push_str("</ul>");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>respbench comparison</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;\
         padding:4px 8px;text-align:right}}td:first-child,td:nth-child(2){{text-align:left}}</style></head><body>\n\
         <h1>Results compared</h1>\n{table}\n<p>ops per price: the operations one unit of currency buys at the \
         measured rate, ops/s &times; 3600 / the scenario's price per hour.</p>\n<h2>Files</h2>{sources}\n\
         </body></html>\n"
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
        let rows = rows(&[("a".into(), doc)]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].ops_per_currency(), Some(1_800_000.0));
        let text = text(&rows);
        assert!(text.contains("1800000") && text.contains("2 EUR") && text.contains("0.300"), "{text}");
    }
}
