//! A stream role's consumers: one consumer group on the role's stream (`NAME:1`), created
//! afresh before the producers (the run's connections, XADD with a stamp in the entry's
//! `stamp` field) start and destroyed after the run. Each consumer is a listener on a thread of
//! its own looping XREADGROUP ... BLOCK ... STREAMS key >, then XACK for what it read (unless
//! the role reads with NOACK), keeping its own tally: entries consumed and their end-to-end
//! latency, from the producer's stamp to the consumer's read. A sampler asks the server for
//! the group's pending entries (XPENDING) and lag (XINFO GROUPS) every [`SAMPLE`]. After the
//! producers stop, the consumers get at most [`DRAIN`](listener::DRAIN) to read what is still on its way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::listener::{self, Cursor, Ended, Line, Shared, TICK};
use crate::config::Config;
use crate::config::role::RoleKind;
use crate::config::role::queue::StreamRole;
use crate::net::{ConnectError, Session};
use crate::resp::value::{self, Value};
use crate::stats::LatencySummary;
use crate::workload::stamp::{self, Stamp};

/// How often the group's pending entries and lag are sampled.
const SAMPLE: Duration = Duration::from_millis(100);
/// The longest an XACK is waited for once the run is over.
const ACK_WAIT: Duration = Duration::from_secs(1);

/// What a stream role's entries did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct StreamFigures {
    /// XADD requests the server answered without an error.
    pub produced: u64,
    /// Entries the consumers read (each carrying a producer's stamp).
    pub consumed: u64,
    /// Entries the consumers acknowledged (XACK's replies added up; 0 with NOACK).
    pub acked: u64,
    /// Produced entries no consumer read by the end.
    pub unconsumed: u64,
    /// The group's pending entries (read, not acknowledged) after the run, as XPENDING says;
    /// absent if the server did not answer.
    pub pending: Option<u64>,
    /// The most pending entries, and the highest lag (entries not yet delivered to the group,
    /// XINFO GROUPS), among the samples taken every 100 ms during the run; absent without any,
    /// and from a merged result (its shards sampled at different times).
    pub pending_max: Option<u64>,
    pub lag_max: Option<u64>,
    /// From the producer's send (the stamp in the entry) to the consumer's read.
    pub end_to_end_latency: LatencySummary,
    /// Consumers whose connection ended during the run, each with why.
    pub dropped_consumers: Vec<String>,
    /// The end-to-end latency's histogram (`histograms.roles` in the result).
    #[serde(skip)]
    pub kept: crate::stats::Latencies,
}

/// One consumer's own figures.
struct Tally {
    consumer: usize,
    consumed: u64,
    acked: u64,
    latency: Histogram<u64>,
    ended: Option<Ended>,
}

/// What the sampler saw.
#[derive(Default)]
struct Samples {
    pending_max: Option<u64>,
    lag_max: Option<u64>,
}

/// A stream role's consumers, reading.
pub struct Consumers {
    key: String,
    group: String,
    threads: Vec<JoinHandle<Tally>>,
    sampler: Option<JoinHandle<(Session, Samples)>>,
    shared: Arc<Shared>,
}

/// The stream role of `config`, if it has one.
pub fn role(config: &Config) -> Option<&StreamRole> {
    config.extras.roles.iter().find_map(|r| match &r.kind {
        RoleKind::Stream(s) => Some(s),
        _ => None,
    })
}

/// Creates the consumer group (afresh: a group of the same name on the role's stream is
/// replaced) and starts every consumer, each connected, before the producers start.
pub fn listen(config: &Config) -> Result<Option<Consumers>, ConnectError> {
    let Some(s) = role(config) else { return Ok(None) };
    let key = format!("{}1", config.keys.prefix);
    let server = listener::home(config, key.as_bytes())?;
    let mut control = Session::open(&server)?;
    let (k, g) = (key.as_bytes(), s.group.as_bytes());
    // No group yet (or no stream) is the usual answer.
    let _ = control.call(&[b"XGROUP", b"DESTROY", k, g]);
    control.call_checked(&[b"XGROUP", b"CREATE", k, g, b"$", b"MKSTREAM"])?;
    listener::read_timeout(&control.stream, Duration::from_secs(1));
    let shared = Arc::new(Shared { consumed: AtomicU64::new(0), stop: AtomicBool::new(false) });
    let mut threads = Vec::new();
    for consumer in 0..s.consumers {
        let line = Line::new(Session::open(&server)?, config.faults.max_reply);
        let name = format!("{}-{}", s.group, consumer + 1);
        let mut read = Vec::new();
        let count = s.count.to_string();
        let block = s.block_ms.to_string();
        let mut args: Vec<&[u8]> = vec![b"XREADGROUP", b"GROUP", g, name.as_bytes()];
        args.extend([&b"COUNT"[..], count.as_bytes(), b"BLOCK", block.as_bytes()]);
        if !s.ack {
            args.push(b"NOACK");
        }
        args.extend([&b"STREAMS"[..], k, b">"]);
        crate::resp::encode_command(&mut read, &args);
        let ack = s.ack.then(|| (key.clone(), s.group.clone()));
        let shared = Arc::clone(&shared);
        threads.push(
            std::thread::Builder::new()
                .name(format!("respbench-xread{consumer}"))
                .spawn(move || consume(line, consumer, &read, ack, &shared))
                .expect("a consumer thread starts"),
        );
    }
    let sampler = {
        let (shared, key, group) = (Arc::clone(&shared), key.clone(), s.group.clone());
        std::thread::Builder::new()
            .name("respbench-xpending".into())
            .spawn(move || sample(control, &key, &group, &shared))
            .expect("the sampler thread starts")
    };
    Ok(Some(Consumers { key, group: s.group.clone(), threads, sampler: Some(sampler), shared }))
}

/// A consumer's loop, until the run is over or its connection ends. `ack`: the stream and
/// group to XACK in.
fn consume(mut line: Line, consumer: usize, read: &[u8], ack: Option<(String, String)>, shared: &Shared) -> Tally {
    let mut tally = Tally { consumer, consumed: 0, acked: 0, latency: crate::stats::histogram(), ended: None };
    let mut acks = ack.map(|(key, group)| Acks { key, group, ids: Vec::new(), ends: Vec::new(), out: Vec::new() });
    while !shared.stop.load(Ordering::Relaxed) {
        match consume_once(&mut line, read, acks.as_mut(), shared, &mut tally) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                tally.ended = Some(e);
                break;
            }
        }
    }
    tally
}

/// What a consumer acknowledges in: its stream and group, the IDs of its last read back to
/// back and where each ends, and the XACK built from them.
struct Acks {
    key: String,
    group: String,
    ids: Vec<u8>,
    ends: Vec<usize>,
    out: Vec<u8>,
}

impl Acks {
    /// The XACK of the IDs kept.
    fn command(&mut self) -> &[u8] {
        self.out.clear();
        listener::command(&mut self.out, 3 + self.ends.len());
        for arg in [&b"XACK"[..], self.key.as_bytes(), self.group.as_bytes()] {
            listener::arg(&mut self.out, arg);
        }
        let mut start = 0;
        for &end in &self.ends {
            listener::arg(&mut self.out, &self.ids[start..end]);
            start = end;
        }
        &self.out
    }
}

/// One XREADGROUP, and the XACK of what it read: `false` once the run is over before a reply
/// came.
fn consume_once(
    line: &mut Line,
    read: &[u8],
    mut acks: Option<&mut Acks>,
    shared: &Shared,
    tally: &mut Tally,
) -> Result<bool, Ended> {
    let stopped = || shared.stop.load(Ordering::Relaxed);
    let Some(reply) = line.call(read, "XREADGROUP", stopped)? else { return Ok(false) };
    let now = stamp::now();
    let before = tally.consumed;
    if let Some(a) = acks.as_mut() {
        a.ids.clear();
        a.ends.clear();
    }
    let read = entries(reply, |id, stamp| {
        if let Some(stamp) = stamp {
            tally.consumed += 1;
            let _ = tally.latency.record(now.saturating_sub(stamp.sent_ns).max(1));
        }
        if let Some(a) = acks.as_mut() {
            a.ids.extend_from_slice(id);
            a.ends.push(a.ids.len());
        }
    });
    shared.consumed.fetch_add(tally.consumed - before, Ordering::Relaxed);
    if read.is_none() {
        return Err("it could not read an XREADGROUP reply".into());
    }
    let Some(acks) = acks.filter(|a| !a.ends.is_empty()) else { return Ok(true) };
    let sent = Instant::now();
    let Some(reply) = line.call(acks.command(), "XACK", || stopped() && sent.elapsed() > ACK_WAIT)? else {
        return Ok(false);
    };
    tally.acked += listener::integer(reply).unwrap_or(0);
    Ok(true)
}

/// Each entry of an XREADGROUP reply (RESP2 or RESP3): its ID and the stamp its `stamp` field
/// holds, if any. A null reply (BLOCK ran out) has none. `None` for a reply of another shape.
fn entries<'a>(reply: &'a [u8], mut each: impl FnMut(&'a [u8], Option<Stamp>)) -> Option<()> {
    let mut c = Cursor::new(reply);
    let (kind, streams) = c.header()?;
    for _ in 0..streams.unwrap_or(0) {
        if kind != b'%' {
            // RESP2: each stream is a pair [key, entries]; RESP3: a map's key and value.
            c.header()?;
        }
        c.string()?;
        let (_, count) = c.header()?;
        for _ in 0..count.unwrap_or(0) {
            c.header()?;
            let id = c.string()??;
            // Null for an entry deleted since it was delivered.
            let (_, fields) = c.header()?;
            let mut stamp = None;
            for _ in 0..fields.unwrap_or(0) / 2 {
                let (field, value) = (c.string()?, c.string()?);
                if field == Some(b"stamp") {
                    stamp = value.and_then(Stamp::read);
                }
            }
            each(id, stamp);
        }
    }
    Some(())
}

/// The group's pending entries and lag every [`SAMPLE`] until the run is over; hands the
/// control connection back.
fn sample(mut control: Session, key: &str, group: &str, shared: &Shared) -> (Session, Samples) {
    let mut samples = Samples::default();
    let most = |seen: &mut Option<u64>, now: Option<u64>| {
        if let Some(n) = now {
            *seen = Some(seen.map_or(n, |s| s.max(n)));
        }
    };
    while !shared.stop.load(Ordering::Relaxed) {
        most(&mut samples.pending_max, pending(&mut control, key, group));
        most(&mut samples.lag_max, lag(&mut control, key, group));
        let next = Instant::now() + SAMPLE;
        while Instant::now() < next && !shared.stop.load(Ordering::Relaxed) {
            std::thread::sleep(TICK.min(SAMPLE));
        }
    }
    (control, samples)
}

/// The group's pending entries, as XPENDING's summary counts them.
fn pending(control: &mut Session, key: &str, group: &str) -> Option<u64> {
    let reply = control.call(&[b"XPENDING", key.as_bytes(), group.as_bytes()]).ok()?;
    let mut c = Cursor::new(&reply.0);
    c.header()?;
    std::str::from_utf8(c.string()??).ok()?.parse().ok()
}

/// The group's lag, as XINFO GROUPS gives it (Redis 7 and later; absent before, or when the
/// server cannot tell).
fn lag(control: &mut Session, key: &str, group: &str) -> Option<u64> {
    let reply = control.call(&[b"XINFO", b"GROUPS", key.as_bytes()]).ok()?;
    let groups = value::parse(&reply.0)?;
    groups.as_array()?.iter().find_map(|g| {
        let fields = g.as_array()?;
        let field = |name: &str| fields.chunks(2).find(|kv| kv[0].as_str() == Some(name)).and_then(|kv| kv.get(1));
        if field("name")?.as_str()? != group {
            return None;
        }
        match field("lag")? {
            Value::Nil => None,
            v => v.as_int().and_then(|n| u64::try_from(n).ok()),
        }
    })
}

impl Consumers {
    /// Once the producers stopped, having produced `produced` entries: waits for what is still
    /// on its way (at most [`DRAIN`](listener::DRAIN), [`DRAIN_STOPPED`](listener::DRAIN_STOPPED) after a stop signal), stops the
    /// consumers, reads the group's pending entries, destroys the group and adds up the tallies.
    pub fn finish(mut self, produced: u64, stopped: bool) -> StreamFigures {
        let tallies = listener::drained(&self.shared, &mut self.threads, produced, stopped);
        let mut f = StreamFigures { produced, ..StreamFigures::default() };
        if let Some((mut control, samples)) = self.sampler.take().and_then(|s| s.join().ok()) {
            f.pending = pending(&mut control, &self.key, &self.group);
            (f.pending_max, f.lag_max) = (samples.pending_max, samples.lag_max);
            let _ = control.call(&[b"XGROUP", b"DESTROY", self.key.as_bytes(), self.group.as_bytes()]);
        }
        let mut latency = crate::stats::histogram();
        for t in &tallies {
            f.consumed += t.consumed;
            f.acked += t.acked;
            latency.add(&t.latency).expect("same bounds");
            if let Some(why) = &t.ended {
                f.dropped_consumers.push(format!("consumer {}: {why}", t.consumer + 1));
            }
        }
        f.unconsumed = produced.saturating_sub(f.consumed);
        f.end_to_end_latency = LatencySummary::of(&latency);
        f.kept = crate::stats::Latencies::of([(crate::stats::latency_name::END_TO_END, latency)]);
        f
    }
}

impl Drop for Consumers {
    /// Consumers of a run that could not start (or did not finish) stop reading too.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamped(seq: u64) -> Vec<u8> {
        let mut out = [0; stamp::STAMP_LEN];
        Stamp { publisher: 0, seq, sent_ns: 7 }.write(&mut out);
        out.to_vec()
    }

    fn collect(reply: &[u8]) -> Option<Vec<(String, Option<u64>)>> {
        let mut seen = Vec::new();
        entries(reply, |id, s| seen.push((String::from_utf8_lossy(id).into_owned(), s.map(|s| s.seq))))?;
        Some(seen)
    }

    #[test]
    fn entries_are_read_in_both_protocols() {
        let s = String::from_utf8(stamped(3)).unwrap();
        let resp2 = format!(
            "*1\r\n*2\r\n$4\r\nq:1\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$5\r\nstamp\r\n$40\r\n{s}\r\n\
             *2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
        )
        .replace("$4\r\nq:1", "$3\r\nq:1");
        assert_eq!(collect(resp2.as_bytes()), Some(vec![("1-0".into(), Some(3)), ("2-0".into(), None)]));
        let resp3 = format!("%1\r\n$3\r\nq:1\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$5\r\nstamp\r\n$40\r\n{s}\r\n");
        assert_eq!(collect(resp3.as_bytes()), Some(vec![("1-0".into(), Some(3))]));
        assert_eq!(collect(b"*-1\r\n"), Some(vec![]));
        assert_eq!(collect(b"_\r\n"), Some(vec![]));
        assert_eq!(collect(b"*1\r\n:5\r\n"), None);
    }
}
