//! The HTML report's roles: each role's requests and, for a pub/sub role, its messages and
//! their delivery latency. Nothing without roles.

use std::fmt::Write;

use super::super::chart::escape;
use crate::report::document::Document;

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
