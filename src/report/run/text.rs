//! Text for people at a terminal: the final table (memtier's columns), the one-line summary
//! of `-q`, and the live progress line.

use std::fmt::Write;

use crate::engine::{self, Bottleneck, Outcome, Progress, ServerSample};
use crate::report::{Delivery, Format, Rates, Run};
use crate::stats::{ErrorKind, OpStats, Spread};

/// The full table with a header naming the server, the load and the method.
pub struct Table;

/// One line: `-q`.
pub struct Summary;

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// memtier's row names for its two commands (`SET` becomes `Sets`); others keep their name.
fn row_name(command: &str) -> String {
    match command {
        "SET" => "Sets".into(),
        "GET" => "Gets".into(),
        other => other.to_string(),
    }
}

fn row(out: &mut String, (name, width): (&str, usize), op: &OpStats, secs: f64, reads: bool, percentiles: &[f64]) {
    let rates = Rates::of(op, secs);
    let lat = op.latency();
    let quantiles: String = percentiles
        .iter()
        .map(|p| format!("{:>11}", ms(op.latency_ns.value_at_quantile(p / 100.0) as f64 / 1000.0)))
        .collect();
    let (hits, misses) = if reads {
        (format!("{:.2}", rates.hits_per_sec), format!("{:.2}", rates.misses_per_sec))
    } else {
        ("---".to_string(), "---".to_string())
    };
    let _ = writeln!(
        out,
        "{name:<width$}{:>14.2}{hits:>12}{misses:>12}{:>11}{quantiles}{:>11}{:>13.2}",
        rates.ops_per_sec,
        ms(lat.mean_us),
        ms(lat.max_us),
        rates.kb_per_sec,
    );
}

/// Transactions the server aborted (a null EXEC), out of the EXECs answered.
fn aborts(out: &mut String, outcome: &Outcome, total: &OpStats, secs: f64) {
    let names = outcome.command_names.iter().zip(&outcome.ops);
    let execs: u64 = names.filter(|(n, _)| n.split('#').next() == Some("EXEC")).map(|(_, o)| o.count).sum();
    let _ = writeln!(
        out,
        "Aborts: {} of {execs} EXEC answered with a null array (aborted transactions), {:.2}/sec",
        total.aborts,
        total.aborts as f64 / secs.max(1e-9)
    );
}

impl Format for Table {
    fn render(&self, run: &Run) -> String {
        let (config, outcome) = (run.config, run.outcome);
        let secs = outcome.elapsed.as_secs_f64();
        let total = outcome.total();
        let mut out = String::new();
        let server = match &outcome.server {
            Some(s) => format!("{} {}", s.name, s.version),
            // Refused (an error reply) or unanswered: the warnings say which.
            None if outcome.warnings.iter().any(|w| w.contains("refused INFO")) => "server (INFO refused)".into(),
            None => "server (INFO unanswered)".into(),
        };
        let _ = writeln!(
            out,
            "respbench {}: {server} at {}, {} connections on {} threads, pipeline {}, {}",
            env!("CARGO_PKG_VERSION"),
            config.server.target,
            config.connections,
            config.threads,
            config.pipeline,
            crate::net::driver::path_for(config).name(),
        );
        let _ = writeln!(
            out,
            "{} requests in {secs:.2} s{}",
            total.count,
            if outcome.interrupted { " (INTERRUPTED: partial results)" } else { "" }
        );
        let _ = writeln!(out, "Latency in milliseconds; {}.", crate::report::method(config));
        out.push('\n');
        // The Type column fits the longest name (a sequence's unit row can be long).
        let width = outcome.command_names.iter().map(|n| n.len() + 1).max().unwrap_or(0).max(8);
        let quantiles: String = run.percentiles.iter().map(|p| format!("{:>11}", format!("p{p}"))).collect();
        let _ = writeln!(
            out,
            "{:<width$}{:>14}{:>12}{:>12}{:>11}{quantiles}{:>11}{:>13}",
            "Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg.", "Max", "KB/sec"
        );
        out.push_str(&"-".repeat(73 + 11 * run.percentiles.len() + width));
        out.push('\n');
        for (i, op) in outcome.ops.iter().enumerate() {
            let reads = config.commands.get(i).is_some_and(|c| c.reads);
            row(&mut out, (&row_name(&outcome.command_names[i]), width), op, secs, reads, run.percentiles);
        }
        let any_reads = config.commands.iter().any(|c| c.reads);
        row(&mut out, ("Totals", width), &total, secs, any_reads, run.percentiles);
        out.push('\n');
        if config.extras.transaction || total.aborts > 0 {
            aborts(&mut out, outcome, &total, secs);
        }
        if !config.extras.roles.is_empty() {
            out.push_str(&crate::report::document::roles::text(&crate::report::run::json::document(run).roles));
        }
        if let Some(line) = client_share_line(&total) {
            out.push_str(&line);
        }
        accounting(&mut out, outcome, &total);
        if config.cluster.is_some() {
            let _ = writeln!(out, "Cluster: {} MOVED and {} ASK redirects followed", outcome.moved, outcome.asked);
            let width = outcome.nodes.iter().map(|(n, _)| n.len() + 2).max().unwrap_or(0).max(8);
            for (name, op) in &outcome.nodes {
                let lat = op.latency();
                let _ = writeln!(
                    out,
                    "  {name:<width$}{:>12.2} ops/sec  avg {} ms  p50 {} ms  p99 {} ms  errors {}",
                    op.count as f64 / secs.max(1e-9),
                    ms(lat.mean_us),
                    ms(lat.p50_us),
                    ms(lat.p99_us),
                    op.errors,
                );
            }
        }
        for o in &outcome.outages {
            let _ = writeln!(
                out,
                "Outage: {} connection{} down from {:.2} s to {:.2} s: recovered after {:.2} s{}",
                o.connections,
                if o.connections == 1 { "" } else { "s" },
                o.start_secs,
                o.end_secs,
                o.end_secs - o.start_secs,
                if outcome.runs.len() > 1 { format!(" (run {})", o.run + 1) } else { String::new() },
            );
        }
        if let Some(d) = Delivery::of(config, outcome) {
            delivery(&mut out, run, &d);
        }
        if outcome.runs.len() > 1 {
            spread(&mut out, run);
        }
        if let Some(s) = outcome.server_stats {
            server_line(&mut out, &s, outcome.server_peak_memory);
        }
        if let Some(latency) = super::server_latency::of_run(outcome) {
            super::server_latency::text(&mut out, &latency, &|name| client_service(outcome, name));
        }
        let (verdict, detail) = outcome.verdict(config.client_share_warning());
        let _ = writeln!(out, "Bottleneck: {} ({detail})", verdict_name(verdict));
        for warning in &outcome.warnings {
            let _ = writeln!(out, "WARNING: {warning}");
        }
        if verdict == Bottleneck::ClientBound {
            let busiest = outcome.client_threads.iter().map(|t| t.busy()).fold(0.0, f64::max);
            let _ = writeln!(
                out,
                "WARNING: the client set the pace: a respbench thread was busy {:.0}% of the time, so these figures \
                 measure respbench as much as the server. Add --threads, or run clients on more machines.",
                busiest * 100.0
            );
        }
        out
    }
}

/// What a request that got no reply is said to have met, by kind.
fn failure_name(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::Io => "connection lost".into(),
        ErrorKind::Timeout => "timeout".into(),
        ErrorKind::Protocol => "protocol error".into(),
        ErrorKind::Server(prefix) => prefix.clone(),
    }
}

/// Why a connection was lost, by kind.
fn lost_name(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Timeout => "timeout",
        ErrorKind::Protocol => "protocol error",
        _ => "closed or broken",
    }
}

/// Every request accounted, one unit per figure: error replies (requests answered with an
/// error), requests failed without a reply by kind, connections lost (not requests), and the
/// identity `sent = replies + failed + abandoned`.
fn accounting(out: &mut String, outcome: &Outcome, total: &OpStats) {
    let kinds = outcome.errors.sorted();
    let listed = |server: bool| -> (u64, String) {
        let of: Vec<&(ErrorKind, u64)> =
            kinds.iter().filter(|(k, _)| matches!(k, ErrorKind::Server(_)) == server).collect();
        let list: Vec<String> = of.iter().map(|(k, n)| format!("{} {n}", failure_name(k))).collect();
        (of.iter().map(|(_, n)| n).sum(), list.join(", "))
    };
    let mut parts = Vec::new();
    let (replies, list) = listed(true);
    if replies > 0 {
        parts.push(format!("error replies: {replies} ({list})"));
    }
    let (failed, list) = listed(false);
    if failed > 0 {
        parts.push(format!("requests failed: {failed} ({list})"));
    }
    let lost = outcome.connections_lost.sorted();
    if !lost.is_empty() {
        let list: Vec<String> = lost.iter().map(|(k, n)| format!("{} {n}", lost_name(k))).collect();
        parts.push(format!("connections lost: {} ({})", outcome.connections_lost.total(), list.join(", ")));
    }
    if parts.is_empty() {
        out.push_str("Errors: none\n");
    } else {
        let _ = writeln!(out, "Errors: {}", parts.join("; "));
    }
    let _ = writeln!(
        out,
        "Requests: {} sent = {} replies + {} failed + {} abandoned at the end{}",
        total.sent,
        total.count,
        total.failed,
        total.abandoned,
        if total.abandoned > 0 { " (in flight when the run was stopped)" } else { "" }
    );
}

/// The line under the table when the latency was decomposed: the client's share of p99, then
/// each part's p99 (the server's own, where it reports one, belongs after "wire and server").
fn client_share_line(total: &OpStats) -> Option<String> {
    let parts = total.parts.as_deref()?;
    let (client_ns, share) = parts.client_share(&total.latency_ns, 0.99)?;
    let p99 = |h: &hdrhistogram::Histogram<u64>| ms(h.value_at_quantile(0.99) as f64 / 1000.0);
    Some(format!(
        "client share of p99: {:.0} % ({} of {} ms); p99 of each part: send lag {} ms, wire and server {} ms, \
         receive lag {} ms\n",
        share * 100.0,
        ms(client_ns as f64 / 1000.0),
        ms(total.latency_ns.value_at_quantile(0.99) as f64 / 1000.0),
        p99(&parts.send_lag_ns),
        p99(&parts.wire_ns),
        p99(&parts.receive_lag_ns),
    ))
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The server's own view of the run, from INFO.
fn server_line(out: &mut String, s: &ServerSample, peak: Option<u64>) {
    let main = s.cpu.main_thread.map(|m| format!(" (main thread {:.0}%)", m * 100.0)).unwrap_or_default();
    let hit_ratio = s.hit_ratio.map_or("no reads".to_string(), |r| format!("hit ratio {:.1}%", r * 100.0));
    let _ = writeln!(
        out,
        "Server: CPU {:.0}% of a core{main}; memory {} (peak {}, fragmentation {:.2}); {hit_ratio}; \
         {} evicted, {} expired; {} clients; {:.0} commands/s; {} keys",
        s.cpu.total * 100.0,
        mib(s.used_memory_bytes),
        mib(peak.unwrap_or(s.used_memory_bytes)),
        s.fragmentation_ratio,
        s.evicted_keys,
        s.expired_keys,
        s.connected_clients,
        s.ops_per_sec,
        s.keys,
    );
}

/// The client's service time for the rows of command `name` (`SET` and `SET#2` alike).
fn client_service(outcome: &engine::Outcome, name: &str) -> Option<crate::stats::LatencySummary> {
    let mut all: Option<OpStats> = None;
    for (row, op) in outcome.command_names.iter().zip(&outcome.ops) {
        if row.split('#').next() == Some(name) {
            all.get_or_insert_with(OpStats::default).merge(op);
        }
    }
    all.map(|op| op.service())
}

pub fn verdict_name(b: Bottleneck) -> &'static str {
    match b {
        Bottleneck::ClientBound => "client-bound",
        Bottleneck::ServerBound => "server-bound",
        Bottleneck::Neither => "neither client- nor server-bound",
    }
}

/// Open loop: service times, and whether the schedule was kept.
fn delivery(out: &mut String, run: &Run, d: &Delivery) {
    let outcome = run.outcome;
    out.push('\n');
    let _ = writeln!(out, "Service time (from the actual send), milliseconds:");
    let _ = writeln!(out, "{:<8}{:>11}{:>11}{:>11}{:>11}{:>11}", "Type", "Avg.", "p50", "p99", "p99.9", "Max");
    let total = outcome.total();
    let names = outcome.command_names.iter().map(|n| row_name(n)).chain(["Totals".to_string()]);
    for (name, op) in names.zip(outcome.ops.iter().chain([&total])) {
        let s = op.service();
        let _ = writeln!(
            out,
            "{name:<8}{:>11}{:>11}{:>11}{:>11}{:>11}",
            ms(s.mean_us),
            ms(s.p50_us),
            ms(s.p99_us),
            ms(s.p999_us),
            ms(s.max_us)
        );
    }
    let _ = writeln!(
        out,
        "Rate: {:.0}/s requested ({}), {:.0}/s achieved ({:.1}%); {} of {} sends started over {:.0} ms late{} \
         (send lag p50 {} ms, p99 {} ms, max {} ms){}",
        d.requested_per_sec,
        d.arrival,
        d.achieved_per_sec,
        100.0 * d.achieved_per_sec / d.requested_per_sec,
        d.late_sends,
        d.sends,
        d.late_threshold_us / 1000.0,
        d.late_sends_own.map(|own| format!(", {own} by the client's own delay")).unwrap_or_default(),
        ms(d.send_lag_us.p50_us),
        ms(d.send_lag_us.p99_us),
        ms(d.send_lag_us.max_us),
        d.wakeups_said(),
    );
    for warning in d.warnings() {
        let _ = writeln!(out, "{warning}");
    }
}

/// `--runs`: the spread of throughput and p99 over the runs.
fn spread(out: &mut String, run: &Run) {
    let runs = &run.outcome.runs;
    let ops: Vec<f64> = runs.iter().map(|r| r.ops_per_sec).collect();
    let p99: Vec<f64> = runs.iter().map(|r| r.p99_us / 1000.0).collect();
    let (Some(o), Some(p)) = (Spread::of(&ops), Spread::of(&p99)) else { return };
    let _ = writeln!(
        out,
        "Runs: {}. Ops/sec median {:.0} (min {:.0}, max {:.0}, 95% CI of the mean {:.0} to {:.0}); \
         p99 median {:.3} ms (min {:.3}, max {:.3}, 95% CI {:.3} to {:.3}). The table above pools all runs.",
        o.runs, o.median, o.min, o.max, o.ci95_low, o.ci95_high, p.median, p.min, p.max, p.ci95_low, p.ci95_high
    );
}

impl Format for Summary {
    fn render(&self, run: &Run) -> String {
        let outcome = run.outcome;
        let total = outcome.total();
        let secs = outcome.elapsed.as_secs_f64();
        let lat = total.latency();
        let client_bound =
            engine::verdict(&outcome.client_threads, outcome.server_stats.map(|s| s.cpu)).0 == Bottleneck::ClientBound;
        format!(
            "{}: {:.2} requests per second, p50={} msec, p99={} msec, errors={}{}{}\n",
            outcome.command_names.join("+"),
            Rates::of(&total, secs).ops_per_sec,
            ms(lat.p50_us),
            ms(lat.p99_us),
            outcome.errors.total(),
            if outcome.interrupted { " (interrupted)" } else { "" },
            if client_bound { " (WARNING: client-bound)" } else { "" }
        )
    }
}

/// The live line for one completed interval (no newline: it is redrawn in place).
pub fn live_line(p: &Progress) -> String {
    let w = &p.window;
    let ops: u64 = w.ops.iter().map(|o| o.count).sum();
    let now = if p.interval.duration_secs > 0.0 { ops as f64 / p.interval.duration_secs } else { 0.0 };
    let avg = if p.elapsed.as_secs_f64() > 0.0 { p.total_ops as f64 / p.elapsed.as_secs_f64() } else { 0.0 };
    let latency = w.total().latency();
    let left = match (p.time_left, p.done) {
        (Some(t), _) => format!("{:.0}s left", t.as_secs_f64()),
        (None, Some(f)) => format!("{:.0}% done", (f * 100.0).min(100.0)),
        (None, None) => String::new(),
    };
    format!(
        "[{:>4.0}s] {now:>10.0} ops/s now, {avg:>10.0} avg; latency {} ms avg, {} ms p99 now; {left}; errors {}",
        p.elapsed.as_secs_f64(),
        ms(latency.mean_us),
        ms(latency.p99_us),
        p.total_errors,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_names_are_memtiers() {
        assert_eq!(row_name("SET"), "Sets");
        assert_eq!(row_name("GET"), "Gets");
        assert_eq!(row_name("LPUSH"), "LPUSH");
    }
}
