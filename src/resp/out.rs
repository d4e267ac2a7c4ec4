//! Where encoded requests go: any [`Out`], a plain `Vec<u8>` (every byte copied) or a
//! [`SendBuf`], a link's write buffer that keeps large values by reference. A value of 100 KB
//! copied into the write buffer for every request costs as much user time as the kernel's own
//! copy of it into the socket; held as a slice of the run's shared value data instead, it is
//! handed to the kernel in place (`writev`, io_uring's `SENDMSG`), copied once, by the kernel.

use std::io::IoSlice;
use std::ops::Range;
use std::sync::Arc;

/// A sink for encoded bytes.
pub trait Out {
    /// Bytes written so far.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn extend_from_slice(&mut self, bytes: &[u8]);
    fn push(&mut self, byte: u8) {
        self.extend_from_slice(&[byte]);
    }
    /// Overwrites the bytes from `back` before the end with `bytes` (which must fit there):
    /// a template encoded ahead gets its key. Only bytes just appended by
    /// [`extend_from_slice`](Self::extend_from_slice) from outside the shared data may be
    /// patched (a template's own bytes are).
    fn patch_back(&mut self, back: usize, bytes: &[u8]);
    /// Declares the immutable data that values are slices of (the run's value data), so that
    /// a sink able to keep a large slice of it by reference may. Copying sinks ignore it.
    fn share(&mut self, _data: &Arc<[u8]>) {}
}

impl Out for Vec<u8> {
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }
    #[inline]
    fn push(&mut self, byte: u8) {
        Vec::push(self, byte);
    }
    #[inline]
    fn patch_back(&mut self, back: usize, bytes: &[u8]) {
        let at = Vec::len(self) - back;
        self[at..at + bytes.len()].copy_from_slice(bytes);
    }
}

/// Least length of a slice of the shared data that is kept by reference rather than copied:
/// below it a copy costs less than one more piece for the kernel to walk.
pub const SHARE_MIN: usize = 8 * 1024;

/// Most pieces one vectored write takes (`IoSlice`s on the stack; the kernel takes 1,024).
pub const SLICES_MAX: usize = 64;

/// A write buffer whose large values stay where they are: the bytes encoded around them in
/// `bytes`, and each value as a range of the shared data, sent after `bytes[..at]`. Read in
/// order, its pieces are the request stream ([`pieces`](Self::pieces)); its length is the
/// stream's. Without shared data (or for short values) it is a plain byte buffer.
#[derive(Debug, Default)]
pub struct SendBuf {
    bytes: Vec<u8>,
    spans: Vec<Span>,
    shared: Option<Arc<[u8]>>,
    /// `bytes.len()` plus every span's length.
    len: usize,
}

/// A range of the shared data, placed after `at` bytes of the buffer's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    at: usize,
    start: usize,
    end: usize,
}

impl SendBuf {
    pub fn with_capacity(capacity: usize) -> SendBuf {
        SendBuf { bytes: Vec::with_capacity(capacity), ..SendBuf::default() }
    }

    /// Empties it, keeping its capacity and shared data.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
        self.len = 0;
    }

    /// Whether it holds values by reference (else its stream is [`bytes`](Self::bytes)).
    #[inline]
    pub fn has_spans(&self) -> bool {
        !self.spans.is_empty()
    }

    /// Its own bytes: the whole stream when it has no spans.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The stream from `from` on, piece by piece (none empty).
    pub fn pieces(&self, from: usize) -> Pieces<'_> {
        self.pieces_in(from..self.len)
    }

    /// The stream's `range`, piece by piece (none empty).
    pub fn pieces_in(&self, range: Range<usize>) -> Pieces<'_> {
        Pieces { buf: self, span: 0, own: 0, pos: 0, from: range.start, end: range.end }
    }

    /// Fills `slices` with the first pieces of the stream's `range`; returns how many.
    pub fn io_slices<'a>(&'a self, range: Range<usize>, slices: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, piece) in slices.iter_mut().zip(self.pieces_in(range)) {
            *slot = IoSlice::new(piece);
            n += 1;
        }
        n
    }

    /// Appends the stream of `other` in `range`: its own bytes copied, its values kept by
    /// reference where both share the same data (a buffer that shares none yet takes
    /// `other`'s) and the piece is long enough to be worth it ([`SHARE_MIN`]).
    pub fn append_from(&mut self, other: &SendBuf, range: Range<usize>) {
        if !other.has_spans() {
            self.extend_from_slice(&other.bytes[range]);
            return;
        }
        if let Some(data) = &other.shared {
            self.share(data);
        }
        // A piece of data shared by both is a slice of this buffer's shared data too.
        for piece in other.pieces_in(range) {
            self.extend_from_slice(piece);
        }
    }

    /// Where stream position `pos` falls among the buffer's own bytes (a position between
    /// pieces: at a value's start or end, never inside it).
    fn own_index(&self, pos: usize) -> usize {
        let mut before = 0; // the spans' bytes before `pos`
        for span in &self.spans {
            let start = span.at + before;
            if start >= pos {
                break;
            }
            before += (span.end - span.start).min(pos - start);
        }
        pos - before
    }

    /// Keeps the stream's first `len` bytes.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let own = self.own_index(len);
        let mut before = 0;
        self.spans.retain_mut(|span| {
            let start = span.at + before;
            before += span.end - span.start;
            if start >= len {
                return false;
            }
            span.end = span.end.min(span.start + (len - start));
            true
        });
        self.bytes.truncate(own);
        self.len = len;
    }

    /// Drops the stream's first `n` bytes (written already), moving the rest to the front.
    pub fn consume_front(&mut self, n: usize) {
        if n >= self.len {
            self.clear();
            return;
        }
        if n == 0 {
            return;
        }
        let own = self.own_index(n);
        let mut before = 0;
        self.spans.retain_mut(|span| {
            let (start, len) = (span.at + before, span.end - span.start);
            before += len;
            if start + len <= n {
                return false;
            }
            span.start += n.saturating_sub(start);
            span.at = span.at.saturating_sub(own);
            true
        });
        self.bytes.drain(..own);
        self.len -= n;
    }

    /// Puts `bytes` at stream position `pos` (between pieces), before what follows it.
    pub fn insert(&mut self, pos: usize, bytes: &[u8]) {
        let own = self.own_index(pos);
        let mut before = 0;
        for span in self.spans.iter_mut() {
            let start = span.at + before;
            before += span.end - span.start;
            if start >= pos {
                span.at += bytes.len();
            }
        }
        self.bytes.splice(own..own, bytes.iter().copied());
        self.len += bytes.len();
    }

    /// Where `bytes` lies in the shared data, if it does.
    #[inline]
    fn within_shared(&self, bytes: &[u8]) -> Option<Range<usize>> {
        let data = self.shared.as_deref()?;
        let start = (bytes.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
        (start + bytes.len() <= data.len()).then_some(start..start + bytes.len())
    }
}

impl Out for SendBuf {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        if bytes.len() >= SHARE_MIN
            && let Some(range) = self.within_shared(bytes)
        {
            self.spans.push(Span { at: self.bytes.len(), start: range.start, end: range.end });
        } else {
            self.bytes.extend_from_slice(bytes);
        }
        self.len += bytes.len();
    }

    #[inline]
    fn push(&mut self, byte: u8) {
        self.bytes.push(byte);
        self.len += 1;
    }

    /// The bytes patched are the buffer's own: bytes from outside the shared data never
    /// become a span.
    #[inline]
    fn patch_back(&mut self, back: usize, bytes: &[u8]) {
        self.bytes.patch_back(back, bytes);
    }

    /// Takes `data` as its shared data if it has none (an `Arc` clone once per buffer; the
    /// run has one value data, so no request pays for it).
    #[inline]
    fn share(&mut self, data: &Arc<[u8]>) {
        if self.shared.is_none() {
            self.shared = Some(Arc::clone(data));
        }
    }
}

impl Extend<u8> for SendBuf {
    fn extend<I: IntoIterator<Item = u8>>(&mut self, iter: I) {
        let before = self.bytes.len();
        self.bytes.extend(iter);
        self.len += self.bytes.len() - before;
    }
}

/// The pieces of a range of a [`SendBuf`]'s stream.
pub struct Pieces<'a> {
    buf: &'a SendBuf,
    /// The next span, the next own byte, and the stream position of what comes next.
    span: usize,
    own: usize,
    pos: usize,
    from: usize,
    end: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        loop {
            let buf = self.buf;
            let own_end = buf.spans.get(self.span).map_or(buf.bytes.len(), |s| s.at);
            let piece: &'a [u8] = if self.own < own_end {
                let piece = &buf.bytes[self.own..own_end];
                self.own = own_end;
                piece
            } else if let Some(span) = buf.spans.get(self.span) {
                self.span += 1;
                let data = buf.shared.as_deref().expect("spans come with their data");
                &data[span.start..span.end]
            } else {
                return None;
            };
            let start = self.pos;
            self.pos += piece.len();
            if start >= self.end || self.from >= self.end {
                return None;
            }
            if self.pos > self.from {
                return Some(&piece[self.from.saturating_sub(start)..piece.len().min(self.end - start)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(buf: &SendBuf, from: usize) -> Vec<u8> {
        buf.pieces(from).flatten().copied().collect()
    }

    /// A buffer of `head`, a large value of the shared data, `mid`, another value, `tail`.
    fn two_values(data: &Arc<[u8]>) -> (SendBuf, Vec<u8>) {
        let mut buf = SendBuf::with_capacity(16);
        buf.share(data);
        let mut want = Vec::new();
        for (own, value) in [(&b"head"[..], &data[3..3 + SHARE_MIN]), (b"mid", &data[..SHARE_MIN + 5])] {
            buf.extend_from_slice(own);
            buf.extend_from_slice(value);
            want.extend_from_slice(own);
            want.extend_from_slice(value);
        }
        buf.extend_from_slice(b"tail");
        want.extend_from_slice(b"tail");
        (buf, want)
    }

    fn data() -> Arc<[u8]> {
        (0..2 * SHARE_MIN + 10).map(|i| (i % 251) as u8).collect::<Vec<u8>>().into()
    }

    #[test]
    fn large_slices_of_the_shared_data_are_kept_by_reference() {
        let data = data();
        let (buf, want) = two_values(&data);
        assert_eq!(buf.spans.len(), 2);
        assert_eq!(buf.bytes(), b"headmidtail");
        assert_eq!(Out::len(&buf), want.len());
        // Read from every position, the stream is the same bytes.
        for from in 0..=want.len() {
            assert_eq!(stream(&buf, from), want[from..], "from {from}");
        }
        let mut slices = [IoSlice::new(&[]); SLICES_MAX];
        let n = buf.io_slices(1..want.len(), &mut slices);
        assert_eq!(n, 5);
        assert_eq!(slices[..n].iter().flat_map(|s| s.iter().copied()).collect::<Vec<u8>>(), want[1..]);
    }

    #[test]
    fn short_slices_and_other_bytes_are_copied() {
        let data = data();
        let mut buf = SendBuf::default();
        buf.share(&data);
        buf.extend_from_slice(&data[..SHARE_MIN - 1]);
        let elsewhere = vec![7u8; SHARE_MIN * 2];
        buf.extend_from_slice(&elsewhere);
        assert!(!buf.has_spans());
        assert_eq!(Out::len(&buf), buf.bytes().len());
        // Without shared data, nothing is a span.
        let mut plain = SendBuf::default();
        plain.extend_from_slice(&data[..SHARE_MIN * 2]);
        assert!(!plain.has_spans());
    }

    #[test]
    fn a_range_of_the_stream_is_its_bytes_there() {
        let data = data();
        let (buf, want) = two_values(&data);
        // Every piece's edges, a byte either side of them and a point inside each piece: the
        // places a range can start or end that differ for the iterator.
        let edges = [0, 4, 4 + SHARE_MIN, 7 + SHARE_MIN, 7 + 2 * SHARE_MIN + 5, want.len()];
        let mut at: Vec<usize> = edges.iter().flat_map(|&e| [e.saturating_sub(1), e, e + 1]).collect();
        at.extend(edges.windows(2).map(|w| (w[0] + w[1]) / 2));
        at.retain(|&p| p <= want.len());
        at.sort_unstable();
        at.dedup();
        for &from in &at {
            for &end in at.iter().filter(|&&e| e >= from) {
                let got: Vec<u8> = buf.pieces_in(from..end).flatten().copied().collect();
                assert_eq!(got, want[from..end], "{from}..{end}");
            }
        }
    }

    #[test]
    fn truncating_dropping_the_front_and_inserting_keep_the_stream() {
        let data = data();
        let (_, want) = two_values(&data);
        // Positions between pieces: the ends of the own bytes around the two values.
        let cuts = [0, 2, 4, 4 + SHARE_MIN, 5 + SHARE_MIN, 7 + SHARE_MIN, 7 + 2 * SHARE_MIN + 5, want.len()];
        for &cut in &cuts {
            let (mut buf, _) = two_values(&data);
            buf.truncate(cut);
            assert_eq!((stream(&buf, 0), Out::len(&buf)), (want[..cut].to_vec(), cut), "truncate {cut}");
            let (mut buf, _) = two_values(&data);
            buf.consume_front(cut);
            assert_eq!((stream(&buf, 0), Out::len(&buf)), (want[cut..].to_vec(), want.len() - cut), "front {cut}");
            buf.extend_from_slice(b"more");
            assert!(stream(&buf, 0).ends_with(b"more"));
            let (mut buf, _) = two_values(&data);
            buf.insert(cut, b"INS");
            let expect = [&want[..cut], b"INS", &want[cut..]].concat();
            assert_eq!((stream(&buf, 0), Out::len(&buf)), (expect.clone(), expect.len()), "insert {cut}");
        }
        // Dropping a value's first part keeps the rest of it.
        let (mut buf, _) = two_values(&data);
        buf.consume_front(10);
        assert_eq!(stream(&buf, 0), want[10..]);
        let mut plain = SendBuf::default();
        plain.extend_from_slice(b"abcdef");
        plain.insert(2, b"XY");
        plain.consume_front(1);
        plain.truncate(5);
        assert_eq!(stream(&plain, 0), b"bXYcd");
    }

    #[test]
    fn appending_keeps_spans_and_the_stream() {
        let data = data();
        let (buf, want) = two_values(&data);
        for from in 0..=want.len() {
            let mut to = SendBuf::default();
            to.extend_from_slice(b"before");
            to.append_from(&buf, from..want.len());
            let mut expect = b"before".to_vec();
            expect.extend_from_slice(&want[from..]);
            assert_eq!(stream(&to, 0), expect, "from {from}");
            assert_eq!(Out::len(&to), expect.len());
        }
        // Into a buffer sharing other data: the values are copied.
        let other: Arc<[u8]> = vec![0u8; 10].into();
        let mut to = SendBuf::default();
        to.share(&other);
        to.append_from(&buf, 0..want.len());
        assert!(!to.has_spans());
        assert_eq!(to.bytes(), want);
    }
}
