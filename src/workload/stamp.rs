//! The stamp a pub/sub role's message carries: the publisher (its connection), its sequence
//! number and its send time, in fixed-width hex, so that a subscriber reads back when and by
//! whom the message was sent without any shared state. Times are nanoseconds since one
//! instant of the process ([`now`]), which publishers and subscribers share.

use std::sync::OnceLock;
use std::time::Instant;

/// Bytes of a stamp: 8 hex digits of publisher, 16 of sequence, 16 of nanoseconds.
pub const STAMP_LEN: usize = 40;

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since the process's stamp epoch (the first call).
#[inline]
pub fn now() -> u64 {
    since(Instant::now())
}

/// `at` in nanoseconds since the process's stamp epoch (0 before it).
#[inline]
pub fn since(at: Instant) -> u64 {
    at.saturating_duration_since(*EPOCH.get_or_init(Instant::now)).as_nanos() as u64
}

/// What a stamp says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub publisher: u32,
    pub seq: u64,
    pub sent_ns: u64,
}

fn hex(out: &mut [u8], mut n: u64) {
    for b in out.iter_mut().rev() {
        *b = b"0123456789abcdef"[(n & 0xf) as usize];
        n >>= 4;
    }
}

fn unhex(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |n, &d| {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        Some(n << 4 | u64::from(v))
    })
}

impl Stamp {
    /// Writes the stamp into `out`.
    #[inline]
    pub fn write(&self, out: &mut [u8; STAMP_LEN]) {
        hex(&mut out[..8], u64::from(self.publisher));
        hex(&mut out[8..24], self.seq);
        hex(&mut out[24..], self.sent_ns);
    }

    /// The stamp at the start of a message's payload, if it carries one.
    #[inline]
    pub fn read(payload: &[u8]) -> Option<Stamp> {
        let s = payload.get(..STAMP_LEN)?;
        Some(Stamp { publisher: unhex(&s[..8])? as u32, seq: unhex(&s[8..24])?, sent_ns: unhex(&s[24..])? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reads_back_as_written() {
        let stamp = Stamp { publisher: 7, seq: 123_456, sent_ns: now() + 99 };
        let mut out = [0; STAMP_LEN];
        stamp.write(&mut out);
        let mut payload = out.to_vec();
        payload.extend_from_slice(b"filler");
        assert_eq!(Stamp::read(&payload), Some(stamp));
        assert_eq!(Stamp::read(b"short"), None);
    }
}
