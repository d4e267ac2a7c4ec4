//! The one engine for every mode: connects the workers' connections, starts them together,
//! and collects their interval windows into a timeline and totals. Modes differ only in the
//! small strategy pieces each connection carries (its pacer, its quota, its request stream).
//!
//! [`run`] reads as its phases: [`prepare`] (the server's INFO, the sampler, the compiled
//! workload), `open` (each worker thread opens its connections, in `open.rs`), the start (all
//! workers at one instant, after `--start-at` and the warmup), `drive` (each worker's event
//! loop, in `worker/`) and `collect` (windows merged into a timeline, in `collect.rs`).

mod board;
mod collect;
mod dialer;
mod listener;
mod msg;
mod open;
mod outcome;
mod pacer;
mod preflight;
mod prepared;
pub mod pubsub;
pub mod queue;
mod router;
mod server_latency;
mod server_stats;
pub mod setup;
mod slot_map;
mod start_at;
pub mod streams;
// unsafe: getrusage(RUSAGE_THREAD) has no safe wrapper; each block says why it is sound.
#[allow(unsafe_code)]
mod telemetry;
mod timeline;
pub mod tracking;
mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use board::{Board, LinkState, Shown};
use collect::{Collector, telemetry_warnings};
pub use msg::Msg;
pub use outcome::{ClientShare, FailedKey, Outage, Outcome, Progress, RoleInterval, RoleOutcome, RunFigures};
pub use pacer::Pacer;
pub use preflight::{Checks, preflight};
use prepared::Prepared;
pub use server_latency::{ServerCommandLatency, ServerLatency};
pub use server_stats::{Info, ServerCpu, ServerSample, ServerSampler};
pub use telemetry::{Bottleneck, LATE_NS, SATURATED, ThreadCpu, lower_priority, verdict, yield_to_the_load};
pub use timeline::{Interval, Timeline};
pub use worker::Said;
use worker::WorkerPlan;

use crate::config::{Config, StopAfter};
use crate::net::{CallError, ConnectError, ServerInfo, Session};
use crate::stats::{ClientStats, Window};
use crate::workload::Workload;

/// The name of a worker thread, before its index: the live metrics find each worker's CPU in
/// /proc by it.
pub const WORKER_THREAD: &str = "respbench-w";

/// How long a run waits, before connecting, for the kernel to start stamping received packets.
const STAMPS_WAIT: Duration = Duration::from_secs(2);

/// What the collector learns of the server, before and during the run.
struct Probe {
    /// `None` when the server refused INFO or did not answer it.
    server: Option<ServerInfo>,
    /// The server did not answer INFO in time: why, for the warnings.
    silent: Option<String>,
    sampler: Option<ServerSampler>,
}

/// How the main thread and the workers meet: every worker has opened its connections
/// (`connected`), then all start at one instant (`go`) with `start` set, or give up (`abort`).
struct Meeting {
    connected: Barrier,
    go: Barrier,
    abort: AtomicBool,
    /// The start instant and the warmup that follows it.
    start: OnceLock<(Instant, Duration)>,
    /// Whether any reply came, and whether a worker gave up waiting for the first.
    first_reply: worker::FirstReply,
}

/// When a run began measuring: which of `--runs` it is, the instant (after the warmup) and
/// that instant on the wall clock.
struct Began {
    run: usize,
    measure_from: Instant,
    started_unix_ms: u64,
    /// What came before the start other than a failure (a role's listener that stopped).
    early: Vec<Msg>,
}

/// What one benchmark's runs (its `--runs`, and nothing beyond) share: the messages its workers
/// said once, and whether the checks before it found the server silent. The caller makes one
/// per benchmark, so a scenario's next phase, or a fill's next pass, starts afresh.
#[derive(Debug, Default)]
pub struct RunState {
    said: Said,
    /// The checks just before found the server silent: the first run does not ask INFO again
    /// (its deadline is spent); a later run of `--runs` asks afresh.
    found_silent: AtomicBool,
}

impl RunState {
    /// The state of a benchmark whose checks before the run found what `checks` says.
    pub fn after_checks(checks: &Checks) -> RunState {
        RunState { said: Said::default(), found_silent: AtomicBool::new(checks.found_silent) }
    }
}

/// Runs the plan once. `stop` ends it early (SIGINT); `observe` sees every completed interval.
/// `run` numbers the run among `--runs`; `state` is what the benchmark's runs share; `board`
/// is where the workers show their connections while they run (for a crash report).
pub fn run(
    config: &Config,
    state: &RunState,
    board: &Board,
    run: usize,
    stop: &AtomicBool,
    observe: &mut dyn FnMut(&Progress),
) -> Result<Outcome, ConnectError> {
    // A tracking role's readers listen before the run's connections start, each tracking before
    // the first write; a stream role's consumer group and consumers, a queue role's workers,
    // likewise. (A pub/sub role's subscribers are opened in `drive_all`, whose collector they
    // hand their intervals.) Each role's listeners follow its own plan; its producers' count
    // is its row's (`Config::role_plans`).
    let mut listening = Vec::new();
    for (plan, row) in config.role_plans() {
        let Some(role) = plan.extras.roles.first() else { continue };
        let readers = tracking::listen(plan)?;
        let consumers = streams::listen(plan)?;
        let workers = queue::listen(plan)?;
        listening.push((role.name.clone(), row, readers, consumers, workers));
    }
    let mut outcome = drive_all(config, state, board, run, stop, observe)?;
    let stopped = stop.load(Ordering::SeqCst);
    for (name, row, readers, consumers, workers) in listening {
        let produced = outcome.ops.get(row).map_or(0, crate::stats::OpStats::succeeded);
        let tracking = readers.map(tracking::Readers::finish);
        let stream = consumers.map(|c| c.finish(produced, stopped));
        let queue = workers.map(|w| w.finish(produced, stopped));
        if tracking.is_some() || stream.is_some() || queue.is_some() {
            let role = outcome.role_mut(&name);
            (role.tracking, role.stream, role.queue) = (tracking, stream, queue);
        }
    }
    Ok(outcome)
}

/// A pub/sub role's subscribers, listening, with the role's name and its PUBLISH row.
struct Subscribed {
    listeners: pubsub::Listeners,
    name: String,
    row: usize,
}

/// Opens the subscribers of every pub/sub role of the run (`pubsub::listen`), each role's
/// listeners handing their intervals in as the collector's role of that index.
fn subscribe(config: &Config, tx: &Sender<Msg>) -> Result<Vec<Subscribed>, ConnectError> {
    let mut out = Vec::new();
    for (plan, row) in config.role_plans() {
        if let Some(listeners) = pubsub::listen(plan, tx, out.len())? {
            let name = plan.extras.roles.first().map(|r| r.name.clone()).unwrap_or_default();
            out.push(Subscribed { listeners, name, row });
        }
    }
    Ok(out)
}

/// The run's own connections, from preparing to collecting.
fn drive_all(
    config: &Config,
    state: &RunState,
    board: &Board,
    run: usize,
    stop: &AtomicBool,
    observe: &mut dyn FnMut(&Progress),
) -> Result<Outcome, ConnectError> {
    let found_silent = state.found_silent.swap(false, Ordering::SeqCst);
    let (probe, prepared) = prepare(config, found_silent)?;
    board.name_commands(prepared.workload.names());
    let (tx, rx) = mpsc::channel();
    // A pub/sub role's subscribers listen before its publishers (the run's connections) start.
    let listeners = subscribe(config, &tx)?;
    // Each worker's way back for the windows the collector has merged (`stats::recycle`).
    let (spares, spares_back): (Vec<_>, Vec<_>) = (0..prepared.threads).map(|_| mpsc::channel::<Window>()).unzip();
    let meeting = Meeting {
        connected: Barrier::new(prepared.threads + 1),
        go: Barrier::new(prepared.threads + 1),
        abort: AtomicBool::new(false),
        start: OnceLock::new(),
        first_reply: worker::FirstReply::new(found_silent),
    };
    std::thread::scope(|scope| {
        for (t, spares) in spares_back.into_iter().enumerate() {
            let (tx, prepared, meeting) = (tx.clone(), &prepared, &meeting);
            // Named so that `--metrics-listen` finds each worker's CPU in /proc (`report::live::metrics`).
            let named = std::thread::Builder::new().name(format!("{WORKER_THREAD}{t}"));
            let work = move || {
                let Some(opened) = open::open(config, prepared, t, &tx) else {
                    meeting.connected.wait();
                    meeting.go.wait();
                    return;
                };
                meeting.connected.wait();
                meeting.go.wait();
                if !meeting.abort.load(Ordering::SeqCst) {
                    drive(config, (prepared, &state.said, board), meeting, t, opened, stop, (tx, spares));
                }
            };
            named.spawn_scoped(scope, work).expect("a worker thread starts (as scope.spawn would panic)");
        }
        drop(tx);
        let began = start(config, run, &meeting, &rx, stop)?;
        let outcome = collect(config, (probe, listeners), &prepared, began, (rx, spares), stop, observe);
        match meeting.first_reply.missed(config) {
            Some(e) => Err(e),
            None => Ok(outcome),
        }
    })
}

/// Asks the server what it is (one deadline for connecting and INFO), opens the sampler that
/// reads its INFO each interval, and compiles the workload. `found_silent`: the checks just
/// before found the server silent.
fn prepare(config: &Config, found_silent: bool) -> Result<(Probe, Prepared), ConnectError> {
    let budget = config.faults.connect_timeout;
    let target = config.server.target.to_string();
    // Refused (an error reply) and silent are told apart: only a refusal is "INFO refused".
    // The checks just before shared this deadline: a server they found silent is not waited
    // for again (its deadline is spent, as a call after it would say).
    let (server, silent) = if found_silent {
        (None, Some(ConnectError::Silent { target, command: "INFO".into(), waited: budget }.to_string()))
    } else {
        let mut control = Session::open_by_deadline(&config.server, budget)?;
        match ServerInfo::ask(&mut control) {
            Ok(info) => (Some(info), None),
            Err(CallError::Connect(e @ ConnectError::Silent { .. })) => (None, Some(e.to_string())),
            Err(_) => (None, None),
        }
    };
    let bound = server_stats::sample_timeout(config.interval);
    let sampler =
        silent.is_none().then(|| ServerSampler::open(&config.server, config.cluster.is_some(), bound)).flatten();
    let workload = Arc::new(Workload::compile(config));
    let max_request = config.values.max() + config.keys.prefix.len() + workload.longest_fixed() + 128;
    let probe = Probe { server, silent, sampler };
    let stamps = config.timestamps() && matches!(config.server.target, crate::config::Target::Tcp { .. });
    // The kernel may take a moment to start stamping: before connecting, not in the run.
    let keeper = stamps.then(|| crate::net::driver::stamp::Keeper::start(STAMPS_WAIT).ok()).flatten();
    Ok((
        probe,
        Prepared {
            threads: config.worker_threads(),
            max_request,
            key_args: config.key_args(),
            reads: config.commands.iter().map(|c| c.reads).collect(),
            workload,
            io: crate::net::driver::path_for(config),
            stamps,
            _keeper: keeper.map(|(keeper, _)| keeper),
        },
    ))
}

/// Once every worker has opened its connections: gives up if one could not, else waits for
/// `--start-at`, fixes the start instant and lets the workers go.
fn start(
    config: &Config,
    run: usize,
    meeting: &Meeting,
    rx: &Receiver<Msg>,
    stop: &AtomicBool,
) -> Result<Began, ConnectError> {
    meeting.connected.wait();
    let (mut failure, mut early) = (None, Vec::new());
    while let Ok(msg) = rx.try_recv() {
        match msg {
            Msg::Failed(e) => {
                failure.get_or_insert(e);
            }
            other => early.push(other),
        }
    }
    meeting.abort.store(failure.is_some(), Ordering::SeqCst);
    // `--start-at`: warm up so that the measured phase begins at that instant.
    let start_at = config.extras.start_at.filter(|_| failure.is_none());
    if let Some(at) = start_at {
        start_at::wait(at, config.warmup, config.stop != StopAfter::AllKeys, stop);
    }
    let start = Instant::now();
    let wall = SystemTime::now();
    let warmup = start_at.map_or(config.warmup, |at| start_at::warmup(at, wall, run, config.warmup));
    meeting.start.set((start, warmup)).expect("set once");
    meeting.go.wait();
    if let Some(e) = failure {
        return Err(e);
    }
    let started_unix_ms = (wall + warmup).duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    Ok(Began { run, measure_from: start + warmup, started_unix_ms, early })
}

/// One worker thread's run: gives each connection its pacer (and its place in a staircase),
/// then runs the event loop until the run ends.
fn drive(
    config: &Config,
    (prepared, said, board): (&Prepared, &Said, &Board),
    meeting: &Meeting,
    t: usize,
    (mut conns, router, driver): worker::Opened,
    stop: &AtomicBool,
    (tx, spares): (Sender<Msg>, Receiver<Window>),
) {
    let (start, warmup) = *meeting.start.get().expect("set before the go barrier");
    let first = t * config.connections / prepared.threads;
    for (k, conn) in conns.iter_mut().enumerate() {
        // A role that starts later into the measured run: connected now, held until then, its
        // schedule beginning then.
        let late = config.start_of(first + k);
        let late = if late.is_zero() { late } else { warmup + late };
        let delay = worker::join_delay(config, prepared.threads, first + k) + late;
        conn.set_pacer(pacer::for_connection(config, first + k, start + delay));
        conn.set_pipeline(config.pipeline_of(first + k));
        if config.extras.client_stats {
            conn.keep_stats(ClientStats::new(first + k, (t, k), config.rows(), start + config.warmup));
        }
        if !delay.is_zero() {
            conn.hold_until(start + delay);
        }
    }
    let measure_from = start + warmup;
    let plan = WorkerPlan {
        index: t,
        pipeline: config.pipeline,
        interval: config.interval,
        measure_from,
        deadline: match config.stop {
            StopAfter::Duration(d) => Some(measure_from + d),
            _ => None,
        },
        stop,
        rows: config.rows(),
        unit_row: config.unit_row(),
        server: &config.server,
        faults: config.faults,
        retry_on: &config.extras.retry_on,
        first_reply: (
            // A counted run with --request-timeout ends by itself: its requests time out.
            (config.faults.stage_bound
                || (!matches!(config.stop, StopAfter::Duration(_)) && config.faults.timeout.is_none()))
            .then(|| meeting.first_reply.deadline(start, config.faults.connect_timeout)),
            &meeting.first_reply,
        ),
        key_args: &prepared.key_args,
        reads: &prepared.reads,
        max_request: prepared.max_request,
        said,
        stamps: prepared.stamps,
        spares,
        board,
    };
    worker::run(plan, (conns, router, driver), tx);
}

/// Merges the workers' windows as they come (the live line sees each completed interval),
/// then adds the server's figures over the run and the warnings they call for.
fn collect(
    config: &Config,
    (mut probe, subscribed): (Probe, Vec<Subscribed>),
    prepared: &Prepared,
    Began { run, measure_from, started_unix_ms, early }: Began,
    (rx, spares): (Receiver<Msg>, Vec<Sender<Window>>),
    stop: &AtomicBool,
    observe: &mut dyn FnMut(&Progress),
) -> Outcome {
    let sampler = &mut probe.sampler;
    let names = prepared.workload.names().to_vec();
    let about = (probe.server.take(), names);
    let feeds = subscribed
        .iter()
        .map(|s| {
            s.listeners.begin(measure_from);
            let empty = crate::stats::RoleWindow::Messages(Default::default());
            collect::RoleFeed::new(s.name.clone(), s.row, s.listeners.count(), empty)
        })
        .collect();
    let mut collector = Collector::new(config, run, spares, measure_from, started_unix_ms, about, feeds);
    for msg in early {
        collector.take(msg, sampler, observe);
    }
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
            Ok(msg) => collector.take(msg, sampler, observe),
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        }
        // The listeners hold the channel open: the workers' end is the loop's.
        if !subscribed.is_empty() && collector.workers_done() {
            break;
        }
    }
    // The listeners read what is still on its way, then hand in their last intervals.
    let mut ended = Vec::new();
    for Subscribed { listeners: l, row, name } in subscribed {
        let publishes = collector.publishes(row);
        let role = l.role.clone();
        let dropped = l.finish(publishes.answered, stop.load(Ordering::SeqCst));
        while let Ok(msg) = rx.try_recv() {
            collector.take(msg, sampler, observe);
        }
        ended.push((name, role, dropped, publishes));
    }
    let server_stats = sampler.as_mut().and_then(|s| {
        s.sample();
        s.overall()
    });
    let server_latency = measure(config, probe.silent.as_deref(), sampler.as_mut());
    let (mut outcome, heard) = collector.finish(stop.load(Ordering::SeqCst));
    for ((name, p, dropped, publishes), heard) in ended.into_iter().zip(heard) {
        let crate::stats::RoleWindow::Messages(received) = &heard.total;
        let role = outcome.role_mut(&name);
        role.messages = Some(pubsub::Messages::of(p.subscribers, publishes, received, dropped));
        (role.total, role.series) = (Some(heard.total), heard.series);
    }
    // Clients connected is a gauge best read while the load runs, not after it.
    outcome.server_stats = server_stats.map(|mut s| {
        let during = outcome.timeline.iter().filter_map(|i| i.server.map(|x| x.connected_clients)).max();
        s.connected_clients = during.unwrap_or(s.connected_clients);
        s
    });
    outcome.server_peak_memory = sampler.as_ref().map(|s| s.peak_used_memory);
    outcome.server_latency = Some(server_latency);
    outcome.warnings = telemetry_warnings(&outcome, sampler.is_some(), probe.silent.as_deref());
    if let Some(stalled) = sampler.as_ref().map(ServerSampler::stalled).filter(|&n| n > 0) {
        let bound = server_stats::sample_timeout(config.interval);
        outcome.warnings.push(format!(
            "{stalled} server node(s) did not answer INFO within {bound:?} during the run: server telemetry is \
             missing from then on"
        ));
    }
    outcome.notes = stamp_notes(config, &outcome);
    let no_wire = stamps_unavailable(config, &outcome);
    if let Some(latency) = outcome.server_latency.as_mut() {
        latency.wire_and_server_unavailable = no_wire;
    }
    if let Some(warning) = outcome.client_share().and_then(|s| s.warning(config.client_share_warning())) {
        outcome.warnings.push(warning);
    }
    outcome.runs = vec![outcome.figures()];
    outcome
}

/// What the run says once about its latency's decomposition when it asked for it and could
/// not keep it.
fn stamp_notes(config: &Config, outcome: &Outcome) -> Vec<String> {
    let what = "latency is not decomposed into client send lag, wire and server, and client receive lag";
    match stamps_unavailable(config, outcome) {
        Some(why) if config.timestamps() => vec![format!("{why}: {what}")],
        _ => Vec::new(),
    }
}

/// Why the run kept no latency decomposition (kernel receive timestamps), if it kept none.
fn stamps_unavailable(config: &Config, outcome: &Outcome) -> Option<String> {
    if let crate::config::Target::Unix(_) = config.server.target {
        return Some("kernel receive timestamps are not available on a unix socket".into());
    }
    if !config.timestamps() {
        return Some(
            "kernel receive timestamps are off (on by default in open loop; --timestamps turns them on)".into(),
        );
    }
    let total = outcome.total();
    match &outcome.stamps_refused {
        Some(why) => Some(format!("the kernel refused receive timestamps ({why})")),
        None if total.count > 0 && total.parts.is_none_or(|p| p.count() == 0) => {
            Some("the kernel stamped no reply with its receive time".into())
        }
        None => None,
    }
}

/// The run's figures at its end: `sampler` asked for the run's commands, or why there are none
/// (memcached; no sampler: INFO silent (`silent` says how) or refused).
fn measure(config: &Config, silent: Option<&str>, sampler: Option<&mut ServerSampler>) -> ServerLatency {
    if config.server.session.protocol.is_memcache() {
        return ServerLatency::unavailable("memcached reports no per-command latency");
    }
    let mut names: Vec<String> = Vec::new();
    for c in &config.commands {
        if !names.contains(&c.name) {
            names.push(c.name.clone());
        }
    }
    match (sampler, silent) {
        (Some(sampler), _) => sampler.latency(&names),
        (None, Some(silent)) => ServerLatency::unavailable(format!("{silent}: no INFO latencystats")),
        (None, None) => ServerLatency::unavailable("the server refused INFO: no INFO latencystats"),
    }
}
