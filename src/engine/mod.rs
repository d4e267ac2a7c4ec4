//! The one engine for every mode: connects the workers' connections, starts them together,
//! and collects their interval windows into a timeline and totals. Modes differ only in the
//! small strategy pieces each connection carries (its pacer, its quota, its request stream).

mod pacer;
mod preflight;
mod router;
mod server_stats;
mod start_at;
mod telemetry;
mod timer;
mod worker;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
pub use pacer::Pacer;
pub use preflight::preflight;
use router::Router;
pub use server_stats::{Info, ServerCpu, ServerSample, ServerSampler};
pub use telemetry::{Bottleneck, SATURATED, ThreadCpu, verdict};
use worker::{Conn, Link, WorkerPlan};

use crate::config::{Config, ServerOptions, StopAfter};
use crate::net::{CallError, ConnectError, ServerInfo, Session};
use crate::stats::{ClientStats, ErrorCounts, OpStats, Window};
use crate::workload::{RequestGen, Workload};

/// What a worker sends the collector.
pub enum Msg {
    /// The worker's connections could not be made ready.
    Failed(ConnectError),
    /// A finished interval.
    Window { worker: usize, interval: u64, window: Window },
    /// The worker stopped; `window` is its last, partial interval.
    /// `clients`: its connections' own figures, when `--client-stats` asked for them.
    Done { worker: usize, interval: u64, window: Window, ended: Instant, cpu: ThreadCpu, clients: Vec<ClientStats> },
}

/// One interval of the timeline, all workers merged.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Which of `--runs` it belongs to (0 for a single run).
    pub run: usize,
    pub index: u64,
    /// Seconds from the start of the measured phase to the start of this interval.
    pub start_secs: f64,
    /// Its length: the configured interval, shorter for the last one.
    pub duration_secs: f64,
    pub window: Window,
    /// The server over (about) this interval, when INFO is allowed.
    pub server: Option<ServerSample>,
    /// Connections open in this interval, when the engine varies them (a staircase);
    /// memtier's JSON writes them as "Active Clients".
    pub active_connections: Option<u64>,
}

/// One run's headline figures, kept per run when `--runs` repeats the measured phase.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RunFigures {
    pub duration_secs: f64,
    pub count: u64,
    pub ops_per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub errors: u64,
}

/// Connections one worker opens at the same time.
const CONNECT_PARALLELISM: usize = 16;

/// Opens connections `range` a few at a time on helper threads: a TLS handshake or a login
/// costs round trips and CPU, and hundreds of them one after another would take seconds.
fn open_in_parallel<T: Send>(
    range: std::ops::Range<usize>,
    open: impl Fn(usize) -> Result<T, ConnectError> + Sync,
) -> Result<Vec<T>, ConnectError> {
    let helpers = range.len().clamp(1, CONNECT_PARALLELISM);
    let mut opened: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..helpers)
            .map(|h| {
                let (open, range) = (&open, range.clone());
                scope.spawn(move || {
                    range.skip(h).step_by(helpers).map(|i| open(i).map(|t| (i, t))).collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        let mut all = Vec::new();
        let mut failure = None;
        for handle in handles {
            match handle.join() {
                Ok(Ok(some)) => all.extend(some),
                Ok(Err(e)) => failure = failure.or(Some(e)),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        failure.map_or(Ok(all), Err)
    })?;
    opened.sort_by_key(|(i, _)| *i);
    Ok(opened.into_iter().map(|(_, t)| t).collect())
}

/// Opens connections one after the other with a random pause from `min..=max` between them
/// (memtier's `--thread-conn-start-{min,max}-jitter-micros`).
fn open_with_jitter<T>(
    range: std::ops::Range<usize>,
    (min, max): (Duration, Duration),
    seed: u64,
    open: impl Fn(usize) -> Result<T, ConnectError>,
) -> Result<Vec<T>, ConnectError> {
    let mut rng = crate::workload::rng::Rng::derive(seed ^ 0x6a69_7474, range.start as u64);
    let spread = max.saturating_sub(min).as_nanos() as u64;
    let first = range.start;
    range
        .map(|i| {
            if i > first {
                std::thread::sleep(min + Duration::from_nanos(rng.below(spread + 1)));
            }
            open(i)
        })
        .collect()
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Per command, over the whole run.
    pub ops: Vec<OpStats>,
    pub errors: ErrorCounts,
    /// Open loop: how late sends were against their schedule.
    pub send_lag_ns: Histogram<u64>,
    pub timeline: Vec<Interval>,
    /// The measured phase: from its start (after any warmup) to the last worker's stop.
    pub elapsed: Duration,
    pub interrupted: bool,
    /// Wall-clock start of the measured phase.
    pub started_unix_ms: u64,
    /// `None` when the server refused INFO.
    pub server: Option<ServerInfo>,
    pub command_names: Vec<String>,
    /// Per worker thread, over the run.
    pub client_threads: Vec<ThreadCpu>,
    /// The server over the measured phase, when INFO is allowed.
    pub server_stats: Option<ServerSample>,
    /// Highest used_memory sampled during the measured phase.
    pub server_peak_memory: Option<u64>,
    /// Things the user should know about the run (checks before it, telemetry during it).
    pub warnings: Vec<String>,
    /// One entry per run (several with `--runs`).
    pub runs: Vec<RunFigures>,
    /// When connections were down (dropped, then reconnected or not), merged where they overlap.
    pub outages: Vec<Outage>,
    pub reconnect_attempts: u64,
    /// Cluster mode: per node, by address.
    pub nodes: Vec<(String, OpStats)>,
    /// Cluster redirects followed.
    pub moved: u64,
    pub asked: u64,
    /// Each connection's own figures (memtier's `--client-stats`), by connection; empty
    /// unless asked for.
    pub client_stats: Vec<ClientStats>,
}

/// A span in which at least one connection was down, in seconds from the measured start.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Outage {
    pub run: usize,
    pub start_secs: f64,
    pub end_secs: f64,
    /// Connections that went down in it.
    pub connections: usize,
}

impl Outage {
    /// Merges connections' down spans that overlap into outages.
    fn merge(run: usize, start: Instant, mut spans: Vec<(Instant, Instant)>) -> Vec<Outage> {
        spans.sort();
        let secs = |t: Instant| t.saturating_duration_since(start).as_secs_f64();
        let mut out: Vec<Outage> = Vec::new();
        for (from, to) in spans {
            match out.last_mut() {
                Some(last) if secs(from) <= last.end_secs => {
                    last.end_secs = last.end_secs.max(secs(to));
                    last.connections += 1;
                }
                _ => out.push(Outage { run, start_secs: secs(from), end_secs: secs(to), connections: 1 }),
            }
        }
        out
    }
}

impl Outcome {
    pub fn total(&self) -> OpStats {
        crate::stats::total(&self.ops)
    }

    fn figures(&self) -> RunFigures {
        let total = self.total();
        let secs = self.elapsed.as_secs_f64();
        let latency = total.latency();
        RunFigures {
            duration_secs: secs,
            count: total.count,
            ops_per_sec: if secs > 0.0 { total.count as f64 / secs } else { 0.0 },
            p50_us: latency.p50_us,
            p99_us: latency.p99_us,
            errors: total.errors,
        }
    }

    /// Pools repeated runs: counts and histograms add up, timelines follow one another,
    /// and `runs` keeps each run's own figures for the spread.
    pub fn pool(mut outcomes: Vec<Outcome>) -> Option<Outcome> {
        let mut pooled = outcomes.remove(0);
        for next in outcomes {
            for (mine, theirs) in pooled.ops.iter_mut().zip(&next.ops) {
                mine.merge(theirs);
            }
            pooled.errors.merge(&next.errors);
            pooled.send_lag_ns.add(&next.send_lag_ns).expect("same bounds");
            pooled.timeline.extend(next.timeline);
            pooled.elapsed += next.elapsed;
            pooled.interrupted |= next.interrupted;
            pooled.client_threads.extend(next.client_threads);
            pooled.outages.extend(next.outages);
            pooled.reconnect_attempts += next.reconnect_attempts;
            pooled.moved += next.moved;
            pooled.client_stats.extend(next.client_stats);
            pooled.asked += next.asked;
            for (name, op) in next.nodes {
                match pooled.nodes.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, mine)) => mine.merge(&op),
                    None => pooled.nodes.push((name, op)),
                }
            }
            // The last run's server figures stand for the pool, with the CPU averaged.
            pooled.server_stats = match (pooled.server_stats, next.server_stats) {
                (Some(a), Some(mut b)) => {
                    b.cpu.total = (a.cpu.total + b.cpu.total) / 2.0;
                    b.cpu.main_thread = a.cpu.main_thread.zip(b.cpu.main_thread).map(|(x, y)| (x + y) / 2.0);
                    b.keyspace_hits += a.keyspace_hits;
                    b.keyspace_misses += a.keyspace_misses;
                    b.evicted_keys += a.evicted_keys;
                    b.expired_keys += a.expired_keys;
                    let reads = b.keyspace_hits + b.keyspace_misses;
                    b.hit_ratio = (reads > 0).then(|| b.keyspace_hits as f64 / reads as f64);
                    Some(b)
                }
                (a, b) => a.or(b),
            };
            pooled.server_peak_memory = pooled.server_peak_memory.max(next.server_peak_memory);
            for w in next.warnings {
                if !pooled.warnings.contains(&w) {
                    pooled.warnings.push(w);
                }
            }
            pooled.runs.extend(next.runs);
        }
        Some(pooled)
    }
}

/// What the live line shows, once an interval.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub interval: &'a Interval,
    /// Wall-clock start of this run's measured phase.
    pub started_unix_ms: u64,
    pub elapsed: Duration,
    pub total_ops: u64,
    pub total_errors: u64,
    /// Fraction of the planned work done, when the run is counted or timed.
    pub done: Option<f64>,
    pub time_left: Option<Duration>,
}

/// Runs the plan once. `stop` ends it early (SIGINT); `observe` sees every completed interval.
/// `run` numbers the run among `--runs`.
pub fn run(
    config: &Config,
    run: usize,
    stop: &AtomicBool,
    observe: &mut dyn FnMut(&Progress),
) -> Result<Outcome, ConnectError> {
    let budget = config.faults.connect_timeout;
    let mut control = Session::open_by_deadline(&config.server, budget)?;
    // Refused (an error reply) and silent are told apart: only a refusal is "INFO refused".
    let (server, silent) = match ServerInfo::ask(&mut control) {
        Ok(info) => (Some(info), None),
        Err(CallError::Connect(e @ ConnectError::Silent { .. })) => (None, Some(e.to_string())),
        Err(_) => (None, None),
    };
    drop(control);
    let mut sampler =
        if silent.is_none() { ServerSampler::open(&config.server, config.cluster.is_some()) } else { None };

    let workload = Arc::new(Workload::compile(config));
    let threads = config.threads.min(config.connections).max(1);
    let (tx, rx) = mpsc::channel();
    let connected = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let abort = AtomicBool::new(false);
    let start_slot = std::sync::OnceLock::new();
    let max_request = config.values.max() + config.keys.prefix.len() + workload.longest_fixed() + 128;
    let key_args = config.key_args();
    let reads: Vec<bool> = config.commands.iter().map(|c| c.reads).collect();

    std::thread::scope(|scope| {
        for t in 0..threads {
            let tx = tx.clone();
            let (connected, go, abort, start_slot, workload) = (&connected, &go, &abort, &start_slot, &workload);
            let (key_args, reads) = (&key_args[..], &reads[..]);
            scope.spawn(move || {
                let first = t * config.connections / threads;
                let last = (t + 1) * config.connections / threads;
                // A panic here would leave the others waiting at the barrier: make it an error.
                let connect = || -> Result<(Vec<Conn>, Option<Router>), ConnectError> {
                    // Cluster mode: this worker's own map, and a link per primary for each client.
                    let router =
                        config.cluster.map(|read_from| Router::discover(&config.server, read_from)).transpose()?;
                    let targets: Vec<(usize, ServerOptions)> = match &router {
                        Some(r) => (0..r.nodes.len())
                            .filter(|&n| r.in_map(n) && !r.is_replica(n))
                            .map(|n| (n, r.options_for(n)))
                            .collect(),
                        None => vec![(0, config.server.clone())],
                    };
                    let open_one = |i: usize| {
                        let requests = RequestGen::new(Arc::clone(workload), config, i);
                        if !worker::join_delay(config, threads, i).is_zero() {
                            // A staircase ramp connects it later, at its step.
                            return Ok(Conn::new(Vec::new(), requests, Pacer::Closed, config.quota(i)));
                        }
                        let mut links = Vec::new();
                        for (node, opts) in &targets {
                            let io = Session::open_within(opts, budget)?
                                .into_transport()
                                .map_err(|source| ConnectError::Io { target: opts.target.to_string(), source })?;
                            if links.len() <= *node {
                                links.resize_with(node + 1, || None);
                            }
                            links[*node] = Some(Link::new(io, config.pipeline, max_request));
                        }
                        Ok(Conn::new(links, requests, Pacer::Closed, config.quota(i)))
                    };
                    let conns = match config.conn_jitter {
                        None => open_in_parallel(first..last, open_one)?,
                        Some(pause) => open_with_jitter(first..last, pause, config.seed, open_one)?,
                    };
                    Ok((conns, router))
                };
                let conns = std::panic::catch_unwind(std::panic::AssertUnwindSafe(connect)).unwrap_or_else(|_| {
                    Err(ConnectError::Io {
                        target: config.server.target.to_string(),
                        source: std::io::Error::other(
                            "a worker thread failed while connecting (a bug: please report it)",
                        ),
                    })
                });
                let conns = match conns {
                    Ok((c, router)) => Some((c, router)),
                    Err(e) => {
                        let _ = tx.send(Msg::Failed(e));
                        None
                    }
                };
                connected.wait();
                go.wait();
                let (Some((mut conns, router)), false) = (conns, abort.load(Ordering::SeqCst)) else {
                    return;
                };
                let (start, warmup): (Instant, Duration) = *start_slot.get().expect("set before the go barrier");
                for (k, conn) in conns.iter_mut().enumerate() {
                    let delay = worker::join_delay(config, threads, first + k);
                    conn.set_pacer(pacer::for_connection(config, first + k, start + delay));
                    if config.extras.client_stats {
                        let rows = config.rows();
                        conn.keep_stats(ClientStats::new(first + k, (t, k), rows, start + config.warmup));
                    }
                    if !delay.is_zero() {
                        conn.hold_until(start + delay);
                    }
                }
                let measure_from = start + warmup;
                let deadline = match config.stop {
                    StopAfter::Duration(d) => Some(measure_from + d),
                    _ => None,
                };
                let plan = WorkerPlan {
                    index: t,
                    pipeline: config.pipeline,
                    interval: config.interval,
                    measure_from,
                    deadline,
                    stop,
                    rows: config.rows(),
                    unit_row: config.unit_row(),
                    server: &config.server,
                    faults: config.faults,
                    key_args,
                    reads,
                    max_request,
                };
                worker::run(plan, conns, router, tx);
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
        // `--start-at`: warm up so that the measured phase begins at that instant.
        let start_at = config.extras.start_at.filter(|_| failure.is_none());
        if let Some(at) = start_at {
            start_at::wait(at, config.warmup, config.stop != StopAfter::AllKeys, stop);
        }
        let start = Instant::now();
        let wall = SystemTime::now();
        let warmup = start_at.map_or(config.warmup, |at| start_at::warmup(at, wall, run, config.warmup));
        start_slot.set((start, warmup)).expect("set once");
        go.wait();
        if let Some(e) = failure {
            return Err(e);
        }
        let measure_from = start + warmup;
        let started_unix_ms = (wall + warmup).duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let mut collector = Collector::new(config, run, threads, measure_from, started_unix_ms);
        let mut begun = false;
        loop {
            let now = Instant::now();
            if !begun && now >= measure_from {
                if let Some(s) = sampler.as_mut() {
                    s.begin();
                }
                begun = true;
            }
            let wait = if begun { Duration::from_millis(200) } else { measure_from - now };
            match rx.recv_timeout(wait.min(Duration::from_millis(200))) {
                Ok(msg) => collector.take(msg, &mut sampler, observe),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let server_stats = sampler.as_mut().and_then(|s| {
            s.sample();
            s.overall()
        });
        let mut outcome = collector.finish(stop.load(Ordering::SeqCst), server, workload.names().to_vec());
        // Clients connected is a gauge best read while the load runs, not after it.
        outcome.server_stats = server_stats.map(|mut s| {
            let during = outcome.timeline.iter().filter_map(|i| i.server.map(|x| x.connected_clients)).max();
            s.connected_clients = during.unwrap_or(s.connected_clients);
            s
        });
        outcome.server_peak_memory = sampler.as_ref().map(|s| s.peak_used_memory);
        outcome.warnings = telemetry_warnings(&outcome, sampler.is_some(), silent.as_deref());
        outcome.runs = vec![outcome.figures()];
        Ok(outcome)
    })
}

/// Server CPU share above which a run gets a warning (the cloud guides' rule: keep it under 80 %).
pub const SERVER_CPU_WARNING: f64 = 0.8;

/// What the server's telemetry says the user should know.
fn telemetry_warnings(outcome: &Outcome, sampled: bool, silent: Option<&str>) -> Vec<String> {
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

/// Merges the workers' windows: an interval is complete once every worker has moved past it.
struct Collector<'c> {
    config: &'c Config,
    run: usize,
    start: Instant,
    started_unix_ms: u64,
    /// Per worker: the highest interval reported, and whether it is done.
    reported: Vec<(Option<u64>, bool)>,
    pending: BTreeMap<u64, Window>,
    timeline: Vec<Interval>,
    totals: Window,
    ended: Instant,
    client_threads: Vec<ThreadCpu>,
    clients: Vec<ClientStats>,
}

impl<'c> Collector<'c> {
    fn new(config: &'c Config, run: usize, workers: usize, start: Instant, started_unix_ms: u64) -> Collector<'c> {
        Collector {
            config,
            run,
            start,
            started_unix_ms,
            reported: vec![(None, false); workers],
            pending: BTreeMap::new(),
            timeline: Vec::new(),
            totals: Window::new(config.rows(), config.unit_row()),
            ended: start,
            client_threads: vec![ThreadCpu::default(); workers],
            clients: Vec::new(),
        }
    }

    fn take(&mut self, msg: Msg, sampler: &mut Option<ServerSampler>, observe: &mut dyn FnMut(&Progress)) {
        let (worker, interval, window) = match msg {
            Msg::Failed(_) => return,
            Msg::Window { worker, interval, window } => (worker, interval, window),
            Msg::Done { worker, interval, window, ended, cpu, clients } => {
                self.clients.extend(clients);
                self.reported[worker].1 = true;
                self.ended = self.ended.max(ended);
                self.client_threads[worker] = cpu;
                (worker, interval, window)
            }
        };
        self.reported[worker].0 = Some(interval);
        self.totals.merge(&window);
        self.pending
            .entry(interval)
            .or_insert_with(|| Window::new(self.config.rows(), self.config.unit_row()))
            .merge(&window);
        self.complete_ready(sampler, observe);
    }

    /// Moves every interval all workers have handed in (or that a finished worker will never
    /// hand in) into the timeline, oldest first.
    fn complete_ready(&mut self, sampler: &mut Option<ServerSampler>, observe: &mut dyn FnMut(&Progress)) {
        let all_done = self.reported.iter().all(|(_, done)| *done);
        while let Some((&index, _)) = self.pending.first_key_value() {
            let complete =
                all_done || self.reported.iter().all(|(last, done)| *done || last.is_some_and(|l| l >= index));
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
            self.timeline.push(Interval {
                run: self.run,
                index,
                start_secs,
                duration_secs: (end_secs - start_secs).max(0.0),
                window,
                server,
                active_connections,
            });
            let interval = self.timeline.last().expect("just pushed");
            let elapsed = Duration::from_secs_f64(end_secs);
            let total_ops: u64 = self.totals.ops.iter().map(|o| o.count).sum();
            let (done, time_left) = match self.config.stop {
                StopAfter::Duration(d) => (Some(end_secs / d.as_secs_f64()), Some(d.saturating_sub(elapsed))),
                _ => (self.config.planned_requests().map(|n| total_ops as f64 / n.max(1) as f64), None),
            };
            let total_errors = self.totals.ops.iter().map(|o| o.errors).sum();
            let started_unix_ms = self.started_unix_ms;
            observe(&Progress { interval, started_unix_ms, elapsed, total_ops, total_errors, done, time_left });
        }
    }

    fn finish(mut self, interrupted: bool, server: Option<ServerInfo>, command_names: Vec<String>) -> Outcome {
        for (_, done) in self.reported.iter_mut() {
            *done = true;
        }
        self.complete_ready(&mut None, &mut |_| {});
        let outages = Outage::merge(self.run, self.start, std::mem::take(&mut self.totals.down));
        let mut nodes = std::mem::take(&mut self.totals.nodes);
        nodes.sort_by(|a, b| a.0.cmp(&b.0));
        self.clients.sort_by_key(|c| c.index);
        Outcome {
            client_stats: self.clients,
            outages,
            reconnect_attempts: self.totals.reconnect_attempts,
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
            server,
            command_names,
            client_threads: self.client_threads,
            server_stats: None,
            server_peak_memory: None,
            warnings: Vec::new(),
            runs: Vec::new(),
        }
    }
}
