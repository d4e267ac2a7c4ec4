//! Reading a journal back (`respbench recover`): its whole lines, up to the last one a kill or
//! a power loss left complete, with each interval's histograms from the interval log its
//! header names, turned into each run's `Outcome` as the engine would have handed it over, pooled as `--runs` pools them, and made into the result document by
//! `json::measured` from the header's frame: one way to build a result, whether the run ended
//! or was killed.

use crate::report::document::Malformed;
use std::time::{Duration, Instant};

use super::line::{Header, IntervalLine, Line, MAGIC, OpLine, RunEnded, VERSION};
use crate::engine::pubsub::Messages;
use crate::engine::{Interval, Outage, Outcome, Timeline};
use crate::report::document::histo;
use crate::report::document::histo::IntervalHistograms;
use crate::report::document::interval_log::{self, LoggedInterval};
use crate::report::document::{Document, Recovery};
use crate::stats::{ErrorKind, OpStats, RolePoint, RoleWindow, Window};

/// A journal's result and what became of its lines.
pub struct Recovered {
    pub doc: Document,
    /// A last line cut short (or unreadable) was left out.
    pub cut: bool,
}

/// Reads the interval log a journal names: its bytes and how to name it in errors.
pub type ReadLog<'a> = dyn Fn(&str) -> Result<(Vec<u8>, String), Malformed> + 'a;

/// One run's lines.
#[derive(Default)]
struct RunLines {
    intervals: Vec<IntervalLine>,
    ended: Option<RunEnded>,
}

/// The result of everything journaled in `text` (`what` names the file in errors), marked
/// interrupted; `read_log` reads the interval log the header names (its bytes, and how to name
/// it). `Err` says why there is none.
pub fn recover(text: &str, what: &str, read_log: &ReadLog<'_>) -> Result<Recovered, Malformed> {
    let (header, runs, cut) = lines(text, what)?;
    if runs.iter().all(|r| r.intervals.is_empty()) {
        return Err(format!("{what} holds no completed interval: there is nothing to recover").into());
    }
    let (log, log_what) = read_log(&header.interval_log)?;
    let mut logged = interval_log::by_run(interval_log::read(&log, &log_what)?);
    let (mut outcomes, mut inline) = (Vec::new(), Vec::new());
    for (run, lines) in runs.into_iter().enumerate().filter(|(_, r)| !r.intervals.is_empty()) {
        let intervals = logged.remove(&run).unwrap_or_default();
        if intervals.len() < lines.intervals.len() {
            return Err(format!(
                "{log_what} holds {} intervals of run {} where {what} journaled {}: not this journal's interval log",
                intervals.len(),
                run + 1,
                lines.intervals.len()
            )
            .into());
        }
        let (o, h) = outcome(run, lines, &intervals, &header.frame.roles)
            .map_err(|e| format!("{what}: run {}: {e}", run + 1))?;
        outcomes.push(o);
        inline.extend(h);
    }
    let last = outcomes.last().and_then(|o| o.timeline.last()).expect("a run with intervals");
    let last_end_secs = last.start_secs + last.duration_secs;
    let last_started_ms = outcomes.last().map_or(0, |o| o.started_unix_ms);
    let intervals = outcomes.iter().map(|o| o.timeline.len() as u64).sum();
    let mut pooled = Outcome::pool(outcomes).expect("at least one run");
    pooled.interrupted = true;
    let recovery = Recovery {
        journal: what.to_string(),
        intervals,
        last_interval_end_secs: last_end_secs,
        last_interval_end_unix_ms: last_started_ms + (last_end_secs * 1000.0) as u64,
        cut_line: cut,
    };
    pooled.warnings.push(format!(
        "recovered from {what}: the run did not end (killed?); its result holds the {intervals} intervals journaled, \
         the last ending {last_end_secs:.2} s into the run"
    ));
    // The journal keeps the plan as the result shows it, not `--client-share-warning`: the
    // default threshold names the client's share in a recovered run's verdict.
    let mut doc = crate::report::run::json::measured(header.frame, &pooled, crate::config::CLIENT_SHARE_WARNING);
    doc.recovered = Some(recovery);
    // A recovered result keeps its intervals inline, as a merged one does: it stands alone
    // (merge and memtier's layout read them) whatever becomes of the interval log.
    doc.histograms.intervals = inline;
    Ok(Recovered { doc, cut })
}

/// The header and each run's lines; whether a last line was left out.
fn lines(text: &str, what: &str) -> Result<(Header, Vec<RunLines>, bool), Malformed> {
    // Only whole lines: what follows the last newline is a line the writer never finished.
    let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
    let mut cut = whole.len() < text.len();
    let all: Vec<&str> = whole.lines().collect();
    let mut header = None;
    let mut runs: Vec<RunLines> = Vec::new();
    for (n, raw) in all.iter().enumerate() {
        let line: Line = match serde_json::from_str(raw) {
            Ok(line) => line,
            // A last line that does not read was being written when the power went.
            Err(_) if n + 1 == all.len() && n > 0 => {
                cut = true;
                break;
            }
            Err(e) if n == 0 => return Err(format!("{what} is not a respbench journal ({e})").into()),
            Err(e) => return Err(format!("{what}:{}: not a journal line ({e})", n + 1).into()),
        };
        match (line, header.is_some()) {
            (Line::Header(h), false) => {
                if h.journal != MAGIC || h.version != VERSION {
                    return Err(
                        format!("{what}: a journal of version {} (this respbench reads {VERSION})", h.version).into()
                    );
                }
                header = Some(*h);
            }
            (_, false) => return Err(format!("{what} is not a respbench journal (its first line is no header)").into()),
            (Line::Header(_), true) => return Err(format!("{what}:{}: a second header", n + 1).into()),
            (Line::Interval(i), true) => {
                let run = i.run;
                run_lines(&mut runs, run).intervals.push(*i);
            }
            (Line::RunEnded(e), true) => {
                let run = e.run;
                run_lines(&mut runs, run).ended = Some(*e);
            }
        }
    }
    let header = header.ok_or_else(|| format!("{what} is empty: the run journaled nothing"))?;
    Ok((header, runs, cut))
}

fn run_lines(runs: &mut Vec<RunLines>, run: usize) -> &mut RunLines {
    if runs.len() <= run {
        runs.resize_with(run + 1, RunLines::default);
    }
    &mut runs[run]
}

/// One run's outcome from its lines: the intervals added up, the end's figures when it ended.
fn outcome(
    run: usize,
    lines: RunLines,
    logged: &[LoggedInterval],
    planned: &[crate::report::document::roles::RoleReport],
) -> Result<(Outcome, Vec<IntervalHistograms>), Malformed> {
    let first = &lines.intervals[0];
    let (started_unix_ms, server, names) = (first.started_unix_ms, first.server.clone(), first.command_names.clone());
    let rows = first.ops.len();
    let unit_row = first.ops.iter().position(|o| o.unit);
    let mut totals = Window::new(rows, unit_row);
    let (mut timeline, mut inline) = (Timeline::default(), Vec::new());
    // Down spans come back on a clock of their own: only their distances matter.
    let base = Instant::now();
    let at = |secs: f64| base + Duration::from_secs_f64(secs.max(0.0));
    let mut heard = Heard::default();
    for (line, logged) in lines.intervals.into_iter().zip(logged) {
        heard.add(&line)?;
        let window = window(&line, (logged, &names), unit_row, &at)?;
        totals.merge(&window);
        inline.push(IntervalHistograms::of(run, line.index, &window.total(), names.iter().zip(&window.ops)));
        let (span, server) = ((line.start_secs, line.duration_secs), (line.server_sample, line.active_connections));
        timeline.push(&Interval::of((run, line.index), span, &window, &[], server));
    }
    // Requests sent in a journaled interval and answered in none were in flight when the run
    // ended there: abandoned at the end, so that sent = replies + failed + abandoned holds.
    for op in totals.ops.iter_mut() {
        op.abandoned += op.sent.saturating_sub(op.count + op.failed + op.abandoned);
    }
    let last = timeline.last().expect("a run with intervals");
    let end_secs = last.start_secs + last.duration_secs;
    // A run cut short ends with its last journaled interval; its outages come from the spans.
    let (mut ended, finished) = match lines.ended {
        Some(ended) => (ended, true),
        None => (RunEnded { interrupted: true, elapsed_secs: end_secs, ..RunEnded::default() }, false),
    };
    let roles = std::mem::take(&mut ended.roles);
    let role_histograms = std::mem::take(&mut ended.role_histograms);
    let outages = if finished {
        std::mem::take(&mut ended.outages)
    } else {
        Outage::merge(run, base, std::mem::take(&mut totals.down))
    };
    let nodes = totals.take_nodes_sent_to();
    let mut outcome = Outcome {
        ops: totals.ops,
        errors: totals.errors,
        send_lag_ns: totals.send_lag_ns,
        timeline,
        elapsed: Duration::from_secs_f64(ended.elapsed_secs.max(0.0)),
        interrupted: ended.interrupted,
        started_unix_ms,
        server,
        command_names: names,
        client_threads: ended.client_threads,
        server_stats: ended.server_stats,
        server_peak_memory: ended.server_peak_memory,
        // The server's own latency is read at the end of the run, which a killed run never reached.
        server_latency: None,
        // The latency's parts come back from the interval log; the clock's bound is the run's end's.
        clock_bound_ns: 0,
        stamps_refused: None,
        roles: Vec::new(),
        warnings: ended.warnings,
        notes: Vec::new(),
        runs: Vec::new(),
        outages,
        reconnect_attempts: totals.reconnect_attempts,
        connections_lost: totals.connections_lost,
        nodes,
        moved: totals.moved,
        asked: totals.asked,
        retries: totals.retries,
        retried_ops: totals.retried_ops,
        failed_keys: Vec::new(),
        failed_keys_dropped: 0,
        client_stats: Vec::new(),
    };
    outcome.runs = vec![outcome.figures()];
    heard.into(&mut outcome, planned);
    for mut ended in roles {
        if let Some(encoded) = role_histograms.get(&ended.name) {
            ended.keep(crate::report::document::roles::decoded(encoded)?);
        }
        if ended.stream.is_some() || ended.queue.is_some() || ended.tracking.is_some() {
            let role = outcome.role_mut(&ended.name);
            (role.stream, role.queue, role.tracking) = (ended.stream, ended.queue, ended.tracking);
        }
    }
    Ok((outcome, inline))
}

/// The roles' intervals, as the journal lines give them back, by role.
#[derive(Default)]
struct Heard {
    roles: Vec<(String, RoleWindow, Vec<RolePoint>)>,
}

impl Heard {
    fn add(&mut self, line: &IntervalLine) -> Result<(), Malformed> {
        for r in &line.roles {
            let latency = r.latency.as_deref().map(histo::decode).transpose()?.map(|h| crate::stats::widen(&h));
            let Some(window) = RoleWindow::of(&r.kind, &r.counts, latency, r.latency_sum_ns) else {
                return Err(format!("interval {}: role {} of an unknown kind '{}'", line.index, r.name, r.kind).into());
            };
            let point = window.point((line.run, line.index), (line.start_secs, line.duration_secs));
            match self.roles.iter_mut().find(|(name, ..)| *name == r.name) {
                Some((_, total, series)) => {
                    total.add(&window);
                    series.push(point);
                }
                None => self.roles.push((r.name.clone(), window, vec![point])),
            }
        }
        Ok(())
    }

    /// Each role's figures in `outcome`: its messages from the journaled intervals (those of
    /// the interval under way when the run was killed are not in them, on either side), its
    /// subscribers and PUBLISH row from its plan (`planned`).
    fn into(self, outcome: &mut Outcome, planned: &[crate::report::document::roles::RoleReport]) {
        for (name, total, series) in self.roles {
            let plan = planned.iter().find(|r| r.name == name);
            let subscribers = plan.and_then(|r| r.subscribers).unwrap_or(0);
            let publish = plan.and_then(|r| r.commands.first());
            let row = publish.and_then(|p| outcome.command_names.iter().position(|n| n == p)).unwrap_or(0);
            let publishes = outcome.ops.get(row).map_or_else(Default::default, crate::stats::Publishes::of);
            let RoleWindow::Messages(received) = &total;
            let role = outcome.role_mut(&name);
            role.messages = Some(Messages::of(subscribers, publishes, received, Vec::new()));
            (role.total, role.series) = (Some(total), series);
        }
    }
}

/// An interval's window from its line and its histograms in the interval log.
fn window(
    line: &IntervalLine,
    (logged, names): (&LoggedInterval, &[String]),
    unit_row: Option<usize>,
    at: &dyn Fn(f64) -> Instant,
) -> Result<Window, Malformed> {
    let mut w = Window::new(line.ops.len(), unit_row);
    for (i, (mine, op)) in w.ops.iter_mut().zip(&line.ops).enumerate() {
        let name = names.get(i).ok_or_else(|| format!("interval {}: row {i} has no name", line.index))?;
        *mine = op_stats(op, logged.command(name))?;
    }
    for (kind, n) in &line.errors {
        w.errors.add(kind.parse::<ErrorKind>().map_err(String::from)?, *n);
    }
    if let Some(lag) = logged.send_lag() {
        w.send_lag_ns = lag;
    }
    w.down = line.down_secs.iter().map(|&(from, to)| (at(from), at(to))).collect();
    w.reconnect_attempts = line.reconnect_attempts;
    for (kind, n) in &line.connections_lost {
        w.connections_lost.add(kind.parse::<ErrorKind>().map_err(String::from)?, *n);
    }
    w.successes = line.successes;
    w.nodes =
        line.nodes.iter().map(|(n, op)| op_stats(op, None).map(|op| (n.clone(), op))).collect::<Result<_, _>>()?;
    w.moved = line.moved;
    w.asked = line.asked;
    w.active_connections = line.window_connections;
    Ok(w)
}

/// A row from its line (counters) and the interval log (histograms, when it has the row).
fn op_stats(line: &OpLine, logged: Option<&interval_log::RowHistograms>) -> Result<OpStats, Malformed> {
    let mut op = OpStats {
        count: line.count,
        hits: line.hits,
        misses: line.misses,
        errors: line.errors,
        sent: line.sent,
        failed: line.failed,
        abandoned: line.abandoned,
        bytes_in: line.bytes_in,
        bytes_out: line.bytes_out,
        latency_sum_ns: line.latency_sum_ns,
        unit: line.unit,
        ..OpStats::default()
    };
    if let Some(row) = logged {
        row.fill(&mut op, line.parts_sums_ns);
    }
    if op.latency_ns.len() > op.count {
        return Err(format!(
            "the interval log holds {} replies where the journal counted {}",
            op.latency_ns.len(),
            op.count
        )
        .into());
    }
    Ok(op)
}
