//! One connection's request stream ([`RequestGen`]): its own random stream, key walkers and
//! position in the mix; it patches the shared templates into the connection's write buffer,
//! allocating nothing per request.

use std::sync::Arc;

use crate::resp::Out;

use super::*;

/// Writes `n` into `buf` right-aligned, zero-padded to its width (wider numbers are cut).
fn zero_padded(buf: &mut [u8; RAND_WIDTH], n: u64) {
    let mut digits = itoa::Buffer::new();
    let text = digits.format(n).as_bytes();
    let text = &text[text.len().saturating_sub(RAND_WIDTH)..];
    buf.fill(b'0');
    buf[RAND_WIDTH - text.len()..].copy_from_slice(text);
}

/// A pub/sub message's stamp: `publisher`'s next sequence number, sent now.
#[inline]
fn next_stamp(published: &mut u64, publisher: u32) -> [u8; stamp::STAMP_LEN] {
    *published += 1;
    let mut out = [0; stamp::STAMP_LEN];
    stamp::Stamp { publisher, seq: *published, sent_ns: stamp::now() }.write(&mut out);
    out
}

/// A key drawn and routed before its command is encoded (cluster mode): its number and slot.
#[derive(Debug, Clone, Copy)]
pub struct RoutedKey {
    pub key: u64,
    pub slot: u16,
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
    /// The first unit this connection picks from (its credit covers those it picks from): a
    /// run of several roles gives each connection its group's.
    first_unit: usize,
    /// Digits of a multi-key command's keys, back to back, and where each ends (reused).
    multi_digits: Vec<u8>,
    multi_ends: Vec<usize>,
    /// The numbers of a multi-key command's keys, to draw `__key2__` .. distinct (reused).
    multi_numbers: Vec<u64>,
    /// `__field__` and `__member__` walked in order: the requests each command has taken.
    elements_taken: Vec<[u64; 2]>,
    /// `--data-import`: the next item this connection writes.
    import_next: usize,
    /// `__monitor_line@__`: the line [`resolve`](Self::resolve) picked.
    picked: Option<usize>,
    /// `--scan-incremental-iteration`: the cursor to send next (empty: start at 0), and the
    /// continuation SCANs sent in this cycle.
    cursor: Vec<u8>,
    scan_iterations: u32,
    /// `--rand-sequential`: a count for each placeholder (`__rand_1st__` .. `__rand_9th__`,
    /// then `__rand_int__`).
    counted: Option<[Interleaved; 10]>,
    /// `--dataset`: the rows this connection takes.
    rows: Interleaved,
    /// `--transaction`: the key the unit being sent uses for every keyed command, and its name
    /// (prefix and digits, written when asked for: cluster routing).
    unit_key: Option<u64>,
    unit_key_name: Vec<u8>,
    /// A pub/sub role's publisher: this connection's number and its next message's sequence.
    publisher: u32,
    published: u64,
}

/// A count the connections share without sharing anything: connection `offset` of `stride`
/// takes `offset`, `offset + stride`, `offset + 2 * stride`, ... (wrapping), so together they
/// take every number once per pass (`--rand-sequential`'s numbers, `--dataset`'s rows).
#[derive(Debug, Clone, Copy)]
struct Interleaved {
    taken: u64,
    offset: u64,
    stride: u64,
}

impl Interleaved {
    /// The next number in `0..span` (a `u128`: a whole `u64` range is one more than `u64` holds).
    #[inline]
    fn next(&mut self, span: u128) -> u64 {
        let n = self.taken;
        self.taken += 1;
        ((u128::from(self.offset) + u128::from(n) * u128::from(self.stride)) % span) as u64
    }
}

impl RequestGen {
    pub fn new(workload: Arc<Workload>, config: &Config, conn_index: usize) -> RequestGen {
        // In a run of several roles, the connection's keys are its group's, and it publishes
        // as the group's connection `local` (`config::role_plan::groups`).
        let (own, local) = config.group_of(conn_index);
        let units = config.units_of(conn_index).unwrap_or(0..workload.weights.len());
        let slice = own.slice(local);
        let (min, max) = (own.keys.min, own.keys.max);
        let (keys, key_of) = if config.stop == StopAfter::AllKeys {
            // Every command shares one walk over this connection's slice: each key once.
            let walk = KeyGen::new(crate::config::KeyPattern::Parallel, min, max, slice);
            (vec![walk], vec![0; config.commands.len()])
        } else {
            // The walks (S, P) keep to a shard's part of the range; draws use all of it.
            let keys = config.commands.iter().map(|c| {
                let (min, max) = own.keys_for(c.key_pattern);
                KeyGen::new(c.key_pattern, min, max, slice)
            });
            (keys.collect(), (0..config.commands.len()).collect())
        };
        let credit = vec![0; units.len()];
        let total_weight = workload.weights[units.clone()].iter().map(|w| i64::from(*w)).sum();
        let multi = workload.draws.iter().map(|d| usize::from(d.multi_keys)).max().unwrap_or(0);
        // Connections start spread over the imported items, so a short run still writes many.
        let import_next = workload.import.as_ref().map_or(0, |i| conn_index * i.sets.len() / config.connections.max(1));
        let interleaved = Interleaved { taken: 0, offset: conn_index as u64, stride: config.connections.max(1) as u64 };
        RequestGen {
            workload,
            rng: Rng::derive(config.seed, if config.same_stream { 0 } else { conn_index as u64 }),
            keys,
            key_of,
            credit,
            total_weight,
            first_unit: units.start,
            multi_digits: Vec::with_capacity(multi * 20),
            multi_ends: Vec::with_capacity(multi),
            multi_numbers: Vec::with_capacity(multi),
            elements_taken: vec![[0; 2]; config.commands.len()],
            import_next,
            picked: None,
            cursor: Vec::with_capacity(24),
            scan_iterations: 0,
            counted: config.extras.rand_sequential.then_some([interleaved; 10]),
            rows: interleaved,
            unit_key: None,
            unit_key_name: Vec::with_capacity(config.keys.prefix.len() + 20),
            publisher: local as u32,
            published: 0,
        }
    }

    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    /// Picks the next unit of the mix by weight: exact ratios over every cycle of the weights.
    /// Under `--transaction` it also draws the unit's one key, from its first command's keys.
    #[inline]
    pub fn pick_unit(&mut self) -> usize {
        if self.workload.transaction() {
            let first = self.workload.units[0].first().map_or(0, |s| s.command);
            let walk = self.key_of.get(first).copied().unwrap_or(0);
            self.unit_key = Some(self.keys[walk].next(&mut self.rng));
        }
        if self.credit.len() == 1 {
            return self.first_unit;
        }
        let mut best = 0;
        for (i, w) in self.workload.weights[self.first_unit..].iter().take(self.credit.len()).enumerate() {
            self.credit[i] += i64::from(*w);
            if self.credit[i] > self.credit[best] {
                best = i;
            }
        }
        self.credit[best] -= self.total_weight;
        self.first_unit + best
    }

    /// `--transaction`: the name of the key every keyed command of the unit just picked uses
    /// (prefix and digits; the buffer is reused), for routing the whole unit to its shard.
    pub fn unit_key_name(&mut self) -> Option<&[u8]> {
        let key = self.unit_key?;
        self.unit_key_name.clear();
        self.unit_key_name.extend_from_slice(&self.workload.key_prefix);
        self.unit_key_name.extend_from_slice(itoa::Buffer::new().format(key).as_bytes());
        Some(&self.unit_key_name)
    }

    /// Cluster mode: whether every command of unit `unit` goes where its own key's digits say
    /// ([`draw_routed`](Self::draw_routed)) and takes no `{tag}`, so that no primary need be
    /// chosen in turn for the unit.
    #[inline]
    pub fn unit_routed(&self, unit: usize) -> bool {
        self.workload.units_routed[unit]
    }

    /// The one command this connection ever sends, if it sends one only: every unit it can
    /// pick (a weight above 0, or its first when none has one) is that command alone, with no
    /// monitor line, followed SCAN or transaction to change it. Cluster mode then records
    /// each reply's latency in its node's row only and adds the nodes' rows to that command's
    /// at each interval's end.
    pub fn sole_command(&self) -> Option<usize> {
        let w = &*self.workload;
        if w.monitor.is_some() || w.scan.is_some() || w.transaction {
            return None;
        }
        let units = self.first_unit..self.first_unit + self.credit.len();
        let pickable = |u: &usize| self.credit.len() == 1 || self.total_weight == 0 || w.weights[*u] > 0;
        let pickable = units.filter(pickable).take(if self.total_weight == 0 { 1 } else { usize::MAX });
        let mut commands = pickable.flat_map(|u| w.units[u].iter().map(|s| s.command));
        let first = commands.next()?;
        commands.all(|c| c == first).then_some(first)
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

    /// The command (report row) a step sends this time: the step's own, except for a MONITOR
    /// line (picked now, in order or at random, counted in its command's row) and a followed
    /// SCAN (row 1, `SCAN <cursor>`, while a cursor is pending). Call it before [`encode`](Self::encode).
    #[inline]
    pub fn resolve(&mut self, command: usize) -> usize {
        if command == MONITOR_PICK {
            let Some((lines, rows, random, next)) = &self.workload.monitor else { return 0 };
            let line = if *random {
                self.rng.below(lines.len() as u64) as usize
            } else {
                // In order across all connections, as memtier's shared counter.
                next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % lines.len()
            };
            self.picked = Some(line);
            return rows[line];
        }
        if self.workload.scan.is_some() && !self.cursor.is_empty() {
            return 1;
        }
        command
    }

    /// Reads a followed SCAN's reply (`--scan-incremental-iteration`): the cursor it returns
    /// (its first element) is sent next, until it is 0 or the cycle's iterations are spent; an
    /// error starts over at 0. Cheap: one bulk string read in place.
    pub fn scan_reply(&mut self, command: usize, class: ReplyClass, reply: &[u8]) {
        let Some(max) = self.workload.scan else { return };
        self.cursor.clear();
        if matches!(class, ReplyClass::Error { .. }) {
            self.scan_iterations = 0;
            return;
        }
        if let Some(cursor) = crate::resp::nth_arg(reply, 0) {
            self.cursor.extend_from_slice(cursor);
        }
        if command == 1 {
            self.scan_iterations += 1;
        }
        if self.cursor == b"0" || (max > 0 && self.scan_iterations >= max) {
            self.cursor.clear();
        }
        if self.cursor.is_empty() {
            self.scan_iterations = 0;
        }
    }

    /// Appends the next request of the mix to `out` (tests: one-command units only);
    /// returns its command index and the key number.
    #[cfg(test)]
    pub(super) fn encode_next(&mut self, out: &mut impl Out) -> (usize, u64) {
        let unit = self.pick_unit();
        let cmd = self.step(unit, 0).command;
        (cmd, self.encode(cmd, out))
    }

    /// Appends command `cmd` with fresh placeholders to `out`; returns its key number.
    #[inline(always)]
    pub fn encode(&mut self, cmd: usize, out: &mut impl Out) -> u64 {
        self.encode_tagged(cmd, out, b"")
    }

    /// A memtier import's command: the file's items in order for its SET and GET; false for
    /// any other command, which the mix encodes.
    fn encode_imported(&mut self, cmd: usize, key: u64, out: &mut impl Out, tag: &[u8]) -> bool {
        let Some(import) = &self.workload.import else { return false };
        if cmd == import.set {
            // The file's items in order (wrapping), keyed by the file or by the generator.
            let item = self.import_next;
            self.import_next = (item + 1) % import.sets.len();
            let mut digits = itoa::Buffer::new();
            let mut expiry = itoa::Buffer::new();
            let expiry: &[u8] = match self.workload.expiry {
                Some((lo, hi)) => expiry.format(lo + self.rng.below(hi - lo + 1)).as_bytes(),
                None => b"",
            };
            import.sets[item].encode(out, &[digits.format(key).as_bytes(), b"", expiry, tag]);
            return true;
        }
        if Some(cmd) == import.get {
            import.gets[(key % import.gets.len() as u64) as usize].encode(out, &[]);
            return true;
        }
        false
    }

    /// Like [`encode`](Self::encode), with `{tag}` filled with `tag` (cluster mode).
    #[inline(always)]
    pub fn encode_tagged(&mut self, cmd: usize, out: &mut impl Out, tag: &[u8]) -> u64 {
        if let Some(line) = self.picked.take()
            && let Some((lines, _, _, _)) = &self.workload.monitor
        {
            lines[line].encode(out, &[]);
            return 0;
        }
        let key = match self.unit_key {
            Some(key) => key,
            None => self.keys[self.key_of[cmd]].next(&mut self.rng),
        };
        self.encode_key(cmd, key, out, tag);
        key
    }

    /// Cluster mode: whether command `cmd`'s key hashes by its `{tag}` alone, so that it goes
    /// where the tag's slot is (encoded straight into that node's link).
    #[inline]
    pub fn tag_keyed(&self, cmd: usize) -> bool {
        self.picked.is_none() && self.workload.tag_keyed.get(cmd).copied().unwrap_or(false)
    }

    /// Cluster mode: draws command `cmd`'s key and returns it with its slot, before the
    /// command is encoded, when its key argument is the key between fixed text; `None`
    /// otherwise (nothing drawn: the encoded command says where it goes). The command is then
    /// encoded with that key by [`encode_routed`](Self::encode_routed).
    #[inline]
    pub fn draw_routed(&mut self, cmd: usize) -> Option<RoutedKey> {
        if self.picked.is_some() {
            return None;
        }
        let slots = self.workload.key_slots(cmd)?;
        let key = match self.unit_key {
            Some(key) => key,
            None => self.keys[self.key_of[cmd]].next(&mut self.rng),
        };
        Some(RoutedKey { key, slot: slots.slot_of(key) })
    }

    /// Cluster mode: the slot of key number `key` of command `cmd`, when its key argument is
    /// the key between fixed text (as [`draw_routed`](Self::draw_routed) found it).
    pub fn key_slot(&self, cmd: usize, key: u64) -> Option<u16> {
        Some(self.workload.key_slots(cmd)?.slot_of(key))
    }

    /// Appends command `cmd` for a key drawn and routed already ([`draw_routed`](Self::draw_routed)).
    #[inline]
    pub fn encode_routed(&mut self, cmd: usize, routed: &RoutedKey, out: &mut impl Out, tag: &[u8]) {
        self.encode_key(cmd, routed.key, out, tag);
    }

    /// Appends command `cmd` for key number `key` (drawn already) with fresh placeholders,
    /// `{tag}` filled with `tag`.
    #[inline]
    pub fn encode_key(&mut self, cmd: usize, key: u64, out: &mut impl Out, tag: &[u8]) {
        let mut digits = itoa::Buffer::new();
        self.encode_drawn(cmd, key, digits.format(key).as_bytes(), out, tag);
    }

    /// Appends command `cmd` for key number `key`, written `key_digits`.
    #[inline]
    fn encode_drawn(&mut self, cmd: usize, key: u64, key_digits: &[u8], out: &mut impl Out, tag: &[u8]) {
        if self.encode_imported(cmd, key, out, tag) {
            return;
        }
        // The commonest case (GET, DEL, INCR): the key and nothing else to draw.
        if self.workload.draws[cmd].key_only() {
            self.workload.templates[cmd].encode(out, &[key_digits, b"", b"", tag]);
            return;
        }
        let multi = usize::from(self.workload.draws[cmd].multi_keys);
        if multi > 0 {
            self.multi_keys(cmd, key, multi);
        }
        let mut element_digits = [itoa::Buffer::new(), itoa::Buffer::new()];
        let elements = self.workload.draws[cmd].elements;
        let mut element: [&[u8]; 2] = [b""; 2];
        for (space, (buf, hole)) in element_digits.iter_mut().zip(&mut element).enumerate() {
            if elements & (1 << space) != 0 {
                *hole = buf.format(self.element(cmd, space)).as_bytes();
            }
        }
        let workload = &*self.workload;
        let draws = workload.draws[cmd];
        // Only what the command uses is drawn: a GET costs no value and no expiry.
        let data: &[u8] = if draws.data {
            let len = workload.value_len(&mut self.rng, key);
            let offset =
                if workload.data.len() > len { self.rng.below((workload.data.len() - len) as u64) as usize } else { 0 };
            // A large value may then be sent from the shared data in place (`resp::SendBuf`).
            out.share(&workload.data);
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
        // A dataset command takes the next of this connection's rows (none without one).
        let row: &[Vec<u8>] = match (&workload.dataset, draws.fields) {
            (Some(dataset), true) => &dataset.rows[self.rows.next(dataset.rows.len() as u128) as usize],
            _ => &[],
        };
        if draws.fixed_only() {
            // The common case (SET, GET): no random numbers to draw or buffer.
            workload.templates[cmd].encode(out, &fixed);
        } else {
            let mut rands = [[b'0'; RAND_WIDTH]; 9 + MAX_RAND_INTS];
            let (lo, hi) = workload.rand_range;
            // Only the numbers the command uses, in the order of their holes: the shared ones
            // (`__rand_int0__` ..), then each `__rand_int__` in turn.
            let mut shared = draws.shared;
            let used = std::iter::from_fn(|| {
                let i = shared.trailing_zeros() as usize;
                shared &= shared.wrapping_sub(1);
                (i < 9).then_some(i)
            });
            for i in used.chain(9..9 + draws.rand_ints) {
                // Every `__rand_int__` of a command takes the one counter in turn.
                let n = match self.counted.as_mut() {
                    Some(counted) => lo + counted[i.min(9)].next(u128::from(hi - lo) + 1),
                    None => lo + self.rng.below(hi - lo + 1),
                };
                zero_padded(&mut rands[i], n);
            }
            let mut drawn = [itoa::Buffer::new(), itoa::Buffer::new(), itoa::Buffer::new(), itoa::Buffer::new()];
            let mut between: [&[u8]; MAX_BETWEEN] = [b""; MAX_BETWEEN];
            for ((&(lo, hi, normal), buf), hole) in workload.between[cmd].iter().zip(&mut drawn).zip(&mut between) {
                *hole = buf.format(rng::between(&mut self.rng, lo, hi, normal)).as_bytes();
            }
            let cursor: &[u8] = if self.cursor.is_empty() { b"0" } else { &self.cursor };
            let stamp =
                if draws.stamp { next_stamp(&mut self.published, self.publisher) } else { [0; stamp::STAMP_LEN] };
            let (digits, ends) = (&self.multi_digits, &self.multi_ends);
            workload.templates[cmd].encode_with(out, |i| {
                if i == HOLE_STAMP {
                    &stamp
                } else if i == HOLE_ELEMENT || i == HOLE_ELEMENT + 1 {
                    element[i - HOLE_ELEMENT]
                } else if i >= HOLE_FIELD {
                    &row[i - HOLE_FIELD]
                } else if i < HOLE_SHARED {
                    fixed[i]
                } else if i < HOLE_CURSOR {
                    &rands[i - HOLE_SHARED]
                } else if i == HOLE_CURSOR {
                    cursor
                } else if i < HOLE_MULTI {
                    between[i - HOLE_BETWEEN]
                } else {
                    let k = i - HOLE_MULTI;
                    &digits[if k == 0 { 0 } else { ends[k - 1] }..ends[k]]
                }
            });
        }
    }

    /// A multi-key command's keys, as digits back to back: the first is `key`, drawn already;
    /// each other is a draw of its own, and under `__key2__` .. one the command has not used
    /// yet (a range too small for that was refused; a skewed draw gets a bounded number of tries).
    fn multi_keys(&mut self, cmd: usize, key: u64, multi: usize) {
        const TRIES: usize = 64;
        let distinct = self.workload.draws[cmd].distinct_keys;
        self.multi_digits.clear();
        self.multi_ends.clear();
        self.multi_numbers.clear();
        let mut k = key;
        for i in 0..multi {
            if i > 0 {
                k = self.keys[self.key_of[cmd]].next(&mut self.rng);
                for _ in 0..TRIES {
                    if !distinct || !self.multi_numbers.contains(&k) {
                        break;
                    }
                    k = self.keys[self.key_of[cmd]].next(&mut self.rng);
                }
            }
            self.multi_numbers.push(k);
            self.multi_digits.extend_from_slice(itoa::Buffer::new().format(k).as_bytes());
            self.multi_ends.push(self.multi_digits.len());
        }
    }

    /// The next number of `space` (`__field__`, `__member__`) for command `cmd`: drawn, or
    /// walked in order, moving on once per pass of a key walk so keys and numbers pair up fully.
    #[inline]
    fn element(&mut self, cmd: usize, space: usize) -> u64 {
        let (lo, hi, sequential) = self.workload.spaces[space];
        let span = u128::from(hi - lo) + 1;
        if !sequential {
            return lo + self.rng.below((hi - lo).saturating_add(1));
        }
        let taken = &mut self.elements_taken[cmd][space];
        let n = *taken;
        *taken += 1;
        let per = self.keys[self.key_of[cmd]].walk_span().unwrap_or(1);
        lo + ((u128::from(n / per)) % span) as u64
    }
}
