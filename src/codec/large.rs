//! Large values counted, not held: where the socket keeps what it received in buffers of its
//! own and can drop bytes without copying them (io_uring's pooled receives), a large bulk
//! reply's header is scanned, its body's bytes are counted and dropped as they arrive, and its
//! end is checked: the reply's type, length and end are verified as a whole scan would, and
//! the body is never copied into the read buffer. Elsewhere (epoll, TLS) a reply is read whole.

use crate::resp::{self, ReplyClass, ScanError, Scanned};

/// A value at least this long is dropped as it arrives where the socket can drop bytes.
pub const LARGE_VALUE: usize = 16 * 1024;

/// A large bulk reply whose header was read and whose body is dropped as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropping {
    /// The header's length: the read buffer keeps the header, and the reply's end (CRLF)
    /// follows it there once the body is all dropped.
    head: usize,
    /// The reply's length on the wire.
    len: usize,
    /// Body bytes still to come, to drop as they arrive.
    pub left: usize,
}

/// What the bytes read so far hold next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// A complete reply (`Scanned::len` is its length on the wire) and how many bytes of it
    /// the read buffer holds (all, unless its body was dropped).
    Reply(Scanned, usize),
    /// Not complete: read more. Of the bytes read, keep the first `keep` (a large value's
    /// header: the body's bytes already read are dropped with the rest of it).
    More { keep: usize },
}

impl Dropping {
    /// A large value begins `pending` (a RESP reply the scan found incomplete) and its body is
    /// not all read: a bulk string of at least [`LARGE_VALUE`] bytes.
    pub(super) fn begin(pending: &[u8]) -> Option<Dropping> {
        let (head, body) = resp::bulk_head(pending)?;
        let read = pending.len() - head;
        (body >= LARGE_VALUE && read < body).then(|| Dropping { head, len: head + body + 2, left: body - read })
    }

    /// The header's length: the bytes of the reply the read buffer keeps.
    pub(super) fn head(&self) -> usize {
        self.head
    }

    /// Once the body is all dropped, the reply when its end (CRLF) follows the header at the
    /// start of `pending`; anything else there is a protocol error.
    pub(super) fn end(&self, pending: &[u8]) -> Result<Option<Scanned>, ScanError> {
        if self.left > 0 || pending.len() < self.head + 2 {
            return Ok(None);
        }
        if &pending[self.head..self.head + 2] != b"\r\n" {
            return Err(ScanError::MissingCrlf);
        }
        Ok(Some(Scanned { len: self.len, class: ReplyClass::Value, id: 0 }))
    }
}
