//! Command lines in, exit codes out: parses flags into a [`Config`](crate::config::Config),
//! runs it, prints and writes the reports, and maps every failure to one line and a code.

mod capacity;
mod dialect;
mod exit;
mod fill;
pub mod memtier;
mod memtier_crash;
mod memtier_out;
mod memtier_run;
mod memtier_uri;
mod memtier_usage;
mod merge;
mod mix;
mod native;
mod notes;
pub mod parse;
mod protocol_flags;
pub mod redis_benchmark;
mod results;
mod run_file;
mod scenario_flags;
mod secrets;
mod session_flags;
mod shard;
// unsafe: sigaction and the async-signal-safe crash report; each block says why it is sound.
#[allow(unsafe_code)]
mod signals;
mod verify;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

pub use fill::memory_size;
pub use native::{Args, Output};

use crate::codec::Protocol;
use crate::config::Config;
use crate::engine::{self, Outcome, Progress};
use crate::net::ConnectError;
use crate::report::{self, Format, Run};

/// Exit code for a bad command line.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a run that could not be done (server unreachable, login refused, ...).
pub const EXIT_FAILURE: u8 = 1;

/// The whole program: what `main` calls.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
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
        let (args, notices, say_notes, show_config, given) = match memtier::translate(&args[skip.min(args.len())..]) {
            Ok(memtier::Translated::Run { args, warnings, notices, say_notes, show_config, given }) => {
                // memtier's own (--uri beside --port, ...): its lines, always.
                for warning in warnings {
                    eprintln!("{warning}");
                }
                (args, notices, say_notes, show_config, given)
            }
            Ok(memtier::Translated::Print(text)) => {
                print!("{text}");
                return ExitCode::SUCCESS;
            }
            Err(msg) => return memtier_error(&msg),
        };
        let (mut config, mut output) = match plan_flags(&args) {
            Ok(parsed) => parsed,
            Err(msg) => return memtier_error(&msg),
        };
        // memtier's stderr carries memtier's lines: respbench's notes only with --notes.
        output.notes = notes::Notes::kept(say_notes);
        // The faults of the run in memtier's words, --notes or not: they are its stderr lines.
        config.faults.voice = crate::config::Voice::Memtier;
        for notice in notices {
            output.notes.note("memtier_benchmark", notice);
        }
        if let Some(text) = show_config {
            // As memtier: the banner on stderr, the values on stdout.
            eprintln!("============== Configuration values: ==============");
            print!("{text}");
            let _ = std::io::stdout().flush();
            eprintln!("===================================================");
        }
        output.memtier_front_end = true;
        if let Some(m) = output.memtier.as_mut() {
            m.given = given;
        }
        if let Err(code) = save_scenario(&args, &config, &output) {
            return code;
        }
        return execute(&config, &output, &signals::install(signals::Report::Memtier));
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
        Some("merge") => Some(merge::main),
        Some("run") => Some(run_file::main),
        _ => None,
    };
    if let Some(run) = subcommand {
        let name = format!("respbench {}", args[1].to_string_lossy());
        return run(std::iter::once(OsString::from(name)).chain(args[2..].iter().cloned()).collect());
    }
    let (config, output) = match parse_native(args.clone()) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    if let Err(code) = save_scenario(&args, &config, &output) {
        return code;
    }
    let stop = install_sigint();
    execute(&config, &output, &stop)
}

/// `--save-scenario FILE`: the command line (respbench's own flags) as a scenario file.
fn save_scenario(args: &[impl Into<OsString> + Clone], config: &Config, output: &Output) -> Result<(), ExitCode> {
    let Some(path) = &output.scenario.save_scenario else { return Ok(()) };
    let argv: Vec<OsString> = args.iter().cloned().map(Into::into).collect();
    let mut notes = Vec::new();
    let text = crate::scenario::save::from_command_line(&argv, config.seed, &mut notes).map_err(|e| usage_error(&e))?;
    if let Err(e) = report::write_atomic(path, text.as_bytes()) {
        eprintln!("respbench: cannot write {}: {e}", path.display());
        return Err(ExitCode::from(EXIT_FAILURE));
    }
    eprintln!("respbench: scenario saved to {}", path.display());
    for note in notes {
        eprintln!("respbench: note: {note}");
    }
    Ok(())
}

/// The plan of respbench's own flags (program name first), as a front-end's translation or a
/// scenario step gives them; a mistake is one line.
pub(crate) fn plan_flags<S: Into<OsString> + Clone>(args: &[S]) -> Result<(Config, Output), String> {
    Args::try_parse_from(args.iter().cloned()).map_err(|e| clap_message(&e)).and_then(Args::into_config)
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

/// Ctrl-C (or SIGTERM, SIGHUP) sets the returned flag; a second one while results are written
/// ends at once. Fatal signals print a bug report (see `signals`).
fn install_sigint() -> signals::Stop {
    signals::install(signals::Report::Respbench)
}

/// Runs the plan `runs` times with the live line on a terminal, and pools the runs.
fn measure(
    config: &Config,
    runs: usize,
    stop: &AtomicBool,
    mut extra: impl FnMut(&Progress),
) -> Result<Outcome, ConnectError> {
    // A capacity step or a redis-benchmark test feeds the process's endpoint, if it serves one.
    let metrics = report::metrics::ambient();
    let observe = |p: &Progress| {
        if let Some(m) = &metrics {
            m.interval(p);
        }
        extra(p);
    };
    let edge = |_, ended| {
        if let (Some(m), false) = (&metrics, ended) {
            m.run_started(config);
        }
    };
    measure_runs(config, runs, false, stop, observe, edge).map(|runs| Outcome::pool(runs).expect("at least one run"))
}

/// Runs the plan `runs` times (fewer after a stop signal) with the live line on a terminal, or
/// one line per interval with `progress`. `edge` hears each run begin (`false`) and end (`true`).
fn measure_runs(
    config: &Config,
    runs: usize,
    progress: bool,
    stop: &AtomicBool,
    mut extra: impl FnMut(&Progress),
    mut edge: impl FnMut(usize, bool),
) -> Result<Vec<Outcome>, ConnectError> {
    let live = std::io::stderr().is_terminal();
    let mut outcomes = Vec::new();
    for run in 0..runs {
        let mut observe = |p: &Progress| {
            // Live outputs first: once the line is out, a scrape sees this interval.
            extra(p);
            let prefix = if runs > 1 { format!("run {}/{runs} ", run + 1) } else { String::new() };
            if progress {
                eprintln!("{prefix}{}", report::text::live_line(p));
            } else if live {
                eprint!("\r\x1b[2K{prefix}{}", report::text::live_line(p));
            }
        };
        edge(run, false);
        let outcome = engine::run(config, run, stop, &mut observe);
        edge(run, true);
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
    crate::net::set_debug(output.debug);
    if output.verify_only {
        return run_verify(config);
    }
    let code = match &output.memtier {
        Some(options) => memtier_run::execute(config, output, options, stop),
        None => execute_run(config, output, stop),
    };
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
    let warnings = match checks_before_the_run(config, &output.notes) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let mut hdr_log = output.hdr_log.as_ref().map(|_| report::hdrlog::HdrLog::new());
    let statsd = match open_statsd(output) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (metrics, own_metrics) = match live_metrics(output) {
        Ok(m) => m,
        Err(code) => return code,
    };
    // The interval hook and the run hook both send: they take turns on the one sender.
    let statsd = std::cell::RefCell::new(statsd);
    let threads = config.threads.min(config.connections).max(1);
    let runs = measure_runs(
        config,
        output.runs,
        output.progress,
        stop,
        |p| {
            if let Some(m) = &metrics {
                m.interval(p);
            }
            if let Some(log) = hdr_log.as_mut() {
                log.add(p);
            }
            if let Some(s) = statsd.borrow_mut().as_mut() {
                s.interval(p);
            }
        },
        |run, ended| {
            if let (Some(m), false) = (&metrics, ended) {
                m.run_started(config);
            }
            match (statsd.borrow_mut().as_mut(), ended) {
                (Some(s), false) => s.run_started(run, threads, config.connections / threads),
                (Some(s), true) => s.run_ended(run),
                (None, _) => {}
            }
        },
    );
    let runs = match runs {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("respbench: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    let mut outcome = Outcome::pool(runs).expect("at least one run");
    outcome.warnings.splice(0..0, warnings);
    outcome.notes = output.notes.said.clone();
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
    // Every other file is built from the result document alone, as `respbench report` builds it.
    let doc = report::json::document(&run);
    if let Some(path) = &output.json {
        files.push((path, doc.to_json().into_bytes()));
    }
    for (path, render) in [
        (&output.html, report::html::render as fn(&report::document::Document) -> String),
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
    if let (Some(m), true) = (&metrics, own_metrics) {
        m.finish();
        m.linger(output.scenario.metrics_linger.unwrap_or_default());
    }
    if outcome.interrupted {
        return ExitCode::from(signals::interrupted_exit_code());
    }
    // Results are printed and written either way, but a script must not take a run in which
    // nothing succeeded (or, when asked, too much failed) for a measurement.
    if let Some(why) = exit::failure(config, &outcome, output) {
        eprintln!("respbench: {why}");
        return ExitCode::from(EXIT_FAILURE);
    }
    ExitCode::SUCCESS
}

/// The live metrics a run feeds: the endpoint it was handed (a scenario's), else its own
/// `--metrics-listen` (then `true`: the run ends it). `Err` carries the exit code.
fn live_metrics(output: &Output) -> Result<(Option<std::sync::Arc<report::metrics::Live>>, bool), ExitCode> {
    match (&output.metrics, output.scenario.metrics_listen) {
        (Some(live), _) => Ok((Some(std::sync::Arc::clone(live)), false)),
        (None, Some(addr)) => match report::metrics::Live::serve(addr) {
            Ok(live) => Ok((Some(live), true)),
            Err(e) => {
                eprintln!("respbench: {e}");
                Err(ExitCode::from(EXIT_FAILURE))
            }
        },
        (None, None) => Ok((None, false)),
    }
}

/// The checks before a run, their warnings kept for the report (and said where `notes` says),
/// and the server a bug report would describe; `Err` carries the exit code of a server that
/// cannot be run against.
fn checks_before_the_run(config: &Config, notes: &notes::Notes) -> Result<Vec<String>, ExitCode> {
    let warnings = engine::preflight(config).map_err(|e| {
        // memcached started with -S (SASL) does not answer the text protocols at all.
        let sasl = matches!(e, crate::net::ConnectError::Silent { .. })
            && matches!(config.server.session.protocol, Protocol::MemcacheText | Protocol::MemcacheMeta);
        let hint = if sasl {
            "; a memcached started with -S (SASL) answers only the binary protocol: --protocol memcache-binary \
             --authenticate USER:PASS"
        } else {
            ""
        };
        eprintln!("respbench: {e}{hint}");
        ExitCode::from(EXIT_FAILURE)
    })?;
    notes.warn("respbench", &warnings);
    signals::describe_server(&config.server);
    Ok(warnings)
}

/// The StatsD sender `--statsd-host` asks for, if any; `Err` carries the usage error's code.
fn open_statsd(output: &Output) -> Result<Option<report::statsd::Statsd>, ExitCode> {
    match output.statsd.as_ref().map(|o| report::statsd::Statsd::open(o, &output.percentiles)) {
        None => Ok(None),
        Some(Ok(s)) => Ok(Some(s)),
        Some(Err(e)) => Err(usage_error(&e)),
    }
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
