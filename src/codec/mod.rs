//! The wire-protocol seam: how a request is encoded and how a reply is scanned and classified,
//! so one engine (worker loop, pacer, collector, reports) serves RESP and memcached alike.
//!
//! A [`Protocol`] is chosen once per run and is `Copy`: the worker matches on it per reply,
//! a branch the CPU predicts, with no dynamic dispatch and nothing allocated.

mod error;
pub use error::CannotSend;
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
