//! An A/B comparison as text (the terminal) and as Markdown (a pull-request comment).

use std::fmt::Write as _;

use super::stats::percent;
use super::{AbDocument, Change};

/// A figure as shown: ops/sec whole, latency in milliseconds.
pub fn figure(metric: &str, value: f64) -> String {
    if metric == "ops/sec" { format!("{value:.0}") } else { format!("{:.3}", value / 1000.0) }
}

/// The figure's name with its unit.
pub fn figure_name(metric: &str) -> String {
    if metric == "ops/sec" { metric.to_string() } else { format!("{metric} ms") }
}

pub fn pct(x: f64) -> String {
    format!("{:+.1} %", x * 100.0)
}

/// `-12.3 %`, or `-` when no verdict is possible.
pub fn change_cell(c: &Change) -> String {
    c.change.map_or("-".into(), pct)
}

/// `[-14.0 %, -10.1 %]`, or `-`.
pub fn interval_cell(c: &Change) -> String {
    match (c.change_low, c.change_high) {
        (Some(low), Some(high)) => format!("[{}, {}]", pct(low), pct(high)),
        _ => "-".into(),
    }
}

/// `A`, or `A (label)` when the side has a label of its own.
pub fn side_name(letter: &str, label: &str) -> String {
    if label.is_empty() || label == letter { letter.to_string() } else { format!("{letter} ({label})") }
}

/// What is judged: `B (tuned) against A (base)`, after `Phase NAME: ` for a scenario's phase.
pub fn headline_subject(doc: &AbDocument) -> String {
    let (a, b) = (side_name("A", &doc.a.label), side_name("B", &doc.b.label));
    match &doc.phase {
        Some(phase) => format!("Phase {phase}: {b} against {a}"),
        None => format!("{b} against {a}"),
    }
}

/// The one-line headline: what B is against A, by the judged figure.
pub fn headline(doc: &AbDocument) -> String {
    let judged = doc.changes.iter().find(|c| c.metric == doc.judged_by);
    let subject = headline_subject(doc);
    match judged {
        Some(c) if c.change.is_some() => format!(
            "{subject}: {} by {} ({} {}; {})",
            c.verdict.to_uppercase(),
            c.metric,
            change_cell(c),
            interval_cell(c),
            family(doc)
        ),
        Some(c) => format!("{subject}: NO VERDICT: {}", c.note.as_deref().unwrap_or("")),
        None => format!("{subject}: NO VERDICT"),
    }
}

/// `95 % confidence for the set of 4 verdicts`: what the stated confidence covers.
pub fn family(doc: &AbDocument) -> String {
    format!("{} confidence for the set of {} verdicts", percent(doc.confidence), doc.changes.len())
}

/// `Interval (98.75 %)`: the column of each figure's interval, at its share of the confidence.
pub fn interval_header(doc: &AbDocument) -> String {
    format!("Interval ({})", percent(doc.confidence_each))
}

/// One reason for every figure having no verdict (too few rounds), which the headline says
/// once rather than every row.
pub fn one_reason(doc: &AbDocument) -> bool {
    doc.changes.windows(2).all(|w| w[0].note == w[1].note) && doc.changes.iter().all(|c| c.change.is_none())
}

fn price_lines(doc: &AbDocument) -> Vec<String> {
    [("A", &doc.a), ("B", &doc.b)]
        .iter()
        .filter_map(|(name, side)| {
            let (price, per) = (side.price_per_hour?, side.ops_per_sec_per_price?);
            let currency = side.currency.as_deref().unwrap_or("USD");
            Some(format!("{}: {price} {currency}/h, {per:.0} ops/sec per {currency}/h", side_name(name, &side.label)))
        })
        .collect()
}

fn rounds_line(doc: &AbDocument) -> Option<String> {
    let secs = doc.round_secs?;
    Some(format!(
        "{} round pairs of {secs} s, each round after {} s of warm-up; order: {}",
        doc.order.len(),
        doc.warmup_secs.unwrap_or(0.0),
        doc.order.join(" ")
    ))
}

fn regression_line(doc: &AbDocument) -> Option<String> {
    let r = doc.regression.as_ref()?;
    if doc.changes.iter().find(|c| c.metric == doc.judged_by).is_none_or(|c| c.change.is_none()) {
        return Some(format!("--fail-on-regression {} %: cannot be judged without a verdict", r.threshold_pct));
    }
    Some(format!(
        "--fail-on-regression {} %: {}",
        r.threshold_pct,
        if r.regressed { "B regressed by more than that (exit 1)" } else { "no regression beyond it" }
    ))
}

/// The text report.
pub fn render(doc: &AbDocument) -> String {
    let mut out = String::new();
    if doc.interrupted {
        out.push_str("INTERRUPTED: the verdict covers the round pairs completed.\n");
    }
    let _ = writeln!(out, "{}", headline(doc));
    let _ = writeln!(out, "Method: {}", doc.method);
    if let Some(line) = rounds_line(doc) {
        let _ = writeln!(out, "Rounds: {line}");
    }
    out.push('\n');
    let interval = interval_header(doc);
    let _ = writeln!(out, "{:<12}{:>12}{:>12}{:>12}  {:<26}Verdict", "Figure", "A", "B", "Change", interval);
    let shared = one_reason(doc);
    for c in &doc.changes {
        let note = if shared { None } else { c.note.as_deref() };
        let _ = writeln!(
            out,
            "{:<12}{:>12}{:>12}{:>12}  {:<26}{}{}",
            figure_name(&c.metric),
            figure(&c.metric, c.a),
            figure(&c.metric, c.b),
            change_cell(c),
            interval_cell(c),
            c.verdict,
            note.map(|n| format!(" ({n})")).unwrap_or_default()
        );
    }
    for line in price_lines(doc) {
        let _ = writeln!(out, "Price: {line}");
    }
    if let Some(line) = regression_line(doc) {
        let _ = writeln!(out, "{line}");
    }
    for w in &doc.warnings {
        let _ = writeln!(out, "Warning: {w}");
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The Markdown report: a heading line, the table, the method.
pub fn markdown(doc: &AbDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### respbench A/B: {}\n", md_cell(&headline(doc)));
    if doc.interrupted {
        out.push_str("**Interrupted**: the verdict covers the round pairs completed.\n\n");
    }
    let _ = writeln!(
        out,
        "| Figure | {} | {} | Change | {} | Verdict |",
        md_cell(&side_name("A", &doc.a.label)),
        md_cell(&side_name("B", &doc.b.label)),
        interval_header(doc)
    );
    out.push_str("|---|---:|---:|---:|---|---|\n");
    let shared = one_reason(doc);
    for c in &doc.changes {
        let verdict = match c.note.as_ref().filter(|_| !shared) {
            Some(note) => format!("{} ({})", c.verdict, md_cell(note)),
            None => c.verdict.clone(),
        };
        let bold = if c.metric == doc.judged_by { "**" } else { "" };
        let _ = writeln!(
            out,
            "| {bold}{}{bold} | {} | {} | {} | {} | {bold}{verdict}{bold} |",
            figure_name(&c.metric),
            figure(&c.metric, c.a),
            figure(&c.metric, c.b),
            change_cell(c),
            interval_cell(c)
        );
    }
    out.push('\n');
    for line in price_lines(doc) {
        let _ = writeln!(out, "- Price: {}", md_cell(&line));
    }
    if let Some(line) = rounds_line(doc) {
        let _ = writeln!(out, "- Rounds: {line}");
    }
    if let Some(line) = regression_line(doc) {
        let _ = writeln!(out, "- {}", md_cell(&line));
    }
    for w in &doc.warnings {
        let _ = writeln!(out, "- Warning: {}", md_cell(w));
    }
    let _ = writeln!(out, "- Method: {}", md_cell(&doc.method));
    out
}
