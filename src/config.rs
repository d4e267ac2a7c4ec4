//! The validated plan of a run. Front-ends (native flags, and later the memtier and
//! redis-benchmark dialects) all produce a [`Config`]; the engine trusts it.

use std::path::PathBuf;
use std::time::Duration;

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Target::Tcp { host, port } => write!(f, "{host}:{port}"),
            Target::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

/// How to reach and log in to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    pub target: Target,
    pub user: Option<String>,
    pub password: Option<String>,
    pub db: Option<u32>,
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

/// How a command picks its key number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyPattern {
    /// Each connection walks the whole range in order, wrapping.
    Sequential,
    /// Uniformly random over the range.
    Random,
    /// Normal around `median` (default: the middle) with `stddev` (default: range / 6).
    Gaussian { median: Option<f64>, stddev: Option<f64> },
    /// Zipf over ranks: `key_min` is the most popular key.
    Zipf { exponent: f64 },
    /// Each connection walks its own contiguous slice of the range, wrapping.
    Parallel,
}

impl KeyPattern {
    /// The one-letter name used on command lines (memtier's letters).
    pub fn letter(&self) -> char {
        match self {
            KeyPattern::Sequential => 'S',
            KeyPattern::Random => 'R',
            KeyPattern::Gaussian { .. } => 'G',
            KeyPattern::Zipf { .. } => 'Z',
            KeyPattern::Parallel => 'P',
        }
    }
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
}

/// What a command of the mix does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    /// `SET key value [EX seconds]`
    Set,
    /// `GET key`: counts hits and misses.
    Get,
}

/// One command of the mix.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    /// Name used in reports ("SET", "GET").
    pub name: String,
    pub kind: CommandKind,
    /// Relative weight in the mix; 0 leaves it out.
    pub weight: u32,
    pub key_pattern: KeyPattern,
}

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
    /// Length of one timeline interval (and of the live line's refresh).
    pub interval: Duration,
    /// Open loop at this arrival rate; `None` is closed loop.
    pub rate: Option<Rate>,
    /// Load that runs before the measured phase and is kept out of every figure.
    pub warmup: Duration,
}

impl Config {
    /// The requests connection `index` must send, or `None` when the run is timed.
    pub fn quota(&self, index: usize) -> Option<u64> {
        let conns = self.connections as u64;
        let i = index as u64;
        match self.stop {
            StopAfter::Requests(total) => Some(total / conns + u64::from(i < total % conns)),
            StopAfter::AllKeys => {
                let (lo, hi) = self.slice(index);
                Some(if hi >= lo { hi - lo + 1 } else { 0 })
            }
            StopAfter::Duration(_) => None,
        }
    }

    /// Connection `index`'s contiguous slice of the key range (may be empty: `hi < lo`).
    pub fn slice(&self, index: usize) -> (u64, u64) {
        let span = u128::from(self.keys.len());
        let conns = self.connections as u128;
        let i = index as u128;
        let lo = self.keys.min as u128 + span * i / conns;
        let next = self.keys.min as u128 + span * (i + 1) / conns;
        (lo as u64, (next as u64).wrapping_sub(1))
    }

    /// Total requests planned, when known in advance.
    pub fn planned_requests(&self) -> Option<u64> {
        match self.stop {
            StopAfter::Requests(n) => Some(n),
            StopAfter::AllKeys => Some(self.keys.len()),
            StopAfter::Duration(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Config {
        Config {
            server: ServerOptions {
                target: Target::Tcp { host: "127.0.0.1".into(), port: 6379 },
                user: None,
                password: None,
                db: None,
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
            interval: Duration::from_secs(1),
            rate: None,
            warmup: Duration::ZERO,
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
        let slices: Vec<(u64, u64)> = (0..3).map(|i| c.slice(i)).collect();
        assert_eq!(slices, vec![(1, 3), (4, 6), (7, 10)]);
        assert_eq!((0..3).map(|i| c.quota(i).unwrap()).sum::<u64>(), 10);
        c.connections = 20;
        assert_eq!((0..20).map(|i| c.quota(i).unwrap()).sum::<u64>(), 10);
    }
}
