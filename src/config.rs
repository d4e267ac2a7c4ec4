//! The validated plan of a run. Front-ends (native flags, and later the memtier and
//! redis-benchmark dialects) all produce a [`Config`]; the engine trusts it.

use std::path::PathBuf;
use std::time::Duration;

pub mod arguments;
mod command;
pub mod dataset;
mod extras;
pub mod parse;
pub mod role;
pub mod role_plan;
mod shard;
mod target;
pub use command::{
    ArgPart, CommandSpec, FieldRef, KeyPattern, Sequence, SequenceParts, Step, split_sequence, split_words,
};
pub use extras::{
    CLIENT_SHARE_WARNING, Extras, Import, ImportItem, IoChoice, MonitorPick, ScanFollow, SessionExtras, Shard,
    Timestamps,
};
pub use target::Target;

/// How to reach and log in to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    pub target: Target,
    pub user: Option<String>,
    pub password: Option<String>,
    pub db: Option<u32>,
    /// Speak RESP3 (`HELLO 3`) instead of RESP2.
    pub resp3: bool,
    /// Speak TLS on the TCP connection.
    pub tls: Option<TlsOptions>,
    /// How long connecting and each login reply may take; `None`: the default (5 s, 500 ms
    /// for a reconnect).
    pub connect_timeout: Option<Duration>,
    /// How the socket is opened and what the session asks for at login (MPTCP, tracking).
    pub session: SessionExtras,
}

/// TLS settings: verification on unless `skip_verify`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// CA certificates (PEM) to verify the server with; the system's when absent.
    pub cacert: Option<PathBuf>,
    /// Client certificate chain and its key (PEM), for servers that ask for one.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// The name to ask for and verify; the host when absent.
    pub sni: Option<String>,
    pub skip_verify: bool,
    /// Verify the certificate chain but not that it names the host (as memtier, redis-benchmark
    /// and valkey-benchmark do).
    pub skip_hostname: bool,
    /// TLS versions allowed (`0x0303` for 1.2, `0x0304` for 1.3); empty: both.
    pub versions: Vec<u16>,
    /// Cipher suites allowed, by their standard names or an OpenSSL cipher string's words;
    /// empty: rustls's defaults.
    pub ciphers: Vec<String>,
    /// Every connection makes a full handshake: no session resumed from an earlier one.
    pub no_resumption: bool,
    /// Send nothing of our own after the handshake (redis-/valkey-benchmark send no PING): a
    /// refused client certificate then shows at the first request instead of at connect.
    pub no_probe: bool,
}

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopAfter {
    /// This many requests in total, split evenly over the connections.
    Requests(u64),
    /// Every key of the range exactly once, the range split over the connections.
    AllKeys,
    /// Wall-clock time from the start of the run.
    Duration(Duration),
}

/// How requests arrive in an open-loop run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Requests per second for the whole run, divided evenly over the connections.
    pub per_sec: f64,
    /// Exponential gaps (a Poisson process) instead of constant ones.
    pub poisson: bool,
}

/// The key space: `prefix` followed by a decimal number in `min..=max`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    pub prefix: String,
    pub min: u64,
    pub max: u64,
}

impl KeyRange {
    pub fn len(&self) -> u64 {
        self.max - self.min + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

/// How large each value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueSize {
    Fixed(usize),
    /// Uniform in `min..=max`.
    Range {
        min: usize,
        max: usize,
    },
    /// Weighted list of sizes.
    List(Vec<(usize, u32)>),
}

impl ValueSize {
    pub fn max(&self) -> usize {
        match self {
            ValueSize::Fixed(n) => *n,
            ValueSize::Range { max, .. } => *max,
            ValueSize::List(list) => list.iter().map(|(size, _)| *size).max().unwrap_or(0),
        }
    }

    pub fn min(&self) -> usize {
        match self {
            ValueSize::Fixed(n) => *n,
            ValueSize::Range { min, .. } => *min,
            ValueSize::List(list) => list.iter().map(|(size, _)| *size).min().unwrap_or(0),
        }
    }
}

/// Where cluster mode sends reads (`--read-from-replicas`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    /// Primaries only.
    No,
    /// A replica of the slot's shard when it has one.
    Yes,
    /// The primary and its replicas in turn.
    All,
}

/// A staircase ramp (`--connections-start`, `--connections-step`, `--step-duration`): the run
/// starts with `start` connections and `step` more connect every `every`, up to all of them.
/// Counts are totals over the threads; connections join in turn over the threads, so each
/// thread's share grows alike (memtier's clients per thread, times the threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ramp {
    pub start: usize,
    pub step: usize,
    pub every: Duration,
}

/// What to do when a connection fails or a reply does not come.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Faults {
    /// First wait before reconnecting a dropped connection; doubles per failed attempt up to
    /// [`Faults::max_backoff`].
    pub reconnect_backoff: Duration,
    /// Reconnect attempts per outage before the connection gives up; `None`: keep trying until
    /// the run ends (the default for a timed run).
    pub max_reconnects: Option<u32>,
    /// Times a request in flight on a dropped connection is sent again before it counts as failed.
    pub retry: u32,
    /// A request without a reply after this long fails (as a timeout) and its connection is
    /// reconnected: later replies could no longer be matched to requests.
    pub timeout: Option<Duration>,
    /// The wait before the next reconnect attempt is the last one times this.
    pub backoff_factor: f64,
    /// The longest wait between reconnect attempts.
    pub max_backoff: Duration,
    /// Close and reopen each connection after this many replies (memtier's
    /// `--reconnect-interval`, redis-benchmark's `-k 0`).
    pub reconnect_every: Option<u64>,
    /// Connecting and every check before the run, all together (one deadline).
    pub connect_timeout: Duration,
    /// Largest bulk string or aggregate length a reply may declare (`--max-reply-size`).
    pub max_reply: i64,
    /// Whose words the lines about the run's faults on stderr are in (a connection lost and
    /// reconnected, an error reply, a protocol error, a timeout), if any.
    pub voice: Voice,
    /// Requests answered with an error reply that is not permanent are sent again too (up to
    /// `retry` times), as requests lost with a connection are.
    pub retry_errors: bool,
    /// The wait before a request answered with an error is sent again ...
    pub retry_backoff: Duration,
    /// ... times this for each further try (0: the same wait each time), at most [`MAX_BACKOFF`].
    pub retry_backoff_factor: f64,
    /// Requests a connection may hold waiting to be sent again; when full, it sends nothing
    /// new until one has gone. 0: `max(pipeline * 4, 64)`.
    pub max_retry_queue: usize,
    /// A timed run also fails when no request was answered within the connect budget
    /// (memtier's `--connection-stage-timeout`); a counted run without `--request-timeout`
    /// always does, as it would otherwise wait for ever (with one, its requests time out).
    pub stage_bound: bool,
    /// Every request given up (its error reply kept, or lost with its connection) is kept
    /// for `--failed-keys`: when, its command, its key, why and how often it was tried.
    pub failed_keys: bool,
}

/// The longest wait between reconnect attempts, or before a request is sent again, whatever
/// the backoff factor makes of it.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Who tells the faults of a run on stderr: respbench in its own words (the native CLI, and a
/// front-end given `--notes`), memtier_benchmark in its words (its front-end: harnesses read
/// its lines), or no one (redis-/valkey-benchmark, whose stderr carries only their own lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    Quiet,
    Respbench,
    Memtier,
}

impl Default for Faults {
    fn default() -> Faults {
        Faults {
            reconnect_backoff: Duration::from_millis(100),
            max_reconnects: None,
            retry: 0,
            timeout: None,
            backoff_factor: 2.0,
            max_backoff: Duration::from_millis(500),
            reconnect_every: None,
            connect_timeout: CONNECT_TIMEOUT,
            max_reply: crate::resp::MAX_BULK_LEN,
            voice: Voice::Respbench,
            retry_errors: false,
            retry_backoff: Duration::ZERO,
            retry_backoff_factor: 0.0,
            max_retry_queue: 0,
            stage_bound: false,
            failed_keys: false,
        }
    }
}

/// How long connecting, logging in and the checks before a run may take together, unless
/// `--connect-timeout` says otherwise.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The whole plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub server: ServerOptions,
    pub connections: usize,
    pub threads: usize,
    pub pipeline: usize,
    pub stop: StopAfter,
    pub commands: Vec<CommandSpec>,
    pub keys: KeyRange,
    pub values: ValueSize,
    pub random_data: bool,
    /// `EX` seconds drawn uniformly from this range for every SET.
    pub expiry: Option<(u64, u64)>,
    /// Every connection derives its own random stream from this.
    pub seed: u64,
    /// Every connection draws the same random stream (memtier without `--distinct-client-seed`).
    pub same_stream: bool,
    /// A pause drawn from `min..=max` between the connections a worker thread opens.
    pub conn_jitter: Option<(Duration, Duration)>,
    /// Length of one timeline interval (and of the live line's refresh).
    pub interval: Duration,
    /// Open loop at this arrival rate; `None` is closed loop.
    pub rate: Option<Rate>,
    /// Load that runs before the measured phase and is kept out of every figure.
    pub warmup: Duration,
    /// Every request is this sequence of `commands` sent back to back (a transaction, a
    /// script of steps), counted per command and as one unit; `None` picks one command by weight.
    pub sequence: Option<Vec<Step>>,
    pub faults: Faults,
    /// Cluster mode (`--cluster`), with where reads go; `None` for a standalone server.
    pub cluster: Option<ReadFrom>,
    /// A staircase ramp: connections join the run in steps; `None`: all from the start.
    pub ramp: Option<Ramp>,
    /// memtier's workload variations: value sizes by key, MONITOR replay, SCAN cursors.
    pub extras: Extras,
}

impl Config {
    /// The requests connection `index` must send, or `None` when the run is timed.
    /// In a run of several roles, `-n` is each role's own: a role's connections share it.
    pub fn quota(&self, index: usize) -> Option<u64> {
        if let Some(g) = self.extras.groups.iter().find(|g| g.connections.contains(&index)) {
            return g.plan.quota(index - g.connections.start);
        }
        let conns = self.connections as u64;
        let i = index as u64;
        match self.stop {
            StopAfter::Requests(total) => Some(total / conns + u64::from(i < total % conns)),
            StopAfter::AllKeys => Some(self.slice(index).map_or(0, |(lo, hi)| hi - lo + 1)),
            StopAfter::Duration(_) => None,
        }
    }

    /// Connection `index`'s contiguous slice of the key range, `(first, last)`; `None` when the
    /// range has fewer keys than there are connections and this one gets none. Even shares,
    /// or memtier's (`extras.memtier_slices`).
    pub fn slice(&self, index: usize) -> Option<(u64, u64)> {
        // A shard (`--shard`) splits its own part of the range.
        let (min, max) = self.walked_keys();
        let span = u128::from(max - min) + 1;
        let conns = self.connections as u128;
        let i = index as u128;
        if self.extras.memtier_slices && self.extras.shard.is_none() {
            // memtier's split: (max - min) / clients + 1 keys each, the last client to the end.
            let size = u128::from(max - min) / conns + 1;
            let lo = min as u128 + size * i;
            let hi = if i + 1 == conns { max as u128 } else { lo + size - 1 };
            return (lo <= max as u128).then(|| (lo as u64, hi.min(max as u128) as u64));
        }
        let lo = min as u128 + span * i / conns;
        let next = min as u128 + span * (i + 1) / conns;
        (next > lo).then(|| (lo as u64, (next - 1) as u64))
    }

    /// How many worker threads a run has: `--threads`, no more than its connections.
    pub fn worker_threads(&self) -> usize {
        self.threads.min(self.connections).max(1)
    }

    /// Report rows: one per command, and one for whole sequences.
    pub fn rows(&self) -> usize {
        self.commands.len() + usize::from(self.sequence.is_some())
    }

    /// The commands' rows' names, in order: two commands of one name get distinct rows,
    /// `SET`, `SET#2`.
    pub fn command_rows(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::with_capacity(self.commands.len());
        for spec in &self.commands {
            let seen = names.iter().filter(|n| n.split('#').next() == Some(spec.name.as_str())).count();
            names.push(if seen == 0 { spec.name.clone() } else { format!("{}#{}", spec.name, seen + 1) });
        }
        names
    }

    /// Whether the run asks for kernel receive timestamps (the latency's decomposition): what
    /// `--timestamps` says, `auto` being on in open loop only, since in closed loop they cost
    /// more than the 3 % of a request's instructions they may take by default (BENCHMARKS.md).
    /// A unix socket carries none (`engine` notes it).
    pub fn timestamps(&self) -> bool {
        match self.extras.timestamps {
            Timestamps::On => true,
            Timestamps::Off => false,
            Timestamps::Auto => self.rate.is_some(),
        }
    }

    /// The client's share of p99 above which the run is warned about it, as a fraction.
    pub fn client_share_warning(&self) -> f64 {
        self.extras.client_share_warning.unwrap_or(CLIENT_SHARE_WARNING)
    }

    /// The row counting whole sequences.
    pub fn unit_row(&self) -> Option<usize> {
        self.sequence.is_some().then_some(self.commands.len())
    }

    /// The name of the unit row of a sequence: its commands joined by `;`, repeats shown.
    pub fn sequence_name(&self) -> Option<String> {
        let steps = self.sequence.as_ref()?;
        let names: Vec<String> = steps
            .iter()
            .map(|s| {
                let name = &self.commands[s.command].name;
                if s.repeat > 1 { format!("{} {name}", s.repeat) } else { name.clone() }
            })
            .collect();
        Some(names.join(";"))
    }

    /// Cluster mode: the argument of each command that holds its key (the first with `__key__`
    /// or `{tag}`, else the first after the name), `None` for commands without arguments.
    pub fn key_args(&self) -> Vec<Option<usize>> {
        self.commands
            .iter()
            .map(|c| {
                let placeholder =
                    c.args.iter().position(|a| a.iter().any(|p| matches!(p, ArgPart::Key | ArgPart::Tag)));
                placeholder.or((c.args.len() > 1).then_some(1))
            })
            .collect()
    }

    /// The setup numbers (from 1) the commands name with `__setup:N__`, in order, each once.
    pub fn setup_refs(&self) -> Vec<u16> {
        let parts = self.commands.iter().flat_map(|c| c.args.iter().flatten());
        let mut refs: Vec<u16> =
            parts.filter_map(|p| if let ArgPart::Setup(n) = p { Some(*n) } else { None }).collect();
        refs.sort_unstable();
        refs.dedup();
        refs
    }

    /// The plan with every `__setup:N__` replaced by setup command N's reply (`replies[N - 1]`)
    /// as literal bytes: the templates compiled from it carry the reply like any literal.
    /// [`setup_refs`](Self::setup_refs) says which replies must be there; a missing one stays.
    pub fn with_setup_replies(&self, replies: &[Option<Vec<u8>>]) -> Config {
        let mut filled = self.clone();
        for part in filled.commands.iter_mut().flat_map(|c| c.args.iter_mut()).flatten() {
            if let ArgPart::Setup(n) = part
                && let Some(Some(reply)) = replies.get(usize::from(*n).wrapping_sub(1))
            {
                *part = ArgPart::Lit(reply.clone());
            }
        }
        filled
    }

    /// Total requests planned, when known in advance (every role's, in a run of several).
    pub fn planned_requests(&self) -> Option<u64> {
        if !self.extras.groups.is_empty() {
            return self.extras.groups.iter().map(|g| g.plan.planned_requests()).sum();
        }
        match self.stop {
            StopAfter::Requests(n) => Some(n),
            StopAfter::AllKeys => {
                let (min, max) = self.walked_keys();
                Some(if self.extras.shard.as_ref().is_some_and(|s| s.keys.is_none()) { 0 } else { max - min + 1 })
            }
            StopAfter::Duration(_) => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample() -> Config {
        Config {
            server: ServerOptions {
                target: Target::Tcp { host: "127.0.0.1".into(), port: 6379 },
                user: None,
                password: None,
                db: None,
                resp3: false,
                tls: None,
                connect_timeout: None,
                session: SessionExtras::default(),
            },
            connections: 3,
            threads: 1,
            pipeline: 1,
            stop: StopAfter::Requests(10),
            commands: vec![],
            keys: KeyRange { prefix: "key:".into(), min: 1, max: 10 },
            values: ValueSize::Fixed(3),
            random_data: false,
            expiry: None,
            seed: 1,
            same_stream: false,
            conn_jitter: None,
            interval: Duration::from_secs(1),
            rate: None,
            warmup: Duration::ZERO,
            sequence: None,
            faults: Faults::default(),
            cluster: None,
            ramp: None,
            extras: Extras::default(),
        }
    }

    #[test]
    fn request_quota_sums_to_total() {
        let c = sample();
        let quotas: Vec<u64> = (0..3).map(|i| c.quota(i).unwrap()).collect();
        assert_eq!(quotas, vec![4, 3, 3]);
    }

    #[test]
    fn allkeys_slices_cover_the_range_once() {
        let mut c = sample();
        c.stop = StopAfter::AllKeys;
        let slices: Vec<Option<(u64, u64)>> = (0..3).map(|i| c.slice(i)).collect();
        assert_eq!(slices, vec![Some((1, 3)), Some((4, 6)), Some((7, 10))]);
        assert_eq!((0..3).map(|i| c.quota(i).unwrap()).sum::<u64>(), 10);
        c.connections = 20;
        assert_eq!((0..20).map(|i| c.quota(i).unwrap()).sum::<u64>(), 10);
        // A range starting at 0 with more connections than keys (a past overflow).
        c.keys.min = 0;
        c.keys.max = 9;
        c.connections = 50;
        assert_eq!((0..50).map(|i| c.quota(i).unwrap()).sum::<u64>(), 10);
        assert_eq!(c.slice(0), None);
    }

    #[test]
    fn memtier_slices_are_equal_with_the_rest_to_the_last() {
        // memtier_benchmark 2.3, -c 3 --key-minimum=1 --key-maximum=100: 1-34, 35-68, 69-100.
        let mut c = sample();
        (c.keys.min, c.keys.max, c.connections) = (1, 100, 3);
        c.extras.memtier_slices = true;
        let slices: Vec<Option<(u64, u64)>> = (0..3).map(|i| c.slice(i)).collect();
        assert_eq!(slices, vec![Some((1, 34)), Some((35, 68)), Some((69, 100))]);
        (c.keys.min, c.keys.max, c.connections) = (0, 4, 10);
        assert_eq!((c.slice(4), c.slice(5), c.slice(9)), (Some((4, 4)), None, None));
    }

    #[test]
    fn setup_replies_become_literals() {
        let mut config = sample();
        config.commands = vec![CommandSpec::parse("EVALSHA __setup:2__ 0", 1, KeyPattern::Random).unwrap()];
        assert_eq!(config.setup_refs(), vec![2]);
        let filled = config.with_setup_replies(&[None, Some(b"abc".to_vec())]);
        assert_eq!(filled.commands[0].args[1], vec![ArgPart::Lit(b"abc".to_vec())]);
    }
}
