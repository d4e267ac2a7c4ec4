//! A link's journal: the bytes of its requests in flight, in order, kept while they may have
//! to be sent again (`--retry`, cluster redirects). Requests join at the back as they are
//! queued and leave at the front as their replies come, so it is one buffer and the offset
//! of its first live byte: a request's bytes go in with one copy and leave by moving the
//! offset. The consumed front is let go when it is at least half the buffer (the live bytes
//! moved down once), so each byte is moved at most once more on average and the buffer stays
//! within twice the bytes in flight: no allocation per request once it has grown.

use std::ops::Range;

#[derive(Debug, Default)]
pub struct Journal {
    buf: Vec<u8>,
    /// Where the first live byte is: those before it have left.
    head: usize,
}

impl Journal {
    /// Appends a request's bytes.
    #[inline]
    pub fn extend(&mut self, bytes: &[u8]) {
        if self.head > 0 && self.head * 2 >= self.buf.len() {
            self.buf.drain(..self.head);
            self.head = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The first `len` live bytes, which leave the journal (valid until it next changes).
    #[inline]
    pub fn take(&mut self, len: usize) -> &[u8] {
        let from = self.head;
        self.consume(len);
        &self.buf[from..from + len]
    }

    /// Drops the first `len` live bytes.
    #[inline]
    pub fn consume(&mut self, len: usize) {
        self.head += len;
        debug_assert!(self.head <= self.buf.len(), "consumed past the journal's end");
    }

    /// Live bytes `range` (counted from the first live byte).
    pub fn range(&self, range: Range<usize>) -> &[u8] {
        &self.buf[self.head + range.start..self.head + range.end]
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.buf.len() - self.head
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Journal;
    use std::collections::VecDeque;

    #[test]
    fn keeps_order_and_stays_within_twice_what_is_live() {
        let (mut j, mut model) = (Journal::default(), VecDeque::new());
        for round in 0..2000u32 {
            let bytes = round.to_le_bytes();
            j.extend(&bytes[..1 + round as usize % 4]);
            model.extend(&bytes[..1 + round as usize % 4]);
            assert!(j.buf.len() <= 2 * j.len(), "{} bytes held for {} live", j.buf.len(), j.len());
            if round % 3 != 0 {
                let n = model.len().min(3);
                let expected: Vec<u8> = model.drain(..n).collect();
                assert_eq!(j.take(n), expected.as_slice());
            }
            assert_eq!(j.len(), model.len());
            let all: Vec<u8> = model.iter().copied().collect();
            assert_eq!(j.range(0..j.len()), all.as_slice());
        }
        j.consume(j.len());
        assert!(j.is_empty());
        j.clear();
        assert_eq!(j.len(), 0);
    }
}
