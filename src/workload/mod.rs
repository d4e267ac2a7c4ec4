//! What to send: the command mix compiled into templates (shared by all threads), and a
//! per-connection request generator that picks the command, key, value and expiry.

mod keys;
pub mod rng;

use std::sync::Arc;

use crate::config::{ArgPart, Config, Step, StopAfter, ValueSize};
use crate::resp::{Part, Template};
pub use keys::KeyGen;
use rng::Rng;

/// Hole indices the templates use.
const HOLE_KEY: usize = 0;
const HOLE_DATA: usize = 1;
const HOLE_EXPIRY: usize = 2;
const HOLE_TAG: usize = 3;
/// `__rand_1st__` .. `__rand_9th__`.
const HOLE_SHARED: usize = 4;
/// Each `__rand_int__` occurrence of a command, in order.
const HOLE_RAND_INT: usize = HOLE_SHARED + 9;
/// `__rand_int__` occurrences allowed in one command.
pub const MAX_RAND_INTS: usize = 16;
const HOLES: usize = HOLE_RAND_INT + MAX_RAND_INTS;
/// Width `__rand_int__` and `__rand_Nth__` are zero-padded to (redis-benchmark's).
const RAND_WIDTH: usize = 12;

/// The random numbers one command needs per request.
#[derive(Debug, Clone, Copy, Default)]
struct Draws {
    rand_ints: usize,
    /// Bit i: `__rand_{i+1}th__` appears.
    shared: u16,
    /// `__data__` appears: a value is drawn (GET needs none).
    data: bool,
    /// The expiry hole appears (SET with `--expiry-range`).
    expiry: bool,
}

/// The compiled mix, read-only and shared by every worker.
#[derive(Debug)]
pub struct Workload {
    templates: Vec<Template>,
    draws: Vec<Draws>,
    /// Report rows: one per command, then the sequence's unit row if there is one.
    names: Vec<String>,
    reads: Vec<bool>,
    /// What one request of the mix sends: a single command, or the whole sequence.
    units: Vec<Vec<Step>>,
    /// Weight of each unit in the mix.
    weights: Vec<u32>,
    /// Value bytes: values are slices of this buffer.
    data: Vec<u8>,
    values: ValueSize,
    expiry: Option<(u64, u64)>,
    /// The range `__rand_int__` draws from.
    rand_range: (u64, u64),
}

impl Workload {
    pub fn compile(config: &Config) -> Workload {
        let prefix = config.keys.prefix.as_bytes();
        let mut templates = Vec::new();
        let mut draws = Vec::new();
        for spec in &config.commands {
            let mut d = Draws::default();
            let args: Vec<Vec<Part>> = spec
                .args
                .iter()
                .map(|arg| {
                    let mut parts = Vec::new();
                    for part in arg {
                        match part {
                            ArgPart::Lit(bytes) => parts.push(Part::Lit(bytes.clone())),
                            ArgPart::Key => {
                                parts.push(Part::Lit(prefix.to_vec()));
                                parts.push(Part::Hole(HOLE_KEY));
                            }
                            ArgPart::Data => {
                                d.data = true;
                                parts.push(Part::Hole(HOLE_DATA));
                            }
                            ArgPart::Expiry => {
                                d.expiry = true;
                                parts.push(Part::Hole(HOLE_EXPIRY));
                            }
                            ArgPart::Tag => parts.push(Part::Hole(HOLE_TAG)),
                            ArgPart::RandShared(i) => {
                                d.shared |= 1 << i;
                                parts.push(Part::Hole(HOLE_SHARED + usize::from(*i)));
                            }
                            ArgPart::RandInt => {
                                // The front-ends check the count; past it, draws repeat the last.
                                parts.push(Part::Hole(HOLE_RAND_INT + d.rand_ints.min(MAX_RAND_INTS - 1)));
                                d.rand_ints = (d.rand_ints + 1).min(MAX_RAND_INTS);
                            }
                        }
                    }
                    parts
                })
                .collect();
            templates.push(if spec.inline { Template::inline(&args) } else { Template::new(&args) });
            draws.push(d);
        }
        let max = config.values.max();
        let data = if config.random_data {
            // Twice the largest value, so each value can start at a random offset.
            let mut rng = Rng::derive(config.seed, u64::MAX);
            const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
            (0..2 * max + 1).map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize]).collect()
        } else {
            vec![b'x'; max]
        };
        // Two commands of one name get distinct rows: `SET`, `SET#2`.
        let mut names: Vec<String> = Vec::new();
        for spec in &config.commands {
            let seen = names.iter().filter(|n| n.split('#').next() == Some(spec.name.as_str())).count();
            names.push(if seen == 0 { spec.name.clone() } else { format!("{}#{}", spec.name, seen + 1) });
        }
        let (units, weights) = match &config.sequence {
            Some(steps) => {
                names.push(config.sequence_name().unwrap_or_default());
                (vec![steps.clone()], vec![1])
            }
            None => {
                let single = (0..config.commands.len()).map(|command| vec![Step { command, repeat: 1 }]);
                (single.collect(), config.commands.iter().map(|c| c.weight).collect())
            }
        };
        Workload {
            templates,
            draws,
            names,
            reads: config.commands.iter().map(|c| c.reads).collect(),
            units,
            weights,
            data,
            values: config.values.clone(),
            expiry: config.expiry,
            rand_range: (config.keys.min, config.keys.max),
        }
    }

    /// Names of the commands, by index: the rows of every report.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether command `i` is a read whose null reply is a miss.
    #[inline]
    pub fn is_read(&self, i: usize) -> bool {
        self.reads[i]
    }

    fn value_len(&self, rng: &mut Rng) -> usize {
        match &self.values {
            ValueSize::Fixed(n) => *n,
            ValueSize::Range { min, max } => min + rng.below((max - min + 1) as u64) as usize,
            ValueSize::List(list) => {
                let total: u64 = list.iter().map(|(_, w)| u64::from(*w)).sum();
                let mut pick = rng.below(total);
                for (size, weight) in list {
                    if pick < u64::from(*weight) {
                        return *size;
                    }
                    pick -= u64::from(*weight);
                }
                list.last().map_or(0, |(size, _)| *size)
            }
        }
    }
}

/// Writes `n` into `buf` right-aligned, zero-padded to its width (wider numbers are cut).
fn zero_padded(buf: &mut [u8; RAND_WIDTH], n: u64) {
    let mut digits = itoa::Buffer::new();
    let text = digits.format(n).as_bytes();
    let text = &text[text.len().saturating_sub(RAND_WIDTH)..];
    buf.fill(b'0');
    buf[RAND_WIDTH - text.len()..].copy_from_slice(text);
}

/// One connection's request stream: its own random stream, key walkers and mix position.
#[derive(Debug)]
pub struct RequestGen {
    workload: Arc<Workload>,
    rng: Rng,
    keys: Vec<KeyGen>,
    /// Which key generator each command uses.
    key_of: Vec<usize>,
    /// Smooth weighted round-robin state: exact ratios over every cycle of the weights.
    credit: Vec<i64>,
    total_weight: i64,
}

impl RequestGen {
    pub fn new(workload: Arc<Workload>, config: &Config, conn_index: usize) -> RequestGen {
        let slice = config.slice(conn_index);
        let (min, max) = (config.keys.min, config.keys.max);
        let (keys, key_of) = if config.stop == StopAfter::AllKeys {
            // Every command shares one walk over this connection's slice: each key once.
            let walk = KeyGen::new(crate::config::KeyPattern::Parallel, min, max, slice);
            (vec![walk], vec![0; config.commands.len()])
        } else {
            let keys = config.commands.iter().map(|c| KeyGen::new(c.key_pattern, min, max, slice));
            (keys.collect(), (0..config.commands.len()).collect())
        };
        let credit = vec![0; workload.weights.len()];
        let total_weight = workload.weights.iter().map(|w| i64::from(*w)).sum();
        RequestGen {
            workload,
            rng: Rng::derive(config.seed, if config.same_stream { 0 } else { conn_index as u64 }),
            keys,
            key_of,
            credit,
            total_weight,
        }
    }

    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    /// Picks the next unit of the mix by weight: exact ratios over every cycle of the weights.
    #[inline]
    pub fn pick_unit(&mut self) -> usize {
        if self.credit.len() == 1 {
            return 0;
        }
        let mut best = 0;
        for (i, w) in self.workload.weights.iter().enumerate() {
            self.credit[i] += i64::from(*w);
            if self.credit[i] > self.credit[best] {
                best = i;
            }
        }
        self.credit[best] -= self.total_weight;
        best
    }

    /// Steps of unit `unit`.
    #[inline]
    pub fn steps(&self, unit: usize) -> usize {
        self.workload.units[unit].len()
    }

    #[inline]
    pub fn step(&self, unit: usize, index: usize) -> Step {
        self.workload.units[unit][index]
    }

    /// Appends the next request of the mix to `out` (tests: one-command units only);
    /// returns its command index and the key number.
    #[cfg(test)]
    fn encode_next(&mut self, out: &mut Vec<u8>) -> (usize, u64) {
        let unit = self.pick_unit();
        let cmd = self.step(unit, 0).command;
        (cmd, self.encode(cmd, out))
    }

    /// Appends command `cmd` with fresh placeholders to `out`; returns its key number.
    #[inline]
    pub fn encode(&mut self, cmd: usize, out: &mut Vec<u8>) -> u64 {
        self.encode_tagged(cmd, out, b"")
    }

    /// Like [`encode`](Self::encode), with `{tag}` filled with `tag` (cluster mode).
    #[inline]
    pub fn encode_tagged(&mut self, cmd: usize, out: &mut Vec<u8>, tag: &[u8]) -> u64 {
        let key = self.keys[self.key_of[cmd]].next(&mut self.rng);
        let workload = &*self.workload;
        let mut key_digits = itoa::Buffer::new();
        let key_digits = key_digits.format(key).as_bytes();
        let draws = workload.draws[cmd];
        // Only what the command uses is drawn: a GET costs no value and no expiry.
        let data: &[u8] = if draws.data {
            let len = workload.value_len(&mut self.rng);
            let offset =
                if workload.data.len() > len { self.rng.below((workload.data.len() - len) as u64) as usize } else { 0 };
            &workload.data[offset..offset + len]
        } else {
            b""
        };
        let mut expiry_digits = itoa::Buffer::new();
        let expiry_digits = match (draws.expiry, workload.expiry) {
            (true, Some((lo, hi))) => expiry_digits.format(lo + self.rng.below(hi - lo + 1)).as_bytes(),
            _ => b"",
        };
        let fixed: [&[u8]; HOLE_SHARED] = [key_digits, data, expiry_digits, tag];
        if draws.shared == 0 && draws.rand_ints == 0 {
            // The common case (SET, GET): no random numbers to draw or buffer.
            workload.templates[cmd].encode(out, &fixed);
        } else {
            let mut rands = [[b'0'; RAND_WIDTH]; 9 + MAX_RAND_INTS];
            let (lo, hi) = workload.rand_range;
            for (i, buf) in rands.iter_mut().enumerate() {
                let wanted = if i < 9 { draws.shared & (1 << i) != 0 } else { i - 9 < draws.rand_ints };
                if wanted {
                    zero_padded(buf, lo + self.rng.below(hi - lo + 1));
                }
            }
            let mut holes: [&[u8]; HOLES] = [b""; HOLES];
            holes[..HOLE_SHARED].copy_from_slice(&fixed);
            for (i, buf) in rands.iter().enumerate() {
                holes[HOLE_SHARED + i] = buf;
            }
            workload.templates[cmd].encode(out, &holes);
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandSpec, KeyPattern, KeyRange, ServerOptions, Target};
    use std::time::Duration;

    fn config(set: u32, get: u32) -> Config {
        Config {
            server: ServerOptions {
                target: Target::Tcp { host: "h".into(), port: 1 },
                user: None,
                password: None,
                db: None,
                resp3: false,
                tls: None,
                connect_timeout: None,
            },
            connections: 2,
            threads: 1,
            pipeline: 1,
            stop: StopAfter::Requests(100),
            commands: vec![CommandSpec::set(set, KeyPattern::Random, true), CommandSpec::get(get, KeyPattern::Random)],
            keys: KeyRange { prefix: "k:".into(), min: 0, max: 9 },
            values: ValueSize::Fixed(4),
            random_data: false,
            expiry: Some((5, 5)),
            seed: 9,
            same_stream: false,
            conn_jitter: None,
            interval: Duration::from_secs(1),
            rate: None,
            warmup: Duration::ZERO,
            sequence: None,
            faults: crate::config::Faults::default(),
            cluster: None,
            ramp: None,
        }
    }

    #[test]
    fn ratio_is_exact_over_each_cycle() {
        let c = config(1, 4);
        let mut g = RequestGen::new(Arc::new(Workload::compile(&c)), &c, 0);
        let mut out = Vec::new();
        let picks: Vec<usize> = (0..50).map(|_| g.encode_next(&mut out).0).collect();
        assert_eq!(picks.iter().filter(|&&p| p == 0).count(), 10);
    }

    #[test]
    fn set_carries_value_and_expiry() {
        let c = config(1, 0);
        let mut g = RequestGen::new(Arc::new(Workload::compile(&c)), &c, 0);
        let mut out = Vec::new();
        let (_, key) = g.encode_next(&mut out);
        let want = format!("*5\r\n$3\r\nSET\r\n$3\r\nk:{key}\r\n$4\r\nxxxx\r\n$2\r\nEX\r\n$1\r\n5\r\n");
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn allkeys_walks_the_slice_once_whatever_the_mix() {
        let mut c = config(1, 1);
        c.stop = StopAfter::AllKeys;
        let mut g = RequestGen::new(Arc::new(Workload::compile(&c)), &c, 1);
        let mut out = Vec::new();
        let keys: Vec<u64> = (0..c.quota(1).unwrap()).map(|_| g.encode_next(&mut out).1).collect();
        assert_eq!(keys, vec![5, 6, 7, 8, 9]);
    }
}
