//! A role's figures named once: the one list every flat output (CSV, Prometheus, StatsD) and
//! every table (Markdown, HTML) reads, for each kind of role, and each kind's latencies by the
//! name `histograms.roles` keeps them under (`stats::latency_name`).

use std::fmt::Write as _;

use crate::engine::pubsub::Messages;
use crate::engine::queue::QueueFigures;
use crate::engine::streams::StreamFigures;
use crate::engine::tracking::Figures as TrackingFigures;
use crate::stats::LatencySummary;
use crate::stats::latency_name::{DELIVERY, END_TO_END, INVALIDATION_DELAY, SERVICE, WAIT};

use super::roles::RoleReport;

/// What one of a role's figures is, with its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// How many over the run (runs and shards add up).
    Count(u64),
    /// A level at one moment, or the most one reached (pending entries, lag).
    Level(u64),
    /// A share, from 0 to 1.
    Ratio(f64),
    /// Per second of the run.
    PerSec(f64),
    /// A percentile of the latency named `latency`, in milliseconds.
    Ms { latency: &'static str, ms: f64 },
}

impl Figure {
    /// As a plain number (a count exactly, a latency in milliseconds to the microsecond).
    pub fn text(self) -> String {
        match self {
            Figure::Count(n) | Figure::Level(n) => n.to_string(),
            Figure::Ratio(r) => format!("{r:.4}"),
            Figure::PerSec(r) => format!("{r:.2}"),
            Figure::Ms { ms, .. } => format!("{ms:.3}"),
        }
    }

    pub fn value(self) -> f64 {
        match self {
            Figure::Count(n) | Figure::Level(n) => n as f64,
            Figure::Ratio(r) | Figure::PerSec(r) => r,
            Figure::Ms { ms, .. } => ms,
        }
    }
}

/// One figure by the name every output gives it.
pub type Named = (String, Figure);

/// A kind of role's latencies: each by its name, its summary, and how many it was measured over.
pub type Latency<'a> = (&'static str, &'a LatencySummary, u64);

/// The role's figures, in order: its kind's counts, its other figures (levels, ratios, rates),
/// then `NAME_p50_ms`, `NAME_p99_ms` and `NAME_p999_ms` for each latency that measured
/// something. A figure that was not measured is left out, never written as 0.
pub fn of(role: &RoleReport) -> Vec<Named> {
    let mut counts: Vec<(&str, u64)> = Vec::new();
    let mut others: Vec<(&str, Figure)> = Vec::new();
    if let Some(m) = &role.messages {
        counts.extend([
            ("published", m.published),
            ("expected_deliveries", m.expected_deliveries),
            ("delivered", m.delivered),
            ("lost", m.lost),
            ("duplicated", m.duplicated),
            ("out_of_order", m.out_of_order),
            ("unconfirmed_publishes", m.unconfirmed_publishes),
        ]);
    }
    if let Some(s) = &role.stream {
        counts.extend([("produced", s.produced), ("consumed", s.consumed)]);
        counts.extend([("acked", s.acked), ("unconsumed", s.unconsumed)]);
        let levels = [("pending", s.pending), ("pending_max", s.pending_max), ("lag_max", s.lag_max)];
        others.extend(levels.into_iter().filter_map(|(name, n)| Some((name, Figure::Level(n?)))));
    }
    if let Some(q) = &role.queue {
        counts.extend([("produced", q.produced), ("consumed", q.consumed), ("unconsumed", q.unconsumed)]);
        counts.extend([("waited", q.waited), ("empty_pops", q.empty_pops)]);
    }
    if let Some(t) = &role.tracking {
        counts.extend([("reads", t.reads), ("local_hits", t.local_hits), ("server_reads", t.server_reads)]);
        counts.extend([("invalidations", t.invalidations), ("flushes", t.flushes), ("stale_reads", t.stale_reads)]);
        counts.extend([
            ("invalidations_timed", t.invalidations_timed),
            ("invalidations_untimed", t.invalidations_untimed),
        ]);
        if t.reads > 0 {
            others.push(("hit_ratio", Figure::Ratio(t.hit_ratio)));
        }
        others.push(("invalidations_per_sec", Figure::PerSec(t.invalidations_per_sec)));
    }
    let mut out: Vec<Named> = counts.into_iter().map(|(name, n)| (name.to_string(), Figure::Count(n))).collect();
    out.extend(others.into_iter().map(|(name, f)| (name.to_string(), f)));
    for (latency, l, measured) in latencies(role) {
        if measured == 0 {
            continue;
        }
        for (tag, us) in [("p50", l.p50_us), ("p99", l.p99_us), ("p999", l.p999_us)] {
            out.push((format!("{latency}_{tag}_ms"), Figure::Ms { latency, ms: us / 1000.0 }));
        }
    }
    out
}

/// The role's latencies, whatever its kind.
pub fn latencies(role: &RoleReport) -> Vec<Latency<'_>> {
    let mut out = Vec::new();
    out.extend(role.messages.as_ref().map(messages));
    out.extend(role.stream.as_ref().map(stream));
    out.extend(role.queue.as_ref().into_iter().flat_map(queue));
    out.extend(role.tracking.as_ref().map(tracking));
    out
}

fn messages(m: &Messages) -> Latency<'_> {
    (DELIVERY, &m.delivery_latency, m.delivered)
}

fn stream(s: &StreamFigures) -> Latency<'_> {
    (END_TO_END, &s.end_to_end_latency, s.consumed)
}

fn queue(q: &QueueFigures) -> [Latency<'_>; 3] {
    [(WAIT, &q.wait, q.consumed), (SERVICE, &q.service, q.consumed), (END_TO_END, &q.end_to_end_latency, q.consumed)]
}

fn tracking(t: &TrackingFigures) -> Latency<'_> {
    (INVALIDATION_DELAY, &t.invalidation_delay, t.invalidations_timed)
}

/// Summarises each latency of the role's kind from its kept histogram (a merge's sum).
pub fn summarise(role: &mut RoleReport) {
    if let Some(m) = role.messages.as_mut() {
        m.delivery_latency = m.kept.summary(DELIVERY);
    }
    if let Some(s) = role.stream.as_mut() {
        s.end_to_end_latency = s.kept.summary(END_TO_END);
    }
    if let Some(q) = role.queue.as_mut() {
        (q.wait, q.service) = (q.kept.summary(WAIT), q.kept.summary(SERVICE));
        q.end_to_end_latency = q.kept.summary(END_TO_END);
    }
    if let Some(t) = role.tracking.as_mut() {
        t.invalidation_delay = t.kept.summary(INVALIDATION_DELAY);
    }
}

/// A table of roles' figures: one column per figure any of them has, in the order they first
/// come, and per role its cells (`None` where its kind has no such figure or measured none).
pub struct Grid<'a> {
    pub columns: Vec<String>,
    pub rows: Vec<(&'a RoleReport, Vec<Option<Figure>>)>,
}

impl<'a> Grid<'a> {
    pub fn of(roles: impl IntoIterator<Item = &'a RoleReport>) -> Grid<'a> {
        let listed: Vec<(&RoleReport, Vec<Named>)> = roles.into_iter().map(|r| (r, of(r))).collect();
        let mut columns: Vec<String> = Vec::new();
        for (name, _) in listed.iter().flat_map(|(_, f)| f) {
            if !columns.contains(name) {
                columns.push(name.clone());
            }
        }
        let rows = listed
            .into_iter()
            .map(|(r, figures)| {
                let cells = columns.iter().map(|c| figures.iter().find(|(n, _)| n == c).map(|&(_, f)| f)).collect();
                (r, cells)
            })
            .collect();
        Grid { columns, rows }
    }

    /// One grid per kind of role, in the order the kinds first come.
    pub fn by_kind(roles: &'a [RoleReport]) -> Vec<Grid<'a>> {
        let mut kinds: Vec<&str> = Vec::new();
        for r in roles {
            if !kinds.contains(&r.kind.as_str()) {
                kinds.push(&r.kind);
            }
        }
        kinds.into_iter().map(|k| Grid::of(roles.iter().filter(|r| r.kind == k))).collect()
    }
}

/// A figure's name as a table's heading says it: `delivery_p999_ms` is "delivery p99.9 ms".
pub fn label(name: &str) -> String {
    name.split('_').map(|w| if w == "p999" { "p99.9" } else { w }).collect::<Vec<_>>().join(" ")
}

impl RoleReport {
    /// The role's own figures, each by the one name every flat output gives it, in order
    /// (`role_figures`): a pub/sub role's `published`, `expected_deliveries`, `delivered`,
    /// `lost`, `duplicated`, `out_of_order`, `delivery_p50_ms`, ...; a stream role's `produced`,
    /// `consumed`, `pending`, `end_to_end_p99_ms`, ...; a queue role's `wait_p99_ms`,
    /// `service_p99_ms`, ...; a tracking role's `local_hits`, `invalidations`, `stale_reads`,
    /// `invalidation_delay_p99_ms`, ... A figure that was not measured is left out.
    pub fn figures(&self) -> Vec<Named> {
        of(self)
    }
}

/// The roles as Markdown tables, after the summary: their requests, then per kind of role its
/// figures (`RoleReport::figures`). Nothing without roles.
pub fn markdown(roles: &[RoleReport]) -> String {
    if roles.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("\n| Role | Kind | Loop | Requests | Ops/sec | p99 ms |\n|---|---|---|---:|---:|---:|\n");
    for role in roles {
        let t = &role.totals;
        let p99_ms = t.latency_us.p99_us / 1000.0;
        let mode = role.loop_mode.replace('_', " ");
        let (name, kind) = (&role.name, &role.kind);
        let _ = writeln!(out, "| {name} | {kind} | {mode} | {} | {:.0} | {p99_ms:.3} |", t.count, t.ops_per_sec);
    }
    for grid in Grid::by_kind(roles) {
        let mut heading: Vec<String> = vec!["Role".into()];
        heading.extend(grid.columns.iter().map(|c| capitalised(&label(c))));
        let _ = writeln!(out, "\n| {} |\n|---|{}", heading.join(" | "), "---:|".repeat(grid.columns.len()));
        for (role, cells) in &grid.rows {
            let cells: Vec<String> = cells.iter().map(|c| c.map_or_else(|| "—".into(), |f| f.text())).collect();
            let _ = writeln!(out, "| {} | {} |", role.name, cells.join(" | "));
        }
    }
    out
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_read_as_words() {
        assert_eq!(label("delivery_p999_ms"), "delivery p99.9 ms");
        assert_eq!(label("local_hits"), "local hits");
    }

    #[test]
    fn every_kind_names_its_counts_and_only_measured_latencies() {
        let role = RoleReport {
            stream: Some(StreamFigures { produced: 3, consumed: 0, pending: Some(1), ..StreamFigures::default() }),
            ..RoleReport::default()
        };
        let names: Vec<String> = of(&role).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["produced", "consumed", "acked", "unconsumed", "pending"]);
        let role = RoleReport {
            queue: Some(QueueFigures { produced: 2, consumed: 2, ..QueueFigures::default() }),
            ..RoleReport::default()
        };
        let names: Vec<String> = of(&role).into_iter().map(|(n, _)| n).collect();
        assert!(names.contains(&"wait_p99_ms".to_string()) && names.contains(&"service_p999_ms".to_string()));
    }
}
