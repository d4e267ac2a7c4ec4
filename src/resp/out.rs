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
        Pieces { buf: self, span: 0, own: 0, pos: 0, from }
    }

    /// Fills `slices` with the stream's first pieces from `from`; returns how many.
    pub fn io_slices<'a>(&'a self, from: usize, slices: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, piece) in slices.iter_mut().zip(self.pieces(from)) {
            *slot = IoSlice::new(piece);
            n += 1;
        }
        n
    }

    /// Appends the stream of `other` from `from` on: its own bytes copied, its spans kept as
    /// spans where both share the same data (a buffer that shares none yet takes `other`'s).
    pub fn append_from(&mut self, other: &SendBuf, from: usize) {
        if !other.has_spans() {
            self.extend_from_slice(&other.bytes[from..]);
            return;
        }
        if let Some(data) = &other.shared {
            self.share(data);
        }
        let same = matches!((&self.shared, &other.shared), (Some(a), Some(b)) if Arc::ptr_eq(a, b));
        // Walk the pieces with their origin: bytes of `other` copied, spans re-placed.
        let mut at = 0; // stream position in `other`
        let mut own_at = 0; // position in `other.bytes`
        for span in &other.spans {
            let own_end = span.at;
            let own_piece = own_at..own_end;
            self.take_range(&other.bytes, own_piece.clone(), at, from);
            at += own_piece.len();
            own_at = own_end;
            let len = span.end - span.start;
            if at + len > from {
                let skip = from.saturating_sub(at);
                let range = span.start + skip..span.end;
                if same {
                    self.spans.push(Span { at: self.bytes.len(), start: range.start, end: range.end });
                    self.len += range.len();
                } else {
                    let data = other.shared.as_ref().expect("spans come with their data");
                    self.extend_from_slice(&data[range]);
                }
            }
            at += len;
        }
        self.take_range(&other.bytes, own_at..other.bytes.len(), at, from);
    }

    /// Copies `bytes[range]`, which sits at stream position `at`, as far as it lies past `from`.
    fn take_range(&mut self, bytes: &[u8], range: Range<usize>, at: usize, from: usize) {
        let skip = from.saturating_sub(at).min(range.len());
        self.bytes.extend_from_slice(&bytes[range.start + skip..range.end]);
        self.len += range.len() - skip;
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

/// The pieces of a [`SendBuf`]'s stream from a position on.
pub struct Pieces<'a> {
    buf: &'a SendBuf,
    /// The next span, the next own byte, and the stream position of what comes next.
    span: usize,
    own: usize,
    pos: usize,
    from: usize,
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
            if self.pos > self.from {
                return Some(&piece[self.from.saturating_sub(start)..]);
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
        let n = buf.io_slices(1, &mut slices);
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
    fn appending_keeps_spans_and_the_stream() {
        let data = data();
        let (buf, want) = two_values(&data);
        for from in 0..=want.len() {
            let mut to = SendBuf::default();
            to.extend_from_slice(b"before");
            to.append_from(&buf, from);
            let mut expect = b"before".to_vec();
            expect.extend_from_slice(&want[from..]);
            assert_eq!(stream(&to, 0), expect, "from {from}");
            assert_eq!(Out::len(&to), expect.len());
        }
        // Into a buffer sharing other data: the values are copied.
        let other: Arc<[u8]> = vec![0u8; 10].into();
        let mut to = SendBuf::default();
        to.share(&other);
        to.append_from(&buf, 0);
        assert!(!to.has_spans());
        assert_eq!(to.bytes(), want);
    }
}
