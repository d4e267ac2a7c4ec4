//! Command lines in, exit codes out: parses flags into a [`Config`](crate::config::Config),
//! runs it, prints and writes the reports, and maps every failure to one line and a code.

mod capacity;
mod dialect;
mod fill;
mod memtier;
mod mix;
mod native;
pub mod parse;
mod redis_benchmark;
mod results;
mod verify;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

pub use native::{Args, Output};

use crate::config::Config;
use crate::engine::{self, Outcome, Progress};
use crate::net::ConnectError;
use crate::report::{self, Format, Run};

/// Exit code for a bad command line.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a run that could not be done (server unreachable, login refused, ...).
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for a run ended by Ctrl-C (its results are still printed and written).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The whole program: what `main` calls.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut args: Vec<OsString> = args.into_iter().collect();
    // memtier_benchmark's command line: `respbench memtier ...`, or run through a link so named.
    let invoked_as = args.first().and_then(|a| std::path::Path::new(a).file_name()).map(|n| n.to_owned());
    let memtier = if invoked_as.as_deref() == Some(std::ffi::OsStr::new("memtier_benchmark")) {
        Some(1)
    } else if args.get(1).is_some_and(|a| a == "memtier") {
        Some(2)
    } else {
        None
    };
    if let Some(skip) = memtier {
        args = match memtier::translate(&args[skip.min(args.len())..]) {
            Ok(native) => native,
            Err(msg) => return usage_error(&msg),
        };
        let (config, output) = match parse_native(args) {
            Ok(parsed) => parsed,
            Err(code) => return code,
        };
        return execute(&config, &output, &install_sigint());
    }
    // redis-benchmark's and valkey-benchmark's, the same two ways.
    let benchmark = |name: &std::ffi::OsStr| name == "redis-benchmark" || name == "valkey-benchmark";
    if invoked_as.as_deref().is_some_and(benchmark) {
        return redis_benchmark::main(&args[1..]);
    }
    if args.get(1).is_some_and(|a| benchmark(a)) {
        return redis_benchmark::main(&args[2..]);
    }
    let subcommand: Option<fn(Vec<OsString>) -> ExitCode> = match args.get(1).and_then(|a| a.to_str()) {
        Some("capacity") => Some(capacity::main),
        Some("fill") => Some(fill::main),
        Some("report") => Some(results::report_main),
        Some("compare") => Some(results::compare_main),
        _ => None,
    };
    if let Some(run) = subcommand {
        let name = format!("respbench {}", args[1].to_string_lossy());
        return run(std::iter::once(OsString::from(name)).chain(args[2..].iter().cloned()).collect());
    }
    let (config, output) = match parse_native(args) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    let stop = install_sigint();
    execute(&config, &output, &stop)
}

/// Parses respbench's own flags; `Err` carries the exit code after printing help or an error.
fn parse_native(args: Vec<OsString>) -> Result<(Config, Output), ExitCode> {
    parse_args::<Args>(args)?.into_config().map_err(|msg| usage_error(&msg))
}

/// Parses a command line with clap; `Err` carries the exit code after printing `--help` or
/// `--version` (0) or a one-line usage error (2). Every subcommand parses through here.
fn parse_args<T: Parser>(args: impl IntoIterator<Item = OsString>) -> Result<T, ExitCode> {
    T::try_parse_from(args).map_err(|e| {
        if e.use_stderr() {
            usage_error(&clap_message(&e))
        } else {
            let _ = e.print();
            ExitCode::SUCCESS
        }
    })
}

/// Ctrl-C sets the returned flag; a second Ctrl-C while results are written ends at once.
fn install_sigint() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let handler_stop = Arc::clone(&stop);
    let _ = ctrlc::set_handler(move || {
        if handler_stop.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
    });
    stop
}

/// Runs the plan `runs` times with the live line on a terminal, and pools the runs.
fn measure(
    config: &Config,
    runs: usize,
    stop: &AtomicBool,
    extra: impl FnMut(&Progress),
) -> Result<Outcome, ConnectError> {
    measure_runs(config, runs, stop, extra).map(|runs| Outcome::pool(runs).expect("at least one run"))
}

/// Runs the plan `runs` times (fewer after Ctrl-C) with the live line on a terminal.
fn measure_runs(
    config: &Config,
    runs: usize,
    stop: &AtomicBool,
    mut extra: impl FnMut(&Progress),
) -> Result<Vec<Outcome>, ConnectError> {
    let live = std::io::stderr().is_terminal();
    let mut outcomes = Vec::new();
    for run in 0..runs {
        let mut observe = |p: &Progress| {
            if live {
                let prefix = if runs > 1 { format!("run {}/{runs} ", run + 1) } else { String::new() };
                eprint!("\r\x1b[2K{prefix}{}", report::text::live_line(p));
            }
            extra(p);
        };
        let outcome = engine::run(config, run, stop, &mut observe);
        if live {
            eprint!("\r\x1b[2K");
        }
        outcomes.push(outcome?);
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    Ok(outcomes)
}

/// One benchmark: check, run, print, write files; returns the exit code.
fn execute(config: &Config, output: &Output, stop: &AtomicBool) -> ExitCode {
    if output.verify_only {
        return run_verify(config);
    }
    let code = execute_run(config, output, stop);
    if output.verify && code == ExitCode::SUCCESS { run_verify(config) } else { code }
}

/// `--data-verify`: reads back what the run wrote; mismatches fail the run (exit 1).
fn run_verify(config: &Config) -> ExitCode {
    match verify::verify(config) {
        Ok(v) => {
            eprintln!("Verified {} keys: {} mismatches", v.keys, v.mismatches);
            if v.mismatches == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_FAILURE) }
        }
        Err(e) => {
            eprintln!("respbench: {e}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// The run itself and its reports.
fn execute_run(config: &Config, output: &Output, stop: &AtomicBool) -> ExitCode {
    let warnings = match engine::preflight(config) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("respbench: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    for warning in &warnings {
        eprintln!("respbench: warning: {warning}");
    }
    let mut hdr_log = output.hdr_log.as_ref().map(|_| report::hdrlog::HdrLog::new());
    let runs = measure_runs(config, output.runs, stop, |p| {
        if let Some(log) = hdr_log.as_mut() {
            log.add(p);
        }
    });
    let runs = match runs {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("respbench: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    // The runs one by one are kept only for memtier's BEST and WORST sections.
    let each = if output.memtier_json.is_some() && runs.len() > 1 { runs.clone() } else { Vec::new() };
    let mut outcome = Outcome::pool(runs).expect("at least one run");
    outcome.warnings.splice(0..0, warnings);
    let run = Run { config, outcome: &outcome, label: output.label.as_deref(), percentiles: &output.percentiles };
    let text = if output.quiet { report::text::Summary.render(&run) } else { report::text::Table.render(&run) };
    let mut files: Vec<(&std::path::Path, Vec<u8>)> = Vec::new();
    match &output.out_file {
        Some(path) => files.push((path, text.into_bytes())),
        None => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not a failure of the run.
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
        }
    }
    if let Some(path) = &output.memtier_json {
        let view = report::memtier_json::MemtierView {
            config,
            percentiles: &output.percentiles,
            out_file: output.out_file.as_deref().and_then(|p| p.to_str()),
        };
        let runs = if each.is_empty() { std::slice::from_ref(&outcome) } else { &each[..] };
        files.push((path, report::memtier_json::render(&view, runs, &outcome).into_bytes()));
    }
    let json = report::json::Json.render(&run);
    if let Some(path) = &output.json {
        files.push((path, json.clone().into_bytes()));
    }
    // Every other file is built from the JSON alone, as `respbench report` builds it.
    let doc: serde_json::Value = serde_json::from_str(&json).expect("our own JSON parses");
    for (path, render) in [
        (&output.html, report::html::render as fn(&serde_json::Value) -> String),
        (&output.csv, report::tables::csv_summary),
        (&output.csv_timeline, report::tables::csv_timeline),
        (&output.markdown, report::tables::markdown),
    ] {
        if let Some(path) = path {
            files.push((path, render(&doc).into_bytes()));
        }
    }
    if let (Some(path), Some(log)) = (&output.hdr_log, hdr_log) {
        files.push((path, log.into_bytes()));
    }
    for (path, bytes) in files {
        if let Err(e) = report::write_atomic(path, &bytes) {
            eprintln!("respbench: cannot write {}: {e}", path.display());
            return ExitCode::from(EXIT_FAILURE);
        }
    }
    if outcome.interrupted {
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    // Results are printed and written either way, but a script must not take a run in which
    // nothing succeeded for a measurement.
    if outcome.total().count == 0 && outcome.errors.total() > 0 {
        eprintln!("respbench: no request got a reply: every connection failed ({} errors)", outcome.errors.total());
        return ExitCode::from(EXIT_FAILURE);
    }
    ExitCode::SUCCESS
}

/// clap's message as one line: its first paragraph (which may list the missing arguments on
/// lines of their own), without the "error: " prefix or the usage that follows.
fn clap_message(e: &clap::Error) -> String {
    let rendered = e.to_string();
    let paragraph: Vec<&str> = rendered.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let joined = paragraph.join(" ");
    let message = joined.strip_prefix("error: ").unwrap_or(&joined);
    if message.is_empty() { "invalid arguments".to_string() } else { message.to_string() }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("respbench: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}
