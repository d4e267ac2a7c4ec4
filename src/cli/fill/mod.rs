//! `respbench fill`: prefill the server before measuring, either a key range or up to a memory
//! target (`--memory-target 75%`). The bytes a key really costs are measured on the server
//! (used_memory before and after a first batch), then the rest is filled in two more passes
//! (and a top-up when a transient inflated the last measure),
//! every key written exactly once, stopping short of the target and never into eviction.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Parser;

use super::options::Args;
use super::run::RunContext;
use super::usage::{EXIT_FAILURE, parse_args, usage_error};
use crate::config::{CommandSpec, KeyPattern, StopAfter};
use crate::report;
use crate::report::document::FillResult;
use passes::{fill_range, fill_to_target};

mod error;
mod passes;
mod probe;
mod target;

pub use target::{MemoryTarget, fraction, memory_target};

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
    let stop = super::signals::install_sigint();
    execute(args, &RunContext::new(&stop)).0
}

/// The fill a command line asks for, its report on stdout and its `--json`; the exit code and
/// what the fill did. A scenario's fill phase comes here too, with its flags as typed values.
pub(crate) fn execute(args: FillArgs, cx: &RunContext<'_>) -> (ExitCode, Option<FillResult>) {
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
    report::output::print_report(&render(&report), json.as_deref().into_iter().chain(cx.stdout_taken()));
    if let Some(path) = json {
        let mut text = serde_json::to_string_pretty(&report).expect("plain data serialises");
        text.push('\n');
        if let Err(e) = report::output::write(&path, text.as_bytes()) {
            eprintln!("respbench: {e}");
            return (ExitCode::from(EXIT_FAILURE), Some(report));
        }
    }
    (if report.interrupted { super::exit::interrupted() } else { ExitCode::SUCCESS }, Some(report))
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
}
