//! The page's section on where the time went: the latency's three parts over time,
//! stacked (interval means, which add up to the mean exactly), and at p50, p99 and p99.9 (each
//! part's own percentile, stacked as bars beside the response time's percentile: percentiles
//! of parts need not add up to the whole's).

use std::fmt::Write;

use super::series::{Figure, series_of, timeline_x};
use crate::report::document::{Document, LatencyPartsSummary};
use crate::report::pages::chart::{self, Chart, Series, XAxis, escape};
use crate::stats::LatencySummary;

/// The parts, in stacking order, with their colours.
const PARTS: [(&str, &str); 3] =
    [("client send lag", "#ff7f0e"), ("wire and server", "#1f77b4"), ("client receive lag", "#d62728")];

fn part(p: &LatencyPartsSummary, i: usize) -> &LatencySummary {
    [&p.send_lag, &p.wire_and_server, &p.receive_lag][i]
}

/// The section, when the result kept a decomposition.
pub(super) fn section(b: &mut String, doc: &Document) {
    let Some(parts) = &doc.totals.latency_parts_us else { return };
    b.push_str("<h2>Where the time went</h2>");
    let _ = write!(
        b,
        "<p>From kernel receive timestamps ({} replies; clock offset within {:.1} µs): the client added {:.3} ms of \
         p99 ({:.0} %).</p>",
        parts.count,
        doc.measurement.clock_offset_bound_us.unwrap_or_default(),
        parts.client_of_p99 / 1000.0,
        parts.client_share_of_p99 * 100.0
    );
    // Stacked: each line is the sum of the parts up to it, the last one the whole mean.
    let stacked = |upto: usize| {
        move |p: &crate::report::document::Point| {
            let parts = p.totals.latency_parts_us.as_ref()?;
            Some((0..=upto).map(|i| part(parts, i).mean_us).sum::<f64>() / 1000.0)
        }
    };
    let names = ["send lag", "+ wire and server", "+ receive lag (the mean)"];
    let series: Vec<Series> = (0..3).map(|i| series_of(doc, names[i], stacked(i))).collect();
    if !timeline_x(doc).is_empty() {
        b.push_str(&chart::svg(&Chart {
            id: "latency-parts",
            title: "Mean response time by part per interval, stacked",
            x_label: "seconds",
            y_label: "ms",
            x_axis: XAxis::Linear,
            series,
        }));
    }
    b.push_str(&bars(parts, &doc.totals.latency_us));
}

/// Stacked horizontal bars: each part's p50, p99 and p99.9, and the response time's as a mark.
fn bars(parts: &LatencyPartsSummary, response: &LatencySummary) -> String {
    let figures: [(&str, Figure); 3] = [("p50", |l| l.p50_us), ("p99", |l| l.p99_us), ("p99.9", |l| l.p999_us)];
    let (width, left, row) = (1100.0, 70.0, 34.0);
    let widest = figures
        .iter()
        .map(|(_, f)| (0..3).map(|i| f(part(parts, i))).sum::<f64>().max(f(response)))
        .fold(1e-9, f64::max);
    let scale = (width - left - 260.0) / widest;
    let height = row * 3.0 + 40.0;
    let mut s = format!(
        "<svg class=\"chart\" id=\"latency-parts-bars\" viewBox=\"0 0 {width} {height}\" role=\"img\" \
         xmlns=\"http://www.w3.org/2000/svg\"><text class=\"title\" x=\"{left}\" y=\"18\">Each part's percentile, \
         stacked; the black mark is the response time's</text>"
    );
    for (r, (name, figure)) in figures.iter().enumerate() {
        let y = 30.0 + r as f64 * row;
        let _ = write!(s, "<text class=\"label\" x=\"8\" y=\"{}\">{}</text>", y + 18.0, escape(name));
        let mut x = left;
        for (i, (part_name, colour)) in PARTS.iter().enumerate() {
            let w = figure(part(parts, i)) * scale;
            let ms = figure(part(parts, i)) / 1000.0;
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"24\" fill=\"{colour}\"><title>{part_name}: \
                 {ms:.3} ms</title></rect>"
            );
            x += w;
        }
        let mark = left + figure(response) * scale;
        let _ = write!(
            s,
            "<rect x=\"{:.1}\" y=\"{}\" width=\"2\" height=\"30\" fill=\"#000\"/><text class=\"legend\" x=\"{:.1}\" \
             y=\"{}\">{:.3} ms</text>",
            mark - 1.0,
            y - 3.0,
            x.max(mark) + 8.0,
            y + 17.0,
            figure(response) / 1000.0
        );
    }
    for (i, (name, colour)) in PARTS.iter().enumerate() {
        let x = width - 180.0;
        let y = 34.0 + i as f64 * 18.0;
        let _ = write!(
            s,
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{colour}\"/><text class=\"legend\" x=\"{}\" \
             y=\"{}\">{name}</text>",
            y - 10.0,
            x + 16.0,
            y
        );
    }
    s.push_str("</svg>");
    s
}
