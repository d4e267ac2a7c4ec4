//! The HTML report's roles: each role's requests and, for a pub/sub role, its messages and
//! their delivery latency, over the run and over time. Nothing without roles.

use std::fmt::Write;

use super::super::chart::{self, Chart, Series, XAxis, escape};
use crate::report::document::Document;
use crate::report::document::roles::RoleReport;
use crate::stats::LatencySummary;

/// The roles section, after the summary.
pub(super) fn html(b: &mut String, doc: &Document) {
    if doc.roles.is_empty() {
        return;
    }
    b.push_str(
        "<h2>Roles</h2><div class=\"scroll\"><table><tr><th>role</th><th>kind</th><th>requests</th><th>ops/s</th>\
         <th>p99 ms</th><th>published</th><th>expected deliveries</th><th>delivered</th><th>lost</th>\
         <th>duplicated</th><th>out of order</th><th>delivery p50 ms</th><th>delivery p99 ms</th></tr>",
    );
    for role in &doc.roles {
        let t = &role.totals;
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.3}</td>",
            escape(&role.name),
            escape(&role.kind),
            t.count,
            t.ops_per_sec,
            t.latency_us.p99_us / 1000.0
        );
        match &role.messages {
            Some(m) => {
                let _ = write!(
                    b,
                    "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                    m.published, m.expected_deliveries, m.delivered, m.lost, m.duplicated, m.out_of_order
                );
                if m.delivered > 0 {
                    let d = &m.delivery_latency;
                    let _ = write!(b, "<td>{:.3}</td><td>{:.3}</td></tr>", d.p50_us / 1000.0, d.p99_us / 1000.0);
                } else {
                    b.push_str("<td>—</td><td>—</td></tr>");
                }
            }
            None => b.push_str("<td colspan=\"8\">—</td></tr>"),
        }
    }
    b.push_str("</table></div>");
    tracking(b, doc);
    for m in doc.roles.iter().filter_map(|r| r.messages.as_ref()) {
        for dropped in &m.dropped_subscribers {
            let _ = write!(b, "<p>Dropped: {}</p>", escape(dropped));
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

/// The tracking roles' cached reads: nothing without one.
fn tracking(b: &mut String, doc: &Document) {
    let mut rows = doc.roles.iter().filter_map(|r| Some((r, r.tracking.as_ref()?))).peekable();
    if rows.peek().is_none() {
        return;
    }
    b.push_str(
        "<div class=\"scroll\"><table><tr><th>role</th><th>reads</th><th>local hits</th><th>hit ratio</th>\
         <th>invalidations</th><th>invalidations/s</th><th>stale reads</th><th>invalidation p50 ms</th>\
         <th>invalidation p99 ms</th></tr>",
    );
    for (role, t) in rows {
        let d = &t.invalidation_delay;
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{:.3}</td>\
             <td>{:.3}</td></tr>",
            escape(&role.name),
            t.reads,
            t.local_hits,
            t.hit_ratio,
            t.invalidations,
            t.invalidations_per_sec,
            t.stale_reads,
            d.p50_us / 1000.0,
            d.p99_us / 1000.0
        );
        for dropped in &t.dropped_readers {
            let _ = write!(b, "<tr><td colspan=\"9\">Dropped: {}</td></tr>", escape(dropped));
        }
    }
    b.push_str("</table></div>");
}
