//! What the tracking role's blocking connections share: reading a reply's parts in place
//! and waiting a bounded time on a read.

use std::io;
use std::time::Duration;

use crate::net::Stream;

/// How often a blocked read looks up to see whether the run is over.
pub(super) const TICK: Duration = Duration::from_millis(50);

/// A reply's first line: its type byte, its number, and the bytes through its CRLF.
pub(super) fn header(at: &[u8]) -> Option<(u8, i64, usize)> {
    let end = memchr::memmem::find(at, b"\r\n")?;
    let n = std::str::from_utf8(at.get(1..end)?).ok()?.parse().ok()?;
    Some((at[0], n, end + 2))
}

/// A bulk string or a null at the start of `at` (its value, and the bytes it takes).
pub(super) fn bulk(at: &[u8]) -> Option<(Option<&[u8]>, usize)> {
    if at.starts_with(b"_\r\n") {
        return Some((None, 3));
    }
    let (kind, len, used) = header(at)?;
    if kind != b'$' {
        return None;
    }
    if len < 0 {
        return Some((None, used));
    }
    let len = len as usize;
    Some((Some(at.get(used..used + len)?), used + len + 2))
}

/// The `n` values of an MGET reply, in order.
pub(super) fn values(reply: &[u8], n: usize) -> Option<Vec<Option<&[u8]>>> {
    let (kind, count, mut at) = header(reply)?;
    if kind != b'*' || count != n as i64 {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let (value, used) = bulk(&reply[at..])?;
        out.push(value);
        at += used;
    }
    Some(out)
}

/// Blocked reads wake after `wait`.
pub(super) fn set_timeout(stream: &Stream, wait: Duration) {
    let _ = match stream {
        Stream::Tcp(s) => s.set_read_timeout(Some(wait)),
        Stream::Unix(s) => s.set_read_timeout(Some(wait)),
        Stream::Tls(s) => s.sock.set_read_timeout(Some(wait)),
    };
}

pub(super) fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted)
}
