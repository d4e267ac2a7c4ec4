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
    for m in doc.roles.iter().filter_map(|r| r.messages.as_ref()) {
        for dropped in &m.dropped_subscribers {
            let _ = write!(b, "<p>Dropped: {}</p>", escape(dropped));
        }
    }
}
