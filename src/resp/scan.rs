//! Reply scanner: finds where one reply ends and what class it is, without building values.
//!
//! The engine calls [`scan`] on the bytes it has read so far. "Need more bytes" is a normal
//! answer (`Ok(None)`), not a failure. Every RESP2 and RESP3 type is understood, nesting is
//! capped, and no input can make it panic (property-tested below).

use memchr::memchr;

/// Deepest nesting of aggregates accepted; deeper input is treated as a protocol error.
pub const MAX_DEPTH: usize = 64;
/// Default largest reply part accepted (Redis's own proto-max-bulk-len default);
/// `--max-reply-size` sets the limit a run uses.
pub const MAX_BULK_LEN: i64 = 512 * 1024 * 1024;
/// Longest simple-string, error or header line accepted, CRLF excluded.
pub const MAX_LINE: usize = 64 * 1024;

/// What one connection may be made to buffer: every check is an integer compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest bulk string; also the largest aggregate length (an element takes at least a byte).
    pub max_bulk: i64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_bulk: MAX_BULK_LEN }
    }
}

/// What a complete reply was, as far as the load generator cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyClass {
    /// Any non-null value: simple string, integer, bulk, aggregate, and so on.
    Value,
    /// A null: `$-1`, `*-1` or RESP3 `_`. For GET this is a miss.
    Nil,
    /// An error reply; `msg_start..msg_end` is the message within the scanned buffer.
    Error { msg_start: usize, msg_end: usize },
    /// A RESP3 push message: out of band, not the answer to any request.
    Push,
}

/// A complete reply at the start of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scanned {
    /// Bytes the reply occupies, including its final CRLF.
    pub len: usize,
    pub class: ReplyClass,
    /// What the reply says it answers (a memcached binary reply's opaque); 0: nothing, the
    /// order of replies matches them to requests (RESP, text protocols).
    pub id: u32,
}

/// The bytes are not a valid RESP reply; the connection cannot be resynchronised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    #[error("unexpected type byte 0x{0:02x}")]
    BadType(u8),
    #[error("malformed length or integer")]
    BadNumber,
    #[error("bulk payload not followed by CRLF")]
    MissingCrlf,
    #[error("nesting deeper than {MAX_DEPTH}")]
    TooDeep,
    /// A line (simple string, error, header) longer than [`MAX_LINE`] without its end.
    #[error("a line longer than the {MAX_LINE}-byte limit at byte offset {offset}")]
    LineTooLong { offset: usize },
    /// A bulk string or aggregate declared larger than `--max-reply-size`.
    #[error("a declared length of {len} at byte offset {offset} exceeds --max-reply-size {limit}")]
    TooLarge { len: i64, offset: usize, limit: i64 },
    /// A reply line the protocol does not define (the memcached codecs).
    #[error("an unrecognised reply at byte offset {offset}")]
    Unrecognised { offset: usize },
}

/// Scans one reply at the start of `buf`.
pub fn scan(buf: &[u8]) -> Result<Option<Scanned>, ScanError> {
    scan_within(buf, Limits::default())
}

/// Scans one reply at the start of `buf`, refusing anything beyond `limits`.
#[inline]
pub fn scan_within(buf: &[u8], limits: Limits) -> Result<Option<Scanned>, ScanError> {
    // The commonest reply, a GET's value, without the general walk: the same checks as its
    // arm in `scan_at`, which takes anything this does not settle (a null, a limit, a sign).
    if buf.first() == Some(&b'$')
        && let Some((len, body)) = bulk_len(buf, 0)
        && len as i64 <= limits.max_bulk
    {
        return Ok(body_end(buf, body, len)?.map(|end| Scanned { len: end, class: ReplyClass::Value, id: 0 }));
    }
    match scan_at(buf, 0, 0, limits)? {
        Some((end, class)) => Ok(Some(Scanned { len: end, class, id: 0 })),
        None => Ok(None),
    }
}

/// For a complete array reply (MGET's): its elements and how many of them are misses (null or
/// an empty bulk string, as memtier counts them). `None` when the reply is not an array. The
/// reply has already passed [`scan_within`] whole, so the default limits hold it.
pub fn count_misses(reply: &[u8]) -> Option<(u64, u64)> {
    if reply.first() != Some(&b'*') {
        return None;
    }
    let (digits, mut next) = header(reply, 0).ok()??;
    let count = parse_int(digits).ok()?;
    let mut misses = 0;
    for _ in 0..count.max(0) {
        let (end, class) = scan_at(reply, next, 1, Limits::default()).ok()??;
        if class == ReplyClass::Nil || reply[next..end].starts_with(b"$0\r\n") {
            misses += 1;
        }
        next = end;
    }
    Some((count.max(0) as u64, misses))
}

/// A bulk string's header at the start of `buf` (`$<len>\r\n`, not a null): where its body
/// starts and how long the body is. Meant for a reply [`scan_within`] found incomplete, whose
/// header has already passed its limits.
pub fn bulk_head(buf: &[u8]) -> Option<(usize, usize)> {
    if buf.first() != Some(&b'$') {
        return None;
    }
    let (digits, body) = header(buf, 0).ok()??;
    let len = usize::try_from(parse_int(digits).ok()?).ok()?;
    Some((body, len))
}

type Step = Result<Option<(usize, ReplyClass)>, ScanError>;

/// Returns the index just past the line that starts at `pos` (line content is `pos..end-2`).
/// A line is looked for within its limit only, so an endless one fails instead of growing.
#[inline]
fn line_end(buf: &[u8], pos: usize) -> Result<Option<usize>, ScanError> {
    // The type byte, MAX_LINE bytes of content and CRLF.
    let window = &buf[pos..buf.len().min(pos + MAX_LINE + 3)];
    match memchr(b'\n', window) {
        Some(rel) => Ok(Some(pos + rel + 1)),
        None if window.len() == MAX_LINE + 3 => Err(ScanError::LineTooLong { offset: pos }),
        None => Ok(None),
    }
}

/// A length header at `pos` (a bulk string's, a blob error's, a verbatim string's) read as
/// its digits come, up to its CRLF: its length and where its body starts. The common reply (a
/// GET's value) without a search for the line's end and a second pass over its digits; `None`
/// for any other header (a null, a sign, more than 18 digits, not all here yet), which the
/// line reader takes.
#[inline(always)]
fn bulk_len(buf: &[u8], pos: usize) -> Option<(usize, usize)> {
    let digits = buf.get(pos + 1..)?;
    let mut len = 0usize;
    let mut n = 0;
    while let Some(&d) = digits.get(n)
        && d.is_ascii_digit()
        && n < 18
    {
        len = len * 10 + usize::from(d - b'0');
        n += 1;
    }
    (n > 0 && digits.get(n..n + 2) == Some(b"\r\n")).then_some((len, pos + 1 + n + 2))
}

/// Where a bulk body of `len` bytes starting at `body` ends, its CRLF included; `None` until
/// all of it is here.
#[inline(always)]
fn body_end(buf: &[u8], body: usize, len: usize) -> Result<Option<usize>, ScanError> {
    let end = body + len + 2;
    match buf.get(end - 2..end) {
        None => Ok(None),
        Some(b"\r\n") => Ok(Some(end)),
        Some(_) => Err(ScanError::MissingCrlf),
    }
}

/// Parses a signed decimal integer from a line's content, rejecting anything else.
#[inline]
fn parse_int(digits: &[u8]) -> Result<i64, ScanError> {
    let (neg, digits) = match digits.first() {
        Some(b'-') => (true, &digits[1..]),
        Some(b'+') => (false, &digits[1..]),
        _ => (false, digits),
    };
    if digits.is_empty() {
        return Err(ScanError::BadNumber);
    }
    // Accumulated with its sign, so that i64::MIN (a valid integer reply) fits.
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(ScanError::BadNumber);
        }
        let digit = i64::from(d - b'0');
        value = value
            .checked_mul(10)
            .and_then(|v| if neg { v.checked_sub(digit) } else { v.checked_add(digit) })
            .ok_or(ScanError::BadNumber)?;
    }
    Ok(value)
}

/// Reads the header line at `pos` (type byte already known) and returns (content, next pos).
#[inline]
fn header(buf: &[u8], pos: usize) -> Result<Option<(&[u8], usize)>, ScanError> {
    let Some(end) = line_end(buf, pos)? else {
        return Ok(None);
    };
    if end < pos + 3 || buf[end - 2] != b'\r' {
        return Err(ScanError::BadNumber);
    }
    Ok(Some((&buf[pos + 1..end - 2], end)))
}

/// Reads the length header at `pos` (a bulk string's or an aggregate's, type byte known):
/// the length and where what it counts begins, or no length where `nil_allowed` and the
/// header says -1 (RESP2's nil bulk string and nil array). Any other negative is refused.
#[inline]
fn length(buf: &[u8], pos: usize, nil_allowed: bool) -> Result<Option<(Option<i64>, usize)>, ScanError> {
    let Some((digits, next)) = header(buf, pos)? else {
        return Ok(None);
    };
    match parse_int(digits)? {
        -1 if nil_allowed => Ok(Some((None, next))),
        len if len < 0 => Err(ScanError::BadNumber),
        len => Ok(Some((Some(len), next))),
    }
}

fn scan_at(buf: &[u8], pos: usize, depth: usize, limits: Limits) -> Step {
    if depth > MAX_DEPTH {
        return Err(ScanError::TooDeep);
    }
    let Some(&kind) = buf.get(pos) else {
        return Ok(None);
    };
    match kind {
        b'+' | b',' | b'(' | b'#' | b'_' => {
            let Some(end) = line_end(buf, pos)? else {
                return Ok(None);
            };
            let class = if kind == b'_' { ReplyClass::Nil } else { ReplyClass::Value };
            Ok(Some((end, class)))
        }
        b'-' => {
            let Some(end) = line_end(buf, pos)? else {
                return Ok(None);
            };
            let msg_end = if end >= pos + 2 && buf[end - 2] == b'\r' { end - 2 } else { end - 1 };
            Ok(Some((end, ReplyClass::Error { msg_start: pos + 1, msg_end })))
        }
        b':' => {
            let Some((digits, end)) = header(buf, pos)? else {
                return Ok(None);
            };
            parse_int(digits)?;
            Ok(Some((end, ReplyClass::Value)))
        }
        b'$' | b'!' | b'=' => {
            let (len, body) = match bulk_len(buf, pos) {
                Some((len, body)) => (len as i64, body),
                None => match length(buf, pos, kind == b'$')? {
                    None => return Ok(None),
                    Some((None, body)) => return Ok(Some((body, ReplyClass::Nil))),
                    Some((Some(len), body)) => (len, body),
                },
            };
            if len > limits.max_bulk {
                return Err(ScanError::TooLarge { len, offset: pos, limit: limits.max_bulk });
            }
            let Some(end) = body_end(buf, body, len as usize)? else {
                return Ok(None);
            };
            let class =
                if kind == b'!' { ReplyClass::Error { msg_start: body, msg_end: end - 2 } } else { ReplyClass::Value };
            Ok(Some((end, class)))
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let (count, mut next) = match length(buf, pos, kind == b'*')? {
                None => return Ok(None),
                Some((None, next)) => return Ok(Some((next, ReplyClass::Nil))),
                Some((Some(count), next)) => (count, next),
            };
            if count > limits.max_bulk {
                return Err(ScanError::TooLarge { len: count, offset: pos, limit: limits.max_bulk });
            }
            // Maps and attributes hold key-value pairs; guard the doubling against overflow.
            let elements = if kind == b'%' || kind == b'|' { count.saturating_mul(2) } else { count };
            for _ in 0..elements {
                match scan_at(buf, next, depth + 1, limits)? {
                    Some((end, _)) => next = end,
                    None => return Ok(None),
                }
            }
            match kind {
                // An attribute annotates the reply that follows it: both are one unit.
                b'|' => scan_at(buf, next, depth + 1, limits),
                b'>' => Ok(Some((next, ReplyClass::Push))),
                _ => Ok(Some((next, ReplyClass::Value))),
            }
        }
        other => Err(ScanError::BadType(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn whole(bytes: &[u8]) -> Scanned {
        scan(bytes).expect("valid").expect("complete")
    }

    #[test]
    fn scans_every_resp2_type() {
        assert_eq!(whole(b"+OK\r\n"), Scanned { len: 5, class: ReplyClass::Value, id: 0 });
        assert_eq!(whole(b":-12\r\n").class, ReplyClass::Value);
        assert_eq!(whole(b"$3\r\nabc\r\n").len, 9);
        assert_eq!(whole(b"$-1\r\n").class, ReplyClass::Nil);
        assert_eq!(whole(b"*-1\r\n").class, ReplyClass::Nil);
        assert_eq!(whole(b"*2\r\n$1\r\na\r\n:1\r\n").len, 15);
        let err = whole(b"-ERR bad thing\r\n");
        assert_eq!(err.class, ReplyClass::Error { msg_start: 1, msg_end: 14 });
    }

    #[test]
    fn scans_every_resp3_type() {
        for reply in [
            &b"_\r\n"[..],
            b"#t\r\n",
            b",3.14\r\n",
            b"(12345678901234567890\r\n",
            b"=7\r\ntxt:abc\r\n",
            b"%1\r\n+k\r\n:1\r\n",
            b"~2\r\n:1\r\n:2\r\n",
            b">2\r\n+message\r\n+hi\r\n",
            b"|1\r\n+ttl\r\n:3\r\n+OK\r\n",
            b"!5\r\nOOPS!\r\n",
        ] {
            assert_eq!(whole(reply).len, reply.len(), "{:?}", String::from_utf8_lossy(reply));
        }
        assert_eq!(whole(b"_\r\n").class, ReplyClass::Nil);
        assert_eq!(whole(b">1\r\n+x\r\n").class, ReplyClass::Push);
        assert!(matches!(whole(b"!2\r\nNO\r\n").class, ReplyClass::Error { .. }));
    }

    #[test]
    fn a_bulk_header_read_as_it_comes_agrees_with_the_line_reader() {
        // Read digit by digit: the common length; the rest falls to the line reader.
        assert_eq!(bulk_len(b"$5\r\nhello\r\n", 0), Some((5, 4)));
        assert_eq!(bulk_len(b"$007\r\n", 0), Some((7, 6)));
        for other in
            [&b"$-1\r\n"[..], b"$+5\r\nhello\r\n", b"$5", b"$5\r", b"$5\n", b"$\r\n", b"$1234567890123456789\r\n"]
        {
            assert_eq!(bulk_len(other, 0), None, "{}", String::from_utf8_lossy(other));
        }
        assert_eq!(whole(b"$+5\r\nhello\r\n").len, 12);
        assert_eq!(whole(b"$007\r\nabcdefg\r\n").len, 15);
        assert_eq!(scan(b"$5\r\nhello\n\n"), Err(ScanError::MissingCrlf));
        assert_eq!(scan(b"$5\r\nhell"), Ok(None));
        let limits = Limits { max_bulk: 4 };
        assert!(matches!(scan_within(b"$5\r\nhello\r\n", limits), Err(ScanError::TooLarge { len: 5, .. })));
    }

    #[test]
    fn counts_an_arrays_misses() {
        assert_eq!(count_misses(b"*3\r\n$1\r\na\r\n$-1\r\n$0\r\n\r\n"), Some((3, 2)));
        assert_eq!(count_misses(b"*0\r\n"), Some((0, 0)));
        assert_eq!(count_misses(b"$1\r\na\r\n"), None);
    }

    #[test]
    fn rejects_garbage_and_depth() {
        assert_eq!(scan(b"?what\r\n"), Err(ScanError::BadType(b'?')));
        assert_eq!(scan(b"$abc\r\n"), Err(ScanError::BadNumber));
        assert_eq!(scan(b"$3\r\nabcXY"), Err(ScanError::MissingCrlf));
        assert_eq!(scan(b"$-2\r\n"), Err(ScanError::BadNumber));
        // Found by the differential check against the reference reader: i64's edges.
        assert_eq!(whole(b":-9223372036854775808\r\n").class, ReplyClass::Value);
        assert_eq!(whole(b":9223372036854775807\r\n").class, ReplyClass::Value);
        assert_eq!(scan(b":-9223372036854775809\r\n"), Err(ScanError::BadNumber));
        assert_eq!(scan(b":9223372036854775808\r\n"), Err(ScanError::BadNumber));
        let deep = "*1\r\n".repeat(MAX_DEPTH + 2);
        assert_eq!(scan(deep.as_bytes()), Err(ScanError::TooDeep));
    }

    #[test]
    fn endless_lines_and_huge_lengths_hit_their_limits() {
        // An endless simple string fails once it passes the line limit, not later.
        let mut line = b"+".to_vec();
        line.resize(MAX_LINE + 2, b'x');
        assert_eq!(scan(&line), Ok(None));
        line.push(b'x');
        assert_eq!(scan(&line), Err(ScanError::LineTooLong { offset: 0 }));
        // A long line that does end within the limit is fine.
        let mut ok = b"-".to_vec();
        ok.resize(MAX_LINE + 1, b'e');
        ok.extend_from_slice(b"\r\n");
        assert_eq!(whole(&ok).len, ok.len());
        // Nested: the offset names where the line starts.
        let mut nested = b"*2\r\n:1\r\n+".to_vec();
        nested.resize(nested.len() + MAX_LINE + 5, b'y');
        assert_eq!(scan(&nested), Err(ScanError::LineTooLong { offset: 8 }));
        let limits = Limits { max_bulk: 1000 };
        assert_eq!(scan_within(b"$1000\r\n", limits), Ok(None));
        assert_eq!(scan_within(b"$1001\r\n", limits), Err(ScanError::TooLarge { len: 1001, offset: 0, limit: 1000 }));
        assert_eq!(
            scan_within(b"*1\r\n*2147483647\r\n", limits),
            Err(ScanError::TooLarge { len: 2147483647, offset: 4, limit: 1000 })
        );
        assert_eq!(
            scan(b"*2147483647\r\n"),
            Err(ScanError::TooLarge { len: 2147483647, offset: 0, limit: MAX_BULK_LEN })
        );
        assert!(ScanError::TooLarge { len: 5, offset: 9, limit: 4 }.to_string().contains("byte offset 9"));
    }

    fn valid_reply() -> impl Strategy<Value = Vec<u8>> {
        let leaf = prop_oneof![
            "[a-zA-Z ]{0,12}".prop_map(|s| format!("+{s}\r\n").into_bytes()),
            "[A-Z]{1,8}".prop_map(|s| format!("-{s} message\r\n").into_bytes()),
            any::<i64>().prop_map(|n| format!(":{n}\r\n").into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(|v| {
                let mut out = format!("${}\r\n", v.len()).into_bytes();
                out.extend_from_slice(&v);
                out.extend_from_slice(b"\r\n");
                out
            }),
            Just(b"$-1\r\n".to_vec()),
            Just(b"_\r\n".to_vec()),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            proptest::collection::vec(inner, 0..6).prop_map(|items| {
                let mut out = format!("*{}\r\n", items.len()).into_bytes();
                for item in items {
                    out.extend_from_slice(&item);
                }
                out
            })
        })
    }

    proptest! {
        #[test]
        fn split_at_every_byte_needs_more_then_completes(reply in valid_reply()) {
            for cut in 0..reply.len() {
                prop_assert_eq!(scan(&reply[..cut]), Ok(None), "cut at {}", cut);
            }
            prop_assert_eq!(scan(&reply).unwrap().unwrap().len, reply.len());
        }

        #[test]
        fn trailing_bytes_are_left_alone(reply in valid_reply(), tail in proptest::collection::vec(any::<u8>(), 0..20)) {
            let mut buf = reply.clone();
            buf.extend_from_slice(&tail);
            prop_assert_eq!(scan(&buf).unwrap().unwrap().len, reply.len());
        }

        #[test]
        fn small_limits_never_panic_and_refuse_only_what_is_too_large(reply in valid_reply(), max in 0i64..64) {
            match scan_within(&reply, Limits { max_bulk: max }) {
                Ok(Some(s)) => prop_assert_eq!(s.len, reply.len()),
                Ok(None) => prop_assert!(false, "a whole reply needs no more bytes"),
                Err(e) => prop_assert!(matches!(e, ScanError::TooLarge { len, limit, .. } if len > limit), "{:?}", e),
            }
        }

        #[test]
        fn the_bulk_string_shortcut_agrees_with_the_general_walk(
            len in prop_oneof![Just(String::new()), Just("-1".to_string()), Just("+3".to_string()),
                Just("9".repeat(19)), (0u32..12).prop_map(|n| n.to_string()), "[0-9]{1,3}"],
            sep in prop_oneof![Just(&b"\r\n"[..]), Just(&b"\r"[..]), Just(&b"\n"[..]), Just(&b""[..])],
            body in proptest::collection::vec(any::<u8>(), 0..12),
            end in prop_oneof![Just(&b"\r\n"[..]), Just(&b"\r"[..]), Just(&b"x\n"[..]), Just(&b""[..])],
            max in 0i64..16,
        ) {
            let buf = [&b"$"[..], len.as_bytes(), sep, &body, end].concat();
            let general = |limits| scan_at(&buf, 0, 0, limits).map(|o| o.map(|(len, class)| Scanned { len, class, id: 0 }));
            for limits in [Limits::default(), Limits { max_bulk: max }] {
                prop_assert_eq!(scan_within(&buf, limits), general(limits));
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = scan(&bytes);
        }

        #[test]
        fn resp_shaped_noise_never_panics(bytes in proptest::collection::vec(
            prop_oneof![Just(b'*'), Just(b'$'), Just(b'\r'), Just(b'\n'), Just(b'-'), Just(b'1'), Just(b'%'), Just(b'|'), any::<u8>()], 0..200)) {
            let _ = scan(&bytes);
        }
    }
}
