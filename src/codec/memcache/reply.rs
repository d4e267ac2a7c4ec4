//! The bounds and tokens every protocol's reply scanner shares.

use crate::resp::{Limits, MAX_LINE, ScanError};

/// The index just past the CRLF-ended line at `pos`; `Ok(None)` while it is incomplete. A
/// line ends within [`MAX_LINE`] bytes or fails, so an endless one cannot grow a buffer.
#[inline]
pub(super) fn line_end(buf: &[u8], pos: usize) -> Result<Option<usize>, ScanError> {
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
pub(super) fn number(token: &[u8]) -> Option<u64> {
    if token.is_empty() || token.len() > 19 {
        return None;
    }
    token.iter().try_fold(0u64, |n, d| d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0')))
}

/// A value length from a reply header, refused past `--max-reply-size`.
#[inline]
pub(super) fn value_len(token: &[u8], offset: usize, limits: Limits) -> Result<usize, ScanError> {
    let len = number(token).ok_or(ScanError::BadNumber)?;
    if len > limits.max_bulk.max(0) as u64 {
        return Err(ScanError::TooLarge { len: len.min(i64::MAX as u64) as i64, offset, limit: limits.max_bulk });
    }
    Ok(len as usize)
}

/// A reply made of many parts (a multi-key get's values) may not grow past one value's limit
/// and a line: no server can make a connection buffer without bound.
#[inline]
pub(super) fn within_total(pos: usize, limits: Limits) -> Result<(), ScanError> {
    let limit = limits.max_bulk.saturating_add(MAX_LINE as i64);
    if pos as u64 > limit.max(0) as u64 {
        return Err(ScanError::TooLarge { len: pos as i64, offset: 0, limit });
    }
    Ok(())
}
