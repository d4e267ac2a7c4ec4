//! memcached's binary protocol: 24-byte headers, the request's opaque echoed by its reply,
//! SASL PLAIN. A multi-key get is a `GETKQ` per key and a `NOOP` (misses stay quiet, the
//! `NOOP`'s reply closes the one reply), which memtier itself does not offer.

use super::op::{Arg, Op};
use super::reply::within_total;
use crate::resp::{LenForm, Limits, RawPart, ReplyClass, ScanError, Scanned};

pub const HEADER: usize = 24;
pub const REQUEST: u8 = 0x80;
pub const RESPONSE: u8 = 0x81;
pub const OP_GET: u8 = 0x00;
pub const OP_SET: u8 = 0x01;
pub const OP_DELETE: u8 = 0x04;
pub const OP_INCREMENT: u8 = 0x05;
pub const OP_GETQ: u8 = 0x09;
pub const OP_NOOP: u8 = 0x0a;
pub const OP_VERSION: u8 = 0x0b;
pub const OP_GETKQ: u8 = 0x0d;
pub const OP_STAT: u8 = 0x10;
pub const OP_SASL_AUTH: u8 = 0x21;
pub const STATUS_OK: u16 = 0x0000;
pub const STATUS_NOT_FOUND: u16 = 0x0001;
pub const STATUS_AUTH_ERROR: u16 = 0x0020;

/// One response packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// Index just past it.
    pub end: usize,
    pub opcode: u8,
    pub status: u16,
    pub opaque: u32,
    /// Its key (a `GETK`'s, a `STAT`'s name).
    pub key: (usize, usize),
    /// Its value (a `GET`'s, a `STAT`'s, an error's message).
    pub value: (usize, usize),
}

/// The response packet at `pos`, `Ok(None)` while incomplete.
pub fn packet(buf: &[u8], pos: usize, limits: Limits) -> Result<Option<Packet>, ScanError> {
    let Some(h) = buf.get(pos..pos + HEADER) else {
        if let Some(&magic) = buf.get(pos)
            && magic != RESPONSE
        {
            return Err(ScanError::BadType(magic));
        }
        return Ok(None);
    };
    if h[0] != RESPONSE {
        return Err(ScanError::BadType(h[0]));
    }
    let keylen = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let extlen = usize::from(h[4]);
    let body = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize;
    if body < keylen + extlen {
        return Err(ScanError::BadNumber);
    }
    let limit = limits.max_bulk.saturating_add(1 << 17);
    if body as i64 > limit {
        return Err(ScanError::TooLarge { len: body as i64, offset: pos + 8, limit: limits.max_bulk });
    }
    let end = pos + HEADER + body;
    if buf.len() < end {
        return Ok(None);
    }
    let key_start = pos + HEADER + extlen;
    Ok(Some(Packet {
        end,
        opcode: h[1],
        status: u16::from_be_bytes([h[6], h[7]]),
        opaque: u32::from_be_bytes([h[12], h[13], h[14], h[15]]),
        key: (key_start, key_start + keylen),
        value: (key_start + keylen, end),
    }))
}

pub(super) fn walk(buf: &[u8], limits: Limits) -> Result<Option<(Scanned, u64)>, ScanError> {
    let Some(first) = packet(buf, 0, limits)? else {
        return Ok(None);
    };
    let mut last = first;
    let mut hits = 0;
    let mut error = None;
    // A multi-key get's quiet replies run until the NOOP's; a stats reply until an empty key.
    let quiet = |p: &Packet| p.opcode == OP_GETKQ || p.opcode == OP_GETQ;
    if quiet(&first) || (first.opcode == OP_STAT && first.status == STATUS_OK && first.key.0 < first.key.1) {
        loop {
            if quiet(&last) {
                match last.status {
                    STATUS_OK => hits += 1,
                    STATUS_NOT_FOUND => {}
                    _ => error = error.or(Some(last.value)),
                }
            }
            let done = match first.opcode {
                OP_STAT => last.opcode != OP_STAT || last.key.0 == last.key.1 || last.status != STATUS_OK,
                _ => !quiet(&last),
            };
            if done {
                break;
            }
            within_total(last.end, limits)?;
            match packet(buf, last.end, limits)? {
                Some(p) => last = p,
                None => return Ok(None),
            }
        }
    }
    let class = match (error, last.status) {
        (Some((s, e)), _) => ReplyClass::Error { msg_start: s, msg_end: e },
        (None, STATUS_OK) => ReplyClass::Value,
        (None, STATUS_NOT_FOUND) => ReplyClass::Nil,
        (None, _) => ReplyClass::Error { msg_start: last.value.0, msg_end: last.value.1 },
    };
    Ok(Some((Scanned { len: last.end, class, id: last.opaque }, hits)))
}

/// A request header: magic, opcode, key length, extras length, body length, opaque, CAS 0.
fn header(out: &mut Vec<RawPart>, opcode: u8, key: Option<&Arg>, extras: u8, value: Option<&Arg>, id: u32) {
    out.push(RawPart::Lit(vec![REQUEST, opcode]));
    match key {
        Some(key) => out.push(key.len(0, LenForm::U16Be)),
        None => out.push(RawPart::Lit(vec![0, 0])),
    }
    out.push(RawPart::Lit(vec![extras, 0, 0, 0]));
    let mut holes = Vec::new();
    let mut plus = usize::from(extras);
    for arg in key.into_iter().chain(value) {
        holes.extend_from_slice(&arg.holes);
        plus += arg.lit_len;
    }
    out.push(RawPart::Len { holes, plus, form: LenForm::U32Be });
    let mut tail = id.to_be_bytes().to_vec();
    tail.extend_from_slice(&[0; 8]);
    out.push(RawPart::Lit(tail));
}

/// A whole request of fixed bytes (the login's and the telemetry's).
pub fn request(opcode: u8, key: &[u8], extras: &[u8], value: &[u8], opaque: u32) -> Vec<u8> {
    let mut out = vec![REQUEST, opcode];
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.extend_from_slice(&[extras.len() as u8, 0, 0, 0]);
    out.extend_from_slice(&((extras.len() + key.len() + value.len()) as u32).to_be_bytes());
    out.extend_from_slice(&opaque.to_be_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(extras);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    out
}

pub(super) fn template(op: &Op, id: u32) -> Vec<RawPart> {
    let mut out = Vec::new();
    match op {
        Op::Set { key, data, expiry } => {
            header(&mut out, OP_SET, Some(key), 8, Some(data), id);
            // Extras: flags 0, then the expiry.
            out.push(RawPart::Lit(vec![0; 4]));
            out.push(if *expiry {
                RawPart::Num { hole: super::op::HOLE_EXPIRY, form: LenForm::U32Be }
            } else {
                RawPart::Lit(vec![0; 4])
            });
            out.extend(key.parts.iter().cloned());
            out.extend(data.parts.iter().cloned());
        }
        Op::Get(key) | Op::Delete(key) => {
            header(&mut out, if matches!(op, Op::Get(_)) { OP_GET } else { OP_DELETE }, Some(key), 0, None, id);
            out.extend(key.parts.iter().cloned());
        }
        Op::MultiGet(keys) => {
            for key in keys {
                header(&mut out, OP_GETKQ, Some(key), 0, None, id);
                out.extend(key.parts.iter().cloned());
            }
            header(&mut out, OP_NOOP, None, 0, None, id);
        }
        Op::Incr(key) => {
            header(&mut out, OP_INCREMENT, Some(key), 20, None, id);
            // Delta 1, initial 0, expiry 0: a missing key is created, as Redis's INCR does.
            let mut extras = 1u64.to_be_bytes().to_vec();
            extras.extend_from_slice(&[0; 12]);
            out.push(RawPart::Lit(extras));
            out.extend(key.parts.iter().cloned());
        }
    }
    out
}
