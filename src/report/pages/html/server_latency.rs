//! The HTML page's section on the server's own latency beside the run's wire-and-server time:
//! the rows the text report shows (run/server_latency.rs), as a table; kept with the pages so
//! that run/ writes no HTML.

use std::fmt::Write;

use crate::report::document::Document;
use crate::report::pages::chart::escape;
use crate::report::run::server_latency::{LEGEND, heading, no_wire, rows};

/// The HTML page's section, after the summary table; nothing for a result written before the
/// server's latency was read.
pub fn html(b: &mut String, doc: &Document) {
    let Some(latency) = &doc.server_latency else { return };
    b.push_str("<h2>Server's own latency</h2>");
    if let Some(why) = &latency.unavailable {
        let _ = write!(b, "<p>Unavailable: {}.</p>", escape(why));
        return;
    }
    let _ = write!(
        b,
        "<p>{}.</p><div class=\"scroll\"><table><tr><th>Type</th><th>server p50 µs</th><th>server p99 µs</th>\
         <th>server p99.9 µs</th><th>w+s p50 µs</th><th>w+s p99 µs</th><th>w+s p99.9 µs</th>\
         <th>network p99 µs</th><th>client p99 µs</th><th>run mean µs</th><th>run's calls</th></tr>",
        escape(&heading(latency))
    );
    let client = |name: &str| doc.commands.get(name).map(|op| op.service_us);
    for r in rows(latency, &client) {
        let _ = write!(b, "<tr><td>{}</td>", escape(r.name));
        for cell in r.cells() {
            let _ = write!(b, "<td>{cell}</td>");
        }
        b.push_str("</tr>");
    }
    let _ = write!(b, "</table></div><p class=\"sub\">{}.</p>", escape(LEGEND));
    if let Some(line) = no_wire(latency) {
        let _ = write!(b, "<p>{}.</p>", escape(&line));
    }
    for p in &latency.problems {
        let _ = write!(b, "<p>{}.</p>", escape(p));
    }
}
