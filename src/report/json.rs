//! respbench's own JSON result: the run turned into a [`Document`] (versioned, documented in
//! docs/json-schema.json, complete enough that every other report can be rebuilt from it) and
//! written as JSON.

use super::document::{
    Client, Cluster, CommandConfig, Configuration, Document, Faults, IntervalRef, Machine, Measurement, OpSummary,
    Point, RampConfig, Repetition, SCHEMA_VERSION, ServerTelemetry, ShardPart, Start, Tool, ValueSizeConfig, Verdict,
};
use super::{Delivery, Format, Rates, Run};
use crate::config::{Config, StopAfter, ValueSize};
use crate::engine;
use crate::stats::{OpStats, Recorded, Spread};

pub struct Json;

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

    fn of<H: Recorded>(op: &OpStats<H>, secs: f64) -> OpSummary {
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
pub(crate) fn op_summary(op: &OpStats, secs: f64, spectrum: bool) -> OpSummary {
    let summary = OpSummary::of(op, secs);
    if spectrum { summary.with_spectrum(op) } else { summary }
}

fn configuration(config: &Config, runs: usize) -> Configuration {
    Configuration {
        target: config.server.target.to_string(),
        connections: config.connections,
        threads: config.threads,
        pipeline: config.pipeline,
        io: config.extras.io.taken().name().into(),
        requests: config.planned_requests(),
        all_keys: config.stop == StopAfter::AllKeys,
        duration_secs: match config.stop {
            StopAfter::Duration(d) => Some(d.as_secs_f64()),
            _ => None,
        },
        commands: config
            .commands
            .iter()
            .map(|c| CommandConfig {
                name: c.name.clone(),
                weight: c.weight,
                key_pattern: c.key_pattern.letter().to_string(),
            })
            .collect(),
        key_prefix: config.keys.prefix.clone(),
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
        user: config.server.user.clone(),
        db: config.server.db,
        rate_per_sec: config.rate.map(|r| r.per_sec),
        arrival: config.rate.map(|r| if r.poisson { "poisson" } else { "constant" }.into()),
        warmup_secs: config.warmup.as_secs_f64(),
        runs,
        ramp: config.ramp.map(|r| RampConfig {
            start: r.start,
            step: r.step,
            step_duration_secs: r.every.as_secs_f64(),
        }),
    }
}

/// The result of a finished run.
pub fn document(run: &Run) -> Document {
    let (config, outcome) = (run.config, run.outcome);
    let secs = outcome.elapsed.as_secs_f64();
    Document {
        schema_version: SCHEMA_VERSION,
        tool: Tool { name: "respbench".into(), version: env!("CARGO_PKG_VERSION").into() },
        server: outcome.server.clone(),
        started_unix_ms: outcome.started_unix_ms,
        interrupted: outcome.interrupted,
        configuration: configuration(config, outcome.runs.len()),
        measurement: Measurement {
            latency_from: "intended_send".into(),
            latency_to: "reply_read".into(),
            mode: if config.rate.is_some() { "open_loop" } else { "closed_loop" }.into(),
            histogram: "hdrhistogram, 3 significant digits (time-series intervals: 2), nanosecond values".into(),
            description: super::method(config).into(),
        },
        duration_secs: secs,
        totals: {
            let total = outcome.total();
            OpSummary::of(&total, secs).with_spectrum(&total)
        },
        commands: outcome
            .command_names
            .iter()
            .zip(&outcome.ops)
            .map(|(n, op)| (n.clone(), OpSummary::of(op, secs).with_spectrum(op)))
            .collect(),
        errors: outcome.errors.sorted().into_iter().map(|(k, n)| (k.to_string(), n)).collect(),
        rate: Delivery::of(config, outcome),
        client: Client { threads: outcome.client_threads.clone(), machine: Machine::this() },
        label: run.label.map(String::from),
        server_cpu: outcome.server_stats.map(|s| s.cpu),
        server_telemetry: outcome.server_stats.map(|s| ServerTelemetry {
            sample: s,
            peak_used_memory_bytes: outcome.server_peak_memory.unwrap_or(s.used_memory_bytes),
        }),
        warnings: outcome.warnings.clone(),
        notes: outcome.notes.clone(),
        bottleneck: {
            let (verdict, detail) = engine::verdict(&outcome.client_threads, outcome.server_stats.map(|s| s.cpu));
            Verdict { verdict, detail }
        },
        runs: outcome.runs.clone(),
        repetition: (outcome.runs.len() > 1).then(|| Repetition {
            ops_per_sec: Spread::of(&outcome.runs.iter().map(|r| r.ops_per_sec).collect::<Vec<_>>())
                .expect("several runs"),
            p99_us: Spread::of(&outcome.runs.iter().map(|r| r.p99_us).collect::<Vec<_>>()).expect("several runs"),
        }),
        faults: faults(outcome),
        cluster: config.cluster.map(|_| Cluster {
            nodes: outcome.nodes.iter().map(|(n, op)| (n.clone(), OpSummary::of(op, secs))).collect(),
            moved: outcome.moved,
            asked: outcome.asked,
        }),
        time_series: time_series(outcome),
        shard: config.extras.shard.as_ref().map(|s| ShardPart {
            index: s.index,
            count: s.count,
            source: s.source.clone(),
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
    }
}

fn faults(outcome: &engine::Outcome) -> Faults {
    Faults {
        outages: outcome.outages.clone(),
        reconnect_attempts: outcome.reconnect_attempts,
        seconds_without_success: outcome
            .timeline
            .iter()
            .filter(|i| i.window.successes == 0 && (i.total.errors > 0 || !outcome.outages.is_empty()))
            .map(|i| IntervalRef { run: i.run, index: i.index })
            .collect(),
    }
}

fn time_series(outcome: &engine::Outcome) -> Vec<Point> {
    let names = &outcome.command_names;
    outcome
        .timeline
        .iter()
        .map(|i| Point {
            run: i.run,
            index: i.index,
            start_secs: i.start_secs,
            duration_secs: i.duration_secs,
            totals: OpSummary::of(&i.total, i.duration_secs),
            commands: names.iter().cloned().zip(i.window.ops.iter().map(|o| o.count)).collect(),
            server: i.server,
            active_connections: i.window.active_connections,
        })
        .collect()
}

impl Format for Json {
    fn render(&self, run: &Run) -> String {
        document(run).to_json()
    }
}
