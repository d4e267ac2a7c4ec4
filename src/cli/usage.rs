//! A command line in, or one line and an exit code out: clap's parse, which every subcommand and
//! front-end goes through, and the exit codes they share.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};

use super::options::Args;

/// Exit code for a bad command line.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a run that could not be done (server unreachable, login refused, ...).
pub const EXIT_FAILURE: u8 = 1;

/// respbench's own flags, parsed once: the typed values, and which flags the user gave (for
/// `--save-scenario`).
pub(crate) fn parse_flags<S: Into<OsString> + Clone>(args: &[S]) -> Result<Args, clap::Error> {
    let mut cmd = Args::command();
    let matches = cmd.try_get_matches_from_mut(args.iter().cloned())?;
    let mut parsed = Args::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    parsed.scenario.given = super::scenario::flags::given(&cmd, &matches);
    Ok(parsed)
}

/// Parses a command line with clap; `Err` carries the exit code after printing `--help` or
/// `--version` (0) or a one-line usage error (2). Every subcommand parses through here.
pub(crate) fn parse_args<T: Parser>(args: impl IntoIterator<Item = OsString>) -> Result<T, ExitCode> {
    T::try_parse_from(args).map_err(|e| said(&e))
}

/// A parse's error said: `--help` or `--version` printed (0), or a one-line usage error (2).
pub(crate) fn said(e: &clap::Error) -> ExitCode {
    if e.use_stderr() {
        usage_error(&clap_message(e))
    } else {
        let _ = e.print();
        ExitCode::SUCCESS
    }
}

/// clap's message as one line: its first paragraph (which may list the missing arguments on
/// lines of their own), without the "error: " prefix or the usage that follows.
pub(crate) fn clap_message(e: &clap::Error) -> String {
    let rendered = e.to_string();
    let paragraph: Vec<&str> = rendered.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let joined = paragraph.join(" ");
    let message = joined.strip_prefix("error: ").unwrap_or(&joined);
    if message.is_empty() { "invalid arguments".to_string() } else { message.to_string() }
}

pub fn usage_error(msg: &str) -> ExitCode {
    eprintln!("respbench: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}
