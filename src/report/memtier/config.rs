//! The `configuration` block of memtier's `--json-out-file`: memtier 2.3's keys, each with the
//! value this run had, from the plan (`Config`) where the plan keeps it and from the memtier
//! command line (`MemtierOutput::given`) for what only memtier's words say (`wait-ratio`,
//! `multi_key_get`, `uri`, ...), in memtier's formats: flags as "true"/"false", absent paths
//! null, ranges as memtier prints them.

use serde_json::{Map, Value, json};

use super::stats::MemtierView;
use crate::config::{KeyPattern, StopAfter, Target, ValueSize};

fn flag(b: bool) -> Value {
    json!(if b { "true" } else { "false" })
}

fn path_or_null(p: Option<&std::path::Path>) -> Value {
    p.map_or(Value::Null, |p| json!(p.display().to_string()))
}

/// The last value the memtier command line gave `option` (`"yes"` for a switch).
fn given<'a>(view: &'a MemtierView<'_>, option: &str) -> Option<&'a str> {
    view.options.given.iter().rev().find(|(name, _)| name == option).map(|(_, v)| v.as_str())
}

/// A number memtier parsed with `%u` (0 when absent).
fn number(view: &MemtierView<'_>, option: &str) -> u64 {
    given(view, option).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// A pair memtier parsed (`1:2`, `0-3`), printed with `sep` as memtier prints it.
fn pair(view: &MemtierView<'_>, option: &str, sep: char) -> String {
    let (a, b) = given(view, option)
        .and_then(|v| v.split_once([':', '-']))
        .and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)))
        .unwrap_or((0, 0));
    format!("{a}{sep}{b}")
}

pub fn configuration(view: &MemtierView<'_>, run_count: usize, requests_per_client: u64) -> Value {
    let c = view.config;
    let (server, port, socket) = match &c.server.target {
        Target::Tcp { host, port } => (json!(host), *port, Value::Null),
        Target::Unix(path) => (Value::Null, 0, json!(path.display().to_string())),
    };
    let threads = c.threads.max(1);
    let (requests, test_time) = match c.stop {
        StopAfter::Duration(d) => (0, d.as_secs()),
        _ => (requests_per_client, 0),
    };
    let (data_size, range, list) = match &c.values {
        ValueSize::Fixed(n) => (*n, "0:0".to_string(), String::new()),
        ValueSize::Range { min, max } => (0, format!("{min}:{max}"), String::new()),
        ValueSize::List(l) => {
            (0, "0:0".into(), l.iter().map(|(s, w)| format!("{s}:{w}")).collect::<Vec<_>>().join(","))
        }
    };
    let (stddev, median) = c
        .commands
        .iter()
        .find_map(|cmd| match cmd.key_pattern {
            KeyPattern::Gaussian { median, stddev } => Some((stddev.unwrap_or(0.0), median.unwrap_or(0.0))),
            _ => None,
        })
        .unwrap_or((0.0, 0.0));
    // memtier writes 0.0 unless a pattern is Zipf, then the exponent in use.
    let zipf = c
        .commands
        .iter()
        .find_map(|cmd| match cmd.key_pattern {
            KeyPattern::Zipf { exponent } => Some(exponent),
            _ => None,
        })
        .unwrap_or(0.0);
    // -4 / -6: the last one given wins, as in memtier.
    let family = view.options.given.iter().rev().find_map(|(name, _)| match name.as_str() {
        "ipv4" => Some("AF_INET"),
        "ipv6" => Some("AF_INET6"),
        _ => None,
    });
    let tls = c.server.tls.as_ref();
    let text_or_null = |option: &str| given(view, option).map_or(Value::Null, |v| json!(v));
    let switch = |option: &str| flag(given(view, option).is_some());
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put("server", server);
    put("port", json!(port));
    put("uri", json!(given(view, "uri").unwrap_or("")));
    put("unix socket", socket);
    put("address family", json!(family.unwrap_or("Unspecified")));
    put("protocol", json!(if c.server.resp3 { "resp3" } else { "redis" }));
    put("out_file", view.out_file.map_or(Value::Null, |f| json!(f)));
    put("tls", flag(tls.is_some()));
    put("cert", path_or_null(tls.and_then(|t| t.cert.as_deref())));
    put("key", path_or_null(tls.and_then(|t| t.key.as_deref())));
    put("cacert", path_or_null(tls.and_then(|t| t.cacert.as_deref())));
    put("tls_skip_verify", flag(tls.is_some_and(|t| t.skip_verify)));
    put("sni", tls.and_then(|t| t.sni.as_ref()).map_or(Value::Null, |s| json!(s)));
    put("client_stats", text_or_null("client-stats"));
    put("run_count", json!(run_count));
    put("debug", json!(u8::from(given(view, "debug").is_some())));
    put("requests", json!(requests));
    put("rate_limit", json!(c.rate.map_or(0, |r| (r.per_sec / c.connections as f64).round() as u64)));
    put("clients", json!(c.connections / threads));
    put("threads", json!(threads));
    put("test_time", json!(test_time));
    put("ratio", json!(if given(view, "ratio").is_some() { pair(view, "ratio", ':') } else { "1:10".into() }));
    put("pipeline", json!(c.pipeline));
    put("data_size", json!(data_size));
    put("data_offset", json!(number(view, "data-offset")));
    put("random_data", flag(c.random_data));
    put("data_size_range", json!(range));
    put("data_size_list", json!(list));
    put("data_size_pattern", json!(given(view, "data-size-pattern").unwrap_or("R")));
    put("expiry_range", json!(c.expiry.map_or("0:0".to_string(), |(a, b)| format!("{a}:{b}"))));
    put("data_import", text_or_null("data-import"));
    put("data_verify", switch("data-verify"));
    put("verify_only", switch("verify-only"));
    put("generate_keys", switch("generate-keys"));
    put("key_prefix", json!(c.keys.prefix));
    put("key_minimum", json!(c.keys.min));
    put("key_maximum", json!(c.keys.max));
    let patterns = given(view, "key-pattern").filter(|p| p.len() == 3).unwrap_or("R:R");
    put("key_pattern", json!(patterns));
    put("key_stddev", json!(stddev));
    put("key_median", json!(median));
    put("key_zipf_exp", json!(zipf));
    put("reconnect_interval", json!(number(view, "reconnect-interval")));
    put("connection_timeout", json!(number(view, "connection-timeout")));
    put("thread_conn_start_min_jitter_micros", json!(number(view, "thread-conn-start-min-jitter-micros")));
    put("thread_conn_start_max_jitter_micros", json!(number(view, "thread-conn-start-max-jitter-micros")));
    put("multi_key_get", json!(number(view, "multi-key-get")));
    // memtier writes the password itself; a results file is no place for it.
    put("authenticate", json!(c.server.password.as_ref().map_or("", |_| "(set)")));
    put("select-db", json!(c.server.db.unwrap_or(0)));
    put("no-expiry", switch("no-expiry"));
    put("wait-ratio", json!(pair(view, "wait-ratio", ':')));
    put("num-slaves", json!(pair(view, "num-slaves", ':')));
    put("wait-timeout", json!(pair(view, "wait-timeout", '-')));
    put("print-all-runs", flag(view.options.print_all_runs));
    if let Some(ramp) = &c.ramp {
        // memtier counts the staircase per thread.
        put("clients_start", json!(ramp.start / threads));
        put("clients_step", json!(ramp.step / threads));
        put("step_duration", json!(ramp.every.as_secs()));
    }
    stage_and_retries(view, &mut m);
    Value::Object(m)
}

/// memtier 2.4's retry settings, when its command line names one (a 2.3 command line keeps
/// 2.3's key set): the plan's values, memtier's defaults for the rest; and
/// `--connection-stage-timeout` when given.
fn stage_and_retries(view: &MemtierView<'_>, m: &mut Map<String, Value>) {
    const RETRY_OPTIONS: [&str; 7] = [
        "retry-on-error",
        "max-retries",
        "retry-backoff-ms",
        "retry-backoff-factor",
        "retry-on",
        "max-retry-queue",
        "failed-keys-file",
    ];
    let c = view.config;
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    if RETRY_OPTIONS.iter().any(|o| given(view, o).is_some()) {
        put("retry_on_error", flag(c.faults.retry_errors));
        let max_retries = given(view, "max-retries").and_then(|v| v.trim().parse::<i64>().ok()).unwrap_or(-1);
        put("max_retries", json!(max_retries));
        put("retry_backoff_ms", json!(c.faults.retry_backoff.as_millis() as u64));
        put("retry_backoff_factor", json!(c.faults.retry_backoff_factor));
        put("retry_on", json!(c.extras.retry_on.join(",")));
        put("max_retry_queue", json!(c.faults.max_retry_queue));
        put("failed_keys_file", given(view, "failed-keys-file").map_or(Value::Null, |v| json!(v)));
    }
    if given(view, "connection-stage-timeout").is_some() {
        put("connection_stage_timeout", json!(number(view, "connection-stage-timeout")));
    }
}
