//! memcached's three protocols (text, binary, meta) as codecs of the one engine: reply
//! scanners that check and classify a reply in place within the same bounds as RESP's, request
//! templates built from the mix's commands, and hit counting for multi-key gets.
//!
//! What each protocol sends for each command is in `docs/memcached.md`.

use super::error::CannotSend;
pub mod binary;
mod meta;
mod op;
mod reply;
pub mod stats;
mod text;

pub use crate::resp::{LenForm, RawPart, ScanError, Scanned};

use crate::resp::{Limits, Part};
use op::{Op, words};

/// Which of memcached's protocols a codec call is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Text,
    Binary,
    Meta,
}

impl Dialect {
    fn flag(self) -> &'static str {
        match self {
            Dialect::Text => "memcache-text",
            Dialect::Binary => "memcache-binary",
            Dialect::Meta => "memcache-meta",
        }
    }
}

/// The commands a memcached run can send, as the refusal of any other names them.
pub const ALLOWED: &str = "SET (set), GET (get), MGET (a multi-key get, --multi-key-get), DEL (delete) and INCR (incr)";

/// One reply at the start of `buf`, and the values (hits) it holds: `Ok(None)` until it is
/// complete.
#[inline]
fn walk(dialect: Dialect, buf: &[u8], limits: Limits) -> Result<Option<(Scanned, u64)>, ScanError> {
    match dialect {
        Dialect::Text => text::walk(buf, limits),
        Dialect::Binary => binary::walk(buf, limits),
        Dialect::Meta => meta::walk(buf, limits),
    }
}

/// Scans one reply at the start of `buf`: `Ok(None)` until it is complete.
#[inline]
pub fn scan(dialect: Dialect, buf: &[u8], limits: Limits) -> Result<Option<Scanned>, ScanError> {
    Ok(walk(dialect, buf, limits)?.map(|(s, _)| s))
}

/// A multi-key get's reply: `(hits, misses)` of the `keys` asked for.
pub fn hits_misses_multi(dialect: Dialect, reply: &[u8], keys: u64) -> (u64, u64) {
    let hits = match walk(dialect, reply, Limits::default()) {
        Ok(Some((_, hits))) => hits.min(keys),
        _ => 0,
    };
    (hits, keys - hits)
}

/// The request bytes of one command of the mix; `name` is its upper-case report name, `args`
/// its arguments as the RESP workload builds them, `id` what a binary reply's opaque echoes.
pub fn template(dialect: Dialect, name: &str, args: &[Vec<Part>], id: u32) -> Result<Vec<RawPart>, CannotSend> {
    let op = Op::parse(name, args).ok_or_else(|| {
        let word = args.first().map(|a| words(a)).unwrap_or_default();
        let shown = if word.is_empty() { name.to_string() } else { word };
        format!("--protocol {} cannot send {shown:?}: memcached runs only {ALLOWED}", dialect.flag())
    })?;
    Ok(match dialect {
        Dialect::Text => text::template(&op),
        Dialect::Binary => binary::template(&op, id),
        Dialect::Meta => meta::template(&op),
    })
}

#[cfg(test)]
mod tests;
