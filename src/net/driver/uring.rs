//! The io_uring path: completions instead of readiness. Each registered socket has a slot:
//! one multishot receive (a multishot `RECVMSG` with receive timestamps on, each buffer
//! carrying its bytes' stamp) is armed on it for the whole run, taking a buffer from the
//! ring's shared pool (`pbuf.rs`) only when bytes arrive (kernels before 6.0: a one-shot
//! receive into the slot's own buffer, armed again once read), and what the worker writes is
//! queued in the slot and sent by the ring. Sockets sit in the ring's file table (5.19) where
//! it has one. A loop turn's sends and receives to arm, for every connection, go to the kernel
//! in the one `io_uring_enter` that also waits (to the nanosecond: no timer descriptor).
//!
//! The worker still reads and writes [`RingSocket`]s as it reads and writes sockets: a read
//! copies what a receive brought (`WouldBlock` once it is used up), a write appends to the
//! slot's queue. A buffer the kernel may touch is never moved or freed: the slot keeps it
//! until the operation's completion comes back, even after its socket was dropped.
//!
//! Connection attempts (`net::Dial`) need readiness: their sockets are watched by a mio
//! poller of their own, whose descriptor the ring polls.

use std::cell::RefCell;
use std::fmt;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::rc::Rc;
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, squeue, types};
use mio::{Events, Interest, Poll, Token};

use super::event::{Event, Sent};
use super::pbuf::{self, BufRing};
use super::stamp::{RingMsg, Stamps};
use crate::net::Transport;
use crate::resp::{Out, SendBuf};
pub(super) use ring::probe;
use ring::{build, push, room_for_two};
use slot::{Gather, RECV_MAX, RECV_START, Slot, multishot};

mod ring;
mod slot;

/// An operation's user data: the slot number shifted left by one, and which operation.
const RECV: u64 = 0;
const SEND: u64 = 1;
/// The poll on the dial poller's descriptor.
const WAKE: u64 = u64::MAX;

/// A receive's flag (`IORING_RECVSEND_POLL_FIRST`, Linux 5.19; older kernels ignore it): wait
/// for data before the first attempt, which would find none.
const RECVSEND_POLL_FIRST: u16 = 1;

/// How long dropping the driver waits for operations still in flight before it leaks their
/// buffers rather than free memory the kernel may still write.
const DRAIN_AT_DROP: Duration = Duration::from_secs(1);

/// Set (to anything): one-shot receives into each socket's own buffer, as kernels before 6.0
/// get, so that tests and measurements can take that path here too.
const ONE_SHOT_ENV: &str = "RESPBENCH_URING_ONESHOT";

/// Builds an operation on a slot's socket: `$make` is called with `types::Fixed` (the
/// descriptor in the ring's file table) or `types::Fd`.
macro_rules! on_socket {
    ($s:expr, $index:expr, |$fd:ident| $make:expr) => {{
        let (fixed, raw) = ($s.fixed, $s.raw_fd());
        if fixed {
            let $fd = types::Fixed($index);
            $make
        } else {
            let $fd = types::Fd(raw);
            $make
        }
    }};
}

/// The slots and the list of those with something for the ring to do.
#[derive(Default)]
struct Shared {
    slots: RefCell<Vec<Slot>>,
    dirty: RefCell<Vec<u32>>,
    /// The receive buffer pool, where the kernel has multishot receives (6.0).
    pool: RefCell<Option<BufRing>>,
    /// Timestamps on: the header of every multishot `RECVMSG` (`stamp::multi_out`), kept as the pool.
    multi_msg: Option<Box<libc::msghdr>>,
}

impl Shared {
    fn mark(&self, slot: &mut Slot, index: u32) {
        if !slot.listed {
            slot.listed = true;
            self.dirty.borrow_mut().push(index);
        }
    }
}

/// A socket under the ring. Dropping it shuts the connection down, so that its operations in
/// flight complete (a cancellation by descriptor costs the kernel a walk of every operation
/// pending: thousands of connections closing at once would be quadratic); its slot, which owns
/// the descriptor and the buffers, closes and frees them once the ring is done.
pub struct RingSocket {
    shared: Rc<Shared>,
    slot: u32,
}

impl fmt::Debug for RingSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingSocket").field("slot", &self.slot).finish()
    }
}

impl Read for RingSocket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.take(buf.len(), |at, bytes| buf[at..at + bytes.len()].copy_from_slice(bytes))
    }
}

impl RingSocket {
    /// Drops up to `n` bytes of what the receives brought, without copying them: returns as
    /// `read` does (how many, `Ok(0)` at the end, `WouldBlock` when nothing is there).
    pub fn discard(&mut self, n: usize) -> io::Result<usize> {
        self.take(n, |_, _| {})
    }

    /// Takes up to `want` bytes of what the receives brought, each piece handed to `copy` with
    /// its offset.
    #[inline]
    fn take(&mut self, want: usize, mut copy: impl FnMut(usize, &[u8])) -> io::Result<usize> {
        let mut slots = self.shared.slots.borrow_mut();
        let s = &mut slots[self.slot as usize];
        if s.multi && !s.chunks.is_empty() {
            let mut pool = self.shared.pool.borrow_mut();
            return Ok(s.take_chunks(want, pool.as_mut().expect("a multishot receive has its pool"), copy));
        }
        if !s.drained() {
            let n = want.min(s.inbuf.len() - s.in_pos);
            copy(0, &s.inbuf[s.in_pos..s.in_pos + n]);
            s.in_pos += n;
            if s.drained() {
                self.shared.mark(s, self.slot); // receive again
            }
            return Ok(n);
        }
        match s.err {
            Some(errno) => Err(io::Error::from_raw_os_error(errno)),
            None if s.eof || want == 0 => Ok(0),
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl RingSocket {
    /// The kernel's receive time of the bytes the last receive brought (`CLOCK_REALTIME`
    /// nanoseconds), when timestamps are on: what `read` hands out comes from that receive.
    pub fn stamp(&self) -> Option<u64> {
        self.shared.slots.borrow()[self.slot as usize].stamp
    }

    /// The socket's own address and its server's, when it is a TCP socket: read through a
    /// duplicate of its descriptor (done once per connect, never per request).
    pub fn endpoints(&self) -> Option<(std::net::SocketAddr, std::net::SocketAddr)> {
        let slots = self.shared.slots.borrow();
        let socket = std::net::TcpStream::from(slots[self.slot as usize].fd.as_ref()?.try_clone().ok()?);
        Some((socket.local_addr().ok()?, socket.peer_addr().ok()?))
    }

    /// Whether the next read would block: everything the receives brought was read and no
    /// end or failure waits to be read. A completion that brings more raises an event then.
    pub fn would_block(&self) -> bool {
        let slots = self.shared.slots.borrow();
        let s = &slots[self.slot as usize];
        s.drained() && !s.eof && s.err.is_none()
    }
}

impl RingSocket {
    /// Queues the stream of `buf` in `range`, all of it: its own bytes copied, the values it
    /// keeps by reference kept so (the queue holds their shared data until sent).
    pub fn write_buf(&mut self, buf: &SendBuf, range: std::ops::Range<usize>) -> io::Result<usize> {
        let mut slots = self.shared.slots.borrow_mut();
        let s = &mut slots[self.slot as usize];
        if let Some(errno) = s.err {
            return Err(io::Error::from_raw_os_error(errno));
        }
        let len = range.len();
        s.queued.append_from(buf, range);
        self.shared.mark(s, self.slot);
        Ok(len)
    }
}

impl Write for RingSocket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut slots = self.shared.slots.borrow_mut();
        let s = &mut slots[self.slot as usize];
        if let Some(errno) = s.err {
            return Err(io::Error::from_raw_os_error(errno));
        }
        s.queued.extend_from_slice(buf);
        self.shared.mark(s, self.slot);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for RingSocket {
    fn drop(&mut self) {
        let mut slots = self.shared.slots.borrow_mut();
        let s = &mut slots[self.slot as usize];
        s.closed = true;
        if s.idle() && !s.fixed {
            s.fd = None; // closed now, as a socket under epoll would be
        } else {
            // (In the file table: closed once out of it, by the driver at its next turn.)
            shut_down(s.raw_fd());
        }
        self.shared.mark(s, self.slot);
    }
}

/// Connection attempts' sockets, watched for readiness.
struct Dials {
    poll: Poll,
    events: Events,
    /// The ring's poll on `poll`'s descriptor is in flight.
    armed: bool,
}

pub struct Uring {
    ring: IoUring,
    /// The file table's size (0: the kernel has none, 5.19's sparse tables).
    table: u32,
    shared: Rc<Shared>,
    free: Vec<u32>,
    /// The dirty list being worked through (swapped with `Shared::dirty`, capacity kept).
    work: Vec<u32>,
    dials: Option<Dials>,
    pub(super) stamps: Stamps,
    /// Whether sends are reported (`sent`): the worker measures send times.
    reports_sends: bool,
    /// Slots whose fresh send is on the submission queue, waiting for the time of the submit.
    carrying: Vec<u32>,
    /// The sends the last `wait` submitted.
    sent: Vec<Sent>,
}

impl Uring {
    /// A ring sized for `sockets` sockets (a receive and a send each); `reports_sends`: each
    /// send's submit is reported ([`sent`](Self::sent)).
    pub fn new(sockets: usize, stamps: bool, reports_sends: bool) -> io::Result<Uring> {
        let ops = (sockets * 2 + 64).next_power_of_two();
        let ring = build(ops.clamp(256, 4096) as u32, ops.clamp(1024, 1 << 16) as u32)?;
        // Multishot receives where the kernel has them (6.0: the feature flags cannot say, a
        // pool registered and a multishot refused with EINVAL falls back per socket); with
        // receive timestamps, multishot RECVMSGs, each buffer carrying its bytes' stamp.
        let mut shared = Shared { multi_msg: stamps.then(super::stamp::multi_header), ..Shared::default() };
        if std::env::var_os(ONE_SHOT_ENV).is_none() {
            *shared.pool.get_mut() = BufRing::new(&ring, sockets).ok();
        }
        let shared = Rc::new(shared);
        let table = (sockets + 64) as u32;
        let table = if ring.submitter().register_files_sparse(table).is_ok() { table } else { 0 };
        let stamps = Stamps { on: stamps, refused: None };
        let (free, work, carrying, sent) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        Ok(Uring { ring, table, shared, free, work, dials: None, stamps, reports_sends, carrying, sent })
    }

    pub fn register(&mut self, io: Transport, token: usize) -> io::Result<Transport> {
        Ok(match io {
            Transport::Tcp(s) => Transport::Ring(self.adopt(OwnedFd::from(s), token, true)),
            Transport::Unix(s) => Transport::Ring(self.adopt(OwnedFd::from(s), token, false)),
            Transport::Tls(tls) => Transport::Tls(Box::new(tls.over_ring(|fd| self.adopt(fd, token, true)))),
            ring @ Transport::Ring(_) => ring,
        })
    }

    /// Gives a socket a slot (a free one, or a new one) and arms its first receive; `tcp`: one
    /// that may carry receive timestamps.
    fn adopt(&mut self, fd: OwnedFd, token: usize, tcp: bool) -> RingSocket {
        let stamped = tcp && self.stamps.enable(fd.as_raw_fd());
        let mut slots = self.shared.slots.borrow_mut();
        let msg = stamped.then(RingMsg::new);
        let multi = self.shared.pool.borrow().is_some();
        let inbuf = if multi { Vec::new() } else { Vec::with_capacity(RECV_START) };
        let slot = Slot { inbuf, msg, multi, ..Slot::new(token, Some(fd)) };
        let index = match self.free.pop() {
            Some(index) => {
                slots[index as usize] = slot;
                index
            }
            None => {
                slots.push(slot);
                (slots.len() - 1) as u32
            }
        };
        let s = &mut slots[index as usize];
        s.fixed = index < self.table && self.ring.submitter().register_files_update(index, &[s.raw_fd()]).is_ok();
        self.shared.mark(s, index);
        RingSocket { shared: Rc::clone(&self.shared), slot: index }
    }

    pub fn register_dial(&mut self, io: &mut Transport, token: usize) -> io::Result<()> {
        let dials = match &mut self.dials {
            Some(dials) => dials,
            None => self.dials.insert(Dials { poll: Poll::new()?, events: Events::with_capacity(64), armed: false }),
        };
        dials.poll.registry().register(io, Token(token), Interest::READABLE | Interest::WRITABLE)
    }

    pub fn deregister_dial(&mut self, io: &mut Transport) {
        if let Some(dials) = &self.dials {
            let _ = dials.poll.registry().deregister(io);
        }
    }

    /// (Sends submitted here, none at registration, are reported with the next wait's.)
    pub fn submit(&mut self) -> io::Result<()> {
        self.submit_work()?;
        self.ring.submit().map(drop)
    }

    /// The sends of fresh bytes the last `wait` submitted, each with the time of its submit:
    /// a request leaves when its bytes are handed to the kernel, not when they were written
    /// into the ring (behind a send in flight, they wait in the slot's queue).
    pub fn sent(&self) -> &[Sent] {
        &self.sent
    }

    /// The slots whose sends were just submitted, at `at`, become reported sends.
    fn carried(&mut self, at: Instant) {
        let mut slots = self.shared.slots.borrow_mut();
        for index in self.carrying.drain(..) {
            let s = &mut slots[index as usize];
            let since = s.sent_at.replace(at);
            self.sent.push(Sent { token: s.token, since, at });
        }
    }

    pub fn wait(&mut self, wake: Instant, events: &mut Vec<Event>) -> io::Result<()> {
        self.sent.clear();
        loop {
            self.submit_work()?;
            // The turn's one clock read before the kernel: the wait's timeout, and the time the
            // sends about to be submitted leave at (the submit follows at once; a full
            // submission queue, submitted by `push`, sent some a few microseconds before).
            let before = Instant::now();
            let timeout = wake.saturating_duration_since(before);
            let ts = types::Timespec::from(timeout);
            let args = types::SubmitArgs::new().timespec(&ts);
            let entered = self.ring.submitter().submit_with_args(1, &args);
            if !self.carrying.is_empty() {
                self.carried(before);
            }
            match entered {
                Ok(_) => {}
                // A stop and continue (SIGSTOP, SIGCONT) interrupts the wait: wait again (at
                // once, if the time has come), so that what arrived meanwhile is read before the
                // worker sends again, and stamped apart from the replies to what it sends next.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EBUSY)) => return Ok(()),
                Err(e) => return Err(e),
            }
            self.reap(events);
            // Only completions the worker has nothing to do with (a send done, a receive to retry):
            // wait on, without a turn of its loop, unless the time has come.
            if !events.is_empty() || timeout.is_zero() || Instant::now() >= wake {
                return Ok(());
            }
        }
    }

    /// Queues what the dirty slots need: the next send, a receive to arm, a slot to free.
    fn submit_work(&mut self) -> io::Result<()> {
        std::mem::swap(&mut self.work, &mut *self.shared.dirty.borrow_mut());
        let mut work = std::mem::take(&mut self.work);
        let result = self.submit_slots(&work);
        work.clear();
        self.work = work;
        result?;
        if let Some(dials) = self.dials.as_mut().filter(|d| !d.armed) {
            dials.armed = true;
            let fd = types::Fd(dials.poll.as_raw_fd());
            let sqe = opcode::PollAdd::new(fd, libc::POLLIN as u32).build().user_data(WAKE);
            push(&mut self.ring, &sqe)?;
        }
        Ok(())
    }

    fn submit_slots(&mut self, work: &[u32]) -> io::Result<()> {
        let shared = Rc::clone(&self.shared);
        let mut slots = shared.slots.borrow_mut();
        for &index in work {
            let s = &mut slots[index as usize];
            s.listed = false;
            if s.closed {
                // Once idle its descriptor and buffers go; the slot is reused by the next socket.
                if s.idle() && (s.fd.is_some() || s.inbuf.capacity() > 0 || !s.chunks.is_empty()) {
                    s.drop_chunks(shared.pool.borrow_mut().as_mut());
                    if s.fixed {
                        // Out of the table first, or the socket would outlive its descriptor.
                        let _ = self.ring.submitter().register_files_update(index, &[-1]);
                    }
                    *s = Slot { closed: true, ..Slot::new(usize::MAX, None) };
                    self.free.push(index);
                }
                continue;
            }
            if s.err.is_some() {
                continue;
            }
            if !s.send_busy {
                // The whole queue goes, fresh bytes (not the rest of a short send).
                let fresh = s.out_pos == s.out.len();
                if fresh {
                    s.out.clear();
                    s.out_pos = 0;
                    std::mem::swap(&mut s.out, &mut s.queued);
                }
                if s.out_pos < s.out.len() {
                    let flags = libc::MSG_NOSIGNAL | libc::MSG_WAITALL;
                    // Values kept by reference go in place, in one SENDMSG of the pieces.
                    let (send, whole) = if s.out.has_spans() {
                        let gather = s.gather.get_or_insert_with(Gather::new);
                        let (msg, whole) = gather.prepare(&s.out, s.out_pos);
                        let send = on_socket!(s, index, |fd| opcode::SendMsg::new(fd, msg).flags(flags as u32).build());
                        (send, whole)
                    } else {
                        let rest = &s.out.bytes()[s.out_pos..];
                        let send = on_socket!(s, index, |fd| opcode::Send::new(fd, rest.as_ptr(), rest.len() as u32)
                            .flags(flags)
                            .build());
                        (send, true)
                    };
                    // With a receive to arm too (a reply read, the next request written: closed
                    // loop's every turn), the send goes first, linked to it and reporting only a
                    // failure: one completion for both. MSG_WAITALL: a link breaks on a short send.
                    // (Only a send of all that is queued: the receive's completion says so.)
                    s.linked = whole && !s.multi && s.wants_recv();
                    let mut sqe = send.user_data(u64::from(index) << 1 | SEND);
                    if s.linked {
                        sqe = sqe.flags(squeue::Flags::IO_LINK | squeue::Flags::SKIP_SUCCESS);
                        room_for_two(&mut self.ring)?;
                    }
                    // SAFETY (in `push`): `out` (with the shared data its spans point into, which
                    // it holds) and the boxed `gather` are neither touched, moved nor freed until
                    // this send's completion (or its linked receive's) clears `send_busy`. A linked pair
                    // is submitted together (`room_for_two`): a link cut by a submit between
                    // its entries would leave the send unlinked and silent.
                    push(&mut self.ring, &sqe)?;
                    s.send_busy = true;
                    if fresh && self.reports_sends {
                        self.carrying.push(index);
                    }
                }
            }
            if s.multi && s.wants_recv() {
                // Armed once: it stays until the peer closes, the pool runs dry (ENOBUFS, armed
                // again here once buffers are back) or the socket is shut down.
                let sqe = match shared.multi_msg.as_deref().filter(|_| s.msg.is_some()) {
                    Some(msg) => on_socket!(s, index, |fd| opcode::RecvMsgMulti::new(fd, msg, pbuf::GROUP).build()),
                    None => on_socket!(s, index, |fd| opcode::RecvMulti::new(fd, pbuf::GROUP).build()),
                };
                // SAFETY (in `push`): the pool's buffers, its descriptor ring and the header stay
                // in place while any receive is armed (`Shared` outlives the ring's operations).
                push(&mut self.ring, &sqe.user_data(u64::from(index) << 1 | RECV))?;
                s.recv_busy = true;
            } else if s.wants_recv() {
                // A receive that filled the buffer: a bigger one, and more may be there already.
                // Otherwise the socket was drained: wait for data before trying to read.
                let filled = s.inbuf.len() == s.inbuf.capacity();
                if filled && s.inbuf.capacity() < RECV_MAX {
                    s.inbuf = Vec::with_capacity(s.inbuf.capacity() * 2);
                }
                s.in_pos = 0;
                s.inbuf.clear();
                let room = s.inbuf.capacity();
                let ioprio = if filled { 0 } else { RECVSEND_POLL_FIRST };
                let buf = s.inbuf.as_mut_ptr();
                let sqe = on_socket!(s, index, |fd| match s.msg.as_mut() {
                    // With timestamps: the same receive, its header boxed in the slot.
                    Some(msg) => opcode::RecvMsg::new(fd, msg.prepare(buf, room)).ioprio(ioprio).build(),
                    None => opcode::Recv::new(fd, buf, room as u32).ioprio(ioprio).build(),
                });
                let sqe = sqe.user_data(u64::from(index) << 1 | RECV);
                // SAFETY (in `push`): `inbuf` (and the boxed header `msg`, whose box is
                // neither moved out of nor dropped while busy: a slot is replaced only when
                // idle) is neither read, resized nor freed until this receive's completion
                // clears `recv_busy`.
                push(&mut self.ring, &sqe)?;
                s.recv_busy = true;
            }
        }
        Ok(())
    }

    /// Takes every completion: data or an end for the worker to read, sends carried on.
    fn reap(&mut self, events: &mut Vec<Event>) {
        let shared = Rc::clone(&self.shared);
        let mut slots = shared.slots.borrow_mut();
        for cqe in self.ring.completion() {
            let (data, res, flags) = (cqe.user_data(), cqe.result(), cqe.flags());
            if data == WAKE {
                if let Some(dials) = self.dials.as_mut() {
                    dials.armed = false;
                    if dials.poll.poll(&mut dials.events, Some(Duration::ZERO)).is_ok() {
                        events.extend(dials.events.iter().map(Event::from));
                    }
                }
                continue;
            }
            let index = (data >> 1) as u32;
            let s = &mut slots[index as usize];
            let retry = res == -libc::EAGAIN || res == -libc::EINTR || res == -libc::ENOBUFS;
            if data & 1 == RECV && s.multi {
                let mut pool = shared.pool.borrow_mut();
                let pool = pool.as_mut().expect("a multishot receive has its pool");
                multishot(s, (res, flags), pool, events);
                if !s.recv_busy {
                    shared.mark(s, index);
                }
            } else if data & 1 == RECV {
                s.recv_busy = false;
                if std::mem::take(&mut s.linked) && res != -libc::ECANCELED {
                    // The linked send is done, all of it (a failure would have cancelled this).
                    s.send_busy = false;
                    s.out_pos = s.out.len();
                    if !s.queued.is_empty() {
                        shared.mark(s, index);
                    }
                }
                if s.closed || retry || res == -libc::ECANCELED {
                    shared.mark(s, index);
                    continue;
                }
                match res {
                    1.. => {
                        // SAFETY: the kernel wrote `res` bytes (at most the capacity it was
                        // given) at the start of the buffer.
                        unsafe { s.inbuf.set_len(res as usize) };
                        s.in_pos = 0;
                        s.stamp = s.msg.as_ref().and_then(|m| m.stamp());
                    }
                    0 => s.eof = true,
                    _ => s.err = Some(-res),
                }
                events.push(Event { token: s.token, read_closed: false });
            } else {
                s.send_busy = false;
                s.linked = false;
                if s.closed || retry {
                    shared.mark(s, index);
                    continue;
                }
                if res < 0 {
                    s.err = Some(-res);
                    events.push(Event { token: s.token, read_closed: false });
                    continue;
                }
                s.out_pos += res as usize;
                if s.out_pos < s.out.len() || !s.queued.is_empty() {
                    shared.mark(s, index);
                }
            }
        }
    }
}

impl Drop for Uring {
    /// Ends what is in flight before the slots' buffers may go: every socket with an operation
    /// in flight is shut down (its receive completes, its send fails), then completions are
    /// waited for, a bounded time. What has not completed by then keeps its buffers for the
    /// life of the process.
    fn drop(&mut self) {
        let busy = |shared: &Shared| shared.slots.borrow().iter().filter(|s| !s.idle()).count();
        if busy(&self.shared) == 0 {
            return;
        }
        for s in self.shared.slots.borrow().iter().filter(|s| !s.idle() && !s.closed) {
            shut_down(s.raw_fd());
        }
        let until = Instant::now() + DRAIN_AT_DROP;
        let mut ignored = Vec::new();
        while busy(&self.shared) > 0 && Instant::now() < until {
            let ts = types::Timespec::from(Duration::from_millis(50));
            let args = types::SubmitArgs::new().timespec(&ts);
            let _ = self.ring.submitter().submit_with_args(1, &args);
            self.reap(&mut ignored);
            ignored.clear();
        }
        if busy(&self.shared) > 0 {
            std::mem::forget(Rc::clone(&self.shared));
        }
    }
}

/// Shuts a connection down both ways (a receive in flight completes with its end).
fn shut_down(fd: RawFd) {
    // SAFETY: shutdown(2) on a descriptor a slot owns; a failure (not a socket any more, not
    // connected) leaves nothing to do.
    unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
}
