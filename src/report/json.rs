//! respbench's own JSON result: versioned, documented in docs/json-schema.json, and complete
//! enough that every other report can be rebuilt from it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Delivery, Format, Rates, Run};
use crate::config::{Config, StopAfter, ValueSize};
use crate::engine::{self, Bottleneck, RunFigures, ServerCpu, ServerSample, ThreadCpu};
use crate::net::ServerInfo;
use crate::stats::{LatencySummary, OpStats, Spread};

/// Bumped whenever a field changes meaning or disappears; additions keep the version.
pub const SCHEMA_VERSION: u32 = 1;

pub struct Json;

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    /// A name for this result in comparisons (`--label`); the file's stem when absent.
    label: Option<&'a str>,
    tool: Tool,
    server: Option<&'a ServerInfo>,
    started_unix_ms: u64,
    interrupted: bool,
    configuration: Configuration<'a>,
    measurement: Measurement,
    duration_secs: f64,
    totals: OpSummary,
    commands: BTreeMap<&'a str, OpSummary>,
    errors: BTreeMap<String, u64>,
    /// Open loop only.
    rate: Option<Delivery>,
    client: Client<'a>,
    server_cpu: Option<ServerCpu>,
    server_telemetry: Option<ServerTelemetry>,
    warnings: &'a [String],
    /// respbench's notes on how it ran the command line (said on stderr by the native CLI).
    notes: &'a [String],
    bottleneck: Verdict,
    runs: &'a [RunFigures],
    repetition: Option<Repetition>,
    faults: Faults<'a>,
    cluster: Option<Cluster<'a>>,
    time_series: Vec<Point>,
    /// `--shard`: this process's part of a run spread over several load machines.
    shard: Option<ShardPart<'a>>,
    /// `--start-at`: the instant asked for and how far from it the measured phase began.
    start: Option<Start>,
    /// Every histogram, lossless, so that shards merge exactly (`respbench merge`).
    histograms: super::histo::Histograms,
    /// Set by `respbench merge` only: the results merged into this one.
    merged_from: Option<()>,
}

#[derive(Serialize)]
struct ShardPart<'a> {
    index: u32,
    count: u32,
    source: &'a str,
    /// The run's --seed; the shard draws its streams from `stream_seed`.
    seed: u64,
    stream_seed: u64,
    total_requests: Option<u64>,
    total_rate_per_sec: Option<u64>,
    key_part: Option<(u64, u64)>,
}

#[derive(Serialize)]
struct Start {
    requested_unix_ms: f64,
    /// Measured-phase start minus the requested instant, in milliseconds (positive: late).
    offset_ms: f64,
}

#[derive(Serialize)]
struct Cluster<'a> {
    nodes: BTreeMap<&'a str, OpSummary>,
    moved: u64,
    asked: u64,
}

#[derive(Serialize)]
struct Faults<'a> {
    outages: &'a [engine::Outage],
    reconnect_attempts: u64,
    seconds_without_success: Vec<IntervalRef>,
}

#[derive(Serialize)]
struct IntervalRef {
    run: usize,
    index: u64,
}

#[derive(Serialize)]
struct Client<'a> {
    threads: &'a [ThreadCpu],
    machine: Machine,
}

/// The machine respbench ran on.
#[derive(Serialize)]
struct Machine {
    hostname: String,
    cores: usize,
    os: &'static str,
    arch: &'static str,
}

impl Machine {
    fn this() -> Machine {
        // The kernel's host name (what gethostname(2) returns), without unsafe code.
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        Machine {
            hostname: hostname.trim_end().to_string(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        }
    }
}

#[derive(Serialize)]
struct ServerTelemetry {
    #[serde(flatten)]
    sample: ServerSample,
    peak_used_memory_bytes: u64,
}

#[derive(Serialize)]
struct Verdict {
    verdict: Bottleneck,
    detail: String,
}

#[derive(Serialize)]
struct Repetition {
    ops_per_sec: Spread,
    p99_us: Spread,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct Configuration<'a> {
    target: String,
    connections: usize,
    threads: usize,
    pipeline: usize,
    /// The I/O path the workers took: `io_uring` or `epoll`.
    io: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    requests: Option<u64>,
    all_keys: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_secs: Option<f64>,
    commands: Vec<CommandConfig<'a>>,
    key_prefix: &'a str,
    key_min: u64,
    key_max: u64,
    value_size: ValueSizeConfig,
    random_data: bool,
    expiry_range_secs: Option<(u64, u64)>,
    seed: u64,
    interval_secs: f64,
    user: Option<&'a str>,
    db: Option<u32>,
    rate_per_sec: Option<f64>,
    arrival: Option<&'static str>,
    warmup_secs: f64,
    runs: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    ramp: Option<RampConfig>,
}

#[derive(Serialize)]
struct RampConfig {
    start: usize,
    step: usize,
    step_duration_secs: f64,
}

#[derive(Serialize)]
struct CommandConfig<'a> {
    name: &'a str,
    weight: u32,
    key_pattern: char,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum ValueSizeConfig {
    Fixed(usize),
    Range { min: usize, max: usize },
    List(Vec<(usize, u32)>),
}

#[derive(Serialize)]
struct Measurement {
    latency_from: &'static str,
    latency_to: &'static str,
    mode: &'static str,
    histogram: &'static str,
    description: &'static str,
}

#[derive(Serialize)]
struct OpSummary {
    count: u64,
    ops_per_sec: f64,
    hits: u64,
    misses: u64,
    hits_per_sec: f64,
    misses_per_sec: f64,
    errors: u64,
    bytes_in: u64,
    bytes_out: u64,
    kb_per_sec: f64,
    latency_us: LatencySummary,
    service_us: LatencySummary,
    /// The response-time percentile spectrum, for totals and per command (not per interval).
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_spectrum_us: Option<Vec<(f64, f64)>>,
}

/// Percentiles of the spectrum, HdrHistogram style: dense towards the tail.
const SPECTRUM: [f64; 20] = [
    0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 97.5, 99.0, 99.5, 99.75, 99.9, 99.95, 99.99,
    99.999, 100.0,
];

impl OpSummary {
    fn with_spectrum(mut self, op: &OpStats) -> OpSummary {
        let h = &op.latency_ns;
        self.latency_spectrum_us = (!h.is_empty())
            .then(|| SPECTRUM.iter().map(|&p| (p, h.value_at_quantile(p / 100.0) as f64 / 1000.0)).collect());
        self
    }

    fn of(op: &OpStats, secs: f64) -> OpSummary {
        let rates = Rates::of(op, secs);
        OpSummary {
            count: op.count,
            ops_per_sec: rates.ops_per_sec,
            hits: op.hits,
            misses: op.misses,
            hits_per_sec: rates.hits_per_sec,
            misses_per_sec: rates.misses_per_sec,
            errors: op.errors,
            bytes_in: op.bytes_in,
            bytes_out: op.bytes_out,
            kb_per_sec: rates.kb_per_sec,
            latency_us: op.latency(),
            service_us: op.service(),
            latency_spectrum_us: None,
        }
    }
}

/// One row's summary (as `totals` and `commands` hold it), for results built from saved
/// histograms (`respbench merge`); the spectrum only when `spectrum`.
pub(crate) fn op_summary(op: &OpStats, secs: f64, spectrum: bool) -> serde_json::Value {
    let summary = OpSummary::of(op, secs);
    let summary = if spectrum { summary.with_spectrum(op) } else { summary };
    serde_json::to_value(summary).expect("plain data serialises")
}

#[derive(Serialize)]
struct Point {
    run: usize,
    index: u64,
    start_secs: f64,
    duration_secs: f64,
    #[serde(flatten)]
    totals: OpSummary,
    commands: BTreeMap<String, u64>,
    server: Option<ServerSample>,
    active_connections: u64,
}

fn configuration(config: &Config, runs: usize) -> Configuration<'_> {
    Configuration {
        target: config.server.target.to_string(),
        connections: config.connections,
        threads: config.threads,
        pipeline: config.pipeline,
        io: config.extras.io.taken().name(),
        requests: config.planned_requests(),
        all_keys: config.stop == StopAfter::AllKeys,
        duration_secs: match config.stop {
            StopAfter::Duration(d) => Some(d.as_secs_f64()),
            _ => None,
        },
        commands: config
            .commands
            .iter()
            .map(|c| CommandConfig { name: &c.name, weight: c.weight, key_pattern: c.key_pattern.letter() })
            .collect(),
        key_prefix: &config.keys.prefix,
        key_min: config.keys.min,
        key_max: config.keys.max,
        value_size: match &config.values {
            ValueSize::Fixed(n) => ValueSizeConfig::Fixed(*n),
            ValueSize::Range { min, max } => ValueSizeConfig::Range { min: *min, max: *max },
            ValueSize::List(l) => ValueSizeConfig::List(l.clone()),
        },
        random_data: config.random_data,
        expiry_range_secs: config.expiry,
        seed: config.extras.shard.as_ref().map_or(config.seed, |s| s.seed),
        interval_secs: config.interval.as_secs_f64(),
        user: config.server.user.as_deref(),
        db: config.server.db,
        rate_per_sec: config.rate.map(|r| r.per_sec),
        arrival: config.rate.map(|r| if r.poisson { "poisson" } else { "constant" }),
        warmup_secs: config.warmup.as_secs_f64(),
        runs,
        ramp: config.ramp.map(|r| RampConfig {
            start: r.start,
            step: r.step,
            step_duration_secs: r.every.as_secs_f64(),
        }),
    }
}

impl Format for Json {
    fn render(&self, run: &Run) -> String {
        let (config, outcome) = (run.config, run.outcome);
        let secs = outcome.elapsed.as_secs_f64();
        let names = &outcome.command_names;
        let doc = Document {
            schema_version: SCHEMA_VERSION,
            tool: Tool { name: "respbench", version: env!("CARGO_PKG_VERSION") },
            server: outcome.server.as_ref(),
            started_unix_ms: outcome.started_unix_ms,
            interrupted: outcome.interrupted,
            configuration: configuration(config, outcome.runs.len()),
            measurement: Measurement {
                latency_from: "intended_send",
                latency_to: "reply_read",
                mode: if config.rate.is_some() { "open_loop" } else { "closed_loop" },
                histogram: "hdrhistogram, 3 significant digits, nanosecond values",
                description: super::method(config),
            },
            duration_secs: secs,
            totals: {
                let total = outcome.total();
                OpSummary::of(&total, secs).with_spectrum(&total)
            },
            commands: names
                .iter()
                .zip(&outcome.ops)
                .map(|(n, op)| (n.as_str(), OpSummary::of(op, secs).with_spectrum(op)))
                .collect(),
            errors: outcome.errors.sorted().into_iter().map(|(k, n)| (k.to_string(), n)).collect(),
            rate: Delivery::of(config, outcome),
            client: Client { threads: &outcome.client_threads, machine: Machine::this() },
            label: run.label,
            server_cpu: outcome.server_stats.map(|s| s.cpu),
            server_telemetry: outcome.server_stats.map(|s| ServerTelemetry {
                sample: s,
                peak_used_memory_bytes: outcome.server_peak_memory.unwrap_or(s.used_memory_bytes),
            }),
            warnings: &outcome.warnings,
            notes: &outcome.notes,
            bottleneck: {
                let (verdict, detail) = engine::verdict(&outcome.client_threads, outcome.server_stats.map(|s| s.cpu));
                Verdict { verdict, detail }
            },
            runs: &outcome.runs,
            repetition: (outcome.runs.len() > 1).then(|| Repetition {
                ops_per_sec: Spread::of(&outcome.runs.iter().map(|r| r.ops_per_sec).collect::<Vec<_>>())
                    .expect("several runs"),
                p99_us: Spread::of(&outcome.runs.iter().map(|r| r.p99_us).collect::<Vec<_>>()).expect("several runs"),
            }),
            faults: Faults {
                outages: &outcome.outages,
                reconnect_attempts: outcome.reconnect_attempts,
                seconds_without_success: outcome
                    .timeline
                    .iter()
                    .filter(|i| i.window.successes == 0 && (i.window.total().errors > 0 || !outcome.outages.is_empty()))
                    .map(|i| IntervalRef { run: i.run, index: i.index })
                    .collect(),
            },
            cluster: config.cluster.map(|_| Cluster {
                nodes: outcome.nodes.iter().map(|(n, op)| (n.as_str(), OpSummary::of(op, secs))).collect(),
                moved: outcome.moved,
                asked: outcome.asked,
            }),
            time_series: outcome
                .timeline
                .iter()
                .map(|i| Point {
                    run: i.run,
                    index: i.index,
                    start_secs: i.start_secs,
                    duration_secs: i.duration_secs,
                    totals: OpSummary::of(&i.window.total(), i.duration_secs),
                    commands: names.iter().cloned().zip(i.window.ops.iter().map(|o| o.count)).collect(),
                    server: i.server,
                    active_connections: i.window.active_connections,
                })
                .collect(),
            shard: config.extras.shard.as_ref().map(|s| ShardPart {
                index: s.index,
                count: s.count,
                source: &s.source,
                seed: s.seed,
                stream_seed: config.seed,
                total_requests: s.total_requests,
                total_rate_per_sec: s.total_rate,
                key_part: s.keys,
            }),
            start: config.extras.start_at.map(|at| {
                let requested = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs_f64() * 1000.0;
                Start { requested_unix_ms: requested, offset_ms: outcome.started_unix_ms as f64 - requested }
            }),
            histograms: super::histo::Histograms::of(outcome, config.rate.is_some()),
            merged_from: None,
        };
        let mut text = serde_json::to_string_pretty(&doc).expect("plain data serialises");
        text.push('\n');
        text
    }
}
