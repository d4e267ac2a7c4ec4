//! A tracking role's cached readers: listeners the engine opens beside its writers (the run's
//! own connections, whose SET values carry a stamp, `workload::stamp`). Each reader is a RESP3
//! connection (HELLO 3) with `CLIENT TRACKING on` (BCAST with its prefix, or OPTIN with
//! `CLIENT CACHING yes` before each fetch) on a thread of its own, reading keys at its pace: a
//! key its bounded cache holds is served locally, any other is fetched with GET and cached. The
//! server's invalidation pushes, read in order with the replies, drop entries (a null list drops
//! all). A reader with nothing to fetch still sends a PING every [`SYNC_EVERY`], so that it
//! keeps hearing its invalidations and the stale check has a recent point to stand on.
//!
//! A witness (`witness`) reads every key apart from the readers and is the writers' log: each
//! local read is checked against it (a stale read is a value served after the server had
//! invalidated it, provably), and each invalidation of a held key is timed from the send time
//! of the write that caused it. The tallies are added up into [`Figures`].

mod cache;
mod witness;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cache::{Reader, Tally};
use witness::{Event, Log, Timing, Witness};

use super::listener::{Cursor, Line, TICK};

use crate::config::Config;
use crate::config::role::RoleKind;
use crate::config::role::tracking::{TrackMode, Tracking};
use crate::net::{CallError, ConnectError, Session};
use crate::resp::{self, ReplyClass};
use crate::stats::LatencySummary;
use crate::workload::stamp;

/// The longest a reader goes without a round trip to the server.
const SYNC_EVERY: Duration = Duration::from_millis(5);
/// A reader more than this behind its pace starts afresh instead of catching up in a burst.
const BEHIND: Duration = Duration::from_millis(100);

/// What a tracking role's readers did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Figures {
    /// Reads the readers made, local or not.
    pub reads: u64,
    /// Reads served from a reader's own cache.
    pub local_hits: u64,
    /// Reads that went to the server (GET): the cache did not hold the key.
    pub server_reads: u64,
    /// `local_hits / reads`.
    pub hit_ratio: f64,
    /// Keys the server's invalidation pushes named, over every reader.
    pub invalidations: u64,
    /// Pushes that invalidated everything (a null key list).
    pub flushes: u64,
    /// Invalidations per second of the readers' listening.
    pub invalidations_per_sec: f64,
    /// From the readers' start to their stop, in seconds.
    pub listened_secs: f64,
    /// From the send of the write that caused an invalidation (its value's stamp) to the
    /// invalidation's arrival at the reader, over the invalidations of a held key timed.
    pub invalidation_delay: LatencySummary,
    pub invalidations_timed: u64,
    /// Invalidations of a held key whose cause the witness did not see (overwritten within one
    /// of its sweeps): not timed.
    pub invalidations_untimed: u64,
    /// Values served locally after the server had invalidated them, as the witness proves.
    pub stale_reads: u64,
    /// Readers (and the witness) the server disconnected during the run, each with why.
    pub dropped_readers: Vec<String>,
    /// The invalidation delay's histogram (`histograms.roles` in the result).
    #[serde(skip)]
    pub kept: crate::stats::Latencies,
}

/// The tracking role of `config` (its name, and it), if it has one.
pub fn role(config: &Config) -> Option<(&str, &Tracking)> {
    config.extras.roles.iter().find_map(|r| match &r.kind {
        RoleKind::Tracking(t) => Some((r.name.as_str(), t)),
        _ => None,
    })
}

/// A tracking role's readers and witness, running.
pub struct Readers {
    readers: Vec<JoinHandle<Tally>>,
    witness: Option<JoinHandle<Timing>>,
    readers_stop: Arc<AtomicBool>,
    witness_stop: Arc<AtomicBool>,
    started: Instant,
}

/// Opens every reader of `config`'s tracking role (none without one), each tracking before this
/// returns, and the witness.
pub fn listen(config: &Config) -> Result<Option<Readers>, ConnectError> {
    let Some((name, t)) = role(config) else { return Ok(None) };
    let prefix = config.keys.prefix.clone();
    let mut sessions = Vec::with_capacity(t.readers);
    for _ in 0..t.readers {
        sessions.push(open_reader(config, name, t)?);
    }
    let log = Arc::new(Log::new(t.keys));
    let max_reply = config.faults.max_reply;
    let witness = Witness::new(Line::new(Session::open(&config.server)?, max_reply), prefix.clone(), Arc::clone(&log));
    let (readers_stop, witness_stop) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (events, inbox) = mpsc::channel();
    let stop = Arc::clone(&witness_stop);
    let witness = std::thread::Builder::new()
        .name("respbench-witness".into())
        .spawn(move || witness.run(inbox, &stop))
        .expect("the witness thread starts");
    let mut readers = Vec::with_capacity(t.readers);
    for (n, session) in sessions.into_iter().enumerate() {
        let conn = Conn::new(Line::new(session, max_reply), Names { prefix: prefix.clone(), keys: t.keys });
        let plan = Plan { number: n, keys: t.keys, optin: t.mode == TrackMode::Optin, reads_per_sec: t.reads_per_sec };
        let (log, events, stop, capacity) = (Arc::clone(&log), events.clone(), Arc::clone(&readers_stop), t.cache);
        readers.push(
            std::thread::Builder::new()
                .name(format!("respbench-reader{n}"))
                .spawn(move || read(conn, plan, Reader::new(capacity), (log.as_ref(), &events), &stop))
                .expect("a reader thread starts"),
        );
    }
    Ok(Some(Readers { readers, witness: Some(witness), readers_stop, witness_stop, started: Instant::now() }))
}

/// A reader's connection: RESP3, tracking as the role asks. A refusal is the role's error.
fn open_reader(config: &Config, name: &str, t: &Tracking) -> Result<Session, ConnectError> {
    let mut opts = config.server.clone();
    opts.resp3 = true;
    opts.session.tracking = false;
    let mut session = Session::open(&opts).map_err(|e| match e {
        ConnectError::Refused { message, .. } => ConnectError::Role {
            message: format!(
                "--role {name}: the server refused HELLO 3 ({message}), and tracking needs RESP3: run the role \
                 against a server that speaks it (Redis 6 or later, Valkey)"
            ),
        },
        other => other,
    })?;
    let mut args: Vec<&[u8]> = vec![b"CLIENT", b"TRACKING", b"on"];
    match &t.mode {
        TrackMode::Default => {}
        TrackMode::Bcast { prefix } => args.extend([&b"BCAST"[..], b"PREFIX", prefix.as_bytes()]),
        TrackMode::Optin => args.push(b"OPTIN"),
    }
    let words = String::from_utf8_lossy(&args.join(&b' ')).into_owned();
    match session.call(&args) {
        Ok(_) => Ok(session),
        Err(CallError::Server(message)) => Err(ConnectError::Role {
            message: format!(
                "--role {name}: the server refused `{words}` ({message}): give the role a mode this server \
                 supports (mode=default, bcast or optin)"
            ),
        }),
        Err(CallError::Connect(e)) => Err(e),
    }
}

/// What a reader does, apart from its cache.
struct Plan {
    number: usize,
    keys: u64,
    optin: bool,
    reads_per_sec: u64,
}

/// The role's keys: `NAME:1` .. `NAME:K`.
struct Names {
    prefix: String,
    keys: u64,
}

impl Names {
    /// Key `NAME:n`'s index (`n - 1`), if it is one of the role's.
    fn index(&self, key: &[u8]) -> Option<usize> {
        let digits = key.strip_prefix(self.prefix.as_bytes())?;
        let n: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
        (1..=self.keys).contains(&n).then(|| (n - 1) as usize)
    }

    /// Drops from `reader`'s cache what `push`, read at `read_ns`, invalidates (nothing for any
    /// other push); each held value dropped is an event the witness times.
    fn pushed(&self, push: &[u8], reader: &mut Reader, events: &Sender<Event>, read_ns: u64) {
        match invalidated(push) {
            Some(Keys::All) => reader.flushed(),
            Some(Keys::These(mut keys, n)) => {
                for _ in 0..n {
                    let Some(Some(key)) = keys.string() else { break };
                    if let Some(e) = reader.invalidated(self.index(key), read_ns) {
                        let _ = events.send(e);
                    }
                }
            }
            None => {}
        }
    }
}

/// A reader's connection, the requests it writes and the role's key names.
struct Conn {
    line: Line,
    names: Names,
    out: Vec<u8>,
    /// The key a fetch names, written in place.
    name: String,
}

/// How a request's last reply ended: the value a GET brought and when it was read.
struct Answer {
    version: u64,
    read_ns: u64,
}

impl Conn {
    fn new(line: Line, names: Names) -> Conn {
        Conn { line, names, out: Vec::new(), name: String::new() }
    }

    /// Sends what `out` holds (`replies` requests, the last one's value kept) and reads until
    /// their replies are in, handling the pushes among them in order.
    fn exchange(
        &mut self,
        replies: usize,
        reader: &mut Reader,
        events: &Sender<Event>,
        stop: &AtomicBool,
    ) -> Result<Answer, String> {
        let sent_ns = stamp::now();
        self.line.send(&self.out)?;
        let mut left = replies;
        loop {
            let Some((class, reply)) = self.line.reply(|| stop.load(Ordering::Relaxed))? else {
                return Err("the run ended while a reply was on its way".into());
            };
            let read_ns = stamp::now();
            match class {
                ReplyClass::Push => self.names.pushed(reply, reader, events, read_ns),
                ReplyClass::Error { msg_start, msg_end } => {
                    let message = String::from_utf8_lossy(&reply[msg_start..msg_end]);
                    return Err(format!("the server answered with an error: {message}"));
                }
                _ => {
                    left -= 1;
                    if left == 0 {
                        let version = Cursor::new(reply).string().map_or(0, witness::version_of);
                        reader.synced(sent_ns);
                        return Ok(Answer { version, read_ns });
                    }
                }
            }
        }
    }

    /// Handles the push that comes within the connection's wake-up time, if one does; a reply
    /// nothing asked for ends the connection.
    fn listen(&mut self, reader: &mut Reader, events: &Sender<Event>) -> Result<(), String> {
        match self.line.reply(|| true)? {
            None => Ok(()),
            Some((ReplyClass::Push, push)) => {
                self.names.pushed(push, reader, events, stamp::now());
                Ok(())
            }
            Some(_) => Err("the server sent a reply nothing asked for".into()),
        }
    }

    /// Writes the fetch of key `index` into `out` (after `CLIENT CACHING yes` with OPTIN).
    fn fetch(&mut self, index: usize, optin: bool) -> usize {
        use std::fmt::Write as _;
        self.out.clear();
        if optin {
            resp::encode_command(&mut self.out, &[b"CLIENT", b"CACHING", b"yes"]);
        }
        self.name.clear();
        let _ = write!(self.name, "{}{}", self.names.prefix, index + 1);
        resp::encode_command(&mut self.out, &[b"GET", self.name.as_bytes()]);
        1 + usize::from(optin)
    }
}

/// What an invalidation push names.
enum Keys<'a> {
    All,
    /// The key list's elements, read from the cursor, and how many there are.
    These(Cursor<'a>, usize),
}

/// The keys of an `invalidate` push (`>2 $10 invalidate *N ...`, or a null for all); `None` for
/// any other push.
fn invalidated(push: &[u8]) -> Option<Keys<'_>> {
    let mut c = Cursor::new(push);
    if c.header()? != (b'>', Some(2)) || c.string()?? != b"invalidate" {
        return None;
    }
    match c.header()? {
        (b'_', _) | (b'*', None) => Some(Keys::All),
        (b'*', Some(n)) => Some(Keys::These(c, n)),
        _ => None,
    }
}

/// A reader's life, until the run is over or the server drops it.
fn read(
    mut conn: Conn,
    plan: Plan,
    mut reader: Reader,
    (log, events): (&Log, &Sender<Event>),
    stop: &AtomicBool,
) -> Tally {
    let interval_ns = (1e9 / plan.reads_per_sec as f64) as u64;
    let (behind_ns, sync_ns) = (BEHIND.as_nanos() as u64, SYNC_EVERY.as_nanos() as u64);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(plan.number as u64 + 1) | 1;
    let mut due = stamp::now();
    let mut last_trip = due;
    // A line wakes every tick until told otherwise.
    let mut timeout = TICK;
    while !stop.load(Ordering::Relaxed) {
        let now = stamp::now();
        let outcome = if now >= due {
            due = if now > due + behind_ns { now + interval_ns } else { due + interval_ns };
            // xorshift64: the reader's own keys, no state shared.
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let index = (rng % plan.keys) as usize;
            if reader.read(index, log) {
                continue;
            }
            last_trip = now;
            tick(&conn, &mut timeout);
            let replies = conn.fetch(index, plan.optin);
            conn.exchange(replies, &mut reader, events, stop).map(|a| reader.fetched(index, a.version, a.read_ns))
        } else if now >= last_trip + sync_ns {
            last_trip = now;
            tick(&conn, &mut timeout);
            conn.out.clear();
            resp::encode_command(&mut conn.out, &[b"PING"]);
            conn.exchange(1, &mut reader, events, stop).map(|_| ())
        } else {
            // Waits for pushes until the next read or round trip is due.
            let wait = Duration::from_nanos(due.min(last_trip + sync_ns) - now).clamp(Duration::from_micros(100), TICK);
            if wait != timeout {
                conn.line.wake_after(wait);
                timeout = wait;
            }
            conn.listen(&mut reader, events)
        };
        if let Err(why) = outcome {
            if !stop.load(Ordering::Relaxed) {
                reader.tally.dropped = Some(why);
            }
            break;
        }
    }
    reader.tally
}

/// An exchange's reads wait a tick at a time.
fn tick(conn: &Conn, timeout: &mut Duration) {
    if *timeout != TICK {
        conn.line.wake_after(TICK);
        *timeout = TICK;
    }
}

impl Readers {
    /// Once the writers stopped: stops the readers, then the witness (after a last sweep), and
    /// adds up their figures.
    pub fn finish(mut self) -> Figures {
        self.readers_stop.store(true, Ordering::Relaxed);
        let listened_secs = self.started.elapsed().as_secs_f64();
        let tallies: Vec<Tally> = self.readers.drain(..).filter_map(|t| t.join().ok()).collect();
        self.witness_stop.store(true, Ordering::Relaxed);
        let timing = self.witness.take().and_then(|w| w.join().ok());
        let mut f = Figures { listened_secs, ..Figures::default() };
        for (n, t) in tallies.iter().enumerate() {
            f.reads += t.reads;
            f.local_hits += t.local_hits;
            f.server_reads += t.server_reads;
            f.invalidations += t.invalidations;
            f.flushes += t.flushes;
            f.stale_reads += t.stale_reads;
            if let Some(why) = &t.dropped {
                f.dropped_readers.push(format!("reader {}: {why}", n + 1));
            }
        }
        if f.reads > 0 {
            f.hit_ratio = f.local_hits as f64 / f.reads as f64;
        }
        if listened_secs > 0.0 {
            f.invalidations_per_sec = f.invalidations as f64 / listened_secs;
        }
        if let Some(timing) = timing {
            f.invalidation_delay = LatencySummary::of(&timing.delay);
            f.invalidations_timed = timing.timed;
            f.invalidations_untimed = timing.untimed;
            if let Some(why) = timing.failed {
                f.dropped_readers.push(format!("the witness: {why}"));
            }
            f.kept = crate::stats::Latencies::of([(crate::stats::latency_name::INVALIDATION_DELAY, timing.delay)]);
        }
        f
    }
}

impl Drop for Readers {
    /// Readers of a run that could not start (or did not finish) stop too.
    fn drop(&mut self) {
        self.readers_stop.store(true, Ordering::Relaxed);
        self.witness_stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalidation_pushes_name_their_keys_or_all() {
        let push = b">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\nc:1\r\n$3\r\nc:7\r\n";
        let Some(Keys::These(mut keys, 2)) = invalidated(push) else { panic!("two keys") };
        assert_eq!((keys.string(), keys.string()), (Some(Some(&b"c:1"[..])), Some(Some(&b"c:7"[..]))));
        assert!(matches!(invalidated(b">2\r\n$10\r\ninvalidate\r\n_\r\n"), Some(Keys::All)));
        assert!(matches!(invalidated(b">2\r\n$10\r\ninvalidate\r\n*-1\r\n"), Some(Keys::All)));
        assert!(invalidated(b">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nx\r\n").is_none());
    }
}
