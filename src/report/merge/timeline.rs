//! The merged time series: every shard's intervals placed by wall clock (a point's slot is its
//! start since the earliest start), added up slot by slot from their histograms (the interval
//! log's, or inline ones of older and merged results), and the runs (`--runs`) summed from them.

use super::error::MergeError;
use crate::report::document::Malformed;
use std::collections::BTreeMap;

use super::clock::Clock;
use super::figures::{Row, count_only, logged_op, op_stats};
use super::input::Input;
use crate::engine::RunFigures;
use crate::report::document::histo::{CompleteInterval, IntervalHistograms};
use crate::report::document::interval_log::by_run;
use crate::report::document::{Point, Repetition};
use crate::report::run::json::op_summary;
use crate::stats::{OpStats, Spread};

/// One merged interval: its totals, its commands and the shards' points in it.
#[derive(Default)]
struct Slot<'a> {
    totals: Row,
    commands: BTreeMap<String, Row>,
    points: Vec<&'a Point>,
}

/// The merged intervals, their histograms and each run's sum.
pub(super) struct Timeline {
    pub points: Vec<Point>,
    pub histograms: Vec<IntervalHistograms>,
    per_run: BTreeMap<usize, Row>,
}

impl Timeline {
    pub fn of(inputs: &[Input], clock: &Clock) -> Result<Timeline, MergeError> {
        let slots = slots(inputs, clock)?;
        let mut timeline = Timeline { points: Vec::new(), histograms: Vec::new(), per_run: BTreeMap::new() };
        for ((run, slot), s) in &slots {
            let duration = s.points.iter().map(|p| p.duration_secs).fold(0.0, f64::max);
            let op = s.totals.op();
            timeline.points.push(Point {
                run: *run,
                index: *slot,
                start_secs: *slot as f64 * clock.interval,
                duration_secs: duration,
                totals: op_summary(&op, duration, false),
                commands: s.commands.iter().map(|(n, r)| (n.clone(), r.op().count)).collect(),
                server: s.points.iter().find_map(|p| p.server),
                active_connections: s.points.iter().map(|p| p.active_connections).sum(),
            });
            let commands: Vec<(&String, OpStats)> = s.commands.iter().map(|(n, r)| (n, r.op())).collect();
            let rows = commands.iter().map(|(n, op)| (*n, op));
            timeline.histograms.push(IntervalHistograms::of(*run, *slot, &op, rows));
            timeline.per_run.entry(*run).or_default().merge(op);
        }
        Ok(timeline)
    }

    /// Runs (--runs): counts added, durations the longest shard's, percentiles from the sum;
    /// their spread when there are several.
    pub fn runs(&self, inputs: &[Input]) -> (Vec<RunFigures>, Option<Repetition>) {
        let mut runs = Vec::new();
        for (run, row) in &self.per_run {
            let figures: Vec<&RunFigures> = inputs.iter().filter_map(|i| i.doc.runs.get(*run)).collect();
            let duration = figures.iter().map(|f| f.duration_secs).fold(0.0, f64::max);
            let count: u64 = figures.iter().map(|f| f.count).sum();
            let op = row.op();
            let us = |q: f64| {
                if op.latency_ns.is_empty() { 0.0 } else { op.latency_ns.value_at_quantile(q) as f64 / 1000.0 }
            };
            runs.push(RunFigures {
                duration_secs: duration,
                count,
                ops_per_sec: if duration > 0.0 { count as f64 / duration } else { 0.0 },
                p50_us: us(0.5),
                p99_us: us(0.99),
                p99_9_us: us(0.999),
                errors: figures.iter().map(|f| f.errors).sum(),
            });
        }
        let repetition = (runs.len() > 1).then(|| {
            let of =
                |f: fn(&RunFigures) -> f64| Spread::of(&runs.iter().map(f).collect::<Vec<_>>()).expect("several runs");
            Repetition { ops_per_sec: of(|r| r.ops_per_sec), p99_us: of(|r| r.p99_us) }
        });
        (runs, repetition)
    }
}

/// Every shard's points added into the slot of the merged clock they fall in.
fn slots<'a>(inputs: &'a [Input], clock: &Clock) -> Result<BTreeMap<(usize, u64), Slot<'a>>, MergeError> {
    let mut slots: BTreeMap<(usize, u64), Slot> = BTreeMap::new();
    for i in inputs {
        let offset = clock.offset(&i.doc);
        for (p, (totals, commands)) in i.doc.time_series.iter().zip(rows(i)?) {
            let slot = ((offset + p.start_secs) / clock.interval).round() as u64;
            let entry = slots.entry((p.run, slot)).or_default();
            entry.totals.merge(totals);
            for (name, op) in commands {
                entry.commands.entry(name).or_default().merge(op);
            }
            entry.points.push(p);
        }
    }
    Ok(slots)
}

/// A point's totals and its commands, with their histograms.
type PointRows = (OpStats, Vec<(String, OpStats)>);

/// Each point's totals and commands with their histograms, in `time_series` order: from the
/// interval log (the i-th interval of a run in the log is its i-th point), else inline.
fn rows(i: &Input) -> Result<Vec<PointRows>, MergeError> {
    let mut out = Vec::new();
    if i.doc.histograms.intervals.is_empty() {
        let runs = by_run(i.log.clone());
        let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
        for p in &i.doc.time_series {
            let k = seen.entry(p.run).or_default();
            let logged = runs.get(&p.run).and_then(|r| r.get(*k)).ok_or_else(|| {
                format!("{}: interval {} of run {} is not in its interval log", i.name, p.index, p.run)
            })?;
            *k += 1;
            let totals = logged_op(&p.totals, Some(&logged.totals(|_| false)));
            let commands =
                p.commands.iter().map(|(n, c)| (n.clone(), logged_op(&count_only(*c), logged.command(n)))).collect();
            out.push((totals, commands));
        }
        return Ok(out);
    }
    let complete: Vec<CompleteInterval> = i
        .doc
        .histograms
        .intervals
        .iter()
        .map(IntervalHistograms::complete)
        .collect::<Result<_, Malformed>>()
        .map_err(|e| format!("{}: {e}", i.name))?;
    let by_key: BTreeMap<(usize, u64), &CompleteInterval> = complete.iter().map(|h| ((h.run, h.index), h)).collect();
    for p in &i.doc.time_series {
        let (run, index) = (p.run, p.index);
        let h = by_key.get(&(run, index)).ok_or_else(|| {
            format!("{}: interval {index} of run {run} has no histograms in histograms.intervals", i.name)
        })?;
        let totals = op_stats(&p.totals, Some(&h.totals))?;
        let mut commands = Vec::new();
        for (name, count) in &p.commands {
            commands.push((name.clone(), op_stats(&count_only(*count), h.commands.get(name))?));
        }
        out.push((totals, commands));
    }
    Ok(out)
}
