//! A reference for the reply scanner's contract (`src/resp/scan.rs`), written apart from it
//! for clarity, not speed: a plain recursive-descent reader over the input that the tests
//! (`tests/scan_differential.rs`) and the fuzz target `scan_diff` hold the scanner to, verdict
//! for verdict. Numbers go through the standard library's `i64` parser; lines are found by a
//! plain search for LF.
//!
//! The contract, as the scanner documents it:
//! - a simple line (`+ , ( # _ -`) runs to the first LF (a CR before it is not required);
//!   any line, type byte and CRLF included, may be at most [`LINE`] + 3 bytes;
//! - a number (`:`, and every length) is an optional sign and digits that fit an `i64`,
//!   followed by CRLF;
//! - `$-1` and `*-1` are nil, any other negative length is invalid; a length above `max_len`
//!   is invalid (`--max-reply-size`);
//! - a bulk payload (`$ = !`) is followed by exactly CRLF;
//! - maps (`%`) and attributes (`|`) hold pairs; an attribute and the reply after it are one;
//! - a value deeper than [`DEPTH`] aggregates is invalid, decided as soon as it is reached.

#![allow(dead_code)]

/// What a complete reply is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Value,
    Nil,
    /// The message's bounds within the whole input.
    Error {
        msg_start: usize,
        msg_end: usize,
    },
    Push,
}

/// What the reference makes of an input's first reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Complete {
        len: usize,
        class: Class,
    },
    /// A valid beginning: more bytes are needed.
    Incomplete,
    Invalid,
}

/// Deepest nesting accepted.
pub const DEPTH: usize = 64;
/// Longest line content accepted.
pub const LINE: usize = 64 * 1024;

/// Why reading stopped.
enum Stop {
    More,
    Bad,
}

/// Reads the first reply of `input`, lengths above `max_len` refused.
pub fn verdict(input: &[u8], max_len: i64) -> Verdict {
    match (Reader { input, max_len }).value(0, 0) {
        Ok((len, class)) => Verdict::Complete { len, class },
        Err(Stop::More) => Verdict::Incomplete,
        Err(Stop::Bad) => Verdict::Invalid,
    }
}

struct Reader<'a> {
    input: &'a [u8],
    max_len: i64,
}

impl Reader<'_> {
    /// The line whose type byte is at `at`: what lies between the type byte and the LF, and
    /// where the next thing starts.
    fn line(&self, at: usize) -> Result<(&[u8], usize), Stop> {
        let longest = LINE + 3;
        let rest = &self.input[at..];
        match rest.iter().position(|&b| b == b'\n') {
            Some(lf) if lf < longest => Ok((&rest[1..lf], at + lf + 1)),
            Some(_) => Err(Stop::Bad),
            None if rest.len() >= longest => Err(Stop::Bad),
            None => Err(Stop::More),
        }
    }

    /// A number line at `at`: its value and where the next thing starts.
    fn number(&self, at: usize) -> Result<(i64, usize), Stop> {
        let (content, next) = self.line(at)?;
        let digits = content.strip_suffix(b"\r").ok_or(Stop::Bad)?;
        let text = std::str::from_utf8(digits).map_err(|_| Stop::Bad)?;
        let value = text.parse::<i64>().map_err(|_| Stop::Bad)?;
        Ok((value, next))
    }

    /// The value at `at`, nested `depth` aggregates deep: where it ends and what it is.
    fn value(&self, at: usize, depth: usize) -> Result<(usize, Class), Stop> {
        if depth > DEPTH {
            return Err(Stop::Bad);
        }
        let Some(&kind) = self.input.get(at) else {
            return Err(Stop::More);
        };
        match kind {
            b'+' | b',' | b'(' | b'#' => Ok((self.line(at)?.1, Class::Value)),
            b'_' => Ok((self.line(at)?.1, Class::Nil)),
            b'-' => {
                let (content, next) = self.line(at)?;
                let message = content.strip_suffix(b"\r").unwrap_or(content);
                Ok((next, Class::Error { msg_start: at + 1, msg_end: at + 1 + message.len() }))
            }
            b':' => Ok((self.number(at)?.1, Class::Value)),
            b'$' | b'=' | b'!' => {
                let (len, body) = self.number(at)?;
                if kind == b'$' && len == -1 {
                    return Ok((body, Class::Nil));
                }
                if len < 0 || len > self.max_len {
                    return Err(Stop::Bad);
                }
                let payload_end = body + len as usize;
                let end = payload_end + 2;
                if self.input.len() < end {
                    return Err(Stop::More);
                }
                if &self.input[payload_end..end] != b"\r\n" {
                    return Err(Stop::Bad);
                }
                let class =
                    if kind == b'!' { Class::Error { msg_start: body, msg_end: payload_end } } else { Class::Value };
                Ok((end, class))
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let (count, mut next) = self.number(at)?;
                if kind == b'*' && count == -1 {
                    return Ok((next, Class::Nil));
                }
                if count < 0 || count > self.max_len {
                    return Err(Stop::Bad);
                }
                let per_entry = if kind == b'%' || kind == b'|' { 2 } else { 1 };
                for _ in 0..count * per_entry {
                    next = self.value(next, depth + 1)?.0;
                }
                match kind {
                    b'|' => self.value(next, depth + 1),
                    b'>' => Ok((next, Class::Push)),
                    _ => Ok((next, Class::Value)),
                }
            }
            _ => Err(Stop::Bad),
        }
    }
}
