//! A scenario's page (`respbench run --html`, `respbench report` of a scenario's JSON): a table
//! comparing the phases, then a section per phase holding the single-run page `html::render`
//! makes of its result (inline, as an `iframe`'s `srcdoc`: still one file, no scripts).

use serde_json::Value;

use super::chart::escape;

/// Whether a JSON document is a scenario's result rather than a single run's.
pub fn is_scenario(doc: &Value) -> bool {
    doc.get("phases").is_some_and(Value::is_array) && doc.get("scenario").is_some()
}

/// One row per phase: name, kind, ops/s, p50, p99, p99.9 (ms), errors, whether it succeeded.
fn rows(doc: &Value) -> Vec<[String; 8]> {
    let empty = Vec::new();
    let num = |v: &Value, scale: f64, digits: usize| {
        v.as_f64().map_or(String::new(), |x| format!("{:.*}", digits, x * scale))
    };
    doc["phases"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .map(|p| {
            let t = &p["result"]["totals"];
            // A capacity search: its answer stands in the ops/s column.
            let capacity = &p["result"]["capacity"]["requests_per_sec"];
            [
                p["name"].as_str().unwrap_or("").to_string(),
                p["kind"].as_str().unwrap_or("").to_string(),
                if capacity.is_null() { num(&t["ops_per_sec"], 1.0, 0) } else { num(capacity, 1.0, 0) },
                num(&t["latency_us"]["p50_us"], 1e-3, 3),
                num(&t["latency_us"]["p99_us"], 1e-3, 3),
                num(&t["latency_us"]["p99.9_us"], 1e-3, 3),
                t["errors"].as_u64().map_or(String::new(), |e| e.to_string()),
                if p["ok"].as_bool() == Some(false) { "failed" } else { "ok" }.to_string(),
            ]
        })
        .collect()
}

/// The table across phases as Markdown.
pub fn markdown(doc: &Value) -> String {
    let mut out = format!(
        "Scenario {} (SHA-256 {})\n\n| phase | kind | ops/s | p50 ms | p99 ms | p99.9 ms | errors | result |\n|---|---|---:|---:|---:|---:|---:|---|\n",
        doc["scenario"]["file"].as_str().unwrap_or(""),
        doc["scenario"]["sha256"].as_str().unwrap_or("")
    );
    for row in rows(doc) {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// The page of a scenario's result.
pub fn render(doc: &Value) -> String {
    let file = doc["scenario"]["file"].as_str().unwrap_or("");
    let sha = doc["scenario"]["sha256"].as_str().unwrap_or("");
    let empty = Vec::new();
    let phases = doc["phases"].as_array().unwrap_or(&empty);
    let table = rows(doc);
    // With a `[price]`: what an hour costs, and each phase's operations per unit of currency.
    let price = doc["scenario"]["price"]["per_hour"].as_f64().filter(|p| *p > 0.0);
    let currency = escape(doc["scenario"]["price"]["currency"].as_str().unwrap_or("USD"));
    let price_line = price.map_or(String::new(), |p| {
        format!("<p>Price: {p} {currency} per hour; ops per {currency} = ops/s × 3600 ÷ {p}.</p>\n")
    });
    let price_head = if price.is_some() { format!("<th>ops per {currency}</th>") } else { String::new() };
    let mut rows = String::new();
    let mut sections = String::new();
    for (i, p) in phases.iter().enumerate() {
        let name = escape(p["name"].as_str().unwrap_or(""));
        let kind = escape(p["kind"].as_str().unwrap_or(""));
        let cells: Vec<String> = table[i].iter().skip(2).map(|c| format!("<td>{}</td>", escape(c))).collect();
        let per_price = match (price, p["result"]["totals"]["ops_per_sec"].as_f64()) {
            (Some(price), Some(ops)) => format!("<td>{:.0}</td>", ops * 3600.0 / price),
            (Some(_), None) => "<td></td>".to_string(),
            (None, _) => String::new(),
        };
        rows.push_str(&format!(
            "<tr><td><a href=\"#phase-{i}\">{name}</a></td><td>{kind}</td>{}{per_price}</tr>\n",
            cells.concat()
        ));
        let body = if p["result"].get("totals").is_some() {
            format!(
                "<iframe title=\"{name}\" style=\"width:100%;height:80vh;border:1px solid #ccc\" srcdoc=\"{}\"></iframe>",
                escape(&super::html::render(&p["result"]))
            )
        } else if p["result"].is_null() {
            "<p>No result was written for this phase.</p>".to_string()
        } else {
            format!("<pre>{}</pre>", escape(&serde_json::to_string_pretty(&p["result"]).unwrap_or_default()))
        };
        sections.push_str(&format!(
            "<section id=\"phase-{i}\"><h2>{}. {name} ({kind})</h2><p><code>{}</code></p>{body}</section>\n",
            i + 1,
            escape(p["command_line"].as_str().unwrap_or(""))
        ));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>respbench scenario {}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;\
         padding:4px 8px;text-align:right}}td:first-child,td:nth-child(2){{text-align:left}}</style></head><body>\n\
         <h1>Scenario {}</h1><p>SHA-256 <code>{}</code></p>\n{price_line}<h2>Phases compared</h2>\n<table><tr><th>phase</th><th>kind</th>\
         <th>ops/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>errors</th><th>result</th>{price_head}</tr>\n{rows}</table>\n\
         {sections}<h2>Scenario file</h2><pre>{}</pre></body></html>\n",
        escape(file),
        escape(file),
        escape(sha),
        escape(doc["scenario"]["text"].as_str().unwrap_or(""))
    )
}
