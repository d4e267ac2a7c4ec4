//! The server's own latency per command (`INFO latencystats`) beside this run's wire-and-server
//! time (kernel receive timestamps), so that the network's share is what remains, and beside the
//! client's service time, as the text report shows it (the HTML page's section,
//! pages/html/server_latency.rs, reads the same rows); and, where a figure is missing, why, in
//! plain words.

use std::fmt::Write;

use crate::engine::{Outcome, ServerCommandLatency, ServerLatency};
use crate::stats::{LatencySummary, OpStats};

/// What the figures are, said once under them.
pub(crate) const LEGEND: &str = "w+s: wire and server, this run's time from the send to the kernel's receive of the \
                      reply (kernel receive timestamps); network p99: w+s p99 less the server's p99, what the \
                      network, the kernels and the server's time outside the command (its event loop, a wait for \
                      a core) add, and its share of w+s p99; client p99: service time, from the send to the reply \
                      read; run mean: the server's mean per call over this run alone (INFO commandstats); run's \
                      calls: of the calls behind the server's percentiles, those made during this run (all clients)";

/// One command's row: its name, the server's figures (with the run's wire-and-server time
/// beside them, see [`of_run`]), the client's service time.
pub(crate) struct Row<'a> {
    pub name: &'a str,
    pub server: &'a ServerCommandLatency,
    pub client: Option<LatencySummary>,
}

impl Row<'_> {
    /// The row's figures after its name, as the text and the HTML page show them: the server's
    /// p50, p99, p99.9, the run's wire-and-server p50, p99, p99.9, the network's p99, the
    /// client's service p99, the run's mean and the run's share of the calls.
    pub(crate) fn cells(&self) -> [String; 10] {
        let s = self.server;
        [
            us(s.p50_ms),
            us(s.p99_ms),
            us(s.p99_9_ms),
            us(s.wire_and_server_p50_ms),
            us(s.wire_and_server_p99_ms),
            us(s.wire_and_server_p99_9_ms),
            network(s),
            us(self.client.as_ref().map(|l| l.p99_us / 1000.0)),
            us(s.run_mean_ms),
            share(s),
        ]
    }
}

pub(crate) fn rows<'a>(latency: &'a ServerLatency, client: &dyn Fn(&str) -> Option<LatencySummary>) -> Vec<Row<'a>> {
    latency.commands.iter().map(|(name, server)| Row { name, server, client: client(name) }).collect()
}

/// The outcome's server latency with the run's wire-and-server time set beside the server's
/// figures, command by command (rows `SET` and `SET#2` together), and the network's p99 where
/// both are known.
pub fn of_run(outcome: &Outcome) -> Option<ServerLatency> {
    let mut latency = outcome.server_latency.clone()?;
    for (name, c) in latency.commands.iter_mut() {
        let Some(wire) = wire_and_server(outcome, name) else { continue };
        let ms = |us: f64| Some(us / 1000.0);
        c.wire_and_server_p50_ms = ms(wire.p50_us);
        c.wire_and_server_p99_ms = ms(wire.p99_us);
        c.wire_and_server_p99_9_ms = ms(wire.p999_us);
        c.network_p99_ms = c.wire_and_server_p99_ms.zip(c.p99_ms).map(|(w, s)| w - s);
    }
    Some(latency)
}

/// The run's wire-and-server time for the rows of command `name`, when it decomposed any reply.
fn wire_and_server(outcome: &Outcome, name: &str) -> Option<LatencySummary> {
    let mut all: Option<OpStats> = None;
    for (row, op) in outcome.command_names.iter().zip(&outcome.ops) {
        if row.split('#').next() == Some(name) {
            all.get_or_insert_with(OpStats::default).merge(op);
        }
    }
    let parts = all?.parts.filter(|p| p.count() > 0)?;
    Some(LatencySummary::of(&parts.wire_ns))
}

/// Milliseconds as microseconds: a server's own times are mostly under one.
pub(crate) fn us(ms: Option<f64>) -> String {
    ms.map_or("-".into(), |v| format!("{:.1}", v * 1000.0))
}

/// The network's p99 in microseconds and its share of the wire-and-server p99.
fn network(c: &ServerCommandLatency) -> String {
    match (c.network_p99_ms, c.wire_and_server_p99_ms) {
        (Some(net), Some(wire)) if wire > 0.0 => format!("{} ({:.0}%)", us(Some(net)), 100.0 * net / wire),
        (net, _) => us(net),
    }
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

/// What the reports say when the run has no wire-and-server time to set beside the server's.
pub(crate) fn no_wire(latency: &ServerLatency) -> Option<String> {
    let why = latency.wire_and_server_unavailable.as_ref()?;
    Some(format!("wire-and-server time unavailable ({why}): the network's share is not known"))
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
        "{:<width$}{:>9}{:>9}{:>9}{:>11}{:>11}{:>11}{:>16}{:>12}{:>10}{:>16}",
        "Type",
        "p50",
        "p99",
        "p99.9",
        "w+s p50",
        "w+s p99",
        "w+s p99.9",
        "network p99",
        "client p99",
        "run mean",
        "run's calls"
    );
    for r in rows(latency, client) {
        let [p50, p99, p999, w50, w99, w999, net, c99, mean, calls] = r.cells();
        let _ = writeln!(
            out,
            "{:<width$}{p50:>9}{p99:>9}{p999:>9}{w50:>11}{w99:>11}{w999:>11}{net:>16}{c99:>12}{mean:>10}{calls:>16}",
            r.name
        );
    }
    let _ = writeln!(out, "({LEGEND})");
    if let Some(line) = no_wire(latency) {
        let _ = writeln!(out, "Server's own latency: {line}");
    }
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
            wire_and_server_p50_ms: Some(0.03),
            wire_and_server_p99_ms: Some(0.04),
            wire_and_server_p99_9_ms: Some(0.05),
            network_p99_ms: Some(0.032),
        };
        ServerLatency {
            unavailable: None,
            commands: [("GET".to_string(), get)].into(),
            problems: vec!["no latencystats entry for SET".into()],
            ..ServerLatency::unavailable("")
        }
    }

    #[test]
    fn the_text_block_sets_server_wire_and_client_side_by_side() {
        let mut out = String::new();
        let client =
            |_: &str| Some(LatencySummary { p50_us: 120.0, p99_us: 300.0, p999_us: 500.0, ..Default::default() });
        text(&mut out, &latency(), &client);
        assert!(out.contains("since the server started or its last CONFIG RESETSTAT, not this run alone"), "{out}");
        let row = out.lines().find(|l| l.starts_with("GET")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        let want = ["GET", "2.0", "8.0", "-", "30.0", "40.0", "50.0", "32.0", "(80%)", "300.0", "3.0", "1000", "(50%)"];
        assert_eq!(cells, want);
        assert!(out.contains("Server's own latency: no latencystats entry for SET"), "{out}");
        assert!(!out.contains("wire-and-server time unavailable"), "{out}");
    }

    #[test]
    fn a_run_without_wire_and_server_time_says_why() {
        let mut none = latency();
        let get = none.commands.get_mut("GET").unwrap();
        (get.wire_and_server_p50_ms, get.wire_and_server_p99_ms, get.wire_and_server_p99_9_ms) = (None, None, None);
        get.network_p99_ms = None;
        none.wire_and_server_unavailable = Some("kernel receive timestamps are not available on a unix socket".into());
        let mut out = String::new();
        text(&mut out, &none, &|_| None);
        let row = out.lines().find(|l| l.starts_with("GET")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[4..9], ["-", "-", "-", "-", "-"], "{out}");
        let said = "Server's own latency: wire-and-server time unavailable (kernel receive timestamps are not \
                    available on a unix socket): the network's share is not known";
        assert!(out.contains(said), "{out}");
    }

    #[test]
    fn an_unavailable_figure_says_why() {
        let mut out = String::new();
        text(&mut out, &ServerLatency::unavailable("memcached reports no per-command latency"), &|_| None);
        assert_eq!(out, "Server's own latency: unavailable (memcached reports no per-command latency)\n");
    }
}
