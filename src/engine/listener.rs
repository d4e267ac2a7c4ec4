//! A listener's connection (a stream consumer, a queue worker): one blocking request at a
//! time, its reply read in place into a buffer the connection keeps, the read waking every
//! [`TICK`] to ask whether to give up (the run is over). Nothing is allocated per request once
//! the buffer has grown to the largest reply. A tracking role's readers and witness read on
//! such lines too; pub/sub subscribers read their stream of messages their own way, with the
//! same tick, drain, wake-up and reply [`Cursor`].

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::net::Session;
use crate::resp::{self, ReplyClass};

/// How often a blocked read looks up to see whether the run is over.
pub(super) const TICK: Duration = Duration::from_millis(50);

/// The longest a role's listeners wait, after the producers stop, for what is still on its way.
pub(super) const DRAIN: Duration = Duration::from_secs(2);
/// The same after a stop signal.
pub(super) const DRAIN_STOPPED: Duration = Duration::from_millis(200);

/// What a role's listeners and the run share: what they consumed so far, and when to stop.
pub(super) struct Shared {
    pub(super) consumed: AtomicU64,
    pub(super) stop: AtomicBool,
}

/// Once the producers stopped, having produced `produced`: waits until the listeners consumed
/// it all, at most [`DRAIN`] ([`DRAIN_STOPPED`] after a stop signal, nothing once every
/// listener has ended), then stops them and returns their tallies.
pub(super) fn drained<T>(shared: &Shared, threads: &mut Vec<JoinHandle<T>>, produced: u64, stopped: bool) -> Vec<T> {
    let until = Instant::now() + if stopped { DRAIN_STOPPED } else { DRAIN };
    while shared.consumed.load(Ordering::Relaxed) < produced
        && Instant::now() < until
        && !threads.iter().all(JoinHandle::is_finished)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    shared.stop.store(true, Ordering::Relaxed);
    threads.drain(..).filter_map(|t| t.join().ok()).collect()
}

/// A listener's connection and the reply it read last.
pub(super) struct Line {
    session: Session,
    buf: Vec<u8>,
    /// Bytes read; the first `taken` of them are the reply handed out last.
    end: usize,
    taken: usize,
    limits: resp::Limits,
}

/// Why a listener's connection ended before its run did.
pub(super) type Ended = String;

impl Line {
    pub fn new(session: Session, max_reply: i64) -> Line {
        read_timeout(&session.stream, TICK);
        Line { session, buf: vec![0; 16 * 1024], end: 0, taken: 0, limits: resp::Limits { max_bulk: max_reply } }
    }

    /// Blocked reads wake after `after` from now on ([`TICK`] until this is called).
    pub fn wake_after(&self, after: Duration) {
        read_timeout(&self.session.stream, after);
    }

    pub fn send(&mut self, request: &[u8]) -> Result<(), Ended> {
        self.session.stream.write_all(request).map_err(|e| format!("its connection failed: {e}"))
    }

    /// Sends `request` and reads its reply, in place: `None` once `give_up` says so before it
    /// came; an error reply ends the line as `what` refused.
    pub fn call(&mut self, request: &[u8], what: &str, give_up: impl Fn() -> bool) -> Result<Option<&[u8]>, Ended> {
        self.send(request)?;
        match self.reply(give_up)? {
            Some((ReplyClass::Error { msg_start, msg_end }, reply)) => {
                Err(format!("{what} refused: {}", String::from_utf8_lossy(&reply[msg_start..msg_end])))
            }
            answered => Ok(answered.map(|(_, reply)| reply)),
        }
    }

    /// The next reply and its class, in place; `None` once `give_up` says so before it came.
    pub fn reply(&mut self, give_up: impl Fn() -> bool) -> Result<Option<(ReplyClass, &[u8])>, Ended> {
        self.buf.copy_within(self.taken..self.end, 0);
        self.end -= self.taken;
        self.taken = 0;
        loop {
            match resp::scan_within(&self.buf[..self.end], self.limits) {
                Ok(Some(s)) => {
                    self.taken = s.len;
                    return Ok(Some((s.class, &self.buf[..s.len])));
                }
                Ok(None) => {}
                Err(e) => return Err(format!("the server sent what is not RESP: {e}")),
            }
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            match self.session.stream.read(&mut self.buf[self.end..]) {
                Ok(0) => return Err("the server closed its connection".into()),
                Ok(n) => self.end += n,
                Err(e) if woke(&e) => {
                    if give_up() {
                        return Ok(None);
                    }
                }
                Err(e) => return Err(format!("its connection failed: {e}")),
            }
        }
    }
}

/// Blocked reads on `stream` wake after `after`.
pub(super) fn read_timeout(stream: &crate::net::Stream, after: Duration) {
    let _ = match stream {
        crate::net::Stream::Tcp(s) => s.set_read_timeout(Some(after)),
        crate::net::Stream::Unix(s) => s.set_read_timeout(Some(after)),
        crate::net::Stream::Tls(s) => s.sock.set_read_timeout(Some(after)),
    };
}

/// Whether a blocked read that failed with `e` only woke with nothing: its timeout passed, or a
/// signal interrupted it.
pub(super) fn woke(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted)
}

/// Appends a command's header: its count of arguments.
pub(super) fn command(out: &mut Vec<u8>, args: usize) {
    out.push(b'*');
    out.extend_from_slice(itoa::Buffer::new().format(args).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends one argument, as a bulk string.
pub(super) fn arg(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(itoa::Buffer::new().format(arg.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(arg);
    out.extend_from_slice(b"\r\n");
}

/// A reply read as nested values in place: headers, bulk strings, integers.
pub(super) struct Cursor<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, at: 0 }
    }

    /// The next value's type byte and the text of its first line.
    fn line(&mut self) -> Option<(u8, &'a [u8])> {
        let rest = self.buf.get(self.at..)?;
        let end = memchr::memmem::find(rest, b"\r\n")?;
        self.at += end + 2;
        Some((rest[0], &rest[1..end]))
    }

    /// An aggregate's header: its type and its count of elements (maps: of pairs); a null is
    /// `None` inside.
    pub fn header(&mut self) -> Option<(u8, Option<usize>)> {
        let (kind, text) = self.line()?;
        match kind {
            b'_' => Some((kind, None)),
            b'*' | b'%' | b'>' | b'~' => Some((kind, number(text).and_then(|n| usize::try_from(n).ok()))),
            _ => None,
        }
    }

    /// A string (bulk, simple, verbatim) or a number's text; `Some(None)` for a null.
    pub fn string(&mut self) -> Option<Option<&'a [u8]>> {
        let (kind, text) = self.line()?;
        match kind {
            b'$' | b'=' => {
                let Ok(len) = usize::try_from(number(text)?) else { return Some(None) };
                let body = self.buf.get(self.at..self.at + len)?;
                self.at += len + 2;
                Some(Some(if kind == b'=' { body.get(4..)? } else { body }))
            }
            b'+' | b':' | b',' => Some(Some(text)),
            b'_' => Some(None),
            b'*' if number(text)? < 0 => Some(None),
            _ => None,
        }
    }
}

/// The server holding `key`: the run's, or in cluster mode the primary owning its slot.
pub(super) fn home(
    config: &crate::config::Config,
    key: &[u8],
) -> Result<crate::config::ServerOptions, crate::net::ConnectError> {
    if config.cluster.is_none() {
        return Ok(config.server.clone());
    }
    let mut control = Session::open(&config.server)?;
    let shards = crate::net::cluster::serving(&mut control, &config.server)?;
    let slot = crate::net::cluster::slot(key);
    let owner = shards.iter().find(|s| s.ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&slot)));
    Ok(owner.map_or_else(|| config.server.clone(), |s| s.primary.options(&config.server)))
}

fn number(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// The integer of a reply such as `:3\r\n`.
pub(super) fn integer(reply: &[u8]) -> Option<u64> {
    let digits = reply.strip_prefix(b":")?;
    number(&digits[..memchr::memchr(b'\r', digits)?]).and_then(|n| u64::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_written_as_resp() {
        let mut out = Vec::new();
        command(&mut out, 2);
        arg(&mut out, b"GET");
        arg(&mut out, b"k");
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    }

    #[test]
    fn a_cursor_walks_strings_and_nulls() {
        let mut c = Cursor::new(b"*3\r\n$1\r\nk\r\n+OK\r\n$-1\r\n");
        assert_eq!(c.header(), Some((b'*', Some(3))));
        assert_eq!(c.string(), Some(Some(&b"k"[..])));
        assert_eq!(c.string(), Some(Some(&b"OK"[..])));
        assert_eq!(c.string(), Some(None));
        assert_eq!(Cursor::new(b"*-1\r\n").header(), Some((b'*', None)));
        assert_eq!(integer(b":12\r\n"), Some(12));
    }
}
