//! memcached's text protocol: `set`/`get`/`delete`/`incr` requests and their replies
//! (`STORED`, `VALUE ... END`, `DELETED`, a number, the `*ERROR` lines).

use super::op::{Op, keyed, lit};
use super::reply::{line_end, number, value_len, within_total};
use crate::resp::{LenForm, Limits, RawPart, ReplyClass, ScanError, Scanned};

/// One reply: where it ends, its class, and how many values it held.
pub(super) fn walk(buf: &[u8], limits: Limits) -> Result<Option<(Scanned, u64)>, ScanError> {
    let mut pos = 0;
    let mut values = 0u64;
    let mut stats = false;
    loop {
        within_total(pos, limits)?;
        let Some(end) = line_end(buf, pos)? else {
            return Ok(None);
        };
        let line = &buf[pos..end - 2];
        if let Some(rest) = line.strip_prefix(b"VALUE ") {
            if stats {
                return Err(ScanError::Unrecognised { offset: pos });
            }
            // VALUE <key> <flags> <bytes> [<cas>]
            let mut tokens = rest.split(|&b| b == b' ');
            let (Some(_key), Some(flags), Some(bytes)) = (tokens.next(), tokens.next(), tokens.next()) else {
                return Err(ScanError::Unrecognised { offset: pos });
            };
            if number(flags).is_none() || tokens.next().is_some_and(|cas| number(cas).is_none()) {
                return Err(ScanError::BadNumber);
            }
            let len = value_len(bytes, pos, limits)?;
            let data_end = end + len + 2;
            if buf.len() < data_end {
                return Ok(None);
            }
            if &buf[data_end - 2..data_end] != b"\r\n" {
                return Err(ScanError::MissingCrlf);
            }
            values += 1;
            pos = data_end;
            continue;
        }
        if line.starts_with(b"STAT ") && values == 0 {
            stats = true;
            pos = end;
            continue;
        }
        if line == b"END" {
            let class = if values > 0 || stats { ReplyClass::Value } else { ReplyClass::Nil };
            return Ok(Some((Scanned { len: end, class, id: 0 }, values)));
        }
        if values > 0 || stats {
            return Err(ScanError::Unrecognised { offset: pos });
        }
        let class = line_class(line, pos).ok_or(ScanError::Unrecognised { offset: pos })?;
        return Ok(Some((Scanned { len: end, class, id: 0 }, 0)));
    }
}

/// The class of a one-line reply starting at `pos` (its CRLF left off), `None` if it is none
/// of memcached's.
pub(super) fn line_class(line: &[u8], pos: usize) -> Option<ReplyClass> {
    let error = || ReplyClass::Error { msg_start: pos, msg_end: pos + line.len() };
    match line {
        b"STORED" | b"DELETED" | b"TOUCHED" | b"OK" | b"RESET" => Some(ReplyClass::Value),
        b"NOT_FOUND" => Some(ReplyClass::Nil),
        b"NOT_STORED" | b"EXISTS" | b"ERROR" => Some(error()),
        _ if line.starts_with(b"CLIENT_ERROR") || line.starts_with(b"SERVER_ERROR") => Some(error()),
        _ if line.starts_with(b"VERSION ") => Some(ReplyClass::Value),
        // incr's new value.
        _ if number(line).is_some() => Some(ReplyClass::Value),
        _ => None,
    }
}

pub(super) fn template(op: &Op) -> Vec<RawPart> {
    let mut out = Vec::new();
    match op {
        // set <key> <flags> <exptime> <bytes>\r\n<data>\r\n
        Op::Set { key, data, expiry } => {
            keyed(&mut out, b"set ", key, b" 0 ");
            out.push(if *expiry {
                RawPart::Num { hole: super::op::HOLE_EXPIRY, form: LenForm::Decimal }
            } else {
                lit(b"0")
            });
            out.push(lit(b" "));
            out.push(data.len(0, LenForm::Decimal));
            out.push(lit(b"\r\n"));
            out.extend(data.parts.iter().cloned());
            out.push(lit(b"\r\n"));
        }
        Op::Get(key) => keyed(&mut out, b"get ", key, b"\r\n"),
        Op::MultiGet(keys) => {
            out.push(lit(b"get"));
            for key in keys {
                out.push(lit(b" "));
                out.extend(key.parts.iter().cloned());
            }
            out.push(lit(b"\r\n"));
        }
        Op::Delete(key) => keyed(&mut out, b"delete ", key, b"\r\n"),
        Op::Incr(key) => keyed(&mut out, b"incr ", key, b" 1\r\n"),
    }
    out
}
