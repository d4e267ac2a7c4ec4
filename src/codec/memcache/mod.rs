//! memcached's three protocols (text, binary, meta) as codecs of the one engine: reply
//! scanners that check and classify a reply in place within the same bounds as RESP's, request
//! templates built from the mix's commands, and hit counting for multi-key gets.
//!
//! What each protocol sends for each command is in `docs/memcached.md`.

use super::error::CannotSend;
pub mod binary;
mod meta;
pub mod stats;
mod text;

pub use crate::resp::{LenForm, RawPart, ScanError, Scanned};

use crate::resp::{Limits, MAX_LINE, Part};

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

/// An argument's literal text, holes shown as `?` (for the refusal's message).
fn words(arg: &[Part]) -> String {
    arg.iter()
        .map(|p| match p {
            Part::Lit(b) => String::from_utf8_lossy(b).into_owned(),
            Part::Hole(_) => "?".into(),
        })
        .collect()
}

/// Hole of the expiry (the workload's `HOLE_EXPIRY`).
const HOLE_EXPIRY: usize = 2;

/// A key or value argument: its parts, and what its length is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Arg {
    parts: Vec<RawPart>,
    holes: Vec<usize>,
    lit_len: usize,
}

/// A literal piece of a request.
fn lit(bytes: &[u8]) -> RawPart {
    RawPart::Lit(bytes.to_vec())
}

/// `word`, the key's parts, then `tail`: how every text and meta request starts.
fn keyed(out: &mut Vec<RawPart>, word: &[u8], key: &Arg, tail: &[u8]) {
    out.push(lit(word));
    out.extend(key.parts.iter().cloned());
    out.push(lit(tail));
}

impl Arg {
    fn new(arg: &[Part]) -> Arg {
        let mut out = Arg { parts: Vec::new(), holes: Vec::new(), lit_len: 0 };
        for part in arg {
            match part {
                Part::Lit(b) => {
                    out.lit_len += b.len();
                    out.parts.push(RawPart::Lit(b.clone()));
                }
                Part::Hole(i) => {
                    out.holes.push(*i);
                    out.parts.push(RawPart::Hole(*i));
                }
            }
        }
        out
    }

    /// This argument's byte length in `form`, plus `plus`.
    fn len(&self, plus: usize, form: LenForm) -> RawPart {
        RawPart::Len { holes: self.holes.clone(), plus: self.lit_len + plus, form }
    }
}

/// A command of the mix as memcached sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    /// The value, and whether the expiry hole is filled per request.
    Set {
        key: Arg,
        data: Arg,
        expiry: bool,
    },
    Get(Arg),
    MultiGet(Vec<Arg>),
    Delete(Arg),
    Incr(Arg),
}

impl Op {
    fn parse(name: &str, args: &[Vec<Part>]) -> Option<Op> {
        let has_expiry = args.iter().flatten().any(|p| *p == Part::Hole(HOLE_EXPIRY));
        let word = args.first().map(|a| words(a).to_ascii_uppercase())?;
        let base = name.split('#').next().unwrap_or(name);
        if word != base {
            return None;
        }
        match (base, args.len()) {
            ("SET", 3) | ("SET", 5) => {
                let data = &args[2];
                if data.contains(&Part::Hole(HOLE_EXPIRY)) {
                    return None;
                }
                Some(Op::Set { key: Arg::new(&args[1]), data: Arg::new(data), expiry: has_expiry })
            }
            ("GET", 2) => Some(Op::Get(Arg::new(&args[1]))),
            ("MGET", n) if n >= 2 => Some(Op::MultiGet(args[1..].iter().map(|a| Arg::new(a)).collect())),
            ("DEL", 2) => Some(Op::Delete(Arg::new(&args[1]))),
            ("INCR", 2) => Some(Op::Incr(Arg::new(&args[1]))),
            _ => None,
        }
    }
}

/// The index just past the CRLF-ended line at `pos`; `Ok(None)` while it is incomplete. A
/// line ends within [`MAX_LINE`] bytes or fails, so an endless one cannot grow a buffer.
#[inline]
fn line_end(buf: &[u8], pos: usize) -> Result<Option<usize>, ScanError> {
    if pos >= buf.len() {
        return Ok(None);
    }
    let window = &buf[pos..buf.len().min(pos + MAX_LINE + 2)];
    match memchr::memchr(b'\n', window) {
        Some(rel) if rel > 0 && window[rel - 1] == b'\r' => Ok(Some(pos + rel + 1)),
        Some(_) => Err(ScanError::Unrecognised { offset: pos }),
        None if window.len() == MAX_LINE + 2 => Err(ScanError::LineTooLong { offset: pos }),
        None => Ok(None),
    }
}

/// A decimal number token (no sign), `None` for anything else.
#[inline]
fn number(token: &[u8]) -> Option<u64> {
    if token.is_empty() || token.len() > 19 {
        return None;
    }
    token.iter().try_fold(0u64, |n, d| d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0')))
}

/// A value length from a reply header, refused past `--max-reply-size`.
#[inline]
fn value_len(token: &[u8], offset: usize, limits: Limits) -> Result<usize, ScanError> {
    let len = number(token).ok_or(ScanError::BadNumber)?;
    if len > limits.max_bulk.max(0) as u64 {
        return Err(ScanError::TooLarge { len: len.min(i64::MAX as u64) as i64, offset, limit: limits.max_bulk });
    }
    Ok(len as usize)
}

/// A reply made of many parts (a multi-key get's values) may not grow past one value's limit
/// and a line: no server can make a connection buffer without bound.
#[inline]
fn within_total(pos: usize, limits: Limits) -> Result<(), ScanError> {
    let limit = limits.max_bulk.saturating_add(MAX_LINE as i64);
    if pos as u64 > limit.max(0) as u64 {
        return Err(ScanError::TooLarge { len: pos as i64, offset: 0, limit });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
