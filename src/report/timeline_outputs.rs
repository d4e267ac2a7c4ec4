//! The outputs a run's timeline feeds (the result's JSON with its time series and faults, the
//! CSV timeline, memtier's per-second `Time-Serie`), for a fixed outcome, checked against a
//! stored copy: how the timeline is kept in memory must not change a byte of them.

use std::time::Duration;

use crate::engine::{Interval, Outcome, RunFigures, ServerCpu, ServerSample, Timeline};
use crate::report::document::Document;
use crate::report::memtier::json as memtier_json;
use crate::report::memtier::stats::{Layout, Measured, sections_of};
use crate::stats::{ErrorCounts, Parts, Window};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/timeline_outputs.txt");
/// The report's percentiles, kept per interval (memtier's 99.99 only there).
const QUANTILES: [f64; 4] = [0.5, 0.99, 0.999, 0.9999];

/// One interval's window: values varied by `seed`, a row left empty now and then.
fn window(seed: u64, rows: usize) -> Window {
    let mut w = Window::with_parts(rows, None, true);
    for (r, op) in w.ops.iter_mut().enumerate() {
        let r = r as u64;
        let n = (seed * 37 + r * 11) % 60;
        for k in 0..n {
            let ns = 900 + (seed * 7919 + k * 104_729 + r * 13) % 2_500_000;
            op.record(ns, Some(ns * 3 / 4));
            op.count += 1;
            op.sent += 1;
            op.bytes_out += 40 + r;
            op.bytes_in += 100 + k % 7;
            if r == 1 {
                if k.is_multiple_of(3) { op.misses += 1 } else { op.hits += 1 }
            }
            let parts = op.parts.as_mut().expect("kept");
            let (send, wire) = (ns / 9, ns / 2);
            parts
                .record(Parts { send_lag_ns: send, wire_ns: wire, receive_lag_ns: ns - send - wire }, Some(ns * 2 / 3));
        }
        op.errors = (seed + r) % 3;
        op.failed = op.errors / 2;
        op.sent += op.failed;
    }
    w.successes = w.ops.iter().map(|o| o.count - o.errors.min(o.count)).sum();
    w.active_connections = 4 + seed % 5;
    w.errors.add(crate::stats::ErrorKind::Io, seed % 2);
    w
}

fn sample(seed: u64) -> ServerSample {
    ServerSample {
        cpu: ServerCpu {
            total: 0.1 + seed as f64 / 7.0,
            main_thread: seed.is_multiple_of(2).then(|| seed as f64 / 9.0),
        },
        used_memory_bytes: 1_000_000 + seed * 4096,
        fragmentation_ratio: 1.0 + seed as f64 / 13.0,
        keyspace_hits: seed * 100,
        keyspace_misses: seed * 3,
        hit_ratio: (!seed.is_multiple_of(3)).then(|| 0.97 - seed as f64 / 100.0),
        evicted_keys: 0,
        expired_keys: seed,
        connected_clients: 5 + seed % 2,
        ops_per_sec: 12_345.678 + seed as f64,
        keys: 99_999,
    }
}

/// One run of `intervals`, kept as the collector keeps them.
fn run(run: usize, intervals: u64) -> Outcome {
    let names = vec!["SET".to_string(), "GET".to_string()];
    let mut totals = Window::with_parts(2, None, true);
    let mut timeline = Timeline::default();
    for index in 0..intervals {
        let seed = run as u64 * 100 + index;
        let w = window(seed, 2);
        totals.merge(&w);
        let duration_secs = if index + 1 == intervals { 0.4375 } else { 1.0 };
        let extras = ((index % 3 != 1).then(|| sample(seed)), (run == 1).then_some(w.active_connections));
        timeline.push(&Interval::of((run, index), (index as f64, duration_secs), &w, &QUANTILES, extras));
    }
    let elapsed = Duration::from_secs_f64(intervals as f64 - 0.5625);
    let mut o = Outcome {
        ops: totals.ops,
        errors: totals.errors,
        send_lag_ns: totals.send_lag_ns,
        timeline,
        elapsed,
        interrupted: false,
        started_unix_ms: 1_700_000_000_000 + run as u64 * 10_000,
        server: None,
        command_names: names,
        client_threads: Vec::new(),
        server_stats: Some(sample(7)),
        server_peak_memory: Some(2_000_000),
        server_latency: None,
        warnings: Vec::new(),
        notes: Vec::new(),
        runs: Vec::new(),
        outages: Vec::new(),
        reconnect_attempts: 0,
        connections_lost: ErrorCounts::default(),
        nodes: Vec::new(),
        moved: 0,
        asked: 0,
        retries: 0,
        retried_ops: 0,
        failed_keys: Vec::new(),
        failed_keys_dropped: 0,
        client_stats: Vec::new(),
        clock_bound_ns: 1500,
        stamps_refused: None,
        roles: Vec::new(),
    };
    o.runs = vec![RunFigures { errors: o.total().errors, ..o.figures() }];
    o
}

/// Every output the timeline feeds, as text.
fn outputs() -> String {
    let runs = vec![run(0, 7), run(1, 5)];
    let pooled = Outcome::pool(runs.clone()).expect("two runs");
    let doc = crate::report::run::json::measured(Document::default(), &pooled, 0.5);
    let csv = crate::report::run::tables::csv_timeline(&doc);
    let measured: Vec<Measured<'_>> = runs.iter().map(Measured::of).collect();
    let memtier = memtier_json::write(&memtier_json::Document {
        configuration: serde_json::Value::Null,
        threads: 2,
        connections: 4,
        seconds: Some(7),
        requests_per_client: 0,
        cluster: false,
        percentiles: vec![50.0, 99.0, 99.9, 99.99],
        hide_histogram: true,
        transaction: false,
        sections: sections_of(Layout::default(), &measured, &Measured::of(&pooled)),
        roles: Vec::new(),
    });
    format!("{}\n--- csv timeline\n{csv}--- memtier\n{memtier}", doc.to_json())
}

#[test]
fn the_outputs_fed_by_the_timeline_are_as_stored() {
    let now = outputs();
    if std::env::var_os("RESPBENCH_WRITE_FIXTURE").is_some() {
        std::fs::write(FIXTURE, &now).expect("the fixture is writable");
    }
    let stored = std::fs::read_to_string(FIXTURE).expect("tests/fixtures/timeline_outputs.txt");
    assert!(now == stored, "the outputs changed: compare with {FIXTURE} (RESPBENCH_WRITE_FIXTURE=1 rewrites it)");
}
