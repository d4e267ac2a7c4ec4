//! memcached 1.6's meta protocol: `ms`/`mg`/`md`/`ma` and their two-letter replies. A
//! multi-key get is `mg <key> v k q` per key and an `mn`: misses stay quiet, hits carry their
//! key (`k`), and `MN` closes the one reply. Other lines (`VERSION`, `STAT`, the `*ERROR`
//! lines) are the text protocol's.

use super::op::{Op, keyed, lit};
use super::reply::{line_end, value_len, within_total};
use super::text;
use crate::resp::{LenForm, Limits, RawPart, ReplyClass, ScanError, Scanned};

/// One reply: where it ends, its class, and how many values it held.
pub(super) fn walk(buf: &[u8], limits: Limits) -> Result<Option<(Scanned, u64)>, ScanError> {
    let mut pos = 0;
    let mut values = 0u64;
    // Inside a multi-key get (a value with its key came first): lines until `MN`.
    let mut run = false;
    let mut class = ReplyClass::Value;
    loop {
        within_total(pos, limits)?;
        let Some(end) = line_end(buf, pos)? else {
            return Ok(None);
        };
        let line = &buf[pos..end - 2];
        let code = line.get(..2).unwrap_or(line);
        let sep_ok = line.len() == 2 || line.get(2) == Some(&b' ');
        let mut next = end;
        let this = match code {
            b"VA" if sep_ok => {
                let mut tokens = line[2..].split(|&b| b == b' ').filter(|t| !t.is_empty());
                let size = tokens.next().ok_or(ScanError::BadNumber)?;
                let len = value_len(size, pos, limits)?;
                if tokens.any(|flag| flag.first() == Some(&b'k')) {
                    run = true;
                }
                next = end + len + 2;
                if buf.len() < next {
                    return Ok(None);
                }
                if &buf[next - 2..next] != b"\r\n" {
                    return Err(ScanError::MissingCrlf);
                }
                values += 1;
                ReplyClass::Value
            }
            b"HD" | b"ME" if sep_ok => ReplyClass::Value,
            b"EN" | b"NF" if sep_ok => ReplyClass::Nil,
            b"NS" | b"EX" if sep_ok => ReplyClass::Error { msg_start: pos, msg_end: end - 2 },
            b"MN" if sep_ok => {
                let class = if run {
                    class
                } else if values > 0 {
                    ReplyClass::Value
                } else {
                    ReplyClass::Nil
                };
                return Ok(Some((Scanned { len: end, class, id: 0 }, values)));
            }
            _ if run => match text::line_class(line, pos) {
                Some(c @ ReplyClass::Error { .. }) => c,
                _ => return Err(ScanError::Unrecognised { offset: pos }),
            },
            // VERSION, STAT ... END, ERROR, CLIENT_ERROR: the text protocol's lines.
            _ => return text::walk(buf, limits),
        };
        if !run {
            return Ok(Some((Scanned { len: next, class: this, id: 0 }, values)));
        }
        if matches!(this, ReplyClass::Error { .. }) {
            class = this;
        }
        pos = next;
    }
}

pub(super) fn template(op: &Op) -> Vec<RawPart> {
    let mut out = Vec::new();
    match op {
        // ms <key> <datalen> [T<ttl>]\r\n<data>\r\n
        Op::Set { key, data, expiry } => {
            keyed(&mut out, b"ms ", key, b" ");
            out.push(data.len(0, LenForm::Decimal));
            if *expiry {
                out.push(lit(b" T"));
                out.push(RawPart::Num { hole: super::op::HOLE_EXPIRY, form: LenForm::Decimal });
            }
            out.push(lit(b"\r\n"));
            out.extend(data.parts.iter().cloned());
            out.push(lit(b"\r\n"));
        }
        Op::Get(key) => keyed(&mut out, b"mg ", key, b" v\r\n"),
        Op::MultiGet(keys) => {
            for key in keys {
                keyed(&mut out, b"mg ", key, b" v k q\r\n");
            }
            out.push(lit(b"mn\r\n"));
        }
        Op::Delete(key) => keyed(&mut out, b"md ", key, b"\r\n"),
        // Created at 0 when missing (N0 J0), as Redis's INCR does.
        Op::Incr(key) => keyed(&mut out, b"ma ", key, b" N0 J0\r\n"),
    }
    out
}
