//! The HTML report's roles: each role's requests and its own figures (a pub/sub role's
//! messages, a stream role's entries, ...) over the run, and a pub/sub role's delivery latency
//! over time. Nothing without roles.

use std::fmt::Write;

use super::super::chart::{self, Chart, Series, XAxis, escape};
use crate::report::document::Document;
use crate::report::document::role_figures::{Grid, label};
use crate::report::document::roles::RoleReport;
use crate::stats::LatencySummary;

/// The roles section, after the summary: their requests, then per kind of role its figures
/// (`RoleReport::figures`), then what the server dropped.
pub(super) fn html(b: &mut String, doc: &Document) {
    if doc.roles.is_empty() {
        return;
    }
    b.push_str(
        "<h2>Roles</h2><div class=\"scroll\"><table><tr><th>role</th><th>kind</th><th>loop</th><th>requests</th><th>ops/s</th>\
         <th>p99 ms</th></tr>",
    );
    for role in &doc.roles {
        let t = &role.totals;
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.3}</td></tr>",
            escape(&role.name),
            escape(&role.kind),
            escape(&role.loop_mode.replace('_', " ")),
            t.count,
            t.ops_per_sec,
            t.latency_us.p99_us / 1000.0
        );
    }
    b.push_str("</table></div>");
    for grid in Grid::by_kind(&doc.roles) {
        b.push_str("<div class=\"scroll\"><table><tr><th>role</th>");
        for column in &grid.columns {
            let _ = write!(b, "<th>{}</th>", escape(&label(column)));
        }
        b.push_str("</tr>");
        for (role, cells) in &grid.rows {
            let _ = write!(b, "<tr><td>{}</td>", escape(&role.name));
            for cell in cells {
                let _ = write!(b, "<td>{}</td>", cell.map_or_else(|| "—".into(), |f| f.text()));
            }
            b.push_str("</tr>");
        }
        b.push_str("</table></div>");
    }
    for role in &doc.roles {
        for dropped in role.dropped() {
            let _ = write!(b, "<p>Dropped ({}): {}</p>", escape(&role.name), escape(dropped));
        }
    }
    for role in doc.roles.iter().filter(|r| r.messages.is_some()) {
        over_time(b, role);
    }
}

/// A pub/sub role's delivery latency per interval (by when the messages arrived), and its
/// deliveries per second; a merged result, whose intervals keep no latency, shows the
/// deliveries only.
fn over_time(b: &mut String, role: &RoleReport) {
    let points = &role.over_time;
    let end = |p: &crate::stats::RolePoint| p.start_secs + p.duration_secs;
    let latency = |name: &str, figure: fn(&LatencySummary) -> f64| Series {
        name: name.into(),
        points: points.iter().filter_map(|p| p.latency_us.as_ref().map(|l| (end(p), figure(l) / 1000.0))).collect(),
    };
    let series: Vec<Series> =
        vec![latency("p50", |l| l.p50_us), latency("p99", |l| l.p99_us), latency("p99.9", |l| l.p999_us)];
    if series.iter().any(|s| !s.points.is_empty()) {
        let title = format!("Delivery latency over time: {} (publish to subscriber)", role.name);
        b.push_str(&chart::svg(&Chart {
            id: "delivery-latency",
            title: &title,
            x_label: "seconds",
            y_label: "ms",
            x_axis: XAxis::Linear,
            series,
        }));
    }
    let rate = |p: &crate::stats::RolePoint| {
        let n = p.counts.get("delivered").copied().unwrap_or(0);
        (p.duration_secs > 0.0).then(|| (end(p), n as f64 / p.duration_secs))
    };
    let delivered = Series { name: "delivered".into(), points: points.iter().filter_map(rate).collect() };
    if !delivered.points.is_empty() {
        let title = format!("Deliveries over time: {}", role.name);
        b.push_str(&chart::svg(&Chart {
            id: "deliveries",
            title: &title,
            x_label: "seconds",
            y_label: "messages/s",
            x_axis: XAxis::Linear,
            series: vec![delivered],
        }));
    }
}
