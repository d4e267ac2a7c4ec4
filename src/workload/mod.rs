//! What to send: the command mix compiled into templates (shared by all threads), and a
//! per-connection request generator that picks the command, key, value and expiry.

message_error!(
    /// A plan whose mix cannot be sent as asked.
    Unsendable
);

mod holes;
pub mod import;
mod keys;
pub mod monitor;
pub mod rng;
mod routing;
pub mod stamp;
mod stream;

use crate::config::arguments::ArgSpaces;
use crate::config::dataset::{Dataset, DatasetError};
use crate::config::{ArgPart, Config, Step, StopAfter, ValueSize};
use crate::net::cluster::KeySlots;
use crate::resp::{Part, ReplyClass, Template};
use holes::HOLE_ELEMENT;
pub use holes::MAX_RAND_INTS;
use holes::{
    HOLE_BETWEEN, HOLE_CURSOR, HOLE_DATA, HOLE_EXPIRY, HOLE_FIELD, HOLE_KEY, HOLE_MULTI, HOLE_RAND_INT, HOLE_SHARED,
    HOLE_STAMP, HOLE_TAG, MAX_BETWEEN,
};
pub use keys::KeyGen;
use rng::Rng;
pub use stream::{RequestGen, RoutedKey};

/// The unit step that stands for "one line of the MONITOR capture" (`__monitor_line@__`).
const MONITOR_PICK: usize = usize::MAX;
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
    /// Keys of a multi-key command (MGET), each drawn on its own.
    multi_keys: u16,
    /// [`ArgPart::Between`] holes, in order.
    between: u8,
    /// The SCAN cursor hole appears.
    cursor: bool,
    /// A dataset field appears: the request takes the next row.
    fields: bool,
    /// A pub/sub stamp appears: the request takes the next sequence number and the clock.
    stamp: bool,
    /// Bit i: the space `config::arguments::Space` i (`__field__`, `__member__`) appears.
    elements: u8,
    /// `__key2__` .. `__key9__` appear: the multi keys are drawn distinct.
    distinct_keys: bool,
    /// `{tag}` appears (cluster mode: a primary's hash tag).
    tag: bool,
}

impl Draws {
    /// Only the fixed holes (key, value, expiry, tag): no random number, second key, element,
    /// cursor, dataset row or stamp to draw and buffer.
    #[inline]
    fn fixed_only(&self) -> bool {
        let numbers = self.rand_ints + usize::from(self.shared) + usize::from(self.multi_keys);
        numbers == 0 && self.between == 0 && self.elements == 0 && !(self.cursor || self.fields || self.stamp)
    }

    /// Nothing to draw but the key (a tag is the caller's): [`fixed_only`](Self::fixed_only)
    /// with no value and no expiry.
    #[inline]
    fn key_only(&self) -> bool {
        self.fixed_only() && !self.data && !self.expiry
    }
}

/// How a command's reply counts as hits and misses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadKind {
    /// Not a read: neither.
    No,
    /// A null reply is a miss (GET).
    Nil,
    /// A null or empty reply is a miss (GETRANGE answers "" for a missing key).
    Empty,
    /// Each element of the array is a hit or a miss (MGET): null or empty is a miss.
    Multi,
    /// The integer reply is a count, added to the hits: the receivers a pub/sub role's
    /// PUBLISH reached.
    Count,
}

/// The compiled mix, read-only and shared by every worker.
#[derive(Debug)]
pub struct Workload {
    templates: Vec<Template>,
    draws: Vec<Draws>,
    /// Report rows: one per command, then the sequence's unit row if there is one.
    names: Vec<String>,
    reads: Vec<ReadKind>,
    /// Which commands are EXEC: a null reply is an aborted transaction.
    execs: Vec<bool>,
    /// `--transaction`: each unit draws one key, which all its commands use.
    transaction: bool,
    /// The key prefix, for the unit key's name (cluster routing of a transaction).
    key_prefix: Vec<u8>,
    /// Cluster mode: for each command whose key argument is the drawn key between fixed text,
    /// how its slot follows from the key's digits (routed before it is encoded).
    key_slots: Vec<Option<KeySlots>>,
    /// Cluster mode: for each command whose key's hash tag is its `{tag}` (fixed text with no
    /// `{` before it), so that it goes where the tag's slot is, known before it is encoded.
    tag_keyed: Vec<bool>,
    /// Cluster mode: whether every command of each unit goes where its own key's digits say
    /// and takes no `{tag}` (no primary need be chosen in turn for it), worked out once.
    units_routed: Vec<bool>,
    /// Uniform or normal `(min, max, normal)` of each command's `Between` holes.
    between: Vec<Vec<(u64, u64, bool)>>,
    /// `--data-size-pattern S`: the key range value sizes follow.
    sizes_by_key: Option<(u64, u64)>,
    /// `__monitor_line@__`: the lines' templates, the row of each, whether picks are random,
    /// and the next line in order, shared by every connection (memtier's one counter).
    monitor: Option<(Vec<Template>, Vec<usize>, bool, std::sync::atomic::AtomicUsize)>,
    /// `--scan-incremental-iteration`: continuation SCANs per cycle (0: until the cursor is 0).
    scan: Option<u32>,
    /// `--data-import`: a SET template per item, and a GET per item when keys are the file's.
    import: Option<import::Imported>,
    /// What one request of the mix sends: a single command, or the whole sequence.
    units: Vec<Vec<Step>>,
    /// Weight of each unit in the mix.
    weights: Vec<u32>,
    /// Value bytes: values are slices of this buffer, shared by every connection's write
    /// buffer that sends large values from it in place.
    data: std::sync::Arc<[u8]>,
    values: ValueSize,
    expiry: Option<(u64, u64)>,
    /// The range `__rand_int__` draws from.
    rand_range: (u64, u64),
    /// How replies are read (hits and misses of a multi-key read).
    protocol: crate::codec::Protocol,
    /// `--dataset`: the rows `__field:NAME__` holes are filled from.
    dataset: Option<std::sync::Arc<Dataset>>,
    /// What `__field__` and `__member__` take: `(min, max, sequential)` by space.
    spaces: [(u64, u64, bool); 2],
}

impl Workload {
    /// Whether the run's protocol can send every command of the mix: the one-line error
    /// (a usage error) names the first it cannot. [`compile`](Self::compile) relies on it.
    pub fn check(config: &Config) -> Result<(), Unsendable> {
        let protocol = config.server.session.protocol;
        let prefix = config.keys.prefix.as_bytes();
        let spaces = &config.extras.spaces;
        let dataset = config.extras.dataset.as_deref();
        for spec in &config.commands {
            for part in spec.args.iter().flatten() {
                if let ArgPart::Field(field) = part
                    && dataset.and_then(|d| d.column(field)).is_none()
                {
                    let err = match dataset {
                        None => DatasetError::NoDataset { field: field.name.clone() },
                        Some(d) => DatasetError::UnknownField {
                            path: d.path.display().to_string(),
                            field: field.name.clone(),
                            fields: d.header.join(", "),
                        },
                    };
                    return Err(err.to_string().into());
                }
            }
            let (mut d, mut ranges) = (Draws::default(), Vec::new());
            let args: Vec<Vec<Part>> =
                spec.args.iter().map(|arg| arg_parts(arg, (prefix, spaces), dataset, &mut d, &mut ranges)).collect();
            protocol.template(&spec.name, &args, spec.inline, 1).map_err(String::from)?;
        }
        Ok(())
    }

    pub fn compile(config: &Config) -> Workload {
        let prefix = config.keys.prefix.as_bytes();
        let spaces = &config.extras.spaces;
        let mut templates = Vec::new();
        let mut draws = Vec::new();
        let mut between = Vec::new();
        for spec in &config.commands {
            let mut d = Draws::default();
            let mut ranges = Vec::new();
            let dataset = config.extras.dataset.as_deref();
            let args: Vec<Vec<Part>> =
                spec.args.iter().map(|arg| arg_parts(arg, (prefix, spaces), dataset, &mut d, &mut ranges)).collect();
            let id = templates.len() as u32 + 1;
            let template = config.server.session.protocol.template(&spec.name, &args, spec.inline, id);
            templates.push(template.expect("Workload::check refuses what the protocol cannot send"));
            draws.push(d);
            between.push(ranges);
        }
        let max = config.values.max();
        let data = if config.random_data {
            // Twice the largest value, so each value can start at a random offset.
            let mut rng = Rng::derive(config.seed, u64::MAX);
            const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
            (0..2 * max + 1).map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize]).collect()
        } else {
            vec![b'x'; max].into()
        };
        let mut names = config.command_rows();
        let (mut units, mut weights): (Vec<Vec<Step>>, Vec<u32>) = match &config.sequence {
            Some(steps) => {
                names.push(config.sequence_name().unwrap_or_default());
                (vec![steps.clone()], vec![1])
            }
            None if config.extras.transaction => {
                // One unit: the whole rotation, each command its ratio's times in a row.
                let steps = config.commands.iter().enumerate().map(|(command, c)| Step { command, repeat: c.weight });
                (vec![steps.filter(|s| s.repeat > 0).collect()], vec![1])
            }
            None if config.extras.scan.is_some() => {
                // One unit: the SCAN whose cursor decides, per request, which of the two rows goes.
                (vec![vec![Step { command: 0, repeat: 1 }]], vec![1])
            }
            None => {
                let single = (0..config.commands.len()).map(|command| vec![Step { command, repeat: 1 }]);
                (single.collect(), config.commands.iter().map(|c| c.weight).collect())
            }
        };
        let monitor = config.extras.monitor.as_ref().map(|pick| {
            units.push(vec![Step { command: MONITOR_PICK, repeat: 1 }]);
            weights.push(pick.weight);
            let lines = pick.lines.iter().map(|words| {
                let args: Vec<Vec<Part>> = words.iter().map(|w| vec![Part::Lit(w.clone())]).collect();
                Template::new(&args)
            });
            (lines.collect(), pick.rows.clone(), pick.random, std::sync::atomic::AtomicUsize::new(0))
        });
        let reads = config
            .commands
            .iter()
            .map(|c| match c.name.as_str() {
                // A stream or queue role's stamped push is a write: its reply counts nothing.
                "PUBLISH" | "SPUBLISH" if c.args.iter().flatten().any(|p| *p == ArgPart::Stamp) => ReadKind::Count,
                _ if !c.reads => ReadKind::No,
                "MGET" => ReadKind::Multi,
                "GETRANGE" => ReadKind::Empty,
                _ => ReadKind::Nil,
            })
            .collect();
        let execs = config.commands.iter().map(|c| c.name.eq_ignore_ascii_case("EXEC")).collect();
        let import = import::Imported::compile(config);
        let imported = |i: usize| import.as_ref().is_some_and(|im| im.set == i || im.get == Some(i));
        let routable = |i: usize| !imported(i) && !config.extras.transaction;
        let (key_slots, tag_keyed) = routing::keys(config, prefix, routable);
        let plain = monitor.is_none() && config.extras.scan.is_none();
        let units_routed = routing::units_routed(&units, &key_slots, |c| draws[c].tag, plain);
        Workload {
            units_routed,
            templates,
            draws,
            names,
            reads,
            execs,
            transaction: config.extras.transaction,
            key_prefix: prefix.to_vec(),
            key_slots,
            tag_keyed,
            between,
            sizes_by_key: config.extras.sizes_by_key.then_some((config.keys.min, config.keys.max)),
            monitor,
            scan: config.extras.scan.map(|s| s.max_iterations),
            import,
            units,
            weights,
            data,
            values: config.values.clone(),
            expiry: config.expiry,
            rand_range: (config.keys.min, config.keys.max),
            protocol: config.server.session.protocol,
            dataset: config.extras.dataset.clone(),
            spaces: spaces.0.clone().map(|s| (s.min, s.max, s.sequential)),
        }
    }

    /// Names of the commands, by index: the rows of every report.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether command `i` is a read whose null reply is a miss.
    #[inline]
    pub fn is_read(&self, i: usize) -> bool {
        !matches!(self.reads[i], ReadKind::No | ReadKind::Count)
    }

    /// The hits and misses in command `i`'s reply `reply` of class `class` (a value or a null):
    /// one of either for a single-key read, one per element for MGET, none for the rest.
    #[inline]
    pub fn hits_misses(&self, i: usize, class: ReplyClass, reply: &[u8]) -> (u64, u64) {
        match (self.reads[i], class) {
            (ReadKind::No, _) => (0, 0),
            // Before Nil: a memcached multi-key get that missed every key reads as a miss.
            (ReadKind::Multi, _) => self.protocol.hits_misses_multi(reply, u64::from(self.draws[i].multi_keys)),
            (ReadKind::Count, _) => (integer(reply).unwrap_or(0), 0),
            (_, ReplyClass::Nil) => (0, 1),
            (ReadKind::Empty, _) if reply.starts_with(b"$0\r\n") => (0, 1),
            _ => (1, 0),
        }
    }

    /// Whether command `i`'s reply of class `class` is an aborted transaction: EXEC answered
    /// with a null array.
    #[inline]
    pub fn aborted(&self, i: usize, class: ReplyClass) -> bool {
        class == ReplyClass::Nil && self.execs[i]
    }

    /// Cluster mode: how command `cmd`'s key's slot follows from its number, if it does.
    #[inline]
    fn key_slots(&self, cmd: usize) -> Option<&KeySlots> {
        self.key_slots.get(cmd)?.as_ref()
    }

    /// `--transaction`: whether a unit's commands share one key.
    pub fn transaction(&self) -> bool {
        self.transaction
    }

    /// Whether replies must be read for a SCAN cursor (`--scan-incremental-iteration`).
    #[inline]
    pub fn follows_cursor(&self) -> bool {
        self.scan.is_some()
    }

    /// The longest request a command can make apart from values and keys drawn: a hint for
    /// write buffers.
    pub fn longest_fixed(&self) -> usize {
        let lines = self.monitor.iter().flat_map(|(t, _, _, _)| t.iter());
        self.templates.iter().chain(lines).map(Template::fixed_len).max().unwrap_or(0)
    }

    fn value_len(&self, rng: &mut Rng, key: u64) -> usize {
        match &self.values {
            ValueSize::Fixed(n) => *n,
            // memtier's S pattern: sizes spread evenly over the key range, by key.
            ValueSize::Range { min, max } if let Some((lo, hi)) = self.sizes_by_key => {
                size_by_key(*min, *max, key, lo, hi)
            }
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

/// One argument of a command as template parts: literals as they are, and a hole for each
/// thing drawn per request (key digits, value, expiry, ...), noted in `d` and `ranges`.
fn arg_parts(
    arg: &[ArgPart],
    (prefix, spaces): (&[u8], &ArgSpaces),
    dataset: Option<&Dataset>,
    d: &mut Draws,
    ranges: &mut Vec<(u64, u64, bool)>,
) -> Vec<Part> {
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
            ArgPart::Tag => {
                d.tag = true;
                parts.push(Part::Hole(HOLE_TAG));
            }
            ArgPart::RandShared(i) => {
                d.shared |= 1 << i;
                parts.push(Part::Hole(HOLE_SHARED + usize::from(*i)));
            }
            ArgPart::RandInt => {
                // The front-ends check the count; past it, draws repeat the last.
                parts.push(Part::Hole(HOLE_RAND_INT + d.rand_ints.min(MAX_RAND_INTS - 1)));
                d.rand_ints = (d.rand_ints + 1).min(MAX_RAND_INTS);
            }
            ArgPart::MultiKey(i) => {
                d.multi_keys = d.multi_keys.max(i + 1);
                parts.push(Part::Lit(prefix.to_vec()));
                parts.push(Part::Hole(HOLE_MULTI + usize::from(*i)));
            }
            ArgPart::OtherKey(i) => {
                // Key 0 of the multi keys is the command's own (`__key__`).
                d.multi_keys = d.multi_keys.max(i + 1);
                d.distinct_keys = true;
                parts.push(Part::Lit(prefix.to_vec()));
                parts.push(Part::Hole(HOLE_MULTI + usize::from(*i)));
            }
            ArgPart::Element(space) => {
                d.elements |= 1 << *space as u8;
                parts.push(Part::Lit(spaces.get(*space).prefix.as_bytes().to_vec()));
                parts.push(Part::Hole(HOLE_ELEMENT + *space as usize));
            }
            // Filled before the run (`config::arguments::fill_setup`); as written until then.
            ArgPart::Setup(n) => parts.push(Part::Lit(format!("__setup:{n}__").into_bytes())),
            ArgPart::Between { min, max, normal } => {
                // The front-ends build these (WAIT has two); past the cap, draws repeat.
                parts.push(Part::Hole(HOLE_BETWEEN + usize::from(d.between).min(MAX_BETWEEN - 1)));
                if usize::from(d.between) < MAX_BETWEEN {
                    ranges.push((*min, *max, *normal));
                    d.between += 1;
                }
            }
            ArgPart::Cursor => {
                d.cursor = true;
                parts.push(Part::Hole(HOLE_CURSOR));
            }
            ArgPart::Stamp => {
                d.stamp = true;
                parts.push(Part::Hole(HOLE_STAMP));
            }
            ArgPart::Field(field) => {
                d.fields = true;
                // `check` refused a field the dataset does not keep.
                let column = dataset.and_then(|ds| ds.column(field)).unwrap_or(0);
                parts.push(Part::Hole(HOLE_FIELD + column));
            }
        }
    }
    parts
}

/// The value of an integer reply (`:5\r\n`).
fn integer(reply: &[u8]) -> Option<u64> {
    let digits = reply.strip_prefix(b":")?;
    let end = memchr::memchr(b'\r', digits)?;
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// memtier's `--data-size-pattern S`: key `key` of `lo..=hi` gets a size spread evenly over
/// `min..=max` (the first key the smallest, the last the largest).
pub fn size_by_key(min: usize, max: usize, key: u64, lo: u64, hi: u64) -> usize {
    let at = if hi > lo { key.saturating_sub(lo) as f64 / (hi - lo) as f64 } else { 0.0 };
    (min + ((max - min) as f64 * at) as usize).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandSpec, KeyPattern, KeyRange, ServerOptions, Target};
    use std::sync::Arc;
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
                session: Default::default(),
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
            extras: crate::config::Extras::default(),
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

    /// The requests `g` writes for `n` picks, each as its words.
    fn requests(g: &mut RequestGen, n: usize) -> Vec<Vec<String>> {
        (0..n)
            .map(|_| {
                let mut out = Vec::new();
                g.encode_next(&mut out);
                let text = String::from_utf8(out).unwrap();
                text.split("\r\n").skip(2).step_by(2).filter(|w| !w.is_empty()).map(str::to_string).collect()
            })
            .collect()
    }

    #[test]
    fn fields_in_order_move_on_once_per_pass_over_the_keys() {
        let mut c = config(1, 0);
        c.keys = KeyRange { prefix: "h:".into(), min: 1, max: 2 };
        c.commands = vec![CommandSpec::parse("HSET __key__ __field__ v", 1, KeyPattern::Sequential).unwrap()];
        c.extras.spaces.0[0] =
            crate::config::arguments::ArgSpace { prefix: "f".into(), min: 1, max: 3, sequential: true };
        let mut g = RequestGen::new(Arc::new(Workload::compile(&c)), &c, 0);
        let pairs: Vec<String> = requests(&mut g, 6).iter().map(|w| format!("{}/{}", w[1], w[2])).collect();
        assert_eq!(pairs, ["h:1/f1", "h:2/f1", "h:1/f2", "h:2/f2", "h:1/f3", "h:2/f3"]);
    }

    #[test]
    fn other_keys_are_distinct_from_the_first_even_when_drawn() {
        let mut c = config(1, 0);
        c.keys = KeyRange { prefix: "k:".into(), min: 1, max: 3 };
        c.commands = vec![CommandSpec::parse("MSET __key__ a __key2__ b __key3__ c", 1, KeyPattern::Random).unwrap()];
        let mut g = RequestGen::new(Arc::new(Workload::compile(&c)), &c, 0);
        for words in requests(&mut g, 200) {
            let mut keys = vec![&words[1], &words[3], &words[5]];
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), 3, "{words:?}");
        }
    }
}
