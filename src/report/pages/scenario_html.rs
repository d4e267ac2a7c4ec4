//! A scenario's page (`respbench run --html`, `respbench report` of a scenario's JSON): a table
//! comparing the phases, then a section per phase holding the single-run page `html::render`
//! makes of its result (inline, as an `iframe`'s `srcdoc`: still one file, no scripts).

use super::chart::escape;
use crate::report::document::{PhaseResult, ScenarioDocument};

/// One row per phase: name, kind, ops/s, p50, p99, p99.9 (ms), errors, whether it succeeded.
fn rows(doc: &ScenarioDocument) -> Vec<[String; 8]> {
    let num =
        |v: Option<f64>, scale: f64, digits: usize| v.map_or(String::new(), |x| format!("{:.*}", digits, x * scale));
    doc.phases
        .iter()
        .map(|p| {
            let run = p.result.as_ref().and_then(PhaseResult::run);
            let latency =
                |f: fn(&crate::stats::LatencySummary) -> f64| num(run.map(|r| f(&r.totals.latency_us)), 1e-3, 3);
            // A capacity search: its answer stands in the ops/s column.
            let capacity = p.result.as_ref().and_then(PhaseResult::capacity_per_sec);
            [
                p.name.clone(),
                p.kind.clone(),
                num(capacity.or(run.map(|r| r.totals.ops_per_sec)), 1.0, 0),
                latency(|l| l.p50_us),
                latency(|l| l.p99_us),
                latency(|l| l.p999_us),
                run.map_or(String::new(), |r| r.totals.errors.to_string()),
                if p.ok { "ok" } else { "failed" }.to_string(),
            ]
        })
        .collect()
}

/// The table across phases as Markdown.
pub fn markdown(doc: &ScenarioDocument) -> String {
    let mut out = format!(
        "Scenario {} (SHA-256 {})\n\n| phase | kind | ops/s | p50 ms | p99 ms | p99.9 ms | errors | result |\n|---|---|---:|---:|---:|---:|---:|---|\n",
        doc.scenario.file, doc.scenario.sha256
    );
    for row in rows(doc) {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// What the page shows of one phase's result.
fn phase_body(name: &str, result: Option<&PhaseResult>) -> String {
    match result {
        Some(PhaseResult::Run(run)) => format!(
            "<iframe title=\"{name}\" style=\"width:100%;height:80vh;border:1px solid #ccc\" srcdoc=\"{}\"></iframe>",
            escape(&super::html::render(run))
        ),
        None => "<p>No result was written for this phase.</p>".to_string(),
        Some(other) => format!("<pre>{}</pre>", escape(&serde_json::to_string_pretty(other).unwrap_or_default())),
    }
}

/// The page of a scenario's result.
pub fn render(doc: &ScenarioDocument) -> String {
    let (file, sha) = (doc.scenario.file.as_str(), doc.scenario.sha256.as_str());
    let table = rows(doc);
    // With a `[price]`: what an hour costs, and each phase's operations per unit of currency.
    let price = doc.scenario.price.as_ref().map(|p| p.per_hour).filter(|p| *p > 0.0);
    let currency = escape(doc.scenario.price.as_ref().map_or("USD", |p| p.currency.as_str()));
    let price_line = price.map_or(String::new(), |p| {
        format!("<p>Price: {p} {currency} per hour; ops per {currency} = ops/s × 3600 ÷ {p}.</p>\n")
    });
    let price_head = if price.is_some() { format!("<th>ops per {currency}</th>") } else { String::new() };
    let mut rows = String::new();
    let mut sections = String::new();
    for (i, p) in doc.phases.iter().enumerate() {
        let name = escape(&p.name);
        let kind = escape(&p.kind);
        let cells: Vec<String> = table[i].iter().skip(2).map(|c| format!("<td>{}</td>", escape(c))).collect();
        let run = p.result.as_ref().and_then(PhaseResult::run);
        let per_price = match (price, run.map(|r| r.totals.ops_per_sec)) {
            (Some(price), Some(ops)) => format!("<td>{:.0}</td>", ops * 3600.0 / price),
            (Some(_), None) => "<td></td>".to_string(),
            (None, _) => String::new(),
        };
        rows.push_str(&format!(
            "<tr><td><a href=\"#phase-{i}\">{name}</a></td><td>{kind}</td>{}{per_price}</tr>\n",
            cells.concat()
        ));
        let body = phase_body(&name, p.result.as_ref());
        sections.push_str(&format!(
            "<section id=\"phase-{i}\"><h2>{}. {name} ({kind})</h2><p><code>{}</code></p>{body}</section>\n",
            i + 1,
            escape(&p.command_line)
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
        escape(&doc.scenario.text)
    )
}
