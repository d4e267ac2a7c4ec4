//! A run's timeline: one [`Interval`] per interval, packed one after another in a single
//! growing buffer (`stats::packed`) rather than kept as structs, since it is the one part of a
//! run's memory that grows with its length: a struct per interval cost ~2.3 kB of heap (its
//! rows, boxed parts and kept quantiles), packed it costs a few hundred bytes.

use super::server_stats::ServerSample;
use crate::engine::server_stats::ServerCpu;
use crate::stats::{CompactOp, OpStats, Reader, Window, Writer};

/// One interval of the timeline, all workers merged: what its readers read (the result's time
/// series and faults, memtier's per-second series, the exit code, the server telemetry), its
/// histograms as summaries taken at full precision as it completed (the histograms themselves
/// go to the interval log, when there is one, as the interval completes).
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// Which of `--runs` it belongs to (0 for a single run).
    pub run: usize,
    pub index: u64,
    /// Seconds from the start of the measured phase to the start of this interval.
    pub start_secs: f64,
    /// Its length: the configured interval, shorter for the last one.
    pub duration_secs: f64,
    /// Per command: counters and the response time's summary (no report shows a command's
    /// service time or latency parts per interval: they are not kept).
    pub ops: Vec<CompactOp>,
    /// All commands together (a sequence's unit row left out), summarised in full.
    pub total: CompactOp,
    /// Replies that were not errors.
    pub successes: u64,
    /// Connections taking part, at most, during the interval (the workers' counts added).
    pub connections: u64,
    /// The server over (about) this interval, when INFO is allowed.
    pub server: Option<ServerSample>,
    /// Connections open in this interval, when the engine varies them (a staircase);
    /// memtier's JSON writes them as "Active Clients".
    pub active_connections: Option<u64>,
}

impl Interval {
    /// The interval as the timeline keeps it, from its merged window: summaries with their
    /// values at `quantiles` (0 to 1).
    pub fn of(
        (run, index): (usize, u64),
        (start_secs, duration_secs): (f64, f64),
        window: &Window,
        quantiles: &[f64],
        extras: (Option<ServerSample>, Option<u64>),
    ) -> Interval {
        Interval::with_total((run, index), (start_secs, duration_secs), (window, &window.total()), quantiles, extras)
    }

    /// [`Interval::of`] with the window's total row made already (the collector keeps one
    /// row for it from interval to interval, `OpStats::summed`).
    pub fn with_total(
        (run, index): (usize, u64),
        (start_secs, duration_secs): (f64, f64),
        (window, total): (&Window, &OpStats),
        quantiles: &[f64],
        (server, active_connections): (Option<ServerSample>, Option<u64>),
    ) -> Interval {
        Interval {
            run,
            index,
            start_secs,
            duration_secs,
            ops: window.ops.iter().map(|op| op.compact_response(quantiles)).collect(),
            total: total.compact(quantiles),
            successes: window.successes,
            connections: window.active_connections,
            server,
            active_connections,
        }
    }
}

/// The intervals, packed: push one as it completes, read them back (decoded) in order.
#[derive(Clone, Default)]
pub struct Timeline {
    bytes: Vec<u8>,
    len: usize,
    /// Where the last interval starts in `bytes`.
    last: usize,
    /// The kept quantiles, by the place the packed summaries name them with.
    quantiles: Vec<f64>,
}

/// Bytes an interval takes, about (a guess for reserving: a run with the latency's parts and
/// server samples stays under it).
const BYTES_PER_INTERVAL: usize = 480;
const BYTES_PER_ROW: usize = 64;

/// Which options an interval has (its flags byte).
const SERVER: u8 = 1;
const ACTIVE: u8 = 2;
const MAIN_THREAD: u8 = 4;
const HIT_RATIO: u8 = 8;

impl Timeline {
    /// Room for `intervals` of `rows` commands, reserved once (a long run's timeline then
    /// never doubles: a step in RSS).
    pub fn with_capacity(intervals: usize, rows: usize) -> Timeline {
        Timeline {
            bytes: Vec::with_capacity(intervals * (BYTES_PER_INTERVAL + rows * BYTES_PER_ROW)),
            ..Timeline::default()
        }
    }

    pub fn push(&mut self, i: &Interval) {
        self.last = self.bytes.len();
        self.len += 1;
        let mut w = Writer { out: &mut self.bytes };
        w.u64(i.run as u64);
        w.u64(i.index);
        w.round_f64(i.start_secs);
        w.round_f64(i.duration_secs);
        w.u64(i.successes);
        w.u64(i.connections);
        let server = i.server.as_ref();
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        w.u8(flag(server.is_some(), SERVER)
            | flag(i.active_connections.is_some(), ACTIVE)
            | flag(server.is_some_and(|s| s.cpu.main_thread.is_some()), MAIN_THREAD)
            | flag(server.is_some_and(|s| s.hit_ratio.is_some()), HIT_RATIO));
        if let Some(n) = i.active_connections {
            w.u64(n);
        }
        if let Some(s) = server {
            write_server(&mut w, s);
        }
        w.u64(i.ops.len() as u64);
        for op in &i.ops {
            w.op(op, &mut self.quantiles);
        }
        w.op(&i.total, &mut self.quantiles);
    }

    /// The intervals in the order pushed.
    pub fn iter(&self) -> impl Iterator<Item = Interval> + '_ {
        let mut r = Reader::new(&self.bytes);
        (0..self.len).map(move |_| read(&mut r, &self.quantiles))
    }

    pub fn last(&self) -> Option<Interval> {
        (self.len > 0).then(|| read(&mut Reader::new(&self.bytes[self.last..]), &self.quantiles))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the intervals take (not counting room reserved).
    pub fn packed_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// `other`'s intervals after these (a pooled run's runs one after another).
    pub fn extend(&mut self, other: &Timeline) {
        self.bytes.reserve(other.bytes.len());
        for i in other.iter() {
            self.push(&i);
        }
    }
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Timeline({} intervals in {} bytes)", self.len, self.bytes.len())
    }
}

fn write_server(w: &mut Writer<'_>, s: &ServerSample) {
    w.f64(s.cpu.total);
    if let Some(main) = s.cpu.main_thread {
        w.f64(main);
    }
    w.u64(s.used_memory_bytes);
    w.f64(s.fragmentation_ratio);
    w.u64(s.keyspace_hits);
    w.u64(s.keyspace_misses);
    if let Some(ratio) = s.hit_ratio {
        w.f64(ratio);
    }
    for v in [s.evicted_keys, s.expired_keys, s.connected_clients] {
        w.u64(v);
    }
    w.f64(s.ops_per_sec);
    w.u64(s.keys);
}

fn read_server(r: &mut Reader<'_>, flags: u8) -> ServerSample {
    let total = r.f64();
    let main_thread = (flags & MAIN_THREAD != 0).then(|| r.f64());
    let used_memory_bytes = r.u64();
    let fragmentation_ratio = r.f64();
    let (keyspace_hits, keyspace_misses) = (r.u64(), r.u64());
    let hit_ratio = (flags & HIT_RATIO != 0).then(|| r.f64());
    let [evicted_keys, expired_keys, connected_clients] = [(); 3].map(|()| r.u64());
    ServerSample {
        cpu: ServerCpu { total, main_thread },
        used_memory_bytes,
        fragmentation_ratio,
        keyspace_hits,
        keyspace_misses,
        hit_ratio,
        evicted_keys,
        expired_keys,
        connected_clients,
        ops_per_sec: r.f64(),
        keys: r.u64(),
    }
}

/// One interval [`Timeline::push`] wrote.
fn read(r: &mut Reader<'_>, quantiles: &[f64]) -> Interval {
    let (run, index) = (r.u64() as usize, r.u64());
    let (start_secs, duration_secs) = (r.round_f64(), r.round_f64());
    let (successes, connections) = (r.u64(), r.u64());
    let flags = r.u8();
    let active_connections = (flags & ACTIVE != 0).then(|| r.u64());
    let server = (flags & SERVER != 0).then(|| read_server(r, flags));
    let ops = (0..r.u64()).map(|_| r.op(quantiles)).collect();
    let total = r.op(quantiles);
    Interval { run, index, start_secs, duration_secs, ops, total, successes, connections, server, active_connections }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Parts, Recorded};

    /// A merged window of `rows` commands with `per_row` replies each, latencies varied by `seed`.
    fn window(seed: u64, rows: usize, parts: bool, per_row: u64) -> Window {
        let mut w = Window::with_parts(rows, (rows == 3).then_some(2), parts);
        for (r, op) in w.ops.iter_mut().enumerate() {
            let r = r as u64;
            for k in 0..per_row * (r + 1) {
                let ns = 20_000 + (seed * 7919 + k * 104_729 + r * 13) % 400_000 + (k % 997 == 0) as u64 * 9_000_000;
                op.record(ns, Some(ns - ns / 5));
                op.count += 1;
                op.sent += 1;
                op.bytes_out += 140;
                op.bytes_in += if r == 1 { 107 } else { 5 };
                op.hits += r & 1;
                if let Some(p) = op.parts.as_mut() {
                    let (send, wire) = (ns / 7, ns / 2);
                    p.record(
                        Parts { send_lag_ns: send, wire_ns: wire, receive_lag_ns: ns - send - wire },
                        Some(ns - send),
                    );
                }
            }
            op.errors = seed % 4;
            op.failed = seed % 2;
        }
        w.successes = w.ops.iter().map(|o| o.count).sum::<u64>().saturating_sub(seed % 4);
        w.active_connections = 50 - seed % 3;
        w
    }

    fn sample(seed: u64) -> ServerSample {
        ServerSample {
            cpu: ServerCpu { total: 0.71 + seed as f64 / 1e4, main_thread: seed.is_multiple_of(2).then_some(0.5) },
            used_memory_bytes: 24_000_000 + seed * 64,
            fragmentation_ratio: 1.17,
            keyspace_hits: 40_000 + seed,
            keyspace_misses: seed,
            hit_ratio: (!seed.is_multiple_of(3)).then(|| 40_000.0 / (40_000.0 + seed as f64)),
            evicted_keys: seed % 2,
            expired_keys: 0,
            connected_clients: 51,
            ops_per_sec: 50_012.5 + seed as f64,
            keys: 99_999,
        }
    }

    #[test]
    fn intervals_read_back_as_they_were_pushed() {
        let quantiles = [0.5, 0.99, 0.999, 0.9999];
        let (mut timeline, mut pushed) = (Timeline::default(), Vec::new());
        // Three runs: latency parts or none, three rows (a unit row) or two, the report's
        // quantiles or none (a recovered run), empty windows, server samples and staircase
        // counts now and then, a short last interval.
        for run in 0..3usize {
            for index in 0..25u64 {
                let seed = run as u64 * 1000 + index;
                let per_row = if index % 6 == 3 { 0 } else { 1 + seed % 50 };
                let w = window(seed, if run == 2 { 3 } else { 2 }, run != 2, per_row);
                let q: &[f64] = if run == 1 { &[] } else { &quantiles };
                let duration = if index == 24 { 0.123_456_789 } else { 1.0 };
                let server = (index % 4 != 1).then(|| sample(seed));
                let i =
                    Interval::of((run, index), (index as f64, duration), &w, q, (server, (run == 1).then_some(seed)));
                timeline.push(&i);
                pushed.push(i);
            }
        }
        assert_eq!(timeline.len(), pushed.len());
        let back: Vec<Interval> = timeline.iter().collect();
        assert!(back == pushed, "decoded intervals differ");
        assert_eq!(timeline.last().as_ref(), pushed.last());
        // What the readers read, spelt out: a kept quantile, a summary figure, the parts.
        let (i, p) = (&back[7], &pushed[7]);
        assert_eq!(i.ops[1].latency_ns.kept_quantile_ns(0.9999), p.ops[1].latency_ns.kept_quantile_ns(0.9999));
        assert!(i.ops[1].latency_ns.kept_quantile_ns(0.9999).is_some());
        assert_eq!(i.total.latency().p99_us.to_bits(), p.total.latency().p99_us.to_bits());
        assert_eq!(
            i.total.parts.as_deref().map(|p| p.without_client().quantile_ns(0.99)),
            p.total.parts.as_deref().map(|p| p.without_client().quantile_ns(0.99))
        );
        // Pooled runs: one timeline after another.
        let (mut first, mut second) = (Timeline::default(), Timeline::default());
        pushed[..30].iter().for_each(|i| first.push(i));
        pushed[30..].iter().for_each(|i| second.push(i));
        first.extend(&second);
        assert!(first.iter().collect::<Vec<_>>() == pushed, "extended timeline differs");
        assert!(Timeline::default().last().is_none() && Timeline::default().iter().next().is_none());
    }

    /// The soak's configuration (`scripts/soak.sh`): GET and SET 4:1 at 50,000/s, open loop with
    /// the latency's parts, the default percentiles kept, the server sampled every interval.
    #[test]
    fn an_interval_of_the_soak_packs_in_under_500_bytes() {
        let mut timeline = Timeline::with_capacity(20, 2);
        for index in 0..20u64 {
            let w = window(index, 2, true, 10_000);
            let i = Interval::of(
                (0, 1000 + index),
                ((1000 + index) as f64, 1.0),
                &w,
                &[0.5, 0.99, 0.999],
                (Some(sample(index)), None),
            );
            timeline.push(&i);
        }
        let per_interval = timeline.packed_bytes() / timeline.len();
        println!("packed: {per_interval} bytes per interval");
        assert!(per_interval <= 500, "{per_interval} bytes per interval");
    }
}
