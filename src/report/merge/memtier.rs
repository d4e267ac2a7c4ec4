//! memtier_benchmark's JSON (`--json-out-file`) of a merged result (`respbench merge
//! --memtier-json`): the writer's input built from the merged document, so that scripts that
//! read memtier's file read the whole run. Rows and totals come from the merged histograms
//! (percentiles of every shard's samples), the Time-Serie from the merged intervals (aligned
//! by wall clock), the configuration from the shards' common one.
//!
//! Where one memtier process has a value that shards add up, the file says the whole run:
//! `threads` (and run information's `Threads`) is every shard's threads, `clients` the
//! connections per thread, so `threads × clients` is every connection of every shard;
//! `requests` is per connection of the whole run and `rate_limit` per connection. memtier's
//! key set has no room for a note: README.md says this. What a result does not record
//! (TLS, RESP3, the Gaussian and Zipf parameters, memtier-only options) takes memtier's
//! defaults, and a command's bytes in a second are its whole-run share (results keep them per
//! interval for the totals only; counts and latencies are exact everywhere).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::error::MergeError;
use super::figures::{count_only, op_stats};
use crate::report::document::histo::{CompleteInterval, IntervalHistograms};
use crate::report::document::role_figures::Figure;
use crate::report::document::roles::RoleReport;
use crate::report::document::{Configuration, Document as ResultDocument, Malformed, ValueSizeConfig};
use crate::report::memtier::stats::{Layout, Measured, Second, Section, base_name, sections_of};
use crate::report::memtier::{self, json::Document};
use crate::stats::{CompactOp, OpStats};

/// Commands memtier's default layout shows as Sets, Gets and Waits.
const MEMTIER_ROWS: [&str; 6] = ["SET", "SETRANGE", "GET", "MGET", "GETRANGE", "WAIT"];

/// One interval's figures, owned (the `Measured` the writer reads borrows them): summarised as
/// a run's timeline keeps them, and in full for the runs' sums.
#[derive(Clone)]
struct Slot {
    index: u64,
    active: Option<u64>,
    ops: Vec<CompactOp>,
    total: CompactOp,
    full: Vec<OpStats>,
    full_total: OpStats,
}

/// memtier's output options that `respbench merge` takes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--print-percentiles`, in percent.
    pub percentiles: Vec<f64>,
    /// `--print-all-runs`: with `--runs`, each run's section as well.
    pub print_all_runs: bool,
    /// `--hide-histogram`: no latency distribution blocks.
    pub hide_histogram: bool,
}

/// memtier's JSON of the merged document `doc`.
pub fn render(doc: &ResultDocument, options: &Options) -> Result<String, MergeError> {
    let config = &doc.configuration;
    let names = row_names(doc);
    let histograms = &doc.histograms;
    let mut ops = Vec::new();
    for (name, unit) in &names {
        let summary = doc.commands.get(name).cloned().unwrap_or_default();
        let mut op = op_stats(&summary, histograms.commands.get(name))?;
        op.unit = *unit;
        ops.push(op);
    }
    let names: Vec<String> = names.into_iter().map(|(n, _)| n).collect();
    let pooled_total = op_stats(&doc.totals, Some(&histograms.totals))?;

    // Every interval, by run, with each command's figures from its own histogram.
    let complete: Vec<CompleteInterval> =
        histograms.intervals.iter().map(IntervalHistograms::complete).collect::<Result<_, Malformed>>()?;
    let by_key: BTreeMap<(usize, u64), &CompleteInterval> = complete.iter().map(|h| ((h.run, h.index), h)).collect();
    let ramp = config.ramp.is_some();
    let quantiles: Vec<f64> = options.percentiles.iter().map(|p| p / 100.0).collect();
    let mut runs: BTreeMap<usize, Vec<Slot>> = BTreeMap::new();
    for p in &doc.time_series {
        let key = (p.run, p.index);
        let h = by_key.get(&key).ok_or_else(|| format!("interval {} of run {} has no histograms", key.1, key.0))?;
        let mut full = Vec::new();
        for (name, whole) in names.iter().zip(&ops) {
            let count = count_only(p.commands.get(name).copied().unwrap_or(0));
            let mut op = op_stats(&count, h.commands.get(name))?;
            share(&mut op, whole);
            full.push(op);
        }
        let full_total = op_stats(&p.totals, Some(&h.totals))?;
        runs.entry(key.0).or_default().push(Slot {
            index: key.1,
            active: ramp.then_some(p.active_connections),
            ops: full.iter().map(|op| op.compact(&quantiles)).collect(),
            total: full_total.compact(&quantiles),
            full,
            full_total,
        });
    }

    let started = doc.started_unix_ms;
    let secs = |s: f64| Duration::from_secs_f64(s.max(0.0));
    let whole = Whole {
        names: &names,
        interrupted: doc.interrupted,
        connection_errors: doc.faults.outages.iter().map(|o| o.connections as u64).sum(),
        moved: doc.cluster.as_ref().map_or(0, |c| c.moved),
        asked: doc.cluster.as_ref().map_or(0, |c| c.asked),
    };
    let layout = Layout {
        arbitrary: arbitrary(&names),
        by_line: false,
        print_all_runs: options.print_all_runs,
        // memtier 2.4's default, --command-miss-tracking=auto.
        miss_tracking: true,
    };
    let runs_count = runs.len();
    let one_run: Vec<Slot> =
        if runs_count <= 1 { runs.values().next().map(|v| v.to_vec()).unwrap_or_default() } else { Vec::new() };
    let sections = if runs_count <= 1 {
        let pooled = whole.measured(&ops, pooled_total, &one_run, started, secs(doc.duration_secs));
        sections_of(layout, &[], &pooled)
    } else {
        // --runs: each run's rows are the sums of its intervals; the runs follow one another.
        let mut per_run: Vec<(Vec<OpStats>, OpStats, u64, Duration)> = Vec::new();
        let mut at = started;
        for (run, slots) in &runs {
            let mut run_ops: Vec<OpStats> = names.iter().map(|_| OpStats::default()).collect();
            for s in slots {
                run_ops.iter_mut().zip(&s.full).for_each(|(mine, op)| mine.merge(op));
            }
            let mut run_total = OpStats::default();
            slots.iter().for_each(|s| run_total.merge(&s.full_total));
            for (op, whole) in run_ops.iter_mut().zip(&ops) {
                op.unit = whole.unit;
            }
            let elapsed = secs(doc.runs.get(*run).map_or(0.0, |r| r.duration_secs));
            per_run.push((run_ops, run_total, at, elapsed));
            at += elapsed.as_millis() as u64;
        }
        let each: Vec<Measured> = per_run
            .iter()
            .zip(runs.values())
            .map(|((o, t, at, elapsed), slots)| whole.measured(o, t.clone(), slots, *at, *elapsed))
            .collect();
        let pooled = whole.measured(&ops, pooled_total, &[], started, secs(doc.duration_secs));
        sections_of(layout, &each, &pooled)
    };

    // A run of roles (one run: `--runs` takes no roles): a section per role after the run's.
    let roles = if runs_count <= 1 { &doc.roles[..] } else { &[] };
    let at = (started, doc.duration_secs);
    let (role_sections, role_objects) = role_sections(roles, (&whole, layout, &quantiles), (&ops, &one_run), at);
    let sections = [sections, role_sections].concat();

    let threads = config.threads.max(1);
    let connections = config.connections.max(1);
    let requests_per_client = config.requests.unwrap_or(0) / connections as u64;
    let seconds = config.duration_secs.map(|d| d as u64);
    let mut sorted = options.percentiles.clone();
    sorted.sort_by(f64::total_cmp);
    let document = Document {
        configuration: configuration(config, &layout, threads, connections, seconds, requests_per_client),
        threads,
        connections,
        seconds,
        requests_per_client,
        cluster: doc.cluster.is_some(),
        percentiles: sorted,
        hide_histogram: options.hide_histogram,
        transaction: doc.configuration.transaction,
        sections,
        roles: role_objects,
    };
    Ok(memtier::json::write(&document))
}

/// Each role's section ([`role_section`]), and its `Role` object by the section's title.
fn role_sections(
    roles: &[RoleReport],
    (whole, layout, quantiles): (&Whole<'_>, Layout, &[f64]),
    (ops, slots): (&[OpStats], &[Slot]),
    at: (u64, f64),
) -> (Vec<Section>, Vec<(String, Value)>) {
    let mut sections = Vec::new();
    let mut objects = Vec::new();
    for role in roles {
        let (section, object) = role_section(role, (whole, layout, quantiles), (ops, slots), at);
        objects.push((section.title.clone(), object));
        sections.push(section);
    }
    (sections, objects)
}

/// A role's own section, `ROLE name RESULTS`: memtier's blocks for the role's rows only (its
/// requests; their Totals and Time-Serie the role's alone), and the `Role` object that names
/// the role, its kind, how it was paced and its own figures (`RoleReport::figures`).
fn role_section(
    role: &RoleReport,
    (whole, layout, quantiles): (&Whole<'_>, Layout, &[f64]),
    (ops, slots): (&[OpStats], &[Slot]),
    (started, duration_secs): (u64, f64),
) -> (Section, Value) {
    let rows: Vec<usize> = (0..whole.names.len()).filter(|&i| role.commands.contains(&whole.names[i])).collect();
    let names: Vec<String> = rows.iter().map(|&i| whole.names[i].clone()).collect();
    let own: Vec<OpStats> = rows.iter().map(|&i| ops[i].clone()).collect();
    let own_slots: Vec<Slot> = slots
        .iter()
        .map(|s| {
            let full: Vec<OpStats> = rows.iter().map(|&i| s.full[i].clone()).collect();
            let full_total = crate::stats::total(&full);
            Slot {
                index: s.index,
                active: s.active,
                ops: rows.iter().map(|&i| s.ops[i].clone()).collect(),
                total: full_total.compact(quantiles),
                full,
                full_total,
            }
        })
        .collect();
    let role_whole = Whole { names: &names, ..*whole };
    let measured = role_whole.measured(
        &own,
        crate::stats::total(&own),
        &own_slots,
        started,
        Duration::from_secs_f64(duration_secs.max(0.0)),
    );
    let section = Section::build(layout, &format!("ROLE {} RESULTS", role.name), &measured);
    let mut object = Map::new();
    object.insert("Name".into(), json!(role.name));
    object.insert("Kind".into(), json!(role.kind));
    object.insert("Loop mode".into(), json!(role.loop_mode));
    object.insert("Latency from".into(), json!(role.latency_from));
    for (name, figure) in role.figures() {
        let value = match figure {
            Figure::Count(n) | Figure::Level(n) => json!(n),
            other => json!(other.value()),
        };
        object.insert(name, value);
    }
    (section, Value::Object(object))
}

/// What every section of the merged result shares.
struct Whole<'a> {
    names: &'a [String],
    interrupted: bool,
    connection_errors: u64,
    moved: u64,
    asked: u64,
}

impl<'a> Whole<'a> {
    fn measured(
        &self,
        ops: &'a [OpStats],
        total: OpStats,
        slots: &'a [Slot],
        started_unix_ms: u64,
        elapsed: Duration,
    ) -> Measured<'a> {
        Measured {
            names: self.names,
            ops,
            total,
            seconds: slots
                .iter()
                .map(|s| Second {
                    index: s.index,
                    active: s.active,
                    ops: s.ops.as_slice().into(),
                    total: s.total.clone(),
                })
                .collect(),
            started_unix_ms,
            elapsed,
            interrupted: self.interrupted,
            connection_errors: self.connection_errors,
            moved: self.moved,
            asked: self.asked,
        }
    }
}

/// The result's rows in the order of its commands (`SET`, `SET#2` for a second SET), then
/// any other (a sequence's unit row), each with whether it is a unit row.
fn row_names(doc: &ResultDocument) -> Vec<(String, bool)> {
    let mut names: Vec<String> = Vec::new();
    for c in &doc.configuration.commands {
        let name = c.name.as_str();
        let seen = names.iter().filter(|n| base_name(n) == name).count();
        names.push(if seen == 0 { name.to_string() } else { format!("{name}#{}", seen + 1) });
    }
    let commands = &doc.commands;
    let present = |n: &String| commands.contains_key(n);
    let mut out: Vec<(String, bool)> = names.iter().filter(|n| present(n)).map(|n| (n.clone(), false)).collect();
    for name in commands.keys() {
        if !names.contains(name) {
            out.push((name.clone(), true));
        }
    }
    out
}

/// memtier's own layout (Sets, Gets, Waits) when every command is one it has a row for,
/// else one row per command, as memtier's `--command` gives.
fn arbitrary(names: &[String]) -> bool {
    !names.iter().all(|n| MEMTIER_ROWS.contains(&base_name(n)))
}

/// An interval's bytes, hits and misses of one command: the result keeps them per interval
/// for the totals only, so a command's interval gets its whole-run share per request.
fn share(op: &mut OpStats, whole: &OpStats) {
    let part = |n: u64| if whole.count > 0 { (n as u128 * op.count as u128 / whole.count as u128) as u64 } else { 0 };
    (op.bytes_in, op.bytes_out) = (part(whole.bytes_in), part(whole.bytes_out));
    (op.hits, op.misses, op.errors) = (part(whole.hits), part(whole.misses), part(whole.errors));
    op.unit = whole.unit;
}

/// The `configuration` block from the merged result's configuration (shards' fields added).
fn configuration(
    c: &Configuration,
    layout: &Layout,
    threads: usize,
    connections: usize,
    seconds: Option<u64>,
    requests_per_client: u64,
) -> Value {
    let flag = |b: bool| json!(if b { "true" } else { "false" });
    let target = c.target.as_str();
    let (server, port, socket) = match target.strip_prefix("unix:") {
        Some(path) => (Value::Null, 0, json!(path)),
        None => {
            let (host, port) = target.rsplit_once(':').unwrap_or((target, "0"));
            let host = host.trim_start_matches('[').trim_end_matches(']');
            (json!(host), port.parse::<u64>().unwrap_or(0), Value::Null)
        }
    };
    let (data_size, range, list) = match &c.value_size {
        ValueSizeConfig::Fixed(n) => (*n as u64, "0:0".to_string(), String::new()),
        ValueSizeConfig::Range { min, max } => (0, format!("{min}:{max}"), String::new()),
        ValueSizeConfig::List(items) => (
            0,
            "0:0".into(),
            items.iter().map(|(size, weight)| format!("{size}:{weight}")).collect::<Vec<_>>().join(","),
        ),
    };
    let find = |name: &str| c.commands.iter().find(|x| x.name == name);
    let weight = |name: &str| find(name).map_or(0, |x| x.weight);
    let letter = |name: &str| find(name).map_or("R", |x| x.key_pattern.as_str()).to_string();
    let ratio = if layout.arbitrary { "1:10".to_string() } else { format!("{}:{}", weight("SET"), weight("GET")) };
    let rate = c.rate_per_sec.map_or(0, |r| (r / connections as f64).round() as u64);
    let expiry = c.expiry_range_secs.map_or("0:0".to_string(), |(min, max)| format!("{min}:{max}"));
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put("server", server);
    put("port", json!(port));
    put("uri", json!(""));
    put("unix socket", socket);
    put("address family", json!("Unspecified"));
    put("protocol", json!("redis"));
    put("out_file", Value::Null);
    put("tls", flag(false));
    put("cert", Value::Null);
    put("key", Value::Null);
    put("cacert", Value::Null);
    put("tls_skip_verify", flag(false));
    put("sni", Value::Null);
    put("client_stats", Value::Null);
    put("run_count", json!(c.runs));
    put("debug", json!(0));
    put("requests", json!(if seconds.is_some() { 0 } else { requests_per_client }));
    put("rate_limit", json!(rate));
    put("clients", json!(connections / threads));
    put("threads", json!(threads));
    put("test_time", json!(seconds.unwrap_or(0)));
    put("ratio", json!(ratio));
    put("pipeline", json!(c.pipeline));
    put("data_size", json!(data_size));
    put("data_offset", json!(0));
    put("random_data", flag(c.random_data));
    put("data_size_range", json!(range));
    put("data_size_list", json!(list));
    put("data_size_pattern", json!("R"));
    put("expiry_range", json!(expiry));
    put("data_import", Value::Null);
    put("data_verify", flag(false));
    put("verify_only", flag(false));
    put("generate_keys", flag(false));
    put("key_prefix", json!(c.key_prefix));
    put("key_minimum", json!(c.key_min));
    put("key_maximum", json!(c.key_max));
    put("key_pattern", json!(format!("{}:{}", letter("SET"), letter("GET"))));
    put("key_stddev", json!(0.0));
    put("key_median", json!(0.0));
    put("key_zipf_exp", json!(0.0));
    put("reconnect_interval", json!(0));
    put("connection_timeout", json!(0));
    put("thread_conn_start_min_jitter_micros", json!(0));
    put("thread_conn_start_max_jitter_micros", json!(0));
    put("multi_key_get", json!(0));
    put("authenticate", json!(if c.user.is_none() { "" } else { "(set)" }));
    put("select-db", json!(c.db.unwrap_or(0)));
    put("no-expiry", flag(false));
    put("wait-ratio", json!("0:0"));
    put("num-slaves", json!("0:0"));
    put("wait-timeout", json!("0-0"));
    put("print-all-runs", flag(layout.print_all_runs));
    if let Some(ramp) = &c.ramp {
        put("clients_start", json!(ramp.start / threads));
        put("clients_step", json!(ramp.step / threads));
        put("step_duration", json!(ramp.step_duration_secs as u64));
    }
    Value::Object(m)
}
