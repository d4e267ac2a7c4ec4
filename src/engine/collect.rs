//! The collect phase: merges the workers' interval windows into a timeline and totals as they
//! arrive, samples the server each interval, and says what the telemetry means.

use std::collections::BTreeMap;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use super::msg::Msg;
use super::outcome::{FailedKey, Outage, Outcome, Progress, RoleInterval};
use super::server_stats::ServerSampler;
use super::telemetry::ThreadCpu;
use super::timeline::{Interval, Timeline};
use crate::config::{Config, StopAfter};
use crate::net::ServerInfo;
use crate::stats::{ClientStats, OpStats, RolePoint, RoleWindow, Window};

/// Server CPU share above which a run gets a warning (the cloud guides' rule: keep it under 80 %).
pub const SERVER_CPU_WARNING: f64 = 0.8;

/// What the server's telemetry says the user should know.
pub(super) fn telemetry_warnings(outcome: &Outcome, sampled: bool, silent: Option<&str>) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(silent) = silent {
        warnings.push(format!("{silent}: no server telemetry (CPU, memory, hit ratio) for this run"));
        return warnings;
    }
    if !sampled {
        warnings.push("the server refused INFO: no server telemetry (CPU, memory, hit ratio) for this run".into());
        return warnings;
    }
    let busiest = outcome
        .timeline
        .iter()
        .filter_map(|i| i.server.map(|s| s.cpu.main_thread.unwrap_or(s.cpu.total)))
        .fold(0.0, f64::max);
    if busiest > SERVER_CPU_WARNING {
        warnings.push(format!(
            "server CPU reached {:.0}% of a core (main thread) in some interval: above the {:.0}% the guides advise",
            busiest * 100.0,
            SERVER_CPU_WARNING * 100.0
        ));
    }
    let evicted: u64 = outcome.timeline.iter().filter_map(|i| i.server.map(|s| s.evicted_keys)).sum();
    if evicted > 0 {
        warnings.push(format!("the server evicted {evicted} keys during the run: it is out of memory for this data"));
    }
    warnings
}

/// How many intervals a run of `run` has, the last one short (bounded: a guess, not a limit).
fn intervals(run: Duration, interval: Duration) -> usize {
    (run.as_secs_f64() / interval.as_secs_f64().max(1e-3)).ceil().min(1e6) as usize + 1
}

/// Merges the workers' windows: an interval is complete once every worker has moved past it.
pub(super) struct Collector<'c> {
    config: &'c Config,
    run: usize,
    start: Instant,
    started_unix_ms: u64,
    /// Per worker: the highest interval reported, and whether it is done.
    reported: Vec<(Option<u64>, bool)>,
    pending: BTreeMap<u64, Window>,
    timeline: Timeline,
    totals: Window,
    ended: Instant,
    client_threads: Vec<ThreadCpu>,
    clients: Vec<ClientStats>,
    failed_keys: Vec<FailedKey>,
    failed_keys_dropped: u64,
    /// What the server said it is, and the rows' names: each interval's observers see them.
    server: Option<ServerInfo>,
    command_names: Vec<String>,
    /// Each worker's way back for its windows once merged, emptied (`stats::recycle`).
    spares: Vec<Sender<Window>>,
    /// An emptied merge window of an interval already completed, for the next one.
    merged: Option<Window>,
    /// The completing interval's commands together, refilled each interval.
    total: OpStats,
    /// Connections' down spans so far, merged into outages as they come.
    outages: Vec<Outage>,
    /// The run's roles whose listeners hand in intervals beside the workers, by the index
    /// their messages carry.
    roles: Vec<RoleFeed>,
}

/// A role's listeners as the collector hears them: like the workers, an interval is complete
/// once every listener has moved past it.
pub(super) struct RoleFeed {
    name: String,
    /// The role's first row of the run's windows (its PUBLISH).
    row: usize,
    /// Per listener: the highest interval handed in, and whether it has stopped.
    reported: Vec<(Option<u64>, bool)>,
    /// Intervals handed in by some listeners, not yet complete.
    pending: BTreeMap<u64, RoleWindow>,
    /// An interval with nothing counted, of the role's kind.
    empty: RoleWindow,
    /// Over the whole run, and per completed interval.
    total: RoleWindow,
    series: Vec<RolePoint>,
}

impl RoleFeed {
    /// The role `name` (its first row `row`), heard from `listeners` listeners, its intervals
    /// like `empty`.
    pub(super) fn new(name: String, row: usize, listeners: usize, empty: RoleWindow) -> RoleFeed {
        let reported = vec![(None, false); listeners];
        RoleFeed { name, row, reported, pending: BTreeMap::new(), total: empty.clone(), empty, series: Vec::new() }
    }

    fn done(&self) -> bool {
        self.reported.iter().all(|(_, done)| *done)
    }

    fn passed(&self, index: u64) -> bool {
        self.reported.iter().all(|(last, done)| *done || last.is_some_and(|l| l >= index))
    }

    /// What the listeners counted up to interval `index` (everything left, for the last).
    fn take(&mut self, index: u64, last: bool) -> RoleWindow {
        let mut window = self.empty.clone();
        let later = if last { BTreeMap::new() } else { self.pending.split_off(&(index + 1)) };
        for w in std::mem::replace(&mut self.pending, later).values() {
            window.add(w);
        }
        window
    }
}

/// What the collector hands back about a role: its run's figures and its intervals.
pub(super) struct Heard {
    pub total: RoleWindow,
    pub series: Vec<RolePoint>,
}

impl<'c> Collector<'c> {
    pub(super) fn new(
        config: &'c Config,
        run: usize,
        spares: Vec<Sender<Window>>,
        start: Instant,
        started_unix_ms: u64,
        (server, command_names): (Option<ServerInfo>, Vec<String>),
        roles: Vec<RoleFeed>,
    ) -> Collector<'c> {
        let workers = spares.len();
        Collector {
            config,
            run,
            start,
            started_unix_ms,
            reported: vec![(None, false); workers],
            pending: BTreeMap::new(),
            // A timed run's intervals are known: no doubling of a long timeline (a step in RSS).
            timeline: match config.stop {
                StopAfter::Duration(d) => Timeline::with_capacity(intervals(d, config.interval), config.rows()),
                _ => Timeline::default(),
            },
            totals: Window::new(config.rows(), config.unit_row()),
            ended: start,
            client_threads: vec![ThreadCpu::default(); workers],
            clients: Vec::new(),
            failed_keys: Vec::new(),
            failed_keys_dropped: 0,
            server,
            command_names,
            spares,
            merged: None,
            total: OpStats::default(),
            outages: Vec::new(),
            roles,
        }
    }

    /// Whether every worker has stopped (a role's listeners may still be reading).
    pub(super) fn workers_done(&self) -> bool {
        self.reported.iter().all(|(_, done)| *done)
    }

    /// What the publishes of PUBLISH row `row` came to, so far.
    pub(super) fn publishes(&self, row: usize) -> crate::stats::Publishes {
        self.totals.ops.get(row).map_or_else(Default::default, crate::stats::Publishes::of)
    }

    /// A role's listener's interval.
    fn deliveries(&mut self, (role, listener): (usize, usize), interval: u64, window: RoleWindow, last: bool) {
        let Some(role) = self.roles.get_mut(role) else { return };
        role.total.add(&window);
        role.reported[listener] = (Some(interval), last);
        match role.pending.get_mut(&interval) {
            Some(w) => w.add(&window),
            None => {
                role.pending.insert(interval, window);
            }
        }
    }

    pub(super) fn take(&mut self, msg: Msg, sampler: &mut Option<ServerSampler>, observe: &mut dyn FnMut(&Progress)) {
        let (worker, interval, window) = match msg {
            Msg::Failed(_) => return,
            Msg::Deliveries { role, listener, interval, window, last } => {
                self.deliveries((role, listener), interval, window, last);
                self.complete_ready(sampler, observe);
                return;
            }
            Msg::Window { worker, interval, window } => (worker, interval, window),
            Msg::Done { worker, interval, window, ended, cpu, clients, failed } => {
                self.clients.extend(clients);
                self.failed_keys.extend(failed.0);
                self.failed_keys_dropped += failed.1;
                self.reported[worker].1 = true;
                self.ended = self.ended.max(ended);
                self.client_threads[worker] = cpu;
                (worker, interval, window)
            }
        };
        self.reported[worker].0 = Some(interval);
        self.totals.merge(&window);
        let (run, start) = (self.run, self.start);
        for span in self.totals.down.drain(..) {
            Outage::absorb(&mut self.outages, run, start, span);
        }
        let (config, merged) = (self.config, &mut self.merged);
        self.pending
            .entry(interval)
            .or_insert_with(|| merged.take().unwrap_or_else(|| Window::new(config.rows(), config.unit_row())))
            .merge(&window);
        // Emptied here, off the worker's thread; a worker that has finished has gone.
        let mut window = window;
        window.reset();
        let _ = self.spares[worker].send(window);
        self.complete_ready(sampler, observe);
    }

    /// Moves every interval all workers have handed in (or that a finished worker will never
    /// hand in) into the timeline, oldest first.
    fn complete_ready(&mut self, sampler: &mut Option<ServerSampler>, observe: &mut dyn FnMut(&Progress)) {
        let listened = self.roles.iter().all(RoleFeed::done);
        let all_done = self.workers_done() && listened;
        while let Some((&index, _)) = self.pending.first_key_value() {
            // The workers' last interval waits for the listeners' last: what arrives after
            // the publishers stopped is counted in it.
            let final_wait = !self.roles.is_empty() && self.workers_done() && self.pending.len() == 1;
            let complete = all_done
                || (self.reported.iter().all(|(last, done)| *done || last.is_some_and(|l| l >= index))
                    && self.roles.iter().all(|r| r.passed(index))
                    && !final_wait);
            if !complete {
                break;
            }
            let window = self.pending.remove(&index).expect("first key exists");
            let interval_secs = self.config.interval.as_secs_f64();
            let start_secs = index as f64 * interval_secs;
            let end_secs = if all_done && self.pending.is_empty() {
                self.ended.saturating_duration_since(self.start).as_secs_f64().min(start_secs + interval_secs)
            } else {
                start_secs + interval_secs
            };
            let server = sampler.as_mut().and_then(ServerSampler::sample);
            let active_connections = self.config.ramp.is_some().then_some(window.active_connections);
            // The timeline keeps the interval's summaries only; the live outputs (the interval
            // log among them) see it in full, now.
            let quantiles = &self.config.extras.interval_quantiles;
            let span = (start_secs, (end_secs - start_secs).max(0.0));
            let (ids, total) = ((self.run, index), self.total.summed(&window.ops));
            let interval = Interval::with_total(ids, span, (&window, total), quantiles, (server, active_connections));
            self.timeline.push(&interval);
            let elapsed = Duration::from_secs_f64(end_secs);
            let total_ops: u64 = self.totals.ops.iter().map(|o| o.count).sum();
            let (done, time_left) = match self.config.stop {
                StopAfter::Duration(d) => (Some(end_secs / d.as_secs_f64()), Some(d.saturating_sub(elapsed))),
                _ => (self.config.planned_requests().map(|n| total_ops as f64 / n.max(1) as f64), None),
            };
            let total_errors = self.totals.ops.iter().map(|o| o.errors).sum();
            let started_unix_ms = self.started_unix_ms;
            let last = all_done && self.pending.is_empty();
            let run = self.run;
            let roles: Vec<RoleInterval> = self
                .roles
                .iter_mut()
                .map(|r| {
                    let window = r.take(index, last);
                    r.series.push(window.point((run, index), span));
                    RoleInterval { name: r.name.as_str(), row: r.row, window }
                })
                .collect();
            let (server, command_names) = (self.server.as_ref(), &self.command_names[..]);
            observe(&Progress {
                interval: &interval,
                window: &window,
                started_unix_ms,
                start: self.start,
                elapsed,
                total_ops,
                total_errors,
                done,
                time_left,
                server,
                command_names,
                roles: &roles,
            });
            // One kept for the next interval; more (intervals that waited on a late worker)
            // are let go, so that a moment behind does not hold their memory for the run.
            if self.merged.is_none() {
                let mut window = window;
                window.reset();
                self.merged = Some(window);
            }
        }
    }

    pub(super) fn finish(mut self, interrupted: bool) -> (Outcome, Vec<Heard>) {
        for (_, done) in self.reported.iter_mut() {
            *done = true;
        }
        for (_, done) in self.roles.iter_mut().flat_map(|r| r.reported.iter_mut()) {
            *done = true;
        }
        self.complete_ready(&mut None, &mut |_| {});
        let outages = std::mem::take(&mut self.outages);
        let nodes = self.totals.take_nodes_sent_to();
        self.clients.sort_by_key(|c| c.index);
        self.failed_keys.sort_by_key(|f| f.unix_us);
        let mut warnings = Vec::new();
        if self.failed_keys_dropped > 0 {
            warnings.push(format!(
                "{} more requests were given up than --failed-keys keeps: their rows are not in the file",
                self.failed_keys_dropped
            ));
        }
        let heard = std::mem::take(&mut self.roles).into_iter().map(|r| Heard { total: r.total, series: r.series });
        let heard = heard.collect();
        let outcome = Outcome {
            retries: self.totals.retries,
            retried_ops: self.totals.retried_ops,
            failed_keys: self.failed_keys,
            failed_keys_dropped: self.failed_keys_dropped,
            client_stats: self.clients,
            clock_bound_ns: self.totals.clock_bound_ns,
            stamps_refused: self.totals.stamps_refused.take(),
            roles: Vec::new(),
            outages,
            reconnect_attempts: self.totals.reconnect_attempts,
            connections_lost: self.totals.connections_lost,
            nodes,
            moved: self.totals.moved,
            asked: self.totals.asked,
            ops: self.totals.ops,
            errors: self.totals.errors,
            send_lag_ns: self.totals.send_lag_ns,
            timeline: self.timeline,
            elapsed: self.ended.saturating_duration_since(self.start),
            interrupted,
            started_unix_ms: self.started_unix_ms,
            server: self.server,
            command_names: self.command_names,
            client_threads: self.client_threads,
            server_stats: None,
            server_peak_memory: None,
            server_latency: None,
            warnings,
            notes: Vec::new(),
            runs: Vec::new(),
        };
        (outcome, heard)
    }
}
