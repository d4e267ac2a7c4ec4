//! A pub/sub role's subscribers: listeners the engine opens beside its publishers (the run's
//! own connections, whose PUBLISH carries a stamp, `workload::stamp`). Each subscriber is
//! subscribed to every channel before the publishers start; each of its connections (one, or
//! in cluster mode with SSUBSCRIBE one per node owning some of the channels) is read by a
//! thread of its own, which keeps its own tally (no state shared per message) and reads each
//! message in place: publish-to-delivery latency from the stamp's send time, duplicates and
//! out-of-order deliveries per channel and publisher, and the connection's end if the server
//! drops it. Each listener hands the collector its interval's [`Deliveries`] as its clock
//! passes the interval's end (as a worker hands in its window), so that the messages are
//! counted in the run's own intervals. After the publishers stop, the listeners wait for what
//! is still on its way, at most [`DRAIN`](listener::DRAIN), and hand in their last interval;
//! the collector's sums are the role's [`Messages`].

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;
use std::time::Instant;

use super::listener::{self, Cursor};
use super::msg::Msg;
use crate::config::role::{Listen, MAX_STREAMS, PubSub, RoleKind};
use crate::config::{Config, ServerOptions};
use crate::net::{ConnectError, Session};
use crate::resp::{self, ReplyClass};
use crate::stats::{Deliveries, RoleWindow};
use crate::workload::stamp::{self, Stamp};

pub use crate::stats::Messages;

/// One subscriber connection's own figures: its interval's messages, handed to the collector
/// as the interval ends.
struct Tally {
    subscriber: usize,
    /// The role among the collector's roles.
    role: usize,
    /// This listener among all of the role's, as the collector counts them.
    listener: usize,
    /// The interval `window` counts, on the run's clock.
    interval: u64,
    window: Deliveries,
    /// Why the server's end closed, if it did before the run was over.
    dropped: Option<String>,
}

/// What the listeners and the run share: the deliveries so far (added once per read, not per
/// message) and when the listeners stop, as every role's listeners share them; when the run's
/// measured phase began (stamp clock; `u64::MAX` before) and its interval.
struct Shared {
    listening: listener::Shared,
    start_ns: AtomicU64,
    interval_ns: u64,
}

/// A pub/sub role's subscribers, listening.
pub struct Listeners {
    pub(super) role: PubSub,
    threads: Vec<JoinHandle<Tally>>,
    shared: Arc<Shared>,
    /// The server's count of clients dropped for their output buffer, before the run.
    dropped_for_buffer: Option<u64>,
    control: Option<Session>,
}

/// The pub/sub role of `config`, if it has one.
pub fn role(config: &Config) -> Option<&PubSub> {
    config.extras.roles.iter().find_map(|r| match &r.kind {
        RoleKind::PubSub(p) => Some(p),
        _ => None,
    })
}

/// Opens and subscribes every subscriber of `config`'s pub/sub role (none without one), each
/// confirmed by the server before this returns, so that the publishers' first message has
/// every receiver. Each listener hands its intervals to the collector through `tx`, as its
/// role of index `role`.
pub(super) fn listen(config: &Config, tx: &Sender<Msg>, index: usize) -> Result<Option<Listeners>, ConnectError> {
    let Some(p) = role(config) else { return Ok(None) };
    let prefix = config.keys.prefix.clone();
    let channels: Vec<String> = (1..=p.channels).map(|n| format!("{prefix}{n}")).collect();
    let mut control = Session::open(&config.server)?;
    let places = places(config, p, &channels, &mut control)?;
    let dropped_for_buffer = buffer_drops(&mut control);
    let shared = Arc::new(Shared {
        listening: listener::Shared { consumed: AtomicU64::new(0), stop: AtomicBool::new(false) },
        start_ns: AtomicU64::new(u64::MAX),
        interval_ns: (config.interval.as_nanos() as u64).max(1),
    });
    let streams = (p.channels * config.connections as u64).min(MAX_STREAMS) as usize;
    let mut threads = Vec::new();
    for subscriber in 0..p.subscribers {
        for (server, names) in &places {
            let mut session = Session::open(server)?;
            subscribe(&mut session, p.listen, names)?;
            let (shared, tx) = (Arc::clone(&shared), tx.clone());
            let publishers = config.connections;
            let max_reply = config.faults.max_reply;
            let tally = Tally::new(subscriber, (index, threads.len()));
            threads.push(
                std::thread::Builder::new()
                    .name(format!("respbench-sub{subscriber}"))
                    .spawn(move || read(session, tally, (streams, publishers), max_reply, (&shared, &tx)))
                    .expect("a subscriber thread starts"),
            );
        }
    }
    Ok(Some(Listeners { role: p.clone(), threads, shared, dropped_for_buffer, control: Some(control) }))
}

/// Where a subscriber listens, and to what: the server and every channel (or the role's
/// pattern); with SSUBSCRIBE in cluster mode, each node owning channels, and those.
fn places(
    config: &Config,
    p: &PubSub,
    channels: &[String],
    control: &mut Session,
) -> Result<Vec<(ServerOptions, Vec<String>)>, ConnectError> {
    if p.listen == Listen::Psubscribe {
        return Ok(vec![(config.server.clone(), vec![format!("{}*", config.keys.prefix)])]);
    }
    if p.listen != Listen::Ssubscribe || config.cluster.is_none() {
        return Ok(vec![(config.server.clone(), channels.to_vec())]);
    }
    let shards = crate::net::cluster::serving(control, &config.server)?;
    let mut places: Vec<(ServerOptions, Vec<String>)> = Vec::new();
    for channel in channels {
        let slot = crate::net::cluster::slot(channel.as_bytes());
        let Some(shard) = shards.iter().find(|s| s.ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&slot))) else {
            continue;
        };
        let server = shard.primary.options(&config.server);
        match places.iter_mut().find(|(s, _)| *s == server) {
            Some((_, names)) => names.push(channel.clone()),
            None => places.push((server, vec![channel.clone()])),
        }
    }
    Ok(places)
}

/// Sends the subscription and reads its confirmations, one per channel or pattern.
fn subscribe(session: &mut Session, listen: Listen, names: &[String]) -> Result<(), ConnectError> {
    let verb: &[u8] = match listen {
        Listen::Subscribe => b"SUBSCRIBE",
        Listen::Psubscribe => b"PSUBSCRIBE",
        Listen::Ssubscribe => b"SSUBSCRIBE",
    };
    let mut out = Vec::new();
    if listen == Listen::Ssubscribe {
        // One channel a command: a sharded subscription's channels must share a slot.
        for name in names {
            resp::encode_command(&mut out, &[verb, name.as_bytes()]);
        }
    } else {
        let mut args: Vec<&[u8]> = vec![verb];
        args.extend(names.iter().map(|n| n.as_bytes()));
        resp::encode_command(&mut out, &args);
    }
    let target = session.target().to_string();
    let io = |source| ConnectError::Io { target: target.clone(), source };
    session.stream.write_all(&out).map_err(io)?;
    let (mut buf, mut end, mut confirmed) = (vec![0; 64 * 1024], 0, 0);
    while confirmed < names.len() {
        if end == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = session.stream.read(&mut buf[end..]).map_err(io)?;
        if n == 0 {
            return Err(io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        end += n;
        let mut at = 0;
        while let Ok(Some(s)) = resp::scan(&buf[at..end]) {
            if let ReplyClass::Error { msg_start, msg_end } = s.class {
                let message = String::from_utf8_lossy(&buf[at + msg_start..at + msg_end]).into_owned();
                let command = String::from_utf8_lossy(verb).into_owned();
                return Err(ConnectError::Refused { target, command, message });
            }
            confirmed += 1;
            at += s.len;
        }
        buf.copy_within(at..end, 0);
        end -= at;
    }
    Ok(())
}

/// A subscriber connection's reading, until the run is over or the server drops it; its last
/// interval is handed to the collector as it ends.
fn read(
    session: Session,
    mut tally: Tally,
    streams: (usize, usize),
    max_reply: i64,
    (shared, tx): (&Shared, &Sender<Msg>),
) -> Tally {
    receive(session, &mut tally, streams, max_reply, (shared, tx));
    let window = std::mem::take(&mut tally.window);
    let (role, listener, interval) = (tally.role, tally.listener, tally.interval);
    let _ = tx.send(Msg::Deliveries { role, listener, interval, window: RoleWindow::Messages(window), last: true });
    tally
}

/// Reads messages into `tally` until the run is over or the server drops the connection.
fn receive(
    mut session: Session,
    tally: &mut Tally,
    (streams, publishers): (usize, usize),
    max_reply: i64,
    (shared, tx): (&Shared, &Sender<Msg>),
) {
    // The last sequence number seen per channel and publisher.
    let mut last = vec![0u64; streams];
    listener::read_timeout(&session.stream, listener::TICK);
    let limits = resp::Limits { max_bulk: max_reply };
    let (mut buf, mut end) = (vec![0u8; 64 * 1024], 0);
    while !shared.listening.stop.load(Ordering::Relaxed) {
        if end == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let read = session.stream.read(&mut buf[end..]);
        tally.pass(stamp::now(), shared, tx);
        let n = match read {
            Ok(0) => {
                tally.dropped = Some("the server closed its connection".into());
                break;
            }
            Ok(n) => n,
            Err(e) if listener::woke(&e) => continue,
            Err(e) => {
                tally.dropped = Some(format!("its connection failed: {e}"));
                break;
            }
        };
        end += n;
        let now = stamp::now();
        let (mut at, before) = (0, tally.window.delivered);
        loop {
            match resp::scan_within(&buf[at..end], limits) {
                Ok(Some(s)) => {
                    if let Some((channel, payload)) = message(&buf[at..at + s.len]) {
                        tally.count(channel, payload, now, &mut last, publishers);
                    }
                    at += s.len;
                }
                Ok(None) => break,
                Err(e) => {
                    tally.dropped = Some(format!("the server sent what is not RESP: {e}"));
                    return;
                }
            }
        }
        buf.copy_within(at..end, 0);
        end -= at;
        shared.listening.consumed.fetch_add(tally.window.delivered - before, Ordering::Relaxed);
    }
}

impl Tally {
    fn new(subscriber: usize, (role, listener): (usize, usize)) -> Tally {
        Tally { subscriber, role, listener, interval: 0, window: Deliveries::default(), dropped: None }
    }

    /// Hands the collector the interval under way once `now` is past its end (nothing before
    /// the measured phase began).
    fn pass(&mut self, now: u64, shared: &Shared, tx: &Sender<Msg>) {
        let start = shared.start_ns.load(Ordering::Relaxed);
        let index = if now < start { 0 } else { (now - start) / shared.interval_ns };
        if index > self.interval {
            let window = RoleWindow::Messages(std::mem::take(&mut self.window));
            let (role, listener, interval) = (self.role, self.listener, self.interval);
            let _ = tx.send(Msg::Deliveries { role, listener, interval, window, last: false });
            self.interval = index;
        }
    }

    /// One message on `channel` (its number after the role's prefix) received at `now`.
    #[inline]
    fn count(&mut self, channel: &[u8], payload: &[u8], now: u64, last: &mut [u64], publishers: usize) {
        let Some(stamp) = Stamp::read(payload) else { return };
        let w = &mut self.window;
        w.record(now.saturating_sub(stamp.sent_ns).max(1));
        let number =
            channel.rsplit(|&b| b == b':').next().and_then(|d| std::str::from_utf8(d).ok()?.parse::<u64>().ok());
        let Some(index) = number
            .map(|n| (n.saturating_sub(1) * publishers as u64 + u64::from(stamp.publisher)) as usize)
            .filter(|&i| i < last.len())
        else {
            return;
        };
        let seen = &mut last[index];
        if stamp.seq == *seen {
            w.duplicated += 1;
        } else if stamp.seq < *seen {
            w.out_of_order += 1;
        } else {
            *seen = stamp.seq;
        }
    }
}

/// The channel and payload of a pub/sub message (`message`, `smessage`, `pmessage`), RESP2
/// array or RESP3 push; `None` for anything else (a subscription's confirmation).
fn message(reply: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut c = Cursor::new(reply);
    let (kind, Some(count)) = c.header()? else { return None };
    if kind != b'*' && kind != b'>' {
        return None;
    }
    match (c.string()??, count) {
        (b"message" | b"smessage", 3) => Some((c.string()??, c.string()??)),
        (b"pmessage", 4) => {
            c.string()?;
            Some((c.string()??, c.string()??))
        }
        _ => None,
    }
}

/// The server's count of clients it disconnected for their output buffer, if INFO has one.
fn buffer_drops(control: &mut Session) -> Option<u64> {
    let info = control.call(&[b"INFO", b"stats"]).ok()?;
    let text = String::from_utf8_lossy(info.text()).into_owned();
    text.lines().find_map(|l| l.strip_prefix("client_output_buffer_limit_disconnections:")?.trim().parse().ok())
}

impl Listeners {
    /// The listeners of the run's measured phase, which began at `at`: their intervals are the
    /// run's from then on.
    pub(super) fn begin(&self, at: Instant) {
        self.shared.start_ns.store(stamp::since(at), Ordering::Relaxed);
    }

    /// How many listeners hand in intervals.
    pub(super) fn count(&self) -> usize {
        self.threads.len()
    }

    /// Once the publishers stopped, having published `published`: waits for what is still on
    /// its way (at most [`DRAIN`](listener::DRAIN), [`DRAIN_STOPPED`](listener::DRAIN_STOPPED)
    /// after a stop signal), stops the listeners, each handing in its last interval, and says
    /// which subscribers the server dropped, and why.
    pub(super) fn finish(mut self, published: u64, stopped: bool) -> Vec<String> {
        let expected = published * self.role.subscribers as u64;
        let tallies = listener::drained(&self.shared.listening, &mut self.threads, expected, stopped);
        let for_buffer = match (self.dropped_for_buffer, self.control.as_mut().and_then(buffer_drops)) {
            (Some(before), Some(after)) => Some(after.saturating_sub(before)),
            _ => None,
        };
        let mut dropped = Vec::new();
        for t in tallies.iter().filter(|t| t.dropped.is_some()) {
            let why = t.dropped.as_deref().unwrap_or_default();
            let because = match for_buffer {
                Some(n) if n >= 1 => format!(
                    "{why}: dropped for its output buffer (the server counted {n} such disconnection(s); see \
                     client-output-buffer-limit pubsub)"
                ),
                Some(_) => format!("{why} (not for its output buffer: the server counted no such disconnection)"),
                None => format!(
                    "{why} (whether for its output buffer is unknown: this server's INFO stats has no \
                     client_output_buffer_limit_disconnections)"
                ),
            };
            dropped.push(format!("subscriber {}: {because}", t.subscriber + 1));
        }
        dropped
    }
}

impl Drop for Listeners {
    /// Listeners of a run that could not start (or did not finish) stop reading too.
    fn drop(&mut self) {
        self.shared.listening.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_read_in_both_protocols() {
        let resp2 = b"*3\r\n$7\r\nmessage\r\n$6\r\nnews:3\r\n$5\r\nhello\r\n";
        assert_eq!(message(resp2), Some((&b"news:3"[..], &b"hello"[..])));
        let resp3 = b">4\r\n$8\r\npmessage\r\n$5\r\nnews*\r\n$6\r\nnews:1\r\n$2\r\nhi\r\n";
        assert_eq!(message(resp3), Some((&b"news:1"[..], &b"hi"[..])));
        let confirmation = b"*3\r\n$9\r\nsubscribe\r\n$6\r\nnews:1\r\n:1\r\n";
        assert_eq!(message(confirmation), None);
    }

    #[test]
    fn a_tally_tells_duplicates_and_disorder() {
        let mut t = Tally::new(0, (0, 0));
        let mut last = vec![0; 4];
        let mut payload = [0; stamp::STAMP_LEN];
        for seq in [1, 3, 3, 2] {
            Stamp { publisher: 1, seq, sent_ns: 5 }.write(&mut payload);
            t.count(b"news:2", &payload, 10, &mut last, 2);
        }
        assert_eq!((t.window.delivered, t.window.duplicated, t.window.out_of_order), (4, 1, 1));
        assert_eq!(last, vec![0, 0, 0, 3]);
    }
}
