//! An A/B comparison as one self-contained page: the verdict, the table, each figure's change
//! drawn as its interval against zero and the noise band, both sides' rounds and both sides'
//! response-time distributions (percentile spectra of the merged histograms).

use std::fmt::Write as _;

use super::stats::percent;
use super::text::{change_cell, figure, figure_name, headline, interval_cell, interval_header, one_reason, side_name};
use super::{AbDocument, Side};
use crate::report::pages::chart::{self, Chart, Series, XAxis, escape};
use crate::report::pages::html::page;

/// The interval chart's drawing size (scaled to the page's column, as the other charts).
const WIDTH: f64 = 1100.0;
const ROW: f64 = 44.0;
const LEFT: f64 = 130.0;
const RIGHT: f64 = 30.0;

pub fn render(doc: &AbDocument) -> String {
    let mut b = String::new();
    let _ = write!(b, "<h1>respbench A/B: {} against {}</h1>", escape(&name(&doc.b, "B")), escape(&name(&doc.a, "A")));
    if doc.interrupted {
        b.push_str("<div class=\"banner\">INTERRUPTED: the verdict covers the round pairs completed.</div>");
    }
    b.push_str(&verdict_section(doc, "intervals", None));
    b.push_str("<h2>Rounds</h2>");
    b.push_str(&chart::svg(&Chart {
        id: "rounds",
        title: if doc.kind == "ab" { "Throughput per round" } else { "Throughput per run" },
        x_label: if doc.kind == "ab" { "round pair" } else { "run" },
        y_label: "ops/s",
        x_axis: XAxis::Linear,
        series: vec![rounds_series(&doc.a, "A"), rounds_series(&doc.b, "B")],
    }));
    b.push_str("<h2>Response-time distributions</h2>");
    b.push_str(&chart::svg(&Chart {
        id: "spectrum",
        title: "Response time by percentile (each side's rounds merged)",
        x_label: "percentile",
        y_label: "ms",
        x_axis: XAxis::Percentile,
        series: [spectrum(&doc.a, "A"), spectrum(&doc.b, "B")].into_iter().filter(|s| !s.points.is_empty()).collect(),
    }));
    sides(&mut b, doc);
    page(&format!("respbench A/B: {} against {}", name(&doc.b, "B"), name(&doc.a, "A")), &b)
}

/// The verdict as the ab page shows it, for any page that shows a comparison (`compare
/// --html` too): the headline, the method, the table and each figure's interval drawn; `id`
/// names the interval chart (one per verdict on a page); a `title` heads the section on a page
/// of several.
pub fn verdict_section(doc: &AbDocument, id: &str, title: Option<&str>) -> String {
    let mut b = String::new();
    let sub = match title {
        Some(t) => {
            let _ = write!(b, "<h2>{}</h2>", escape(t));
            "h3"
        }
        None => "h2",
    };
    let _ = write!(b, "<div class=\"verdict\">{}</div>", escape(&headline(doc)));
    let _ = write!(b, "<p class=\"sub\">Method: {}</p>", escape(&doc.method));
    for w in &doc.warnings {
        let _ = write!(b, "<div class=\"warn\">Warning: {}</div>", escape(w));
    }
    let _ = write!(b, "<{sub}>Changes, B against A</{sub}>");
    table(&mut b, doc);
    if doc.changes.iter().any(|c| c.change.is_some()) {
        b.push_str(&intervals_svg(doc, id));
    }
    b
}

fn name(side: &Side, letter: &str) -> String {
    side_name(letter, &side.label)
}

fn rounds_series(side: &Side, letter: &str) -> Series {
    let points = side.rounds.iter().enumerate().map(|(i, r)| ((i + 1) as f64, r.ops_per_sec)).collect();
    Series { name: name(side, letter), points }
}

fn spectrum(side: &Side, letter: &str) -> Series {
    Series {
        name: name(side, letter),
        points: side.pooled.latency_spectrum_us.iter().map(|&(p, us)| (p, us / 1000.0)).collect(),
    }
}

fn table(b: &mut String, doc: &AbDocument) {
    let _ = write!(
        b,
        "<div class=\"scroll\"><table><tr><th>Figure</th><th>{}</th><th>{}</th><th>Change</th><th>{}</th><th>Verdict</th></tr>",
        escape(&name(&doc.a, "A")),
        escape(&name(&doc.b, "B")),
        escape(&interval_header(doc))
    );
    let shared = one_reason(doc);
    for c in &doc.changes {
        let verdict = match c.note.as_ref().filter(|_| !shared) {
            Some(note) => format!("{} <span class=\"sub\">({})</span>", escape(&c.verdict), escape(note)),
            None => escape(&c.verdict),
        };
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td style=\"text-align:left\">{verdict}</td></tr>",
            escape(&figure_name(&c.metric)),
            figure(&c.metric, c.a),
            figure(&c.metric, c.b),
            change_cell(c),
            interval_cell(c)
        );
    }
    b.push_str("</table></div>");
}

/// Each figure's change as a dot on its interval, against 0 and the noise band, on a log-ratio
/// axis (so +100 % and -50 % are as far from 0, and a 60-fold change does not flatten the rest).
fn intervals_svg(doc: &AbDocument, id: &str) -> String {
    let shown: Vec<_> = doc.changes.iter().filter(|c| c.change.is_some()).collect();
    let height = TOP_PAD + ROW * shown.len().max(1) as f64 + 34.0;
    let log = |change: f64| (1.0 + change).max(1e-9).ln();
    let noise = doc.noise_threshold;
    let reach = shown
        .iter()
        .flat_map(|c| [c.change_low, c.change_high])
        .flatten()
        .map(|x| log(x).abs())
        .fold(log(noise * 2.0).max(0.01), f64::max)
        * 1.1;
    let plot_w = WIDTH - LEFT - RIGHT;
    let px = |change: f64| LEFT + (log(change) + reach) / (2.0 * reach) * plot_w;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg id="{}" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" aria-label="change of each figure with its interval">"##,
        escape(id)
    );
    let _ = write!(
        out,
        r##"<text x="{LEFT}" y="18" class="title">Change of B against A, each with its {} interval (shaded: the noise threshold)</text>"##,
        percent(doc.confidence_each)
    );
    let bottom = height - 30.0;
    let _ = write!(
        out,
        r##"<rect x="{:.1}" y="{TOP_PAD}" width="{:.1}" height="{:.1}" fill="#ececec"/><line x1="{:.1}" y1="{TOP_PAD}" x2="{:.1}" y2="{bottom:.1}" stroke="#888"/>"##,
        px(-noise),
        px(noise) - px(-noise),
        bottom - TOP_PAD,
        px(0.0),
        px(0.0)
    );
    let mut last_x = f64::MIN;
    for t in TICKS.iter().map(|t| t / 100.0).filter(|t| log(*t).abs() <= reach) {
        let x = px(t);
        if x - last_x >= plot_w / 11.0 {
            let _ = write!(
                out,
                r##"<text x="{x:.1}" y="{:.1}" class="tick" text-anchor="middle">{:+} %</text>"##,
                bottom + 18.0,
                t * 100.0
            );
            last_x = x;
        }
    }
    for (i, c) in shown.iter().enumerate() {
        let y = TOP_PAD + ROW * (i as f64 + 0.5);
        let (low, high, mid) = (c.change_low.unwrap_or(0.0), c.change_high.unwrap_or(0.0), c.change.unwrap_or(0.0));
        let anchor = match px(mid) {
            x if x > WIDTH - 260.0 => "end",
            x if x < LEFT + 260.0 => "start",
            _ => "middle",
        };
        let color = match c.verdict.as_str() {
            "faster" => "#2ca02c",
            "slower" => "#d62728",
            _ => "#555",
        };
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" class="label" text-anchor="end">{}</text><line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="4"/><circle cx="{:.1}" cy="{y:.1}" r="6" fill="{color}"/><text x="{:.1}" y="{:.1}" class="tick" text-anchor="{anchor}">{} {} {}</text>"##,
            LEFT - 10.0,
            y + 5.0,
            escape(&c.metric),
            px(low),
            px(high),
            px(mid),
            px(mid),
            y - 10.0,
            escape(&change_cell(c)),
            escape(&interval_cell(c)),
            escape(&c.verdict)
        );
    }
    out.push_str("</svg>");
    out
}

const TOP_PAD: f64 = 30.0;

/// The axis' candidate ticks, in percent, spread over the log-ratio axis.
const TICKS: [f64; 27] = [
    -99.9, -99.0, -95.0, -90.0, -75.0, -50.0, -25.0, -10.0, -5.0, -2.0, -1.0, 0.0, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0,
    100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 50000.0, 100000.0,
];

fn sides(b: &mut String, doc: &AbDocument) {
    b.push_str("<h2>Sides</h2><div class=\"scroll\"><table><tr><th>Side</th><th>Source</th><th>Requests</th><th>Errors</th><th>Seconds</th><th>Price per hour</th><th>Ops/sec per price</th></tr>");
    for (letter, side) in [("A", &doc.a), ("B", &doc.b)] {
        let price =
            side.price_per_hour.map_or("-".into(), |p| format!("{p} {}", side.currency.as_deref().unwrap_or("USD")));
        let per = side.ops_per_sec_per_price.map_or("-".into(), |v| format!("{v:.0}"));
        let _ = write!(
            b,
            "<tr><td>{}</td><td style=\"text-align:left\"><code>{}</code></td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{per}</td></tr>",
            escape(&name(side, letter)),
            escape(&side.source),
            side.pooled.count,
            side.pooled.errors,
            side.pooled.seconds,
            escape(&price)
        );
    }
    b.push_str("</table></div>");
    if !doc.order.is_empty() {
        let _ = write!(b, "<p class=\"sub\">Round order: {}</p>", escape(&doc.order.join(" ")));
    }
}
