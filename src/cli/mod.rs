//! Command lines in, exit codes out: parses flags into a [`Config`](crate::config::Config),
//! runs it, prints and writes the reports, and maps every failure to one line and a code.

mod native;
pub mod parse;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

pub use native::{Args, Output};

use crate::report::{self, Format, Run};

/// Exit code for a bad command line.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a run that could not be done (server unreachable, login refused, ...).
pub const EXIT_FAILURE: u8 = 1;

/// The whole program: what `main` calls.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args = match Args::try_parse_from(args) {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            // --help and --version
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return usage_error(&clap_message(&e)),
    };
    let (config, output) = match args.into_config() {
        Ok(c) => c,
        Err(msg) => return usage_error(&msg),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let handler_stop = Arc::clone(&stop);
    // A second Ctrl-C while the results are being written ends the process at once.
    let _ = ctrlc::set_handler(move || {
        if handler_stop.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });

    let live = std::io::stderr().is_terminal();
    let mut observe = |p: &crate::engine::Progress| {
        if live {
            eprint!("\r\x1b[2K{}", report::text::live_line(p));
        }
    };
    let outcome = crate::engine::run(&config, &stop, &mut observe);
    if live {
        eprint!("\r\x1b[2K");
    }
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("respbench: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    let run = Run { config: &config, outcome: &outcome };
    let text = if output.quiet { report::text::Summary.render(&run) } else { report::text::Table.render(&run) };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not a failure of the run.
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    if let Some(path) = &output.json
        && let Err(e) = report::write_atomic(path, report::json::Json.render(&run).as_bytes())
    {
        eprintln!("respbench: cannot write {}: {e}", path.display());
        return ExitCode::from(EXIT_FAILURE);
    }
    if outcome.interrupted {
        return ExitCode::from(130);
    }
    ExitCode::SUCCESS
}

/// clap's first line without its "error: " prefix.
fn clap_message(e: &clap::Error) -> String {
    let rendered = e.to_string();
    let first = rendered.lines().next().unwrap_or("invalid arguments");
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("respbench: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}
