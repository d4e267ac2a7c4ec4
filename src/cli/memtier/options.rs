//! memtier_benchmark's options: their names, whether they take a value, and what each does to
//! the typed plan. An option that carries its value over sets its field here, through the value
//! parser respbench's own flag uses; the rest need memtier's arithmetic or rules and are the
//! translation's (`translate.rs`).

use std::path::PathBuf;

use super::draft::Draft;
use super::error::MemtierError;
use super::mix;
use crate::cli::dialect::Spec;
use crate::cli::parse;
use crate::config::parse::InvalidValue;
use crate::report::live::{push, shape};

/// What one memtier option does.
pub(super) enum Map {
    /// Sets its field of the plan from its last value (getopt's rule): [`set`].
    Set,
    /// Taken care of by the translation (needs arithmetic, splitting, or memtier's own rules).
    Special,
}

/// memtier's options: names (long first), whether they take a value, and what they do.
pub(super) const OPTIONS: &[(Spec, Map)] = &[
    opt(&["server", "s"], true, Map::Special),
    // memtier's -h is the host, as in its getopt string; help is --help only.
    opt(&["host", "h"], true, Map::Special),
    opt(&["help"], false, Map::Special),
    opt(&["version", "v"], false, Map::Special),
    opt(&["port", "p"], true, Map::Special),
    opt(&["unix-socket", "S"], true, Map::Set),
    opt(&["protocol", "P"], true, Map::Special),
    opt(&["authenticate", "a"], true, Map::Special),
    opt(&["uri", "u"], true, Map::Special),
    opt(&["ipv4", "4"], false, Map::Special),
    opt(&["ipv6", "6"], false, Map::Special),
    opt(&["select-db"], true, Map::Special),
    opt(&["clients", "c"], true, Map::Special),
    opt(&["threads", "t"], true, Map::Special),
    opt(&["requests", "n"], true, Map::Special),
    opt(&["test-time"], true, Map::Special),
    opt(&["ratio"], true, Map::Set),
    opt(&["pipeline"], true, Map::Set),
    opt(&["key-prefix"], true, Map::Set),
    opt(&["key-minimum"], true, Map::Set),
    opt(&["key-maximum"], true, Map::Set),
    opt(&["key-pattern"], true, Map::Set),
    opt(&["key-stddev"], true, Map::Set),
    opt(&["key-median"], true, Map::Set),
    opt(&["key-zipf-exp"], true, Map::Set),
    opt(&["data-size", "d"], true, Map::Set),
    opt(&["data-size-range"], true, Map::Set),
    opt(&["data-size-list"], true, Map::Set),
    opt(&["random-data", "R"], false, Map::Set),
    opt(&["expiry-range"], true, Map::Set),
    opt(&["command"], true, Map::Special),
    opt(&["command-ratio"], true, Map::Special),
    opt(&["command-key-pattern"], true, Map::Special),
    opt(&["run-count", "x"], true, Map::Set),
    opt(&["out-file", "o"], true, Map::Set),
    opt(&["json-out-file"], true, Map::Set),
    opt(&["hide-histogram"], false, Map::Set),
    opt(&["print-all-runs"], false, Map::Set),
    opt(&["command-stats-breakdown"], true, Map::Special),
    opt(&["hdr-file-prefix"], true, Map::Set),
    opt(&["distinct-client-seed"], false, Map::Special),
    // Several load machines as one run (respbench's own; memtier has no equivalent).
    opt(&["shard"], true, Map::Set),
    opt(&["shard-count"], true, Map::Set),
    opt(&["start-at"], true, Map::Set),
    opt(&["allow-late-start"], false, Map::Set),
    opt(&["randomize"], false, Map::Special),
    opt(&["show-config"], false, Map::Special),
    // respbench's own: its notes on stderr too (they are always in --respbench-json).
    opt(&["notes"], false, Map::Special),
    opt(&["print-percentiles"], true, Map::Set),
    opt(&["realtime-latencies"], false, Map::Set),
    opt(&["command-miss-tracking"], true, Map::Set),
    opt(&["miss-rate-threshold"], true, Map::Set),
    opt(&["tls"], false, Map::Special),
    opt(&["tls-skip-verify"], false, Map::Set),
    opt(&["cert"], true, Map::Set),
    opt(&["key"], true, Map::Set),
    opt(&["cacert"], true, Map::Set),
    opt(&["sni"], true, Map::Set),
    opt(&["tls-protocols"], true, Map::Special),
    opt(&["cluster-mode"], false, Map::Set),
    opt(&["transaction"], false, Map::Set),
    opt(&["reconnect-interval"], true, Map::Set),
    opt(&["reconnect-on-error"], false, Map::Special),
    opt(&["max-reconnect-attempts"], true, Map::Special),
    opt(&["reconnect-backoff-factor"], true, Map::Special),
    opt(&["connection-timeout"], true, Map::Special),
    opt(&["connection-stage-timeout"], true, Map::Special),
    opt(&["retry-on-error"], false, Map::Special),
    opt(&["max-retries"], true, Map::Special),
    opt(&["retry-backoff-ms"], true, Map::Special),
    opt(&["retry-backoff-factor"], true, Map::Special),
    opt(&["retry-on"], true, Map::Special),
    opt(&["max-retry-queue"], true, Map::Special),
    opt(&["failed-keys-file"], true, Map::Set),
    opt(&["thread-conn-start-min-jitter-micros"], true, Map::Special),
    opt(&["thread-conn-start-max-jitter-micros"], true, Map::Special),
    opt(&["statsd-host"], true, Map::Set),
    opt(&["statsd-port"], true, Map::Set),
    opt(&["statsd-prefix"], true, Map::Set),
    opt(&["statsd-run-label"], true, Map::Set),
    opt(&["save-scenario"], true, Map::Set),
    opt(&["metrics-listen"], true, Map::Set),
    opt(&["respbench-json"], true, Map::Set),
    opt(&["metrics-linger"], true, Map::Set),
    opt(&["metrics-push"], true, Map::Set),
    opt(&["metrics-push-job"], true, Map::Set),
    opt(&["metrics-push-label"], true, Map::Set),
    opt(&["graphite-port"], true, Map::Set),
    // memtier's exporter, on respbench's metrics endpoint.
    opt(&["prometheus-port"], true, Map::Special),
    opt(&["prometheus-bind-addr"], true, Map::Special),
    opt(&["prometheus-run-label"], true, Map::Special),
    opt(&["prometheus-latency-buckets"], true, Map::Set),
    // Read preference, on respbench's --read-from-replicas (cluster mode, as memtier's).
    opt(&["read-preference"], true, Map::Special),
    opt(&["read-preference-fallback"], true, Map::Special),
    opt(&["read-server"], true, Map::Special),
    opt(&["command-is-read"], false, Map::Special),
    opt(&["rate-limiting"], true, Map::Special),
    opt(&["clients-start"], true, Map::Special),
    opt(&["clients-step"], true, Map::Special),
    opt(&["step-duration"], true, Map::Special),
    opt(&["multi-key-get"], true, Map::Set),
    opt(&["data-import"], true, Map::Set),
    opt(&["data-verify"], false, Map::Set),
    opt(&["wait-ratio"], true, Map::Set),
    opt(&["num-slaves"], true, Map::Set),
    opt(&["debug", "D"], false, Map::Set),
    // The options other front-end work covers: named, so that they are not "unknown".
    opt(&["client-stats"], true, Map::Set),
    opt(&["data-offset"], true, Map::Set),
    opt(&["data-size-pattern"], true, Map::Set),
    opt(&["monitor-input"], true, Map::Set),
    opt(&["monitor-pattern"], true, Map::Set),
    opt(&["scan-incremental-iteration"], false, Map::Set),
    opt(&["scan-incremental-max-iterations"], true, Map::Set),
    opt(&["wait-timeout"], true, Map::Set),
    opt(&["verify-only"], false, Map::Set),
    opt(&["generate-keys"], false, Map::Set),
    opt(&["no-expiry"], false, Map::Set),
];

/// Sets the field a [`Map::Set`] option (`name`, its long name) carries its value into, through
/// the value parser respbench's own flag uses; `Err` says why the value is wrong.
pub(super) fn set(d: &mut Draft, name: &str, v: &str) -> Result<(), MemtierError> {
    match name {
        "unix-socket" => d.args.socket = Some(v.into()),
        "ratio" => d.args.ratio = Some(parse::ratio(v)?),
        "failed-keys-file" => d.args.failed_keys = Some(PathBuf::from(v)),
        "pipeline" => d.args.pipeline = parse::positive(v)?,
        "key-prefix" => d.args.key_prefix = v.into(),
        "key-minimum" => d.args.key_min = parse::count(v)?,
        "key-maximum" => d.args.key_max = parse::count(v)?,
        "key-pattern" => d.args.key_pattern = Some(parse::key_patterns(v)?),
        "key-stddev" => d.args.key_stddev = Some(number(v)?),
        "key-median" => d.args.key_median = Some(number(v)?),
        "key-zipf-exp" => d.args.zipf_exponent = number(v)?,
        "data-size" => d.args.data_size = parse::size(v)?,
        "data-size-range" => d.args.data_size_range = Some(parse::range(v)?),
        "data-size-list" => d.args.data_size_list = Some(parse::size_list(v)?),
        "random-data" => d.args.random_data = true,
        "expiry-range" => d.args.expiry_range = Some(parse::range(v)?),
        // memtier counts runs in an unsigned int: more is refused, not wrapped.
        "run-count" => match parse::positive(v)? {
            runs if runs <= u64::from(u32::MAX) => d.args.runs = runs,
            _ => return Err(format!("'{v}' is more runs than memtier_benchmark counts (at most {})", u32::MAX).into()),
        },
        "out-file" => d.args.out_file = Some(v.into()),
        "json-out-file" => d.json = Some(PathBuf::from(v)),
        "hide-histogram" => d.output.hide_histogram = true,
        "print-all-runs" => d.output.print_all_runs = true,
        "hdr-file-prefix" => d.output.hdr_prefix = Some(v.into()),
        "shard" => d.args.shards.shard = Some(crate::cli::shard::shard_arg(v)?),
        "shard-count" => d.args.shards.shard_count = Some(crate::cli::shard::shard_count(v)?),
        "start-at" => d.args.shards.start_at = Some(crate::cli::shard::start_time(v)?),
        "allow-late-start" => d.args.shards.allow_late_start = true,
        "print-percentiles" => d.args.percentiles = parse::percentiles(v)?,
        "realtime-latencies" => d.output.realtime_latencies = true,
        "command-miss-tracking" => {
            d.output.miss_tracking_off = match v {
                "auto" => false,
                "off" => true,
                _ => return Err(format!("'{v}' is not a miss tracking mode (auto or off)").into()),
            }
        }
        "miss-rate-threshold" => match v.parse::<f64>() {
            Ok(pct) if (0.0..=100.0).contains(&pct) => d.output.miss_rate_threshold = Some(pct),
            _ => return Err(format!("'{v}' is not a percentage (0 to 100)").into()),
        },
        "tls-skip-verify" => d.args.tls_skip_verify = true,
        "cert" => d.args.cert = Some(v.into()),
        "key" => d.args.key = Some(v.into()),
        "cacert" => d.args.cacert = Some(v.into()),
        "sni" => d.args.sni = Some(v.into()),
        "cluster-mode" => d.args.cluster = true,
        "transaction" => d.args.transaction = true,
        "reconnect-interval" => d.args.reconnect_every = Some(parse::positive(v)?),
        "statsd-host" => d.args.statsd_host = Some(v.into()),
        "statsd-port" => d.args.statsd_port = port(v)?,
        "statsd-prefix" => d.args.statsd_prefix = v.into(),
        "statsd-run-label" => d.args.statsd_run_label = v.into(),
        "save-scenario" => d.args.scenario.save_scenario = Some(v.into()),
        "metrics-listen" => d.args.scenario.metrics_listen = Some(listen(v)?),
        "respbench-json" => d.args.json = Some(v.into()),
        "metrics-linger" => d.args.scenario.metrics_linger = Some(parse::duration(v)?),
        "metrics-push" => d.args.scenario.push.metrics_push = Some(push::url(v)?),
        "metrics-push-job" => d.args.scenario.push.metrics_push_job = Some(v.into()),
        // Each one adds a grouping label, as respbench's own flag does.
        "metrics-push-label" => d.args.scenario.push.metrics_push_label.push(push::label(v)?),
        "graphite-port" => d.args.graphite_port = port(v)?,
        "prometheus-latency-buckets" => d.args.scenario.metrics_buckets = Some(shape::buckets(v)?),
        "multi-key-get" => d.args.memtier.multi_key_get = Some(parse::positive(v)?),
        "data-import" => d.args.memtier.data_import = Some(v.into()),
        "data-verify" => d.args.memtier.data_verify = true,
        "wait-ratio" => d.args.memtier.wait_ratio = Some(mix::wait_ratio(v)?),
        "num-slaves" => d.args.memtier.num_slaves = Some(parse::range(v)?),
        "debug" => d.args.debug = true,
        "client-stats" => d.output.client_stats = Some(v.into()),
        "data-offset" => d.args.memtier.data_offset = Some(parse::count(v)?),
        "data-size-pattern" => d.args.memtier.data_size_pattern = Some(mix::size_pattern(v)?),
        "monitor-input" => d.args.memtier.monitor_input = Some(v.into()),
        "monitor-pattern" => d.args.memtier.monitor_pattern = Some(mix::monitor_pattern(v)?),
        "scan-incremental-iteration" => d.args.memtier.scan_incremental_iteration = true,
        "scan-incremental-max-iterations" => d.args.memtier.scan_incremental_max_iterations = Some(parse::count(v)?),
        "wait-timeout" => d.args.memtier.wait_timeout = Some(parse::range(v)?),
        "verify-only" => d.args.memtier.verify_only = true,
        "generate-keys" => d.args.memtier.generate_keys = true,
        "no-expiry" => d.args.memtier.no_expiry = true,
        _ => unreachable!("every Set option has its field: {name}"),
    }
    Ok(())
}

/// Options that need another (respbench's rule for the field each sets).
pub(super) const REQUIRES: &[(&str, &str)] = &[
    ("cert", "key"),
    ("key", "cert"),
    ("statsd-port", "statsd-host"),
    ("statsd-prefix", "statsd-host"),
    ("statsd-run-label", "statsd-host"),
    ("graphite-port", "statsd-host"),
    ("metrics-linger", "metrics-listen"),
    ("prometheus-bind-addr", "prometheus-port"),
    ("prometheus-run-label", "prometheus-port"),
    ("prometheus-latency-buckets", "prometheus-port"),
    ("metrics-push-job", "metrics-push"),
    ("metrics-push-label", "metrics-push"),
    ("generate-keys", "data-import"),
    ("no-expiry", "data-import"),
    ("allow-late-start", "start-at"),
];

/// Options that exclude each other (each sets what the other does).
pub(super) const CONFLICTS: &[(&str, &str)] = &[
    ("data-size", "data-size-range"),
    ("data-size", "data-size-list"),
    ("data-size-range", "data-size-list"),
    // Both are the one metrics endpoint.
    ("metrics-listen", "prometheus-port"),
];

const fn opt(names: &'static [&'static str], takes_value: bool, map: Map) -> (Spec, Map) {
    (Spec { names, takes_value }, map)
}

fn number(v: &str) -> Result<f64, InvalidValue> {
    v.parse().map_err(|_| InvalidValue(format!("'{v}' is not a number")))
}

/// A UDP or HTTP port: 1 to 65535.
fn port(v: &str) -> Result<u16, InvalidValue> {
    match v.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(format!("'{v}' is not a port (1 to 65535)").into()),
    }
}

fn listen(v: &str) -> Result<std::net::SocketAddr, InvalidValue> {
    crate::cli::scenario::flags::socket_addr(v)
}
