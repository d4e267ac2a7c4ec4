//! respbench's own JSON result: the run turned into a [`Document`] (versioned, documented in
//! docs/json-schema.json, complete enough that every other report can be rebuilt from it) and
//! written as JSON.

use crate::config::{Config, StopAfter, ValueSize};
use crate::engine;
use crate::report::document::{
    Client, Cluster, CommandConfig, Configuration, Document, Faults, IntervalRef, LatencyPartsSummary, Machine,
    Measurement, OpSummary, Point, RampConfig, Repetition, SCHEMA_VERSION, ServerTelemetry, ShardPart, Start, Tool,
    ValueSizeConfig, Verdict,
};
use crate::report::{Delivery, Format, Rates, Run};
use crate::stats::{LatencySummary, OpStats, Recorded, Spread};

pub struct Json;

/// Percentiles of the spectrum, HdrHistogram style: dense towards the tail.
const SPECTRUM: [f64; 20] = [
    0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 97.5, 99.0, 99.5, 99.75, 99.9, 99.95, 99.99,
    99.999, 100.0,
];

impl OpSummary {
    pub(crate) fn with_spectrum(mut self, op: &OpStats) -> OpSummary {
        let h = &op.latency_ns;
        self.latency_spectrum_us = (!h.is_empty())
            .then(|| SPECTRUM.iter().map(|&p| (p, h.value_at_quantile(p / 100.0) as f64 / 1000.0)).collect());
        self
    }

    pub(crate) fn of<H: Recorded>(op: &OpStats<H>, secs: f64) -> OpSummary {
        let rates = Rates::of(op, secs);
        OpSummary {
            count: op.count,
            ops_per_sec: rates.ops_per_sec,
            hits: op.hits,
            misses: op.misses,
            hits_per_sec: rates.hits_per_sec,
            misses_per_sec: rates.misses_per_sec,
            aborts: op.aborts,
            aborts_per_sec: if secs > 0.0 { op.aborts as f64 / secs } else { 0.0 },
            errors: op.errors,
            sent: op.sent,
            failed: op.failed,
            abandoned: op.abandoned,
            bytes_in: op.bytes_in,
            bytes_out: op.bytes_out,
            kb_per_sec: rates.kb_per_sec,
            latency_us: op.latency(),
            service_us: op.service(),
            latency_spectrum_us: None,
            latency_parts_us: parts_summary(op),
        }
    }
}

/// A row's decomposition, when it kept one and decomposed any reply.
fn parts_summary<H: Recorded>(op: &OpStats<H>) -> Option<LatencyPartsSummary> {
    let parts = op.parts.as_deref().filter(|p| p.count() > 0)?;
    let (client_ns, share) = parts.client_share(&op.latency_ns, 0.99)?;
    // Means from the exact sums, not the histograms' buckets.
    let exact = |h: &H, sum: u64| LatencySummary { mean_us: sum as f64 / parts.count() as f64 / 1000.0, ..h.summary() };
    Some(LatencyPartsSummary {
        count: parts.count(),
        send_lag: exact(&parts.send_lag_ns, parts.sums_ns[0]),
        wire_and_server: exact(&parts.wire_ns, parts.sums_ns[1]),
        receive_lag: exact(&parts.receive_lag_ns, parts.sums_ns[2]),
        client_of_p99: client_ns as f64 / 1000.0,
        client_share_of_p99: share,
    })
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
        io: crate::net::driver::path_for(config).name().into(),
        requests: config.planned_requests(),
        all_keys: config.stop == StopAfter::AllKeys,
        transaction: config.extras.transaction,
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
    measured(frame(run.config, run.label), run.outcome, run.config.client_share_warning())
}

/// What the result says before anything is measured: the plan, how it is measured, the tool
/// and the machine. The journal keeps it in its header, so that `respbench recover` builds the
/// result of an interrupted run through [`measured`] as a finished run's is built.
pub fn frame(config: &Config, label: Option<&str>) -> Document {
    Document {
        schema_version: SCHEMA_VERSION,
        tool: Tool { name: "respbench".into(), version: env!("CARGO_PKG_VERSION").into() },
        configuration: configuration(config, 1),
        measurement: Measurement {
            // Several roles, some at a rate: each role's own (`roles[].latency_from`).
            latency_from: match config.pacing() {
                crate::config::role_plan::Pacing::Mixed => "per_role",
                _ => "intended_send",
            }
            .into(),
            latency_to: "reply_read".into(),
            mode: config.pacing().name().into(),
            histogram: "hdrhistogram, 3 significant digits (time-series intervals: 2), nanosecond values".into(),
            description: crate::report::method(config).into(),
            clock_offset_bound_us: None,
        },
        rate: config.rate.map(Delivery::planned),
        client: Client { threads: Vec::new(), machine: Machine::this() },
        label: label.map(String::from),
        cluster: config.cluster.map(|_| Cluster::default()),
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
        start: config.extras.start_at.map(|at| Start {
            requested_unix_ms: at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs_f64() * 1000.0,
            offset_ms: 0.0,
        }),
        roles: crate::report::document::roles::planned(config),
        ..Document::default()
    }
}

/// A frame ([`frame`]) with what `outcome` measured filled in.
pub fn measured(frame: Document, outcome: &engine::Outcome, client_share_warning: f64) -> Document {
    let secs = outcome.elapsed.as_secs_f64();
    let open_loop = frame.rate.is_some();
    let mut doc = frame;
    doc.server = outcome.server.clone();
    doc.started_unix_ms = outcome.started_unix_ms;
    doc.interrupted = outcome.interrupted;
    doc.configuration.runs = outcome.runs.len();
    doc.duration_secs = secs;
    doc.totals = {
        let total = outcome.total();
        OpSummary::of(&total, secs).with_spectrum(&total)
    };
    doc.commands = outcome
        .command_names
        .iter()
        .zip(&outcome.ops)
        .map(|(n, op)| (n.clone(), OpSummary::of(op, secs).with_spectrum(op)))
        .collect();
    doc.errors = outcome.errors.sorted().into_iter().map(|(k, n)| (k.to_string(), n)).collect();
    doc.rate = doc.rate.take().map(|planned| planned.measured(outcome));
    doc.client.threads = outcome.client_threads.clone();
    doc.server_cpu = outcome.server_stats.map(|s| s.cpu);
    doc.server_telemetry = outcome.server_stats.map(|s| ServerTelemetry {
        sample: s,
        peak_used_memory_bytes: outcome.server_peak_memory.unwrap_or(s.used_memory_bytes),
    });
    doc.server_latency = super::server_latency::of_run(outcome);
    doc.warnings = outcome.warnings.clone();
    doc.notes = outcome.notes.clone();
    doc.measurement.clock_offset_bound_us =
        (outcome.total().parts.is_some_and(|p| p.count() > 0)).then_some(outcome.clock_bound_ns as f64 / 1000.0);
    doc.bottleneck = {
        let (verdict, detail) = outcome.verdict(client_share_warning);
        Verdict { verdict, detail }
    };
    doc.runs = outcome.runs.clone();
    doc.repetition = (outcome.runs.len() > 1).then(|| Repetition {
        ops_per_sec: Spread::of(&outcome.runs.iter().map(|r| r.ops_per_sec).collect::<Vec<_>>()).expect("several runs"),
        p99_us: Spread::of(&outcome.runs.iter().map(|r| r.p99_us).collect::<Vec<_>>()).expect("several runs"),
    });
    doc.faults = faults(outcome);
    if let Some(cluster) = doc.cluster.as_mut() {
        cluster.nodes = outcome.nodes.iter().map(|(n, op)| (n.clone(), OpSummary::of(op, secs))).collect();
        cluster.moved = outcome.moved;
        cluster.asked = outcome.asked;
    }
    doc.time_series = time_series(outcome).into_iter().map(crate::report::document::as_kept).collect();
    if let Some(start) = doc.start.as_mut() {
        start.offset_ms = outcome.started_unix_ms as f64 - start.requested_unix_ms;
    }
    doc.histograms = crate::report::document::histo::Histograms::of(outcome, open_loop);
    crate::report::document::roles::measured(&mut doc.roles, &doc.totals, outcome);
    doc.histograms.roles = crate::report::document::roles::histograms(&doc.roles);
    doc
}

fn faults(outcome: &engine::Outcome) -> Faults {
    Faults {
        outages: outcome.outages.clone(),
        reconnect_attempts: outcome.reconnect_attempts,
        connections_lost: outcome.connections_lost.total(),
        connections_lost_by_kind: outcome
            .connections_lost
            .sorted()
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect(),
        seconds_without_success: outcome
            .timeline
            .iter()
            .filter(|i| i.successes == 0 && (i.total.errors > 0 || !outcome.outages.is_empty()))
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
            commands: names.iter().cloned().zip(i.ops.iter().map(|o| o.count)).collect(),
            server: i.server,
            active_connections: i.connections,
        })
        .collect()
}

impl Format for Json {
    fn render(&self, run: &Run) -> String {
        document(run).to_json()
    }
}
