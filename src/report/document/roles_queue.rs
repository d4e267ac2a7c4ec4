//! A stream or queue role in the result: its plan, and the lines the text report gives its
//! entries or items (end-to-end latency; a queue's wait for data apart from its service).

use std::fmt::Write as _;

use crate::engine::queue::QueueFigures;
use crate::engine::streams::StreamFigures;
use crate::stats::LatencySummary;

/// One latency's line: `what` and its percentiles in milliseconds.
fn latency(out: &mut String, what: &str, l: &LatencySummary) {
    let ms = |us: f64| us / 1000.0;
    let _ = writeln!(
        out,
        "  {what}, ms: avg {:.3} p50 {:.3} p90 {:.3} p99 {:.3} p99.9 {:.3} max {:.3}",
        ms(l.mean_us),
        ms(l.p50_us),
        ms(l.p90_us),
        ms(l.p99_us),
        ms(l.p999_us),
        ms(l.max_us)
    );
}

/// A stream or queue role's lines in the text report (`listeners` its consumers or workers,
/// `mode` how they read); nothing for another role.
pub(super) fn text(
    listeners: usize,
    mode: &str,
    stream: Option<&StreamFigures>,
    queue: Option<&QueueFigures>,
) -> String {
    let mut out = String::new();
    if let Some(s) = stream {
        let known = |n: Option<u64>| n.map_or_else(|| "unknown".to_string(), |n| n.to_string());
        let _ = writeln!(
            out,
            "  entries: {} produced, {} consumed by {listeners} consumer(s) ({mode}), {} acked, {} unconsumed; \
             pending after the run {}, at most {}; lag at most {}",
            s.produced,
            s.consumed,
            s.acked,
            s.unconsumed,
            known(s.pending),
            known(s.pending_max),
            known(s.lag_max)
        );
        if s.consumed == 0 {
            out.push_str("  end-to-end latency: no entry was consumed\n");
        } else {
            latency(&mut out, "end-to-end latency (XADD to XREADGROUP)", &s.end_to_end_latency);
        }
        for dropped in &s.dropped_consumers {
            let _ = writeln!(out, "  DROPPED: {dropped}");
        }
    }
    if let Some(q) = queue {
        let _ = writeln!(
            out,
            "  items: {} produced, {} consumed by {listeners} worker(s) ({mode}), {} unconsumed; {} pop(s) waited \
             for data, {} ran out empty (blocked, not slow)",
            q.produced, q.consumed, q.unconsumed, q.waited, q.empty_pops
        );
        if q.consumed == 0 {
            out.push_str("  wait and service: no item was consumed\n");
        } else {
            latency(&mut out, "wait for data (pop sent to item pushed)", &q.wait);
            latency(&mut out, "service (data there to reply)", &q.service);
            latency(&mut out, "end-to-end latency (push to pop)", &q.end_to_end_latency);
        }
        for dropped in &q.dropped_workers {
            let _ = writeln!(out, "  DROPPED: {dropped}");
        }
    }
    out
}
