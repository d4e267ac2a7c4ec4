//! What redis-benchmark and valkey-benchmark say on stderr when a run cannot go on, in their
//! words (scripts match them: `Error from server: ...`, `Could not connect to Redis at ...`),
//! and the check they make before the tests (fetching the server's CONFIG), which is where
//! they tell a server that wants a password. respbench's own messages stay out of their stderr.

use std::process::ExitCode;

use crate::cli::usage::{EXIT_FAILURE, EXIT_USAGE};
use crate::config::Config;
use crate::net::{CallError, ConnectError, Session};
use crate::stats::Loss;

/// `-e`: the tools now stop at the first error reply, and say so.
pub const SHOW_ERRORS_WARNING: &str =
    "WARNING: -e option has no effect. We now immediately exit on error to avoid false results.";

/// A connection lost mid-run ends it, as in the tools, which print hiredis's reason: the
/// server closed it, or the system's words for the error (a reset, where the server closed
/// with requests unread).
pub fn connection_lost(loss: Loss) -> String {
    match loss {
        Loss::Os(errno) => format!("Error: {}", strerror(&std::io::Error::from_raw_os_error(errno))),
        Loss::Closed | Loss::Other => "Error: Server closed the connection".to_string(),
    }
}

/// An error reply ends the run, as in the tools (their results would be false).
pub fn error_from_server(message: &str) -> String {
    format!("Error from server: {message}")
}

/// A connection or login that failed, as the tool words it.
pub fn connect_error(tool: &str, e: &ConnectError) -> String {
    // The tools name the server "Redis" (redis-benchmark) or "server" (valkey-benchmark).
    let what = if tool == "valkey-benchmark" { "server" } else { "Redis" };
    match e {
        ConnectError::Unreachable { target, source } => {
            format!("Could not connect to {what} at {target}: {}", strerror(source))
        }
        ConnectError::Auth { target, message } => format!("Node {target} replied with error:\n{message}"),
        ConnectError::Tls { message, .. } => format!("Could not negotiate a TLS connection: {message}"),
        ConnectError::TlsIo { message, .. } => format!("Could not negotiate a TLS connection: {message}"),
        ConnectError::Refused { message, .. } => error_from_server(message),
        ConnectError::Io { source, .. } => format!("Error: {}", strerror(source)),
        other => format!("Error: {other}"),
    }
}

/// A test's connection that failed: as [`connect_error`], except that a TLS connection the
/// server closed or reset during its handshake is the tools' read error (`Error: Server closed
/// the connection`), as their non-blocking handshake meets it at the first read.
pub fn run_error(tool: &str, e: &ConnectError) -> String {
    match e {
        ConnectError::TlsIo { source, .. } if source.kind() == std::io::ErrorKind::UnexpectedEof => {
            connection_lost(Loss::Closed)
        }
        ConnectError::TlsIo { source, .. } if source.raw_os_error().is_some() => {
            format!("Error: {}", strerror(source))
        }
        other => connect_error(tool, other),
    }
}

/// An I/O error as `strerror` says it, without Rust's " (os error N)".
fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

/// The tools' check before the tests: connect, log in and ask `CONFIG GET save` and
/// `appendonly`. A connection or login that fails ends the run, as does NOAUTH (the server
/// wants a password); any other refusal is their warning, and the tests run.
pub fn check_server(tool: &str, config: &Config) -> Result<(), ExitCode> {
    let fail = |line: String| {
        eprintln!("{line}");
        ExitCode::from(EXIT_FAILURE)
    };
    let mut session = Session::open(&config.server).map_err(|e| fail(connect_error(tool, &e)))?;
    for key in [&b"save"[..], b"appendonly"] {
        match session.call(&[b"CONFIG", b"GET", key]) {
            Ok(_) => {}
            Err(CallError::Server(message)) if message.starts_with("NOAUTH") => {
                return Err(fail(format!("Node {} replied with error:\n{message}", config.server.target)));
            }
            Err(_) => {
                eprintln!("WARNING: Could not fetch server CONFIG");
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A command line that cannot run: one line with "error", exit 2.
pub(super) fn usage_error(tool: &str, msg: &str) -> ExitCode {
    eprintln!("{tool}: error: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}
/// valkey-benchmark's refusal of `-n` beside `--duration`.
pub const N_AND_DURATION: &str = "Options -n and --duration are mutually exclusive.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_errors_in_the_tools_words() {
        let refused = ConnectError::Unreachable {
            target: "127.0.0.1:7".into(),
            source: std::io::Error::from_raw_os_error(libc::ECONNREFUSED),
        };
        assert_eq!(
            connect_error("redis-benchmark", &refused),
            "Could not connect to Redis at 127.0.0.1:7: Connection refused"
        );
        assert_eq!(
            connect_error("valkey-benchmark", &refused),
            "Could not connect to server at 127.0.0.1:7: Connection refused"
        );
        let auth = ConnectError::Auth { target: "h:1".into(), message: "WRONGPASS invalid".into() };
        assert_eq!(connect_error("redis-benchmark", &auth), "Node h:1 replied with error:\nWRONGPASS invalid");
        assert_eq!(connection_lost(Loss::Os(libc::ECONNRESET)), "Error: Connection reset by peer");
        assert_eq!(connection_lost(Loss::Closed), "Error: Server closed the connection");
        assert_eq!(
            error_from_server("ERR max number of clients reached"),
            "Error from server: ERR max number of clients reached"
        );
    }
}
