//! The fill's passes through the run API: a key range in one, or a memory target in up to four
//! (measure what a key costs, go to 90 %, finish, top up), each key written once, with a
//! progress bar on a terminal.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::error::FillError;
use super::probe::Probe;
use super::target::MemoryTarget;
use crate::cli::run::{self, Plan, RunContext};
use crate::config::Config;
use crate::engine::Progress;
use crate::report::document::FillResult;
use crate::report::live::sink::Sink;

/// The fill's progress bar on a terminal, over `done_before + this pass` of `total` keys.
struct Bar {
    done_before: u64,
    total: u64,
    started: Instant,
}

impl Sink for Bar {
    fn interval(&mut self, _run: usize, p: &Progress) {
        let done = self.done_before + p.total_ops;
        let rate = p.total_ops as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
        eprint!("\r\x1b[2K{}", progress_bar(done, self.total, rate));
    }

    fn run_ended(&mut self, _run: usize, _outcome: Option<&crate::engine::Outcome>) {
        eprint!("\r\x1b[2K");
    }
}

/// Fills keys `from..=to`, with a progress bar over `done_before + this pass` of `total`.
fn pass(
    config: &mut Config,
    from: u64,
    to: u64,
    done_before: u64,
    total: u64,
    cx: &RunContext<'_>,
) -> Result<bool, FillError> {
    if to < from {
        return Ok(false);
    }
    config.keys.min = from;
    config.keys.max = to;
    // The metrics endpoint the context hands (its own, or its scenario's) sees the fill.
    let mut bar = Bar { done_before, total, started: Instant::now() };
    let mut sinks: Vec<&mut dyn Sink> = Vec::new();
    if std::io::stderr().is_terminal() {
        sinks.push(&mut bar);
    }
    let result = run::run(&Plan::once(config), cx, &mut sinks).map_err(|e| run::failure_message(config, &e))?;
    let outcome = result.pooled();
    if outcome.errors.total() > 0 {
        let kinds: Vec<String> = outcome.errors.sorted().iter().map(|(k, n)| format!("{k} {n}")).collect();
        return Err(
            format!("the fill got errors ({}): the key range is not completely written", kinds.join(", ")).into()
        );
    }
    Ok(outcome.interrupted)
}

/// `[#########-----------]  45%  123456 keys/s, 12 s left`
fn progress_bar(done: u64, total: u64, rate: f64) -> String {
    let fraction = (done as f64 / total.max(1) as f64).min(1.0);
    let filled = (fraction * 30.0) as usize;
    let left = if rate > 0.0 { (total.saturating_sub(done)) as f64 / rate } else { 0.0 };
    format!(
        "[{}{}] {:>3.0}%  {rate:.0} keys/s, {left:.0} s left",
        "#".repeat(filled),
        "-".repeat(30 - filled),
        fraction * 100.0
    )
}

/// Fills the configuration's key range in one pass, reading the server's memory before and after.
pub(super) fn fill_range(config: &mut Config, cx: &RunContext<'_>) -> Result<FillResult, FillError> {
    let started = Instant::now();
    let (min, max) = (config.keys.min, config.keys.max);
    let mut probe = Probe::open(config)?;
    let before = probe.info();
    let interrupted = pass(config, min, max, 0, max - min + 1, cx)?;
    let after = probe.info();
    Ok(FillResult {
        key_prefix: config.keys.prefix.clone(),
        key_min: min,
        key_max: max,
        keys: max - min + 1,
        value_bytes: config.values.max(),
        target_bytes: None,
        memory_bytes: None,
        bytes_per_key: None,
        used_memory_before: before.map(|i| i.counted_memory),
        used_memory_after: after.map(|i| i.counted_memory),
        evicted_keys: after.zip(before).map_or(0, |(a, b)| a.evicted.saturating_sub(b.evicted)),
        elapsed_secs: started.elapsed().as_secs_f64(),
        interrupted,
    })
}

/// Fills up to `target`: a first batch measures what a key costs, then passes to 90 % of the
/// estimate, to it, and a top-up; stops on the first eviction.
pub(super) fn fill_to_target(
    config: &mut Config,
    target: MemoryTarget,
    memory: Option<u64>,
    cx: &RunContext<'_>,
) -> Result<FillResult, FillError> {
    let started = Instant::now();
    let mut probe = Probe::open(config)?;
    let no_info =
        || "the server refused INFO: a memory target needs its used_memory (fill a key range instead)".to_string();
    let first = probe.info().ok_or_else(no_info)?;
    let maxmemory = probe.maxmemory().unwrap_or(first.maxmemory);
    let (target_bytes, memory_bytes) = match target {
        MemoryTarget::Bytes(b) => (b, memory.or((maxmemory > 0).then_some(maxmemory))),
        MemoryTarget::Percent(pct) => {
            let base = memory.or((maxmemory > 0).then_some(maxmemory)).ok_or_else(|| {
                "the server does not say its maxmemory (0, or CONFIG and INFO hide it): pass --memory SIZE".to_string()
            })?;
            ((base as f64 * pct / 100.0) as u64, Some(base))
        }
    };
    if maxmemory > 0 && target_bytes > maxmemory {
        return Err(format!(
            "the target {target_bytes} bytes is above the server's maxmemory {maxmemory}: filling it would evict keys"
        )
        .into());
    }
    // What eviction counts: replica output buffers swell and drain while a fill replicates.
    let used_before = first.counted_memory;
    if used_before >= target_bytes {
        return Err(format!(
            "used_memory is already {used_before} bytes, at or above the target {target_bytes}: nothing to fill"
        )
        .into());
    }
    let room = target_bytes - used_before;
    let start_key = config.keys.min;
    // A first batch measures what a key really costs on this server.
    let guess_per_key = config.values.max() as u64 + 100;
    let first_batch = (room / guess_per_key / 10).clamp(1, 10_000);
    let mut filled = 0;
    let mut per_key = guess_per_key as f64;
    let mut interrupted = false;
    let mut total_estimate = room / guess_per_key;
    // Passes: the first measures, the second goes to 90 % of the estimate, the third finishes
    // with the estimate re-measured over everything written so far, and a fourth tops up when
    // a transient (a keyspace rehash's second table, replicas' output buffers) inflated the
    // third's measure and the re-measure says more keys fit.
    for share in [None, Some(0.9), Some(1.0), Some(1.0)] {
        let goal = match share {
            None => first_batch,
            Some(s) => ((room as f64 / per_key) * s) as u64,
        };
        if goal <= filled || interrupted {
            continue;
        }
        let from = start_key + filled;
        let to = start_key + goal - 1;
        interrupted = pass(config, from, to, filled, total_estimate.max(goal), cx)?;
        filled = goal;
        let now = probe.info().ok_or_else(no_info)?;
        if now.evicted > first.evicted {
            return Err(format!(
                "the server evicted {} keys while filling (used_memory {} of maxmemory {}): stopped",
                now.evicted - first.evicted,
                now.used_memory,
                now.maxmemory
            )
            .into());
        }
        per_key = (now.counted_memory.saturating_sub(used_before) as f64 / filled as f64).max(1.0);
        total_estimate = (room as f64 / per_key) as u64;
        if cx.stop.load(Ordering::SeqCst) {
            interrupted = true;
        }
    }
    let last = probe.info().ok_or_else(no_info)?;
    Ok(FillResult {
        key_prefix: config.keys.prefix.clone(),
        key_min: start_key,
        key_max: start_key + filled.max(1) - 1,
        keys: filled,
        value_bytes: config.values.max(),
        target_bytes: Some(target_bytes),
        memory_bytes,
        bytes_per_key: Some(per_key),
        used_memory_before: Some(used_before),
        used_memory_after: Some(last.counted_memory),
        evicted_keys: last.evicted.saturating_sub(first.evicted),
        elapsed_secs: started.elapsed().as_secs_f64(),
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bar_shows_share_rate_and_time_left() {
        let bar = progress_bar(50, 100, 10.0);
        assert!(bar.starts_with("[###############---------------]"), "{bar}");
        assert!(bar.contains(" 50%") && bar.contains("10 keys/s") && bar.contains("5 s left"), "{bar}");
    }
}
