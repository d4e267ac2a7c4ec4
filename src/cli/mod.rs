//! Command lines in, exit codes out: parses flags into a [`Config`](crate::config::Config),
//! runs it, prints and writes the reports, and maps every failure to one line and a code.

mod ab;
mod around;
mod capacity;
mod dialect;
mod exit;
mod fill;
pub mod memtier;
mod merge;
mod native;
mod notes;
pub mod parse;
mod recover;
pub mod redis_benchmark;
mod results;
mod run;
pub mod scenario;
mod secrets;
mod shard;
mod spec;
// unsafe: sigaction and the async-signal-safe crash report; each block says why it is sound.
#[allow(unsafe_code)]
mod signals;
mod verify;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};

pub use fill::memory_size;
pub use native::{Args, Output};

use crate::config::Config;
use crate::report;
use crate::report::document::Document;
use run::RunContext;
use scenario::save::Draft;

/// Exit code for a bad command line.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a run that could not be done (server unreachable, login refused, ...).
pub const EXIT_FAILURE: u8 = 1;

/// The whole program: what `main` calls.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    crate::stats::map_large_blocks();
    signals::ignore_file_size_signal();
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
        return memtier::main(&args[skip.min(args.len())..]);
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
        Some("ab") => Some(ab::main),
        Some("capacity") => Some(capacity::main),
        Some("fill") => Some(fill::main),
        Some("report") => Some(results::report_main),
        Some("compare") => Some(results::compare_main),
        Some("merge") => Some(merge::main),
        Some("recover") => Some(recover::main),
        Some("run") => Some(scenario::run_file::main),
        Some("spec") => Some(spec::main),
        _ => None,
    };
    if let Some(run) = subcommand {
        let name = format!("respbench {}", args[1].to_string_lossy());
        return run(std::iter::once(OsString::from(name)).chain(args[2..].iter().cloned()).collect());
    }
    let native = match parse_native(args.clone()) {
        Ok(native) => native,
        Err(code) => return code,
    };
    let draft = Draft::of(&native);
    let (config, output) = match native.into_config() {
        Ok(parsed) => parsed,
        Err(msg) => return usage_error(&msg),
    };
    if let Err(code) = save_scenario(&args, draft, config.seed) {
        return code;
    }
    let stop = install_sigint();
    execute(&config, &output, &RunContext::new(&stop)).code
}

/// `--save-scenario FILE`: the scenario drafted from the typed flags, written with the seed the
/// run uses; `shown` is the command line as the user typed it.
fn save_scenario(shown: &[impl Into<OsString> + Clone], draft: Option<Draft>, seed: u64) -> Result<(), ExitCode> {
    let Some(mut draft) = draft else { return Ok(()) };
    let shown: Vec<OsString> = shown.iter().cloned().map(Into::into).collect();
    let text = draft.text(&shown, seed).map_err(|e| usage_error(&e))?;
    if let Err(e) = report::output::write(&draft.path, text.as_bytes()) {
        eprintln!("respbench: {e}");
        return Err(ExitCode::from(EXIT_FAILURE));
    }
    eprintln!("respbench: scenario saved to {}", draft.path.display());
    for note in &draft.notes {
        eprintln!("respbench: note: {note}");
    }
    Ok(())
}

/// respbench's own flags, parsed once: the typed values, and which flags the user gave (for
/// `--save-scenario`).
pub(crate) fn parse_flags<S: Into<OsString> + Clone>(args: &[S]) -> Result<Args, clap::Error> {
    let mut cmd = Args::command();
    let matches = cmd.try_get_matches_from_mut(args.iter().cloned())?;
    let mut parsed = Args::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    parsed.scenario.given = scenario::flags::given(&cmd, &matches);
    Ok(parsed)
}

/// Parses respbench's own flags; `Err` carries the exit code after printing help or an error.
fn parse_native(args: Vec<OsString>) -> Result<Args, ExitCode> {
    parse_flags(&args).map_err(|e| {
        if e.use_stderr() {
            usage_error(&clap_message(&e))
        } else {
            let _ = e.print();
            ExitCode::SUCCESS
        }
    })
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

/// What a benchmark gives its caller: the exit code, and the result document when it ran.
pub(crate) struct Ran {
    pub code: ExitCode,
    pub document: Option<Document>,
}

impl Ran {
    fn failed(code: ExitCode) -> Ran {
        Ran { code, document: None }
    }
}

/// One benchmark: check, run, print, write files; the exit code and the result document.
fn execute(config: &Config, output: &Output, cx: &RunContext<'_>) -> Ran {
    if output.verify_only {
        return Ran::failed(run_verify(config));
    }
    // Two outputs on one path, or on standard output, are refused before anything connects.
    if let Err(msg) = report::output::check(&output.files()) {
        return Ran::failed(usage_error(&msg));
    }
    let ran = match &output.memtier {
        Some(options) => memtier::run::execute(config, output, options, cx),
        None => native::run::execute(config, output, cx),
    };
    if output.verify && ran.code == ExitCode::SUCCESS { Ran { code: run_verify(config), ..ran } } else { ran }
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

/// clap's message as one line: its first paragraph (which may list the missing arguments on
/// lines of their own), without the "error: " prefix or the usage that follows.
fn clap_message(e: &clap::Error) -> String {
    let rendered = e.to_string();
    let paragraph: Vec<&str> = rendered.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let joined = paragraph.join(" ");
    let message = joined.strip_prefix("error: ").unwrap_or(&joined);
    if message.is_empty() { "invalid arguments".to_string() } else { message.to_string() }
}

/// Writes an output file (see [`report::output`]); the error names the file and the reason.
fn write(path: &std::path::Path, text: &str) -> Result<(), String> {
    report::output::write(path, text.as_bytes()).map_err(|e| e.to_string())
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("respbench: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}
