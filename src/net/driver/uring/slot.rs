//! A socket's state under the ring (its buffers, what is in flight, what a multishot receive
//! brought and the worker has not read yet), and how a multishot receive's completions change
//! it: apart from the driver, which is about the ring.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

use io_uring::cqueue;

use super::super::event::Event;
use super::super::pbuf::BufRing;
use super::super::stamp::{self, RingMsg};
use crate::resp::SendBuf;

/// Most pieces one `SENDMSG` takes (the kernel's `UIO_MAXIOV`); a send with more leaves the
/// rest for the next.
const PIECES_MAX: usize = 1024;

/// A `SENDMSG`'s header and the pieces it points at.
pub(super) struct Gather {
    msg: libc::msghdr,
    iov: Vec<libc::iovec>,
}

impl Gather {
    pub(super) fn new() -> Box<Gather> {
        // SAFETY: msghdr is plain integers and pointers: all zeroes is valid (no address, no
        // control messages).
        Box::new(Gather { msg: unsafe { std::mem::zeroed() }, iov: Vec::new() })
    }

    /// Points the header at the pieces of `out` from `from` on; returns the pointer to hand
    /// the ring, and whether the send covers all of the rest. Neither the box nor `out` may
    /// move, change or drop until the send completes.
    pub(super) fn prepare(&mut self, out: &SendBuf, from: usize) -> (*const libc::msghdr, bool) {
        self.iov.clear();
        let mut pieces = out.pieces(from);
        for piece in pieces.by_ref().take(PIECES_MAX) {
            self.iov.push(libc::iovec { iov_base: piece.as_ptr() as *mut libc::c_void, iov_len: piece.len() });
        }
        let whole = pieces.next().is_none();
        self.msg.msg_iov = self.iov.as_mut_ptr();
        self.msg.msg_iovlen = self.iov.len() as _;
        (&raw const self.msg, whole)
    }
}

/// A slot's first input buffer; a receive that fills it doubles it, up to `RECV_MAX`.
pub(super) const RECV_START: usize = 8 * 1024;
pub(super) const RECV_MAX: usize = 256 * 1024;

/// One socket's state, shared by its [`RingSocket`] and the driver.
pub(super) struct Slot {
    pub(super) token: usize,
    /// Closed when the slot is freed: after its socket was dropped and the ring is done.
    pub(super) fd: Option<OwnedFd>,
    /// What the last receive brought (its length is what the kernel wrote: the buffer is its
    /// capacity, never touched before a receive, so idle connections cost no memory),
    /// `inbuf[in_pos..]` not read yet.
    pub(super) inbuf: Vec<u8>,
    pub(super) in_pos: usize,
    /// The send in flight (`out` from `out_pos` on not sent yet) and what was written meanwhile:
    /// bytes, and large values by reference into the run's shared value data.
    pub(super) out: SendBuf,
    pub(super) out_pos: usize,
    pub(super) queued: SendBuf,
    /// The header and vector of a send in pieces (`out` keeps values by reference), boxed so
    /// it stays in place while the kernel reads it; made at the slot's first such send.
    pub(super) gather: Option<Box<Gather>>,
    pub(super) recv_busy: bool,
    pub(super) send_busy: bool,
    /// The send in flight is linked to the receive in flight and reports only a failure:
    /// the receive's completion says it was all sent.
    pub(super) linked: bool,
    /// In the dirty list.
    pub(super) listed: bool,
    pub(super) eof: bool,
    /// The errno a receive or send failed with: every read and write fails from then on.
    pub(super) err: Option<i32>,
    /// Its socket was dropped (and shut down, so that its operations complete): freed, and
    /// its descriptor closed, once idle.
    pub(super) closed: bool,
    /// Kernel receive timestamps on: receives are `RECVMSG`s (one-shot ones through this
    /// header; multishot ones through the driver's, their stamps in each buffer).
    pub(super) msg: Option<Box<RingMsg>>,
    /// The kernel's receive time of the last receive's bytes (`CLOCK_REALTIME` nanoseconds).
    pub(super) stamp: Option<u64>,
    /// Its receive is multishot, into the ring's buffer pool (`pbuf.rs`): armed once, each
    /// arrival a completion naming the buffer it filled, queued in `chunks` until read.
    pub(super) multi: bool,
    pub(super) chunks: VecDeque<Chunk>,
    /// When its last send of fresh bytes (the whole queue) was submitted, when the driver
    /// reports sends (`Uring::sent`): what was queued after it has not gone yet.
    pub(super) sent_at: Option<Instant>,
    /// Its descriptor is in the ring's file table, at the slot's index: operations name it
    /// there, which spares the kernel a look-up (and a reference count) per operation.
    pub(super) fixed: bool,
}

/// Bytes a multishot receive brought, not read yet: `start..end` of pool buffer `bid`, and
/// the kernel's receive time of them (timestamps on).
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunk {
    pub(super) bid: u16,
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) stamp: Option<u64>,
}

impl Slot {
    pub(super) fn new(token: usize, fd: Option<OwnedFd>) -> Slot {
        Slot {
            token,
            fd,
            inbuf: Vec::new(),
            in_pos: 0,
            out: SendBuf::default(),
            out_pos: 0,
            queued: SendBuf::default(),
            gather: None,
            recv_busy: false,
            linked: false,
            send_busy: false,
            listed: false,
            eof: false,
            err: None,
            closed: false,
            msg: None,
            stamp: None,
            multi: false,
            chunks: VecDeque::new(),
            sent_at: None,
            fixed: false,
        }
    }

    pub(super) fn idle(&self) -> bool {
        !self.recv_busy && !self.send_busy
    }

    /// Everything the receives brought has been read.
    pub(super) fn drained(&self) -> bool {
        self.in_pos == self.inbuf.len() && self.chunks.is_empty()
    }

    /// A receive is to be armed: none in flight, the peer not gone, and (one-shot) the last
    /// one read.
    pub(super) fn wants_recv(&self) -> bool {
        !self.recv_busy && !self.eof && (self.multi || self.drained())
    }

    /// Takes up to `want` bytes of what the multishot receives brought, each piece handed to
    /// `copy` with its offset (or to nothing: dropped in place), giving each buffer taken to the
    /// end back to the pool. Returns how many it took.
    #[inline]
    pub(super) fn take_chunks(&mut self, want: usize, pool: &mut BufRing, mut copy: impl FnMut(usize, &[u8])) -> usize {
        let mut n = 0;
        while n < want {
            let Some(c) = self.chunks.front_mut() else { break };
            let take = (want - n).min((c.end - c.start) as usize);
            let from = c.start as usize;
            copy(n, pool.bytes(c.bid, from..from + take));
            self.stamp = c.stamp;
            n += take;
            c.start += take as u32;
            if c.start == c.end {
                pool.give_back(c.bid);
                self.chunks.pop_front();
            }
        }
        n
    }

    /// Gives the buffers of bytes never read back to the pool (the socket is gone).
    pub(super) fn drop_chunks(&mut self, pool: Option<&mut BufRing>) {
        if let Some(pool) = pool {
            for c in self.chunks.drain(..) {
                pool.give_back(c.bid);
            }
        }
    }

    pub(super) fn raw_fd(&self) -> RawFd {
        self.fd.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }
}

/// Takes a multishot receive's completion: bytes queued for the worker (an event when it had
/// nothing to read yet), or the receive's end: the peer's, a failure, or one to arm again
/// (the pool was dry, or this kernel has no multishot receives: one-shot from now on).
pub(super) fn multishot(s: &mut Slot, (res, flags): (i32, u32), pool: &mut BufRing, events: &mut Vec<Event>) {
    if !cqueue::more(flags) {
        s.recv_busy = false;
    }
    let mut res = res;
    if let Some(bid) = cqueue::buffer_select(flags) {
        // A RECVMSG's buffer (timestamps on) starts with its layout and control bytes: the
        // payload follows (none at the end: then `res` counts the layout alone).
        let (start, stamp) =
            match (s.msg.is_some() && res > 0).then(|| stamp::multi_out(pool.bytes(bid, 0..res as usize))) {
                Some(Some((payload, stamp))) => {
                    res = payload as i32;
                    (stamp::MULTI_PAYLOAD as u32, stamp)
                }
                Some(None) => {
                    // Not the layout the header asked for: the socket cannot be read.
                    s.err.get_or_insert(libc::EPROTO);
                    events.push(Event { token: s.token, read_closed: false });
                    res = 0;
                    (0, None)
                }
                None => (0, None),
            };
        if res > 0 && !s.closed {
            if s.chunks.is_empty() {
                events.push(Event { token: s.token, read_closed: false });
            }
            s.chunks.push_back(Chunk { bid, start, end: start + res as u32, stamp });
        } else {
            pool.give_back(bid);
        }
    }
    if s.recv_busy || s.closed || res > 0 {
        return;
    }
    match res {
        0 => s.eof = true,
        _ if res == -libc::EINVAL && s.chunks.is_empty() && !s.eof => {
            s.multi = false;
            s.inbuf = Vec::with_capacity(RECV_START);
            return;
        }
        _ if matches!(-res, libc::ENOBUFS | libc::EAGAIN | libc::EINTR | libc::ECANCELED) => return,
        _ => s.err = Some(-res),
    }
    if s.chunks.is_empty() {
        events.push(Event { token: s.token, read_closed: false });
    }
}
