//! Command lines in, exit codes out: parses flags into a [`Config`](crate::config::Config),
//! runs it, prints and writes the reports, and maps every failure to one line and a code.

mod ab;
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
mod native_run;
mod notes;
pub mod parse;
mod protocol_flags;
pub mod redis_benchmark;
mod results;
mod run;
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
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

pub use fill::memory_size;
pub use native::{Args, Output};

use crate::config::Config;
use crate::report;
use crate::report::document::Document;
use run::RunContext;

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
        let stop = signals::install(signals::Report::Memtier);
        return execute(&config, &output, &RunContext::new(&stop)).code;
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
    execute(&config, &output, &RunContext::new(&stop)).code
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
    let ran = match &output.memtier {
        Some(options) => memtier_run::execute(config, output, options, cx),
        None => native_run::execute(config, output, cx),
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

/// A memtier command line that cannot run: one line with "error", as memtier's own, exit 2.
fn memtier_error(msg: &str) -> ExitCode {
    eprintln!("memtier_benchmark: error: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("respbench: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}
