//! `respbench fill`: prefill the server before measuring, either a key range or up to a memory
//! target (`--memory-target 75%`). The bytes a key really costs are measured on the server
//! (used_memory before and after a first batch), then the rest is filled in two more passes
//! (and a top-up when a transient inflated the last measure),
//! every key written exactly once, stopping short of the target and never into eviction.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::run::{self, Plan, RunContext};
use super::{Args, EXIT_FAILURE, parse_args, usage_error};
use crate::config::{CommandSpec, Config, KeyPattern, StopAfter};
use crate::engine::{Info, Progress};
use crate::net::Session;
use crate::report;
use crate::report::document::FillResult;
use crate::report::sink::Sink;
use clap::Parser;

/// How full to make the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryTarget {
    /// A share of the server's memory (its maxmemory, or --memory).
    Percent(f64),
    Bytes(u64),
}

/// `75%`, or a size: `2gb`, `512MiB`, `100000000`.
pub fn memory_target(s: &str) -> Result<MemoryTarget, String> {
    if let Some(p) = s.trim().strip_suffix('%') {
        let pct: f64 = p
            .trim()
            .parse()
            .map_err(|_| format!("expected a percentage such as 75% or a size such as 2gb, got '{s}'"))?;
        if !(pct > 0.0 && pct <= 100.0) {
            return Err(format!("'{s}': the percentage must be above 0 and at most 100"));
        }
        return Ok(MemoryTarget::Percent(pct));
    }
    memory_size(s).map(MemoryTarget::Bytes)
}

/// `0.75`: a share of the server's memory, as a fraction (`--target-fraction`).
pub fn fraction(s: &str) -> Result<MemoryTarget, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(MemoryTarget::Percent(f * 100.0)),
        _ => Err(format!("expected a fraction above 0 and at most 1 such as 0.75, got '{s}'")),
    }
}

pub use crate::config::parse::memory_size;

/// Fills a key range, or the server up to a memory target, every key exactly once.
#[derive(Debug, Parser)]
#[command(name = "respbench fill", version, disable_help_flag = true, max_term_width = 100)]
pub(crate) struct FillArgs {
    /// Fill up to this much used memory: a percentage of the server's maxmemory (75%) or a size
    /// (2gb). Without it, the key range --key-min..--key-max is filled.
    #[arg(long, value_parser = memory_target, help_heading = "Fill")]
    pub(crate) memory_target: Option<MemoryTarget>,
    /// The same as a fraction of the server's memory: 0.75 is --memory-target 75%.
    #[arg(long, value_parser = fraction, conflicts_with = "memory_target", help_heading = "Fill")]
    pub(crate) target_fraction: Option<MemoryTarget>,
    /// The server's memory, for a percentage target when the server hides maxmemory (64mb).
    #[arg(long, value_parser = memory_size, help_heading = "Fill")]
    pub(crate) memory: Option<u64>,
    #[command(flatten)]
    pub(crate) run: Args,
}

pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: FillArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let stop = super::install_sigint();
    execute(args, &RunContext::new(&stop)).0
}

/// A scenario's fill phase: its flags as typed values.
pub(crate) fn phase(args: FillArgs, cx: &RunContext<'_>) -> (ExitCode, Option<FillResult>) {
    execute(args, cx)
}

/// The fill a command line asks for, its report on stdout and its `--json`; the exit code and
/// what the fill did.
fn execute(args: FillArgs, cx: &RunContext<'_>) -> (ExitCode, Option<FillResult>) {
    if let Err(msg) = args.run.scenario.refuse_in("fill") {
        return (usage_error(&msg), None);
    }
    let run = &args.run;
    if run.requests.is_some() || run.duration.is_some() || run.rate.is_some() || run.ratio.is_some() || run.runs > 1 {
        let msg = "fill writes every key once with SET: drop -n, --duration, --rate, --ratio and --runs";
        return (usage_error(msg), None);
    }
    let target = args.memory_target.or(args.target_fraction);
    if args.memory.is_some() && !matches!(target, Some(MemoryTarget::Percent(_))) {
        let msg = "--memory is what a percentage --memory-target is of: give --memory-target N% with it";
        return (usage_error(msg), None);
    }
    let memory = args.memory;
    let json = args.run.json.clone();
    let scenario_flags = args.run.scenario.clone();
    let (mut config, _) = match args.run.into_config() {
        Ok(c) => c,
        Err(msg) => return (usage_error(&msg), None),
    };
    config.stop = StopAfter::AllKeys;
    config.commands = vec![CommandSpec::set(1, KeyPattern::Parallel, config.expiry.is_some())];
    let own = match scenario_flags.serve_metrics(cx) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("respbench: {e}");
            return (ExitCode::from(EXIT_FAILURE), None);
        }
    };
    let cx = cx.with_metrics(own.clone().or_else(|| cx.metrics.clone()));
    let result = match target {
        None => fill_range(&mut config, &cx),
        Some(target) => fill_to_target(&mut config, target, memory, &cx),
    };
    scenario_flags.finish_metrics(own);
    let report = match result {
        Ok(r) => r,
        Err(msg) => {
            eprintln!("respbench: {msg}");
            return (ExitCode::from(EXIT_FAILURE), None);
        }
    };
    print!("{}", render(&report));
    if let Some(path) = json {
        let mut text = serde_json::to_string_pretty(&report).expect("plain data serialises");
        text.push('\n');
        if let Err(e) = report::write_atomic(&path, text.as_bytes()) {
            eprintln!("respbench: cannot write {}: {e}", path.display());
            return (ExitCode::from(EXIT_FAILURE), Some(report));
        }
    }
    (if report.interrupted { super::exit::interrupted() } else { ExitCode::SUCCESS }, Some(report))
}

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
) -> Result<bool, String> {
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
        return Err(format!("the fill got errors ({}): the key range is not completely written", kinds.join(", ")));
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

fn fill_range(config: &mut Config, cx: &RunContext<'_>) -> Result<FillResult, String> {
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

fn fill_to_target(
    config: &mut Config,
    target: MemoryTarget,
    memory: Option<u64>,
    cx: &RunContext<'_>,
) -> Result<FillResult, String> {
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
        ));
    }
    // What eviction counts: replica output buffers swell and drain while a fill replicates.
    let used_before = first.counted_memory;
    if used_before >= target_bytes {
        return Err(format!(
            "used_memory is already {used_before} bytes, at or above the target {target_bytes}: nothing to fill"
        ));
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
            ));
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

/// The server's memory as a fill sees it: one server's INFO, or in cluster mode every primary's,
/// summed (used memory, maxmemory, evictions), so a target is spread over the shards.
struct Probe {
    sessions: Vec<Session>,
}

impl Probe {
    fn open(config: &Config) -> Result<Probe, String> {
        let mut seed = Session::open(&config.server).map_err(|e| e.to_string())?;
        if config.cluster.is_none() {
            return Ok(Probe { sessions: vec![seed] });
        }
        let shards = crate::net::cluster::shards(&mut seed, &config.server).map_err(|e| e.to_string())?;
        let sessions = shards
            .iter()
            .map(|shard| Session::open(&shard.primary.options(&config.server)).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Probe { sessions })
    }

    /// INFO of every node, summed; `None` if any refuses it.
    fn info(&mut self) -> Option<Info> {
        let mut all: Option<Info> = None;
        for session in &mut self.sessions {
            let info = Info::read(session)?;
            all = Some(match all {
                None => info,
                Some(mut sum) => {
                    sum.used_memory += info.used_memory;
                    sum.counted_memory += info.counted_memory;
                    sum.maxmemory += info.maxmemory;
                    sum.evicted += info.evicted;
                    sum.keys += info.keys;
                    sum
                }
            });
        }
        all
    }

    /// Every node's maxmemory, summed (0: no limit); `None` if any hides it.
    fn maxmemory(&mut self) -> Option<u64> {
        let each: Vec<u64> = self.sessions.iter_mut().map(config_maxmemory).collect::<Option<_>>()?;
        // One node without a limit makes the whole unlimited.
        Some(if each.contains(&0) { 0 } else { each.iter().sum() })
    }
}

/// `CONFIG GET maxmemory`, when CONFIG is allowed.
fn config_maxmemory(session: &mut Session) -> Option<u64> {
    let reply = session.call(&[b"CONFIG", b"GET", b"maxmemory"]).ok()?;
    let text = String::from_utf8_lossy(&reply.0).into_owned();
    text.lines().nth(4)?.trim().parse().ok()
}

fn render(r: &FillResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Filled {} keys {p}{}..{p}{} with {}-byte values in {:.1} s{}",
        r.keys,
        r.key_min,
        r.key_max,
        r.value_bytes,
        r.elapsed_secs,
        if r.interrupted { " (INTERRUPTED: the range is only partly written)" } else { "" },
        p = r.key_prefix
    );
    if let (Some(target), Some(after), Some(per_key)) = (r.target_bytes, r.used_memory_after, r.bytes_per_key) {
        let of_memory =
            r.memory_bytes.map(|m| format!(", {:.1}% of {m}", after as f64 * 100.0 / m as f64)).unwrap_or_default();
        let _ = writeln!(
            out,
            "used_memory {after} bytes (target {target}{of_memory}); {per_key:.0} bytes per key as measured on the server"
        );
    }
    if r.evicted_keys > 0 {
        let _ = writeln!(out, "WARNING: the server evicted {} keys during the fill", r.evicted_keys);
    }
    let _ = writeln!(
        out,
        "Measure over it with: --key-prefix {} --key-min {} --key-max {}",
        r.key_prefix, r.key_min, r.key_max
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets_and_sizes() {
        assert_eq!(memory_target("75%"), Ok(MemoryTarget::Percent(75.0)));
        assert_eq!(fraction("0.75"), Ok(MemoryTarget::Percent(75.0)));
        assert!(fraction("75").is_err() && fraction("0").is_err());
        assert_eq!(memory_target("2gb"), Ok(MemoryTarget::Bytes(2 << 30)));
        assert_eq!(memory_size("64MiB"), Ok(64 << 20));
        assert_eq!(memory_size("1048576"), Ok(1 << 20));
        assert!(memory_target("150%").is_err());
        assert!(memory_size("lots").unwrap_err().contains("'lots'"));
    }

    #[test]
    fn progress_bar_shows_share_rate_and_time_left() {
        let bar = progress_bar(50, 100, 10.0);
        assert!(bar.starts_with("[###############---------------]"), "{bar}");
        assert!(bar.contains(" 50%") && bar.contains("10 keys/s") && bar.contains("5 s left"), "{bar}");
    }
}
