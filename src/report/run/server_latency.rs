//! The server's own latency per command (`INFO latencystats`) beside the client's, as the text
//! report shows it (the HTML page's section, pages/html/server_latency.rs, reads the same rows);
//! and, where there is none, why, in plain words.

use std::fmt::Write;

use crate::engine::{ServerCommandLatency, ServerLatency};
use crate::stats::LatencySummary;

/// What the figures are, said once under them.
pub(crate) const LEGEND: &str = "client: service time, from the send to the reply read; run mean: the server's mean per call \
                      over this run alone (INFO commandstats); run's calls: of the calls behind the server's \
                      percentiles, those made during this run (all clients)";

/// One command's row: its name, the server's figures, the client's service time.
pub(crate) struct Row<'a> {
    pub name: &'a str,
    pub server: &'a ServerCommandLatency,
    pub client: Option<LatencySummary>,
}

impl Row<'_> {
    /// The row's figures after its name, as the text and the HTML page show them: the server's
    /// p50, p99, p99.9, the client's, the run's mean and the run's share of the calls.
    pub(crate) fn cells(&self) -> [String; 8] {
        let c = |f: fn(&LatencySummary) -> f64| us(self.client.as_ref().map(|l| f(l) / 1000.0));
        let s = self.server;
        [
            us(s.p50_ms),
            us(s.p99_ms),
            us(s.p99_9_ms),
            c(|l| l.p50_us),
            c(|l| l.p99_us),
            c(|l| l.p999_us),
            us(s.run_mean_ms),
            share(s),
        ]
    }
}

pub(crate) fn rows<'a>(latency: &'a ServerLatency, client: &dyn Fn(&str) -> Option<LatencySummary>) -> Vec<Row<'a>> {
    latency.commands.iter().map(|(name, server)| Row { name, server, client: client(name) }).collect()
}

/// Milliseconds as microseconds: a server's own times are mostly under one.
pub(crate) fn us(ms: Option<f64>) -> String {
    ms.map_or("-".into(), |v| format!("{:.1}", v * 1000.0))
}

/// The calls made during the run and their share of those behind the percentiles.
pub(crate) fn share(c: &ServerCommandLatency) -> String {
    match (c.calls_in_run, c.calls_total) {
        (Some(run), Some(total)) if total > 0 => format!("{run} ({:.0}%)", 100.0 * run as f64 / total as f64),
        (Some(run), _) => run.to_string(),
        _ => "unknown".into(),
    }
}

/// What the percentiles cover, and over which nodes.
pub(crate) fn heading(latency: &ServerLatency) -> String {
    let over = match latency.nodes.len() {
        0 | 1 => String::new(),
        n => format!("; each the highest over {n} primaries, an upper bound on the cluster's"),
    };
    format!("{}: {}, not this run alone{over}", latency.source, latency.span)
}

/// The text report's block, under the table.
pub fn text(out: &mut String, latency: &ServerLatency, client: &dyn Fn(&str) -> Option<LatencySummary>) {
    if let Some(why) = &latency.unavailable {
        let _ = writeln!(out, "Server's own latency: unavailable ({why})");
        return;
    }
    let _ = writeln!(out, "Server's own latency in microseconds ({}):", heading(latency));
    let width = latency.commands.keys().map(|n| n.len() + 1).max().unwrap_or(0).max(8);
    let _ = writeln!(
        out,
        "{:<width$}{:>9}{:>9}{:>9}{:>14}{:>14}{:>14}{:>10}{:>16}",
        "Type", "p50", "p99", "p99.9", "client p50", "client p99", "client p99.9", "run mean", "run's calls"
    );
    for r in rows(latency, client) {
        let [p50, p99, p999, c50, c99, c999, mean, calls] = r.cells();
        let _ = writeln!(
            out,
            "{:<width$}{p50:>9}{p99:>9}{p999:>9}{c50:>14}{c99:>14}{c999:>14}{mean:>10}{calls:>16}",
            r.name
        );
    }
    let _ = writeln!(out, "({LEGEND})");
    for p in &latency.problems {
        let _ = writeln!(out, "Server's own latency: {p}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency() -> ServerLatency {
        let get = ServerCommandLatency {
            p50_ms: Some(0.002),
            p99_ms: Some(0.008),
            p99_9_ms: None,
            calls_total: Some(2000),
            calls_in_run: Some(1000),
            run_mean_ms: Some(0.003),
        };
        ServerLatency {
            unavailable: None,
            commands: [("GET".to_string(), get)].into(),
            problems: vec!["no latencystats entry for SET".into()],
            ..ServerLatency::unavailable("")
        }
    }

    #[test]
    fn the_text_block_sets_server_and_client_side_by_side() {
        let mut out = String::new();
        let client =
            |_: &str| Some(LatencySummary { p50_us: 120.0, p99_us: 300.0, p999_us: 500.0, ..Default::default() });
        text(&mut out, &latency(), &client);
        assert!(out.contains("since the server started or its last CONFIG RESETSTAT, not this run alone"), "{out}");
        let row = out.lines().find(|l| l.starts_with("GET")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells, ["GET", "2.0", "8.0", "-", "120.0", "300.0", "500.0", "3.0", "1000", "(50%)"]);
        assert!(out.contains("Server's own latency: no latencystats entry for SET"), "{out}");
    }

    #[test]
    fn an_unavailable_figure_says_why() {
        let mut out = String::new();
        text(&mut out, &ServerLatency::unavailable("memcached reports no per-command latency"), &|_| None);
        assert_eq!(out, "Server's own latency: unavailable (memcached reports no per-command latency)\n");
    }
}
