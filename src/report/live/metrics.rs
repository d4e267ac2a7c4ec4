//! `--metrics-listen ADDR`: live OpenMetrics text for dashboards (Prometheus scrapes it). The
//! collector's per-interval callback adds each completed interval here and encodes the values
//! with `prometheus-client` once, into the page `endpoint` hands every scraper (so the run never
//! waits on a scraper, however many or slow). Counters only grow, across `--runs` and across a
//! scenario's phases, so `rate()` is ops per second. Each worker thread's busy share is read
//! from /proc once per interval, on the collector's thread, never on the workers'.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

use super::endpoint::{Board, Endpoint, Limits, Page};
use super::prometheus::MemtierTotals;
use super::shape::{Labels, Latency, Names, Shape, snapshot};
use crate::config::Config;
use crate::engine::{Progress, WORKER_THREAD};
use crate::report::document::role_figures::Figure;
use crate::report::document::roles::RoleReport;

message_error!(
    /// A metrics endpoint that cannot listen.
    ServeError
);

/// What the endpoint shows, updated once per interval.
#[derive(Default)]
struct State {
    /// Whose names, which constant labels, which buckets.
    shape: Shape,
    names: Vec<String>,
    requested_rate: Option<f64>,
    requests: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
    ops_per_sec: BTreeMap<String, f64>,
    latency: BTreeMap<String, (Histogram<u64>, u64)>,
    /// The latency's parts (kernel timestamps on), by command and part name.
    parts: BTreeMap<(String, &'static str), (Histogram<u64>, u64)>,
    /// The client's share of p99 so far, over all commands (kernel timestamps on).
    client_share: Option<f64>,
    /// All commands' response times and parts so far, for `client_share`.
    totals: Option<crate::stats::OpStats>,
    achieved_rate: f64,
    server_cpu: Option<f64>,
    server_memory: Option<u64>,
    intervals: u64,
    /// Each worker thread's busy share over the last interval, by its index.
    busy: BTreeMap<usize, f64>,
    /// Each worker thread's run and run-queue wait (ns) when last read, and when, by thread id.
    cpu_seen: BTreeMap<u64, (u64, Instant)>,
    /// The run (or scenario) is over: these are the final values.
    finished: bool,
    /// What memtier's exporter shows beside the above (`prometheus.rs`).
    memtier: MemtierTotals,
    /// `--role`: each role's counts so far by (role, kind, figure), and its own latencies
    /// (a pub/sub role's delivery latency) by (role, name): live while a pub/sub role's
    /// intervals come, every role's at its run's end (`Live::run_ended`).
    role_counts: BTreeMap<(String, String, String), u64>,
    role_latency: BTreeMap<(String, String), (Histogram<u64>, u64)>,
    /// Each role's figures other than counts and latencies (pending entries, hit ratio, ...)
    /// as its last run's end said them, by (role, kind, figure).
    role_levels: BTreeMap<(String, String, String), f64>,
    /// The run's roles as planned, and their counts before it began.
    role_planned: Vec<RoleReport>,
    role_before: BTreeMap<(String, String, String), u64>,
}

/// What follows the values as they change (`--metrics-push`'s pusher, `report::live::push`).
pub trait Follower: Send + Sync {
    /// New values, after an interval: must not block.
    fn updated(&self);
    /// The final values: returns once they are handed on, or could not be (bounded); whether
    /// they were.
    fn finished(&self) -> bool;
}

/// The live metrics of this process: the collector's callback updates them and pins up the
/// page the endpoint's thread serves.
pub struct Live {
    state: Mutex<State>,
    /// Where it is served (`None`: only pushed, `--metrics-push` without `--metrics-listen`).
    addr: Option<SocketAddr>,
    /// `--metrics-push`: told of each interval and of the end (`report::live::push`).
    push: OnceLock<Box<dyn Follower>>,
    board: Arc<Board>,
    /// Scrapes served since the values became final.
    final_scrapes: AtomicU64,
    scraped: Condvar,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Live({:?})", self.addr)
    }
}

impl Live {
    /// Binds exactly `addr` and serves `/metrics` on a thread of its own until the process
    /// exits; prints the address it got (a port of 0 is any free one).
    pub fn serve(addr: SocketAddr, shape: Shape) -> Result<Arc<Live>, ServeError> {
        let flag = match shape.names {
            Names::Respbench => "--metrics-listen",
            Names::Memtier => "--prometheus-port",
        };
        let endpoint =
            Endpoint::bind(addr, Limits::default()).map_err(|e| format!("{flag} {addr}: cannot listen: {e}"))?;
        let addr = endpoint.addr().map_err(|e| format!("{flag} {addr}: {e}"))?;
        let names = shape.names;
        let live = Arc::new(Live {
            state: Mutex::new(State::new(shape)),
            addr: Some(addr),
            push: OnceLock::new(),
            board: Arc::new(Board::default()),
            final_scrapes: AtomicU64::new(0),
            scraped: Condvar::new(),
        });
        live.publish(&live.lock());
        let weak: Weak<Live> = Arc::downgrade(&live);
        endpoint
            .spawn(Arc::clone(&live.board), move || {
                if let Some(live) = weak.upgrade() {
                    live.final_scrape_served();
                }
            })
            .map_err(|e| format!("{flag}: cannot start its thread: {e}"))?;
        match names {
            Names::Respbench => eprintln!("respbench: metrics on http://{addr}/metrics"),
            // memtier's line, on standard output, for automation to read the port from.
            Names::Memtier => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "Prometheus exporter listening on http://{addr}/metrics");
                let _ = out.flush();
            }
        }
        Ok(live)
    }

    /// Values kept for `--metrics-push` alone: nothing listens.
    pub fn unserved(shape: Shape) -> Arc<Live> {
        Arc::new(Live {
            state: Mutex::new(State::new(shape)),
            addr: None,
            push: OnceLock::new(),
            board: Arc::new(Board::default()),
            final_scrapes: AtomicU64::new(0),
            scraped: Condvar::new(),
        })
    }

    pub fn addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    /// Tells `follower` of the values after each interval and at the end (set once).
    pub fn followed_by(&self, follower: Box<dyn Follower>) {
        let _ = self.push.set(follower);
    }

    /// The current values as OpenMetrics text, what a scrape reads.
    pub fn text(&self) -> String {
        // The page pinned up last: the pusher (a low-priority thread) never holds the lock
        // the collector takes.
        String::from_utf8_lossy(self.board.current().body()).into_owned()
    }

    /// A run (or a phase) begins: its command names and requested rate.
    pub fn run_started(&self, config: &Config) {
        let mut s = self.lock();
        s.names = config.commands.iter().map(|c| c.name.clone()).collect();
        s.requested_rate = config.rate.map(|r| r.per_sec);
        s.role_planned = crate::report::document::roles::planned(config);
        s.role_before = s.role_counts.clone();
        s.finished = false;
        s.memtier.run += 1;
        s.memtier.threads = config.threads;
        s.memtier.test_time_secs = match config.stop {
            crate::config::StopAfter::Duration(d) => d.as_secs_f64(),
            _ => 0.0,
        };
        // This run's threads are new: the gauges of the last run's are stale.
        s.busy.clear();
        s.totals = None;
        self.publish(&s);
    }

    /// One completed interval.
    pub fn interval(&self, p: &Progress) {
        let mut s = self.lock();
        let secs = p.interval.duration_secs.max(1e-9);
        let w = &p.window;
        let mut total = 0;
        for (i, op) in w.ops.iter().enumerate().filter(|(_, op)| !op.unit) {
            let name = s.names.get(i).cloned().unwrap_or_else(|| format!("command{i}"));
            total += op.count;
            let m = &mut s.memtier;
            (m.bytes_out, m.bytes_in) = (m.bytes_out + op.bytes_out, m.bytes_in + op.bytes_in);
            (m.hits, m.misses, m.errors) = (m.hits + op.hits, m.misses + op.misses, m.errors + op.errors);
            let all = m.latency.get_or_insert_with(|| (Histogram::new_from(&op.latency_ns), 0));
            let _ = all.0.add(&op.latency_ns);
            all.1 += op.latency_sum_ns;
            *s.requests.entry(name.clone()).or_default() += op.count;
            s.ops_per_sec.insert(name.clone(), op.count as f64 / secs);
            let entry = s.latency.entry(name.clone()).or_insert_with(|| (Histogram::new_from(&op.latency_ns), 0));
            let _ = entry.0.add(&op.latency_ns);
            entry.1 += op.latency_sum_ns;
            if let Some(parts) = op.parts.as_deref() {
                let named = [("send_lag", &parts.send_lag_ns), ("wire_and_server", &parts.wire_ns)];
                for (i, (part, h)) in named.into_iter().chain([("receive_lag", &parts.receive_lag_ns)]).enumerate() {
                    let entry = s.parts.entry((name.clone(), part)).or_insert_with(|| (Histogram::new_from(h), 0));
                    let _ = entry.0.add(h);
                    entry.1 += parts.sums_ns[i];
                }
            }
        }
        if w.ops.iter().any(|op| op.parts.is_some()) {
            let totals = s.totals.get_or_insert_with(Default::default);
            totals.merge(&w.total());
            let share = totals.parts.as_deref().and_then(|p| p.client_share(&totals.latency_ns, 0.99));
            s.client_share = share.map(|(_, share)| share);
        }
        for (kind, n) in w.errors.sorted() {
            *s.errors.entry(kind.to_string()).or_default() += n;
        }
        s.achieved_rate = total as f64 / secs;
        s.memtier.ops += total;
        s.memtier.connection_errors += w.connections_lost.sorted().into_iter().map(|(_, n)| n).sum::<u64>();
        s.memtier.connections = w.active_connections;
        for &crate::engine::RoleInterval { name: role, row, ref window } in p.roles {
            let published = w.ops.get(row).map_or(0, |op| op.count - op.errors);
            let key = |figure: &str| (role.to_string(), window.kind().to_string(), figure.to_string());
            *s.role_counts.entry(key("published")).or_default() += published;
            for (figure, n) in window.counts() {
                *s.role_counts.entry(key(figure)).or_default() += n;
            }
            if let Some((what, h)) = window.latency() {
                let entry = s
                    .role_latency
                    .entry((role.to_string(), what.to_string()))
                    .or_insert_with(|| (Histogram::new_from(h), 0));
                let _ = entry.0.add(h);
                entry.1 += window.latency_sum_ns();
            }
        }
        if let Some(server) = &p.interval.server {
            s.server_cpu = Some(server.cpu.total);
            s.server_memory = Some(server.used_memory_bytes);
        }
        s.intervals += 1;
        threads_busy(&mut s);
        self.publish(&s);
        drop(s);
        if let Some(p) = self.push.get() {
            p.updated();
        }
    }

    /// A run ended: every role's figures as the run's result says them (`RoleReport::figures`):
    /// its counts are the counts before the run plus the run's, so what the intervals added
    /// live (a pub/sub role's) ends exact, and what only the end knows (lost messages, a stream
    /// role's entries, ...) is added; the latencies not fed live (every role's but a pub/sub
    /// role's) are added from the run's histograms.
    pub fn run_ended(&self, outcome: &crate::engine::Outcome) {
        let mut s = self.lock();
        for role in crate::report::document::roles::ended(&s.role_planned, outcome) {
            let key = |figure: &str| (role.name.clone(), role.kind.clone(), figure.to_string());
            for (figure, value) in role.figures() {
                match value {
                    Figure::Count(n) => {
                        let before = s.role_before.get(&key(&figure)).copied().unwrap_or(0);
                        s.role_counts.insert(key(&figure), before + n);
                    }
                    Figure::Ms { .. } => {}
                    other => {
                        s.role_levels.insert(key(&figure), other.value());
                    }
                }
            }
            // A role whose listeners fed its intervals live (a pub/sub role's).
            if outcome.role(&role.name).is_some_and(|r| r.total.is_some()) {
                continue;
            }
            for (what, h) in role.kept().into_iter().flat_map(|k| k.iter()) {
                // The histogram's own mean stands for the exact sum the listeners did not keep.
                let sum_ns = (h.mean() * h.len() as f64) as u64;
                let entry = s
                    .role_latency
                    .entry((role.name.clone(), what.to_string()))
                    .or_insert_with(|| (Histogram::new_from(h), 0));
                let _ = entry.0.add(h);
                entry.1 += sum_ns;
            }
        }
        self.publish(&s);
    }

    /// Every value is final: a scrape from now on sees the end of the run.
    pub fn finish(&self) {
        let mut s = self.lock();
        s.finished = true;
        self.publish(&s);
        let names = s.shape.names;
        drop(s);
        // memtier's stderr carries memtier's lines.
        if names == Names::Respbench {
            eprintln!("respbench: metrics final");
        }
        if let Some(p) = self.push.get()
            && p.finished()
        {
            eprintln!("respbench: metrics pushed");
        }
    }

    /// Keeps serving after the run until one scrape has read the final values, at most `most`,
    /// so that the last scrape of a dashboard sees the end.
    pub fn linger(&self, most: Duration) {
        let deadline = Instant::now() + most;
        let mut s = self.lock();
        while self.final_scrapes.load(Ordering::SeqCst) == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            s = self.scraped.wait_timeout(s, left).map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Encodes the values into the page every scrape gets until the next change.
    fn publish(&self, s: &State) {
        let text = match s.shape.names {
            Names::Respbench => encode(s),
            Names::Memtier => super::prometheus::encode(&s.memtier, &s.shape),
        };
        self.board.pin(Page::new(&text, s.finished));
    }

    /// A scraper read the final page: `linger` may end.
    fn final_scrape_served(&self) {
        self.final_scrapes.fetch_add(1, Ordering::SeqCst);
        let _guard = self.lock();
        self.scraped.notify_all();
    }
}

/// Reads each worker thread's CPU from /proc (run time and run-queue wait, as the report's
/// `ThreadCpu::busy` counts them) and sets its busy share since the last read, capped at 1.
/// A thread seen for the first time only gives the starting point.
fn threads_busy(s: &mut State) {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return };
    let now = Instant::now();
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse::<u64>().ok()) else { continue };
        let dir = task.path();
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else { continue };
        let Some(index) = comm.trim().strip_prefix(WORKER_THREAD).and_then(|i| i.parse::<usize>().ok()) else {
            continue;
        };
        let Some(ns) = std::fs::read_to_string(dir.join("schedstat")).ok().and_then(|text| {
            let mut words = text.split_whitespace().map(|w| w.parse::<u64>().ok());
            Some(words.next()?? + words.next()??)
        }) else {
            continue;
        };
        if let Some((before, then)) = s.cpu_seen.insert(tid, (ns, now)) {
            let wall = now.duration_since(then).as_nanos() as f64;
            if wall > 0.0 {
                s.busy.insert(index, (ns.saturating_sub(before) as f64 / wall).min(1.0));
            }
        }
    }
    // Threads of finished runs are gone: forget them.
    s.cpu_seen.retain(|_, (_, when)| *when == now);
}

impl State {
    fn new(shape: Shape) -> State {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        State {
            shape,
            memtier: MemtierTotals { start_unix: since.as_secs_f64(), ..Default::default() },
            ..Default::default()
        }
    }
}

/// The OpenMetrics text of the current values.
fn encode(s: &State) -> String {
    let mut registry = s.shape.registry("respbench");
    let requests = Family::<Labels, Counter>::default();
    for (name, n) in &s.requests {
        requests.get_or_create(&vec![("command".into(), name.clone())]).inc_by(*n);
    }
    registry.register("requests", "Replies received, by command (errors included)", requests);
    let errors = Family::<Labels, Counter>::default();
    for (kind, n) in &s.errors {
        errors.get_or_create(&vec![("kind".into(), kind.clone())]).inc_by(*n);
    }
    registry.register("errors", "Failed requests, by kind (server:ERR, io, timeout, protocol)", errors);
    let ops = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    for (name, rate) in &s.ops_per_sec {
        ops.get_or_create(&vec![("command".into(), name.clone())]).set(*rate);
    }
    registry.register("ops_per_second", "Replies per second over the last interval, by command", ops);
    registry.register(
        "latency_seconds",
        "Response time from the intended send, by command",
        Latency(
            s.latency.iter().map(|(name, (h, sum))| (command(name), snapshot(h, *sum, &s.shape.buckets))).collect(),
        ),
    );
    if !s.parts.is_empty() {
        let labelled = |(name, part): &(String, &str)| {
            let mut labels = command(name);
            labels.push(("part".into(), part.to_string()));
            labels
        };
        registry.register(
            "latency_part_seconds",
            "Response time decomposed by kernel receive timestamps, by command and part: send_lag (the client's, \
             before the send), wire_and_server (from the send to the kernel's receive), receive_lag (the client's, \
             from there to the reply parsed)",
            Latency(
                s.parts.iter().map(|(key, (h, sum))| (labelled(key), snapshot(h, *sum, &s.shape.buckets))).collect(),
            ),
        );
    }
    let gauge = |v: f64| {
        let g = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        g.set(v);
        g
    };
    registry.register(
        "achieved_rate",
        "Replies per second over the last interval, all commands",
        gauge(s.achieved_rate),
    );
    if let Some(share) = s.client_share {
        registry.register(
            "client_share_of_p99",
            "How much of the response time's p99 the client added (its send and receive lags), as a share, so far",
            gauge(share),
        );
    }
    if let Some(rate) = s.requested_rate {
        registry.register("requested_rate", "The requested rate (open loop), requests per second", gauge(rate));
    }
    if let Some(cpu) = s.server_cpu {
        registry.register("server_cpu", "The server's CPU over the last interval, in cores", gauge(cpu));
    }
    if let Some(mem) = s.server_memory {
        registry.register("server_used_memory_bytes", "The server's used_memory", gauge(mem as f64));
    }
    let busy = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    for (thread, share) in &s.busy {
        busy.get_or_create(&vec![("thread".into(), thread.to_string())]).set(*share);
    }
    registry.register(
        "client_thread_busy_ratio",
        "Share of the last interval each client worker thread ran or waited for a core (1 = it set the pace)",
        busy,
    );
    register_roles(&mut registry, s);
    registry.register("intervals", "Intervals completed", {
        let c = Counter::<u64>::default();
        c.inc_by(s.intervals);
        c
    });
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("writing to a String");
    text
}

/// The roles' figures (`--role`): their counts, other figures and own latencies.
fn register_roles(registry: &mut prometheus_client::registry::Registry, s: &State) {
    if s.role_counts.is_empty() {
        return;
    }
    let roles = Family::<Labels, Counter>::default();
    let labels = |(role, kind, figure): &(String, String, String)| -> Labels {
        vec![("role".into(), role.clone()), ("kind".into(), kind.clone()), ("figure".into(), figure.clone())]
    };
    for (key, n) in &s.role_counts {
        roles.get_or_create(&labels(key)).inc_by(*n);
    }
    registry.register(
        "role_messages",
        "--role: a role's counts so far, by role and figure (a pub/sub role: published, delivered, \
         duplicated, out_of_order live; expected_deliveries and lost, and every other kind's counts, once \
         the run has ended)",
        roles,
    );
    let levels = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    for (key, v) in &s.role_levels {
        levels.get_or_create(&labels(key)).set(*v);
    }
    registry.register(
        "role_figure",
        "--role: a role's figures other than counts and latencies as its last run's end said them (a stream \
         role's pending, pending_max, lag_max; a tracking role's hit_ratio, invalidations_per_sec)",
        levels,
    );
    registry.register(
        "role_latency_seconds",
        "--role: a role's own latency, by role and name (a pub/sub role: delivery, live; a stream role: \
         end_to_end; a queue role: wait, service, end_to_end; a tracking role: invalidation_delay; those \
         once the run has ended)",
        Latency(
            s.role_latency
                .iter()
                .map(|((role, what), (h, sum))| {
                    let labels = vec![("role".into(), role.clone()), ("latency".into(), what.clone())];
                    (labels, snapshot(h, *sum, &s.shape.buckets))
                })
                .collect(),
        ),
    );
}

fn command(name: &str) -> Labels {
    vec![("command".to_string(), name.to_string())]
}
