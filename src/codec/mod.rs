//! The wire-protocol seam: how a request is encoded and how a reply is scanned and classified,
//! so one engine (worker loop, pacer, collector, reports) serves RESP and memcached alike.
//!
//! A [`Protocol`] is chosen once per run and is `Copy`: the worker matches on it per reply,
//! a branch the CPU predicts, with no dynamic dispatch and nothing allocated.

mod error;
pub use error::CannotSend;
mod large;
pub use large::{Dropping, LARGE_VALUE, Next};
pub mod memcache;

use crate::resp::{self, Limits, Part, ScanError, Scanned, Template};
use memcache::Dialect;

/// The protocol a run speaks to its servers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Protocol {
    /// Redis's RESP2/RESP3 (Redis, Valkey, Dragonfly, KeyDB, managed caches).
    #[default]
    Resp,
    /// memcached's text protocol (`set`, `get`, ...).
    MemcacheText,
    /// memcached's binary protocol (24-byte headers, opaque-matched replies, SASL).
    MemcacheBinary,
    /// memcached 1.6's meta commands (`ms`, `mg`, `md`).
    MemcacheMeta,
}

impl Protocol {
    /// The name the native `--protocol` flag takes and the reports print.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Resp => "resp",
            Protocol::MemcacheText => "memcache-text",
            Protocol::MemcacheBinary => "memcache-binary",
            Protocol::MemcacheMeta => "memcache-meta",
        }
    }

    /// Whether this is one of memcached's protocols (no INFO, no cluster, no RESP login).
    pub fn is_memcache(self) -> bool {
        self != Protocol::Resp
    }

    /// Which of memcached's protocols, `None` for RESP.
    #[inline]
    pub fn dialect(self) -> Option<Dialect> {
        match self {
            Protocol::Resp => None,
            Protocol::MemcacheText => Some(Dialect::Text),
            Protocol::MemcacheBinary => Some(Dialect::Binary),
            Protocol::MemcacheMeta => Some(Dialect::Meta),
        }
    }

    /// The protocol a native `--protocol` value names.
    pub fn from_name(name: &str) -> Option<Protocol> {
        [Protocol::Resp, Protocol::MemcacheText, Protocol::MemcacheBinary, Protocol::MemcacheMeta]
            .into_iter()
            .find(|p| p.name() == name)
    }

    /// Scans one reply at the start of `buf`: `Ok(None)` until it is complete; an error when
    /// the bytes cannot be a reply (the connection cannot be resynchronised).
    #[inline]
    pub fn scan(self, buf: &[u8], limits: Limits) -> Result<Option<Scanned>, ScanError> {
        match self {
            Protocol::Resp => resp::scan_within(buf, limits),
            Protocol::MemcacheText => memcache::scan(Dialect::Text, buf, limits),
            Protocol::MemcacheBinary => memcache::scan(Dialect::Binary, buf, limits),
            Protocol::MemcacheMeta => memcache::scan(Dialect::Meta, buf, limits),
        }
    }

    /// Compiles one command of the mix: `name` is its upper-case name ("SET", "GET", "MGET",
    /// ...), `args` its arguments as the workload builds them (the command word first, then
    /// key, value and expiry holes), `inline` whether RESP sends it as an inline command, and
    /// `id` what a reply names to say it answers it (command index + 1).
    pub fn template(self, name: &str, args: &[Vec<Part>], inline: bool, id: u32) -> Result<Template, CannotSend> {
        match self.dialect() {
            None if inline => Ok(Template::inline(args)),
            None => Ok(Template::new(args)),
            Some(dialect) => Ok(Template::raw(&memcache::template(dialect, name, args, id)?)),
        }
    }

    /// A multi-key read's reply (MGET's array, a memcached multi-key get): `(hits, misses)`
    /// for the `keys` asked for.
    #[inline]
    pub fn hits_misses_multi(self, reply: &[u8], keys: u64) -> (u64, u64) {
        match self.dialect() {
            None => match resp::count_misses(reply) {
                Some((elements, misses)) => (elements - misses, misses),
                None => (1, 0),
            },
            Some(dialect) => memcache::hits_misses_multi(dialect, reply, keys),
        }
    }
}

impl Protocol {
    /// The next reply in `pending` (bytes read, not scanned yet), or what to do until it is
    /// complete. `large`: the large value whose body is being dropped, if any (set when one
    /// begins, cleared when it ends). `drops`: the socket drops received bytes without copying
    /// them, so a large value's body is dropped as it arrives instead of read (RESP's bulk
    /// strings; memcached's values are read whole).
    #[inline]
    pub fn next_reply(
        self,
        pending: &[u8],
        limits: Limits,
        large: &mut Option<Dropping>,
        drops: bool,
    ) -> Result<Next, ScanError> {
        if let Some(value) = *large {
            return Ok(match value.end(pending)? {
                Some(reply) => {
                    *large = None;
                    Next::Reply(reply, value.head() + 2)
                }
                None => Next::More { keep: pending.len() },
            });
        }
        if let Some(reply) = self.scan(pending, limits)? {
            return Ok(Next::Reply(reply, reply.len));
        }
        if drops
            && self == Protocol::Resp
            && let Some(value) = Dropping::begin(pending)
        {
            *large = Some(value);
            return Ok(Next::More { keep: value.head() });
        }
        Ok(Next::More { keep: pending.len() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp_scans_and_counts_as_before() {
        let p = Protocol::Resp;
        let s = p.scan(b"$1\r\nx\r\n", Limits::default()).unwrap().unwrap();
        assert_eq!((s.len, s.id), (7, 0));
        assert_eq!(p.hits_misses_multi(b"*2\r\n$1\r\nx\r\n$-1\r\n", 2), (1, 1));
        let t = p.template("GET", &[vec![Part::Lit(b"GET".to_vec())], vec![Part::Hole(0)]], false, 1).unwrap();
        let mut out = Vec::new();
        t.encode(&mut out, &[b"k"]);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    }
}

#[cfg(test)]
mod large_tests {
    use super::*;
    use crate::resp::ReplyClass;

    /// Feeds `wire` in pieces of `step` bytes as the worker does (a dropping socket drops the
    /// body's bytes instead of handing them over); returns each reply's (wire length, class)
    /// and the bytes copied into the read buffer.
    fn run(wire: &[u8], step: usize) -> Result<(Vec<(usize, ReplyClass)>, usize), ScanError> {
        let (mut buf, mut at, mut large, mut replies, mut copied) = (Vec::new(), 0, None, Vec::new(), 0);
        while at < wire.len() {
            let take = step.min(wire.len() - at);
            match large {
                Some(Dropping { left, .. }) if left > 0 => {
                    let n = take.min(left);
                    large.as_mut().unwrap().left -= n;
                    at += n;
                    continue;
                }
                _ => {
                    buf.extend_from_slice(&wire[at..at + take]);
                    copied += take;
                    at += take;
                }
            }
            loop {
                match Protocol::Resp.next_reply(&buf, Limits::default(), &mut large, true)? {
                    Next::Reply(s, held) => {
                        replies.push((s.len, s.class));
                        buf.drain(..held);
                    }
                    Next::More { keep } => {
                        buf.truncate(keep);
                        break;
                    }
                }
            }
        }
        Ok((replies, copied))
    }

    fn bulk(len: usize) -> Vec<u8> {
        let mut out = format!("${len}\r\n").into_bytes();
        out.extend(std::iter::repeat_n(b'v', len));
        out.extend_from_slice(b"\r\n");
        out
    }

    #[test]
    fn a_large_value_is_counted_whole_and_its_body_never_copied() {
        let parts = [bulk(1_000_000), bulk(100_000), b"+OK\r\n".to_vec(), bulk(20), b"-ERR after them\r\n".to_vec()];
        let wire = parts.concat();
        for step in [7, 64, 4096, 32 * 1024] {
            let (replies, copied) = run(&wire, step).unwrap();
            let lengths: Vec<usize> = replies.iter().map(|r| r.0).collect();
            assert_eq!(lengths, parts.iter().map(Vec::len).collect::<Vec<_>>(), "step {step}");
            assert!(matches!(replies[4].1, ReplyClass::Error { .. }), "step {step}");
            assert!(copied < 200_000, "step {step}: {copied} bytes copied");
        }
    }

    #[test]
    fn a_large_value_without_its_end_is_a_protocol_error() {
        let mut wire = bulk(50_000);
        let end = wire.len() - 2;
        wire[end] = b'x';
        for step in [3, 64, 100_000] {
            assert_eq!(run(&wire, step), Err(ScanError::MissingCrlf), "step {step}");
        }
    }

    #[test]
    fn small_values_and_sockets_that_cannot_drop_scan_as_before() {
        let wire = bulk(100_000);
        let mut large = None;
        let half = &wire[..50_000];
        let next = Protocol::Resp.next_reply(half, Limits::default(), &mut large, false).unwrap();
        assert_eq!((next, large), (Next::More { keep: 50_000 }, None));
        let small = bulk(LARGE_VALUE - 1);
        let next = Protocol::Resp.next_reply(&small[..100], Limits::default(), &mut large, true).unwrap();
        assert_eq!((next, large), (Next::More { keep: 100 }, None));
        let next = Protocol::MemcacheText.next_reply(b"VALUE k 0 99999\r\n", Limits::default(), &mut large, true);
        assert_eq!((next.unwrap(), large), (Next::More { keep: 17 }, None));
    }
}
