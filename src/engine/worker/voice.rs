//! The lines a run's faults print on stderr, in the words of whoever is speaking
//! (`config::Voice`): respbench's own, or memtier_benchmark 2.3's (its `benchmark_error_log`
//! lines in `shard_connection.cpp` and `client.cpp`, which harnesses built on memtier match).
//! Cold paths only: a fault, never a reply that went well. respbench names a protocol error or
//! a fixable error reply once per benchmark (all its `--runs`, in [`Said`]), not per reply.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

use crate::config::Voice;
use crate::resp::{self, ScanError};

/// The messages a benchmark has already said (its state, shared by its workers and its
/// `--runs`; a scenario's next phase starts afresh): hint bits, the protocol bit below, and
/// the request timeout.
#[derive(Debug, Default)]
pub struct Said {
    bits: AtomicU8,
    timeout: AtomicBool,
}

const SAID_PROTOCOL: u8 = 128;

impl Said {
    /// True the first time `bit` is asked for in this benchmark.
    fn first(&self, bit: u8) -> bool {
        self.bits.fetch_or(bit, Ordering::Relaxed) & bit == 0
    }
}

/// Why a link went, as memtier tells it apart.
#[derive(Clone, Copy)]
pub(crate) enum Lost<'e> {
    /// The server closed it (end of stream).
    Dropped,
    /// A read or write failed.
    Error(&'e io::Error),
    /// A request waited too long, or the replies made no sense.
    Other,
}

impl Lost<'_> {
    /// How it went, as the run's figures keep it.
    pub(crate) fn loss(self) -> crate::stats::Loss {
        use crate::stats::Loss;
        match self {
            Lost::Dropped => Loss::Closed,
            Lost::Error(e) => e.raw_os_error().map_or(Loss::Other, Loss::Os),
            Lost::Other => Loss::Other,
        }
    }

    /// memtier's context for the reconnect lines.
    fn context(self) -> &'static str {
        match self {
            Lost::Dropped => "Connection dropped",
            Lost::Error(_) => "Connection error",
            Lost::Other => "Connection timeout",
        }
    }
}

/// A link was lost. `reconnect`: the wait before the first attempt, `None` when the connection
/// gives up instead; `max`: `--max-reconnects` (`None`: until the run ends).
#[cold]
pub(crate) fn lost(
    voice: Voice,
    target: &str,
    why: &str,
    lost: Lost<'_>,
    reconnect: Option<Duration>,
    max: Option<u32>,
) {
    match voice {
        Voice::Quiet => {}
        Voice::Respbench => {
            if let Some(backoff) = reconnect {
                eprintln!("respbench: connection to {target} lost ({why}); reconnecting in {backoff:?}");
            }
        }
        Voice::Memtier => {
            match lost {
                Lost::Dropped => eprintln!("connection dropped."),
                Lost::Error(e) => eprintln!("Connection error: {}", strerror(e)),
                Lost::Other => {}
            }
            let context = lost.context();
            match (reconnect, unlimited(max)) {
                (Some(wait), true) => {
                    eprintln!(
                        "{context}, attempting reconnection 1 (unlimited) in {:.2} seconds...",
                        wait.as_secs_f64()
                    )
                }
                (Some(wait), false) => eprintln!(
                    "{context}, attempting reconnection 1/{} in {:.2} seconds...",
                    max.unwrap_or(0),
                    wait.as_secs_f64()
                ),
                (None, _) => eprintln!(
                    "Maximum reconnection attempts ({}) exceeded for {context}, triggering thread restart.",
                    max.unwrap_or(0)
                ),
            }
        }
    }
}

/// A lost link is back after `failed` attempts that did not connect.
#[cold]
pub(crate) fn reconnected(voice: Voice, target: &str, failed: u32) {
    match voice {
        Voice::Quiet => {}
        Voice::Respbench => eprintln!("respbench: reconnected to {target} after {failed} failed attempts"),
        // memtier counts the attempt that succeeded.
        Voice::Memtier => eprintln!("Reconnection successful after {} attempts.", failed + 1),
    }
}

/// Attempt number `failed` did not connect; the next comes after `wait`, or (`None`) the
/// connection gives up.
#[cold]
pub(crate) fn attempt_failed(voice: Voice, target: &str, failed: u32, wait: Option<Duration>) {
    match (voice, wait) {
        (Voice::Quiet, _) | (Voice::Respbench, Some(_)) => {}
        (Voice::Respbench, None) => {
            eprintln!("respbench: connection to {target}: giving up after {failed} reconnect attempts")
        }
        // memtier numbers the attempt it schedules next.
        (Voice::Memtier, Some(wait)) => {
            eprintln!("Reconnection attempt {} failed, retrying in {:.2} seconds...", failed + 1, wait.as_secs_f64())
        }
        (Voice::Memtier, None) => {
            eprintln!("Maximum reconnection attempts ({failed}) exceeded, triggering thread restart.")
        }
    }
}

/// An error reply: respbench names the fixable ones once; memtier prints every one.
#[inline]
pub(crate) fn error_reply(voice: Voice, said: &Said, target: &dyn std::fmt::Display, msg: &[u8]) {
    match voice {
        Voice::Quiet => {}
        Voice::Respbench => error_reply_once(said, target, msg),
        Voice::Memtier => {
            eprintln!("server {target} handle error response: {}", String::from_utf8_lossy(msg));
        }
    }
}

/// A reply that could not be parsed.
#[cold]
pub(crate) fn protocol(
    voice: Voice,
    said: &Said,
    target: &dyn std::fmt::Display,
    spoken: crate::codec::Protocol,
    e: &ScanError,
    start: &[u8],
) {
    match voice {
        Voice::Quiet => {}
        Voice::Respbench => protocol_once(said, target, spoken, e, start),
        Voice::Memtier => eprintln!("error: response parsing failed."),
    }
}

/// No limit on reconnect attempts (memtier's "unlimited": `--max-reconnect-attempts 0`).
fn unlimited(max: Option<u32>) -> bool {
    max.is_none_or(|m| m == u32::MAX)
}

/// The system's text for an I/O error, as C's strerror gives it (without Rust's
/// " (os error N)").
fn strerror(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Names a protocol error once: what limit or rule, and where (the offset counts from the
/// start of the reply, whose first bytes are `start`).
#[cold]
fn protocol_once(
    said: &Said,
    target: &dyn std::fmt::Display,
    spoken: crate::codec::Protocol,
    e: &ScanError,
    start: &[u8],
) {
    if !said.first(SAID_PROTOCOL) {
        return;
    }
    let guess = match crate::net::reply_guess(start, spoken) {
        Some(guess) => format!(" (got bytes {}: {guess})", crate::net::hex(start)),
        None => String::new(),
    };
    eprintln!("respbench: protocol error from {target}: {e}{guess}; connection closed (counted as `protocol`)");
}

/// Names an error reply a user can fix, the first time it comes.
#[inline]
fn error_reply_once(said: &Said, target: &dyn std::fmt::Display, msg: &[u8]) {
    if let Some(hint) = resp::hint(msg)
        && said.first(hint.bit)
    {
        let shown = String::from_utf8_lossy(&msg[..msg.len().min(120)]);
        eprintln!("respbench: {target} replied `{shown}`: {}", hint.fix);
    }
}

/// A counted run has no end to wait for: a request that timed out gives up its connection
/// (a server that stopped answering would otherwise be waited on reconnect after reconnect).
#[cold]
pub(super) fn gave_up(said: &Said, target: &dyn std::fmt::Display, timeout: Duration) {
    if !said.timeout.swap(true, Ordering::Relaxed) {
        eprintln!(
            "respbench: {target} did not reply within --request-timeout {timeout:?}: the connection gives up \
             (counted as `timeout`; the rest of its requests are not sent)"
        );
    }
}
