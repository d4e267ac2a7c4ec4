//! The one engine for every mode: connects the workers' connections, starts them together,
//! and collects their interval windows into a timeline and totals. Modes differ only in the
//! small strategy pieces each connection carries (its pacer, its quota, its request stream).

mod pacer;
mod worker;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use pacer::Pacer;
use worker::{Conn, WorkerPlan};

use crate::config::{Config, StopAfter};
use crate::net::{ConnectError, ServerInfo, Session};
use crate::stats::{ErrorCounts, OpStats, Window};
use crate::workload::{RequestGen, Workload};

/// What a worker sends the collector.
pub enum Msg {
    /// The worker's connections could not be made ready.
    Failed(ConnectError),
    /// A finished interval.
    Window { worker: usize, interval: u64, window: Window },
    /// The worker stopped; `window` is its last, partial interval.
    Done { worker: usize, interval: u64, window: Window, ended: Instant },
}

/// One interval of the timeline, all workers merged.
#[derive(Debug, Clone)]
pub struct Interval {
    pub index: u64,
    /// Seconds from the start of the run to the start of this interval.
    pub start_secs: f64,
    /// Its length: the configured interval, shorter for the last one.
    pub duration_secs: f64,
    pub window: Window,
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Per command, over the whole run.
    pub ops: Vec<OpStats>,
    pub errors: ErrorCounts,
    pub timeline: Vec<Interval>,
    /// From the common start to the last worker's stop.
    pub elapsed: Duration,
    pub interrupted: bool,
    pub started_unix_ms: u64,
    /// `None` when the server refused INFO.
    pub server: Option<ServerInfo>,
    pub command_names: Vec<String>,
}

impl Outcome {
    pub fn total(&self) -> OpStats {
        let mut total = OpStats::default();
        for op in &self.ops {
            total.merge(op);
        }
        total
    }
}

/// What the live line shows, once an interval.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub interval: &'a Interval,
    pub elapsed: Duration,
    pub total_ops: u64,
    pub total_errors: u64,
    /// Fraction of the planned work done, when the run is counted or timed.
    pub done: Option<f64>,
    pub time_left: Option<Duration>,
}

/// Runs the plan. `stop` ends it early (SIGINT); `observe` sees every completed interval.
pub fn run(config: &Config, stop: &AtomicBool, observe: &mut dyn FnMut(&Progress)) -> Result<Outcome, ConnectError> {
    let mut control = Session::open(&config.server)?;
    let server = ServerInfo::query(&mut control);
    drop(control);

    let workload = Arc::new(Workload::compile(config));
    let threads = config.threads.min(config.connections).max(1);
    let (tx, rx) = mpsc::channel();
    let connected = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let abort = AtomicBool::new(false);
    let start_slot = std::sync::OnceLock::new();
    let max_request = config.values.max() + config.keys.prefix.len() + 128;

    std::thread::scope(|scope| {
        for t in 0..threads {
            let tx = tx.clone();
            let (connected, go, abort, start_slot, workload) = (&connected, &go, &abort, &start_slot, &workload);
            scope.spawn(move || {
                let first = t * config.connections / threads;
                let last = (t + 1) * config.connections / threads;
                let conns: Result<Vec<Conn>, ConnectError> = (first..last)
                    .map(|i| {
                        let io = Session::open(&config.server)?
                            .into_transport()
                            .map_err(|source| ConnectError::Io { target: config.server.target.to_string(), source })?;
                        let requests = RequestGen::new(Arc::clone(workload), config, i);
                        Ok(Conn::new(io, requests, Pacer::Closed, config.quota(i), config.pipeline, max_request))
                    })
                    .collect();
                let conns = match conns {
                    Ok(c) => Some(c),
                    Err(e) => {
                        let _ = tx.send(Msg::Failed(e));
                        None
                    }
                };
                connected.wait();
                go.wait();
                let (Some(conns), false) = (conns, abort.load(Ordering::SeqCst)) else {
                    return;
                };
                let start: Instant = *start_slot.get().expect("set before the go barrier");
                let deadline = match config.stop {
                    StopAfter::Duration(d) => Some(start + d),
                    _ => None,
                };
                let plan = WorkerPlan {
                    index: t,
                    pipeline: config.pipeline,
                    interval: config.interval,
                    start,
                    deadline,
                    stop,
                    commands: config.commands.len(),
                };
                worker::run(plan, conns, tx);
            });
        }
        drop(tx);

        connected.wait();
        let mut failure = None;
        while let Ok(msg) = rx.try_recv() {
            if let Msg::Failed(e) = msg {
                failure.get_or_insert(e);
            }
        }
        abort.store(failure.is_some(), Ordering::SeqCst);
        let start = Instant::now();
        let started_unix_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        start_slot.set(start).expect("set once");
        go.wait();
        if let Some(e) = failure {
            return Err(e);
        }
        let mut collector = Collector::new(config, threads, start);
        loop {
            match rx.recv_timeout(Duration::from_millis(200)) {
                Ok(msg) => collector.take(msg, observe),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        Ok(collector.finish(stop.load(Ordering::SeqCst), started_unix_ms, server, workload.names().to_vec()))
    })
}

/// Merges the workers' windows: an interval is complete once every worker has moved past it.
struct Collector<'c> {
    config: &'c Config,
    start: Instant,
    /// Per worker: the highest interval reported, and whether it is done.
    reported: Vec<(Option<u64>, bool)>,
    pending: BTreeMap<u64, Window>,
    timeline: Vec<Interval>,
    totals: Window,
    ended: Instant,
}

impl<'c> Collector<'c> {
    fn new(config: &'c Config, workers: usize, start: Instant) -> Collector<'c> {
        Collector {
            config,
            start,
            reported: vec![(None, false); workers],
            pending: BTreeMap::new(),
            timeline: Vec::new(),
            totals: Window::new(config.commands.len()),
            ended: start,
        }
    }

    fn take(&mut self, msg: Msg, observe: &mut dyn FnMut(&Progress)) {
        let (worker, interval, window) = match msg {
            Msg::Failed(_) => return,
            Msg::Window { worker, interval, window } => (worker, interval, window),
            Msg::Done { worker, interval, window, ended } => {
                self.reported[worker].1 = true;
                self.ended = self.ended.max(ended);
                (worker, interval, window)
            }
        };
        self.reported[worker].0 = Some(interval);
        self.totals.merge(&window);
        self.pending.entry(interval).or_insert_with(|| Window::new(self.config.commands.len())).merge(&window);
        self.complete_ready(observe);
    }

    /// Moves every interval all workers are past into the timeline, oldest first.
    fn complete_ready(&mut self, observe: &mut dyn FnMut(&Progress)) {
        let all_done = self.reported.iter().all(|(_, done)| *done);
        while let Some((&index, _)) = self.pending.first_key_value() {
            let complete =
                all_done || self.reported.iter().all(|(last, done)| *done || last.is_some_and(|l| l > index));
            if !complete {
                break;
            }
            let window = self.pending.remove(&index).expect("first key exists");
            let interval_secs = self.config.interval.as_secs_f64();
            let start_secs = index as f64 * interval_secs;
            let end_secs = if all_done && self.pending.is_empty() {
                self.ended.duration_since(self.start).as_secs_f64().min(start_secs + interval_secs)
            } else {
                start_secs + interval_secs
            };
            self.timeline.push(Interval { index, start_secs, duration_secs: (end_secs - start_secs).max(0.0), window });
            let interval = self.timeline.last().expect("just pushed");
            let elapsed = Duration::from_secs_f64(end_secs);
            let total_ops: u64 = self.totals.ops.iter().map(|o| o.count).sum();
            let (done, time_left) = match self.config.stop {
                StopAfter::Duration(d) => (Some(end_secs / d.as_secs_f64()), Some(d.saturating_sub(elapsed))),
                _ => (self.config.planned_requests().map(|n| total_ops as f64 / n.max(1) as f64), None),
            };
            let total_errors = self.totals.ops.iter().map(|o| o.errors).sum();
            observe(&Progress { interval, elapsed, total_ops, total_errors, done, time_left });
        }
    }

    fn finish(
        mut self,
        interrupted: bool,
        started_unix_ms: u64,
        server: Option<ServerInfo>,
        command_names: Vec<String>,
    ) -> Outcome {
        for (_, done) in self.reported.iter_mut() {
            *done = true;
        }
        self.complete_ready(&mut |_| {});
        Outcome {
            ops: self.totals.ops,
            errors: self.totals.errors,
            timeline: self.timeline,
            elapsed: self.ended.duration_since(self.start),
            interrupted,
            started_unix_ms,
            server,
            command_names,
        }
    }
}
