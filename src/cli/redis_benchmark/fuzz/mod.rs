//! valkey-benchmark's `--fuzz`: random commands, some malformed (`--fuzz-mode
//! malformed-commands`), some CONFIG SET (`config-commands`), sent one at a time by `-c` clients
//! to the one server the command line names (never a cluster's other nodes), to see whether the
//! server survives them. Every command ends in exactly one outcome, counted by kind: a reply
//! (status, bulk, nil, integer, array, RESP3 types, an error by its first word) or the
//! connection's loss (closed, closed after a protocol error, reset, timed out). A client whose
//! server stops answering within the timeout ends, as valkey's does; a lost connection is opened
//! again up to 5 times with a backoff. The run is bounded by `-n` commands in all and by
//! `--duration`. At the end a new connection's PING says whether the server survived, and the
//! CONFIG values the run changed are set back.
//!
//! Not the engine: the engine measures well-formed traffic; this is a prober that writes bytes a
//! benchmark never would and reads each reply before the next, on blocking control sessions.
//!
//! Left out on purpose, whatever the mode (they could harm the machine, its files or other
//! clients): SAVE, BGSAVE, BGREWRITEAOF, SHUTDOWN, DEBUG, FLUSHALL, FLUSHDB, MONITOR, SYNC,
//! PSYNC, REPLICAOF, MIGRATE, MODULE, CLIENT KILL/PAUSE, CLUSTER, ACL, FAILOVER, blocking
//! commands, and CONFIG SET of anything but the settings in `tables::CONFIGS` (never `dir`,
//! `dbfilename`, `logfile`, `save`, `appendonly`, ports, TLS, passwords, `maxclients`).

use std::collections::BTreeMap;
use std::io;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::config::ServerOptions;
use crate::net::{CallError, ConnectError, Session};
use crate::resp;
use crate::workload::rng::Rng;

mod tables;
use tables::{COMMANDS, CONFIGS, FRAMINGS};

/// valkey's limit on `-c` under `--fuzz`.
const MAX_CLIENTS: usize = 5000;
/// How long a command may wait for its reply before its client gives up (valkey: 15 s).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts to connect again after a loss, 100 ms × 2^n apart (as valkey).
const RECONNECT_ATTEMPTS: u32 = 5;
/// One command in this many is malformed, or a CONFIG SET, when its mode is on (valkey: 1/20).
const ONE_IN: u64 = 20;

/// How much the fuzzer says (`--fuzz-loglevel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    None,
    Error,
    Info,
    Debug,
}

impl LogLevel {
    /// valkey's names; an unknown one is info, with valkey's line saying so.
    pub fn parse(v: &str) -> LogLevel {
        match v {
            "none" => LogLevel::None,
            "error" => LogLevel::Error,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            other => {
                log(LogLevel::Info, LogLevel::Info, &format!("Invalid log level '{other}', using default 'info'"));
                LogLevel::Info
            }
        }
    }
}

/// `--fuzz-mode`: which kinds beyond valid commands are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Modes {
    pub malformed: bool,
    pub config: bool,
}

impl Modes {
    /// Adds a comma-separated list; the word valkey does not know is its refusal.
    pub fn add(&mut self, list: &str) -> Result<(), String> {
        for mode in list.split(',') {
            match mode {
                "malformed-commands" => self.malformed = true,
                "config-commands" => self.config = true,
                other => return Err(format!("Invalid fuzz mode: {other}")),
            }
        }
        Ok(())
    }
}

/// A `--fuzz` run, planned.
#[derive(Debug, Clone)]
pub struct Plan {
    pub server: ServerOptions,
    pub clients: usize,
    pub commands: u64,
    pub duration: Option<Duration>,
    pub modes: Modes,
    pub log: LogLevel,
    pub seed: u64,
    /// Keys `fuzz:N` for N below this (`-r`, else 100).
    pub keyspace: u64,
    /// `--cluster`: every key carries one hash tag, so a command's keys share a slot.
    pub cluster: bool,
}

/// What one client saw; merged after the clients end.
#[derive(Debug, Default)]
struct Tally {
    sent: u64,
    malformed_sent: u64,
    config_sent: u64,
    replies: BTreeMap<&'static str, u64>,
    /// Error replies by their first word (ERR, WRONGTYPE, ...).
    errors: BTreeMap<String, u64>,
    /// valkey's "Error replies": a well-formed command answered with a syntax or arity error.
    command_errors: u64,
    lost: BTreeMap<&'static str, u64>,
    /// Connections the server closed after answering a protocol error (that answer is counted
    /// among the error replies, so it is not a loss too).
    protocol_closes: u64,
    malformed_replies: u64,
    /// The client ended early: a timeout, or no connection after its attempts.
    failed: bool,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.sent += other.sent;
        self.malformed_sent += other.malformed_sent;
        self.config_sent += other.config_sent;
        self.command_errors += other.command_errors;
        self.malformed_replies += other.malformed_replies;
        self.protocol_closes += other.protocol_closes;
        for (k, n) in other.replies {
            *self.replies.entry(k).or_default() += n;
        }
        for (k, n) in other.errors {
            *self.errors.entry(k).or_default() += n;
        }
        for (k, n) in other.lost {
            *self.lost.entry(k).or_default() += n;
        }
    }

    fn answered(&self) -> u64 {
        self.replies.values().sum::<u64>() + self.errors.values().sum::<u64>()
    }
}

/// Runs the fuzzer and prints valkey's lines and respbench's counts; the exit code is 0 when
/// every client finished and the server answered a PING afterwards, else 1.
pub fn run(tool: &str, plan: &Plan, stop: &AtomicBool) -> ExitCode {
    let level = plan.log;
    if plan.clients > MAX_CLIENTS {
        log(
            level,
            LogLevel::Error,
            &format!("Too many parallel clients requested ({}). Maximum is {MAX_CLIENTS}.", plan.clients),
        );
        return ExitCode::FAILURE;
    }
    let originals = match Session::open(&plan.server) {
        Ok(mut session) => config_values(&mut session, plan.modes.config),
        Err(e) => {
            log(level, LogLevel::Error, &super::words::connect_error(tool, &e));
            log(level, LogLevel::Error, "Failed to connect to server.");
            return ExitCode::FAILURE;
        }
    };
    let per_client = (plan.commands / plan.clients as u64).max(1);
    let tls = if plan.server.tls.is_some() { " (TLS)" } else { "" };
    say(&format!(
        "Running fuzzer with {} clients, {per_client} commands per client ({} total commands){tls}",
        plan.clients, plan.commands
    ));
    let deadline = plan.duration.map(|d| Instant::now() + d);
    let mut total = Tally::default();
    let mut failed = 0;
    std::thread::scope(|scope| {
        let clients: Vec<_> = (0..plan.clients)
            .map(|i| scope.spawn(move || Client::new(plan, i).run(per_client, deadline, stop)))
            .collect();
        for client in clients {
            let tally = client.join().unwrap_or_else(|_| Tally { failed: true, ..Tally::default() });
            failed += usize::from(tally.failed);
            total.merge(tally);
        }
    });
    let restored = restore(&plan.server, &originals);
    let survived = Session::open(&plan.server).and_then(|mut s| s.call_checked(&[b"PING"]).map(|_| ()));
    report(level, plan, &total, failed, restored, &survived);
    if failed > 0 || survived.is_err() || total.malformed_replies > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

/// valkey's statistics (at info), then what respbench counts besides.
fn report(
    level: LogLevel,
    plan: &Plan,
    t: &Tally,
    failed: usize,
    restored: usize,
    survived: &Result<(), ConnectError>,
) {
    let info = |line: &str| log(level, LogLevel::Info, line);
    let rate = if t.sent > 0 { (t.answered() - t.command_errors) as f64 * 100.0 / t.sent as f64 } else { 0.0 };
    info(&format!("All client threads completed. {} succeeded, {failed} failed.", plan.clients - failed));
    info("=== FINAL STATISTICS ===");
    info(&format!("Total commands sent: {}", t.sent));
    info(&format!("Success replies: {}", t.answered() - t.command_errors));
    info(&format!("Error replies: {}", t.command_errors));
    info(&format!("Malformed replies: {}", t.malformed_replies));
    info(&format!("Total errors: {}", t.command_errors + t.malformed_replies));
    info(&format!("Success rate: {rate:.2}%"));
    let list = |m: &mut dyn Iterator<Item = (String, u64)>| {
        let parts: Vec<String> = m.map(|(k, n)| format!("{k} {n}")).collect();
        if parts.is_empty() { "none".to_string() } else { parts.join(", ") }
    };
    info(&format!("Commands: {} ({} malformed, {} CONFIG SET)", t.sent, t.malformed_sent, t.config_sent));
    info(&format!("Replies by kind: {}", list(&mut t.replies.iter().map(|(k, n)| (k.to_string(), *n)))));
    info(&format!("Error replies by kind: {}", list(&mut t.errors.iter().map(|(k, n)| (k.clone(), *n)))));
    info(&format!("Connections lost: {}", list(&mut t.lost.iter().map(|(k, n)| (k.to_string(), *n)))));
    info(&format!("Connections closed by the server after a protocol error reply: {}", t.protocol_closes));
    if plan.modes.config {
        info(&format!("CONFIG settings set back: {restored}"));
    }
    match survived {
        Ok(()) => info("Server survived: yes (it answered PING after the run)"),
        Err(e) => log(level, LogLevel::Error, &format!("Server survived: no ({e})")),
    }
}

/// The values of [`CONFIGS`] the server has, to set back at the end.
fn config_values(session: &mut Session, wanted: bool) -> Vec<(String, String)> {
    if !wanted {
        return Vec::new();
    }
    let mut values = Vec::new();
    for (name, _) in CONFIGS {
        let Ok(reply) = session.call(&[b"CONFIG", b"GET", name.as_bytes()]) else { continue };
        let words = bulk_strings(&reply.0);
        if let [_, value] = words.as_slice() {
            values.push((name.to_string(), value.clone()));
        }
    }
    values
}

/// The bulk strings of a flat array reply (CONFIG GET's name and value).
fn bulk_strings(reply: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(reply);
    let mut lines = text.split("\r\n");
    let mut out = Vec::new();
    while let Some(line) = lines.next() {
        if line.starts_with('$') && line != "$-1" {
            out.push(lines.next().unwrap_or_default().to_string());
        }
    }
    out
}

/// Sets back what the run may have changed; how many settings were set.
fn restore(server: &ServerOptions, originals: &[(String, String)]) -> usize {
    let Ok(mut session) = Session::open(server) else { return 0 };
    originals
        .iter()
        .filter(|(name, value)| session.call(&[b"CONFIG", b"SET", name.as_bytes(), value.as_bytes()]).is_ok())
        .count()
}

/// valkey's log line: `[HH:MM:SS] [LEVEL] text`, errors on stderr, the rest on stdout.
fn log(level: LogLevel, at: LogLevel, text: &str) {
    if at > level || at == LogLevel::None {
        return;
    }
    let name = match at {
        LogLevel::Error => "ERROR",
        LogLevel::Info => "INFO ",
        _ => "DEBUG",
    };
    let line = format!("[{}] [{name}] {text}", super::super::signals::local_time_as(c"%H:%M:%S"));
    if at == LogLevel::Error {
        eprintln!("{line}");
    } else {
        say(&line);
    }
}

/// A line on stdout; a reader that went away (`| head`) does not stop the run.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(io::stdout(), "{line}");
}

/// One fuzzing client: its connection, random stream and counts.
struct Client<'p> {
    plan: &'p Plan,
    id: usize,
    rng: Rng,
    session: Option<Session>,
    tally: Tally,
}

/// What one command was, for its counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Valid,
    Malformed,
    /// Malformed framing: the server answers with a protocol error and closes.
    Framing,
    Config,
}

impl<'p> Client<'p> {
    fn new(plan: &'p Plan, id: usize) -> Client<'p> {
        Client { plan, id, rng: Rng::derive(plan.seed, id as u64), session: None, tally: Tally::default() }
    }

    fn run(mut self, commands: u64, deadline: Option<Instant>, stop: &AtomicBool) -> Tally {
        let level = self.plan.log;
        for _ in 0..commands {
            if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            if self.session.is_none() && !self.connect() {
                self.tally.failed = true;
                break;
            }
            let (bytes, kind) = self.command();
            if level >= LogLevel::Debug {
                log(level, LogLevel::Debug, &format!("send Command: {}", printable(&bytes, kind)));
            }
            self.tally.sent += 1;
            match kind {
                Kind::Malformed | Kind::Framing => self.tally.malformed_sent += 1,
                Kind::Config => self.tally.config_sent += 1,
                Kind::Valid => {}
            }
            let session = self.session.as_mut().expect("connected above");
            let outcome = session.exchange(&bytes, b"fuzz");
            if !self.count(outcome, kind) {
                break;
            }
        }
        self.tally
    }

    /// Counts one outcome; false ends the client (a timeout or a reply that is not RESP).
    fn count(&mut self, outcome: Result<crate::net::Reply, CallError>, kind: Kind) -> bool {
        let level = self.plan.log;
        match outcome {
            Ok(reply) => {
                let what = reply_kind(&reply.0);
                log(level, LogLevel::Debug, &format!("-> ({what})"));
                *self.tally.replies.entry(what).or_default() += 1;
            }
            Err(CallError::Server(message)) => {
                log(level, LogLevel::Debug, &format!("-> {}", message.chars().take(100).collect::<String>()));
                let word = message.split_whitespace().next().unwrap_or("ERR").to_string();
                if kind == Kind::Valid
                    && (message.contains("syntax error") || message.contains("wrong number of arguments"))
                {
                    self.tally.command_errors += 1;
                }
                if message.contains("Protocol error") {
                    // The server closes after it: counted as the loss it is, and reconnected.
                    self.tally.protocol_closes += 1;
                    *self.tally.errors.entry(word).or_default() += 1;
                    self.session = None;
                    return true;
                }
                *self.tally.errors.entry(word).or_default() += 1;
            }
            Err(CallError::Connect(e)) => {
                self.session = None;
                let (what, go_on) = loss_kind(&e);
                *self.tally.lost.entry(what).or_default() += 1;
                if what == "reply not RESP" {
                    self.tally.malformed_replies += 1;
                    log(level, LogLevel::Error, &format!("[Thread {}] MALFORMED REPLY from server: {e}", self.id + 1));
                }
                if !go_on {
                    self.tally.failed = true;
                    log(level, LogLevel::Error, &format!("[Thread {}] Thread aborted: {e}", self.id + 1));
                }
                return go_on;
            }
        }
        true
    }

    /// Opens the connection, with valkey's backoff between attempts.
    fn connect(&mut self) -> bool {
        for attempt in 0..RECONNECT_ATTEMPTS {
            match Session::open_within(&self.plan.server, COMMAND_TIMEOUT) {
                Ok(session) => {
                    self.session = Some(session);
                    return true;
                }
                Err(e) => {
                    let delay = Duration::from_millis(100 << attempt);
                    let text = format!(
                        "[Thread {}] Connection attempt {} failed ({e}), retrying in {delay:?}",
                        self.id + 1,
                        attempt + 1
                    );
                    log(self.plan.log, LogLevel::Info, &text);
                    std::thread::sleep(delay);
                }
            }
        }
        log(
            self.plan.log,
            LogLevel::Error,
            &format!("[Thread {}] Failed to reconnect after {RECONNECT_ATTEMPTS} attempts", self.id + 1),
        );
        false
    }

    /// The next command's bytes, and what kind it is.
    fn command(&mut self) -> (Vec<u8>, Kind) {
        let modes = self.plan.modes;
        if modes.config && self.rng.below(ONE_IN) == 0 {
            return (self.config_set(), Kind::Config);
        }
        if modes.malformed && self.rng.below(ONE_IN) == 0 {
            if self.rng.below(4) == 0 {
                let frame = FRAMINGS[self.rng.below(FRAMINGS.len() as u64) as usize];
                return (frame.to_vec(), Kind::Framing);
            }
            return (self.malformed(), Kind::Malformed);
        }
        let template = COMMANDS[self.rng.below(COMMANDS.len() as u64) as usize];
        let args: Vec<Vec<u8>> = template.split(' ').map(|word| self.fill(word)).collect();
        (encode(&args), Kind::Valid)
    }

    /// A command the server must refuse: wrong arity, an unknown name, or a bad number.
    fn malformed(&mut self) -> Vec<u8> {
        let template = COMMANDS[self.rng.below(COMMANDS.len() as u64) as usize];
        let mut args: Vec<Vec<u8>> = template.split(' ').map(|word| self.fill(word)).collect();
        match self.rng.below(4) {
            0 if args.len() > 1 => args.truncate(1 + self.rng.below(args.len() as u64 - 1) as usize),
            1 => {
                for _ in 0..1 + self.rng.below(5) {
                    let extra = self.fill("{v}");
                    args.push(extra);
                }
            }
            2 => args[0] = format!("FUZZ{}", self.rng.below(1_000_000)).into_bytes(),
            _ => {
                let at = self.rng.below(args.len() as u64) as usize;
                args[at] = [&b"notanumber"[..], b"1.5e999", b"-99999999999999999999999", b""]
                    [self.rng.below(4) as usize]
                    .to_vec();
            }
        }
        encode(&args)
    }

    /// `CONFIG SET` of one of the settings that cannot harm the host, to a value in or out of
    /// its range.
    fn config_set(&mut self) -> Vec<u8> {
        let (name, values) = CONFIGS[self.rng.below(CONFIGS.len() as u64) as usize];
        let value = values[self.rng.below(values.len() as u64) as usize];
        encode(&[b"CONFIG".to_vec(), b"SET".to_vec(), name.as_bytes().to_vec(), value.as_bytes().to_vec()])
    }

    /// A template word with its placeholder filled.
    fn fill(&mut self, word: &str) -> Vec<u8> {
        match word {
            "{k}" => {
                let n = self.rng.below(self.plan.keyspace.max(1));
                if self.plan.cluster { format!("fuzz:{{fz}}:{n}") } else { format!("fuzz:{n}") }.into_bytes()
            }
            "{f}" => format!("f{}", self.rng.below(20)).into_bytes(),
            "{i}" => ["0", "-1", "1", "7", "42", "-100", "9223372036854775807", "-9223372036854775808"]
                [self.rng.below(8) as usize]
                .as_bytes()
                .to_vec(),
            "{n}" => self.rng.below(1000).to_string().into_bytes(),
            "{v}" => match self.rng.below(5) {
                0 => Vec::new(),
                1 => self.rng.below(100_000).to_string().into_bytes(),
                2 => (0..self.rng.below(4096)).map(|_| self.rng.below(256) as u8).collect(),
                3 => "\u{e9}t\u{e9}\r\n\0\u{1F600}".as_bytes().to_vec(),
                _ => format!("value-{}", self.rng.below(1000)).into_bytes(),
            },
            other => other.as_bytes().to_vec(),
        }
    }
}

fn encode(args: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    resp::encode_command(&mut out, &refs);
    out
}

/// A reply's kind by its type byte.
fn reply_kind(reply: &[u8]) -> &'static str {
    match reply.first() {
        Some(b'+') => "status",
        Some(b'$') | Some(b'*') if reply.get(1) == Some(&b'-') => "nil",
        Some(b'_') => "nil",
        Some(b'$') | Some(b'=') => "bulk",
        Some(b':') | Some(b'(') => "integer",
        Some(b'*') => "array",
        Some(b'%') => "map",
        Some(b'~') => "set",
        Some(b',') => "double",
        Some(b'#') => "boolean",
        _ => "other",
    }
}

/// A lost connection's kind, and whether its client goes on (after connecting again).
fn loss_kind(e: &ConnectError) -> (&'static str, bool) {
    match e {
        ConnectError::Io { source, .. } | ConnectError::TlsIo { source, .. } => match source.kind() {
            io::ErrorKind::UnexpectedEof => ("closed by the server", true),
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => ("reset", true),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ("timed out", false),
            _ => ("other I/O error", true),
        },
        ConnectError::Silent { .. } => ("timed out", false),
        ConnectError::NotResp { .. } | ConnectError::Protocol { .. } => ("reply not RESP", false),
        _ => ("other", true),
    }
}

/// A command as the debug log shows it: its arguments, each cut at 50 bytes, as valkey prints
/// them; a malformed frame as its escaped bytes.
fn printable(bytes: &[u8], kind: Kind) -> String {
    let text = String::from_utf8_lossy(bytes);
    if kind == Kind::Framing {
        return text.escape_debug().to_string();
    }
    // RESP's lines: *N, then $len and the argument, for each argument.
    let args: Vec<String> = text
        .split("\r\n")
        .skip(1)
        .skip(1)
        .step_by(2)
        .map(|arg| {
            let cut: String = arg.chars().take(50).collect();
            if cut.len() < arg.len() { format!("{cut}...") } else { cut }
        })
        .collect();
    args.join(" ").escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_levels_as_valkey_reads_them() {
        let mut modes = Modes::default();
        modes.add("malformed-commands,config-commands").unwrap();
        assert_eq!(modes, Modes { malformed: true, config: true });
        assert_eq!(Modes::default().add("everything").unwrap_err(), "Invalid fuzz mode: everything");
        assert_eq!(LogLevel::parse("debug"), LogLevel::Debug);
        assert_eq!(LogLevel::parse("none"), LogLevel::None);
    }

    #[test]
    fn replies_are_told_apart_by_kind() {
        assert_eq!(reply_kind(b"+OK\r\n"), "status");
        assert_eq!(reply_kind(b"$-1\r\n"), "nil");
        assert_eq!(reply_kind(b"*-1\r\n"), "nil");
        assert_eq!(reply_kind(b"$1\r\nx\r\n"), "bulk");
        assert_eq!(reply_kind(b":5\r\n"), "integer");
        assert_eq!(reply_kind(b"*0\r\n"), "array");
        assert_eq!(bulk_strings(b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n"), ["hz", "10"]);
    }
}
