//! Command lines in, exit codes out: parses flags into a [`Config`](crate::config::Config),
//! runs it, prints and writes the reports, and maps every failure to one line and a code.

mod capacity;
mod dialect;
mod exit;
mod fill;
mod memtier;
mod memtier_run;
mod memtier_usage;
mod native;
pub mod parse;
mod redis_benchmark;
mod results;
mod secrets;

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
            Ok(memtier::Translated::Run(native)) => native,
            Ok(memtier::Translated::Print(text)) => {
                print!("{text}");
                return ExitCode::SUCCESS;
            }
            Err(msg) => return memtier_error(&msg),
        };
        let parsed = Args::try_parse_from(args).map_err(|e| clap_message(&e)).and_then(Args::into_config);
        let (config, output) = match parsed {
            Ok(parsed) => parsed,
            Err(msg) => return memtier_error(&msg),
        };
        return execute(&config, &output, &install_sigint());
    }
    // redis-benchmark's and valkey-benchmark's, the same two ways.
    let benchmark = |name: &std::ffi::OsStr| name == "redis-benchmark" || name == "valkey-benchmark";
    if let Some(name) = invoked_as.as_deref().filter(|n| benchmark(n)) {
        return redis_benchmark::main(&name.to_string_lossy(), &args[1..]);
    }
    if let Some(name) = args.get(1).filter(|a| benchmark(a)) {
        return redis_benchmark::main(&name.to_string_lossy(), &args[2..]);
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
    measure_runs(config, runs, false, stop, extra).map(|runs| Outcome::pool(runs).expect("at least one run"))
}

/// Runs the plan `runs` times (fewer after Ctrl-C) with the live line on a terminal, or one
/// line per interval with `progress`.
fn measure_runs(
    config: &Config,
    runs: usize,
    progress: bool,
    stop: &AtomicBool,
    mut extra: impl FnMut(&Progress),
) -> Result<Vec<Outcome>, ConnectError> {
    let live = std::io::stderr().is_terminal();
    let mut outcomes = Vec::new();
    for run in 0..runs {
        let mut observe = |p: &Progress| {
            let prefix = if runs > 1 { format!("run {}/{runs} ", run + 1) } else { String::new() };
            if progress {
                eprintln!("{prefix}{}", report::text::live_line(p));
            } else if live {
                eprint!("\r\x1b[2K{prefix}{}", report::text::live_line(p));
            }
            extra(p);
        };
        let outcome = engine::run(config, run, stop, &mut observe);
        if live && !progress {
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
    if let Some(options) = &output.memtier {
        return memtier_run::execute(config, output, options, stop);
    }
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
    let runs = measure_runs(config, output.runs, output.progress, stop, |p| {
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
    // nothing succeeded (or, when asked, too much failed) for a measurement.
    if let Some(why) = exit::failure(config, &outcome, output) {
        eprintln!("respbench: {why}");
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

/// A memtier command line that cannot run: one line with "error", as memtier's own, exit 2.
fn memtier_error(msg: &str) -> ExitCode {
    eprintln!("memtier_benchmark: error: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("respbench: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}
