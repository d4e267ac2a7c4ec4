//! The live metrics page in memtier_benchmark's exporter's names (`--prometheus-port` under
//! memtier's command line): the same values the endpoint keeps for respbench's page, laid out
//! as memtier's dashboards read them. Counters are totals over every run so far; the latency
//! histogram holds every reply counted (memtier's samples about half of them: respbench's
//! count equals `memtier_ops_total`).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;

use hdrhistogram::Histogram;

use super::shape::{Latency, Shape, snapshot};

/// Totals over every run so far, and the current run's settings, as memtier's exporter names
/// them.
#[derive(Default)]
pub(super) struct MemtierTotals {
    pub(super) ops: u64,
    pub(super) bytes_out: u64,
    pub(super) bytes_in: u64,
    pub(super) hits: u64,
    pub(super) misses: u64,
    /// Requests that failed (an error reply or none).
    pub(super) errors: u64,
    /// Connections lost.
    pub(super) connection_errors: u64,
    /// Connections taking part in the last interval.
    pub(super) connections: u64,
    pub(super) threads: usize,
    /// The current run, from 1 (0 before the first).
    pub(super) run: usize,
    /// `--test-time` of the run (0 when it is counted).
    pub(super) test_time_secs: f64,
    /// Every command's response times and their sum (ns).
    pub(super) latency: Option<(Histogram<u64>, u64)>,
    /// When the endpoint opened (the run's process began just before), Unix seconds.
    pub(super) start_unix: f64,
}

type FloatGauge = Gauge<f64, std::sync::atomic::AtomicU64>;

fn counter(n: u64) -> Counter<u64> {
    let c = Counter::<u64>::default();
    c.inc_by(n);
    c
}

fn gauge(v: f64) -> FloatGauge {
    let g = FloatGauge::default();
    g.set(v);
    g
}

/// The OpenMetrics text of the current values, in memtier's names.
pub(super) fn encode(m: &MemtierTotals, shape: &Shape) -> String {
    let mut r = shape.registry("memtier");
    r.register("ops", "Operations completed (replies received), all runs", counter(m.ops));
    r.register("sent_bytes", "Bytes sent, all runs", counter(m.bytes_out));
    r.register("received_bytes", "Bytes received, all runs", counter(m.bytes_in));
    r.register("hits", "Reads that found their key, all runs", counter(m.hits));
    r.register("misses", "Reads that did not find their key, all runs", counter(m.misses));
    r.register("errors", "Requests that failed (an error reply or none), all runs", counter(m.errors));
    r.register("connection_errors", "Connections lost, all runs", counter(m.connection_errors));
    // respbench's retries are reconnects; requests are never resent.
    r.register("retry_attempts", "Requests resent (respbench resends none)", counter(0));
    r.register("retried_ops", "Requests that were resent (respbench resends none)", counter(0));
    r.register("connections", "Connections taking part in the last interval", gauge(m.connections as f64));
    r.register("threads", "Client threads of the run", gauge(m.threads as f64));
    r.register("run", "The current run (1 is the first; 0 before it)", gauge(m.run as f64));
    r.register("configured_runs", "Runs planned (--run-count)", gauge(shape.runs as f64));
    r.register(
        "config_test_time_seconds",
        "The run's --test-time (0 when --requests bounds it)",
        gauge(m.test_time_secs),
    );
    let latency = m.latency.as_ref().map(|(h, sum)| (Vec::new(), snapshot(h, *sum, &shape.buckets)));
    r.register("latency_seconds", "Response time of every reply, all commands", Latency(latency.into_iter().collect()));
    let build = vec![
        ("version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("git_sha".to_string(), option_env!("RESPBENCH_GIT_SHA").unwrap_or("unknown").to_string()),
    ];
    r.register("build", "The build: respbench's version", Info::new(build));
    r.register("start_time_seconds", "When the exporter began, Unix seconds", gauge(m.start_unix));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &r).expect("writing to a String");
    text
}
