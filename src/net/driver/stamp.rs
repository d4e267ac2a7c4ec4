//! Kernel receive timestamps: `SO_TIMESTAMPNS` on a data connection makes every
//! `recvmsg` carry, as a control message, the time the kernel received the last bytes it
//! returns (`CLOCK_REALTIME`, software, taken as the packet entered the stack). This module
//! turns it on, reads it (a `recvmsg` for epoll; for io_uring, the control bytes a multishot
//! `RECVMSG` puts in each pool buffer, or a `msghdr` a one-shot `RECVMSG` fills) and maps it
//! onto the run's monotonic clock ([`Clock`]).

use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::RawFd;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::net::Transport;

/// Whether a driver turns kernel receive timestamps on, and whether the kernel refused.
#[derive(Debug, Default)]
pub(super) struct Stamps {
    pub(super) on: bool,
    pub(super) refused: Option<io::Error>,
}

impl Stamps {
    /// Turns timestamps on for a TCP socket (TLS's socket included); a unix socket has none
    /// worth the name (the engine says so before the run). Returns whether they are on.
    pub(super) fn enable(&mut self, fd: std::os::fd::RawFd) -> bool {
        if !self.on || self.refused.is_some() {
            return false;
        }
        match enable(fd) {
            Ok(()) => true,
            Err(e) => {
                self.refused = Some(e);
                false
            }
        }
    }
}

impl Stamps {
    /// Turns timestamps on for a socket under epoll, TCP or TLS's: the worker reads it with
    /// `stamp::recv` from now on (`Transport::read_stamped`, `TlsStream::stamp_reads`).
    pub(super) fn enable_on(&mut self, io: &mut Transport) {
        match io {
            Transport::Tcp(s) => drop(self.enable(std::os::fd::AsRawFd::as_raw_fd(s))),
            Transport::Tls(t) if t.mio_socket().is_some_and(|s| self.enable(std::os::fd::AsRawFd::as_raw_fd(s))) => {
                t.stamp_reads();
            }
            _ => {}
        }
    }
}

/// Room for one `SCM_TIMESTAMPNS` control message (a header and a timespec), and then some,
/// 8-aligned as the kernel writes it.
const CONTROL_WORDS: usize = 8;

/// Turns receive timestamps on for a socket; the error is the kernel's refusal.
pub fn enable(fd: RawFd) -> io::Result<()> {
    super::sockopt::set(fd, libc::SO_TIMESTAMPNS, 1)
}

/// What a multishot `RECVMSG` leaves at the head of each pool buffer: the kernel's
/// `io_uring_recvmsg_out` (name, control and payload lengths, flags), then the control bytes
/// (room for [`MULTI_CONTROL`]), then the payload.
const MULTI_OUT: usize = 16;

/// The control bytes a multishot `RECVMSG` keeps room for in each buffer.
const MULTI_CONTROL: usize = CONTROL_WORDS * 8;

/// Where a multishot `RECVMSG`'s payload starts in its buffer.
pub const MULTI_PAYLOAD: usize = MULTI_OUT + MULTI_CONTROL;

/// The header a multishot `RECVMSG` is armed with: the kernel reads only its name and control
/// lengths (no name, [`MULTI_CONTROL`] bytes of control), which say how it lays out each buffer.
pub fn multi_header() -> Box<libc::msghdr> {
    // SAFETY: msghdr is plain integers and pointers, for which all zeroes is a valid value.
    let mut msg: Box<libc::msghdr> = Box::new(unsafe { zeroed() });
    msg.msg_controllen = MULTI_CONTROL as _;
    msg
}

/// A multishot `RECVMSG`'s buffer of `res` bytes (its completion's result, `buf` the buffer
/// from its start): the payload's length and the kernel's receive time its control carries.
/// `None` when the buffer is shorter than the layout the header asked for.
pub fn multi_out(buf: &[u8]) -> Option<(usize, Option<u64>)> {
    let word = |at: usize| buf.get(at..at + 4).map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let (control, payload) = (word(4)?, word(8)?);
    if buf.len() < MULTI_PAYLOAD + payload {
        return None;
    }
    let control = &buf[MULTI_OUT..MULTI_OUT + control.min(MULTI_CONTROL)];
    // SAFETY: msghdr is plain integers and pointers, for which all zeroes is a valid value.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_control = control.as_ptr() as *mut libc::c_void;
    msg.msg_controllen = control.len() as _;
    // The walk only reads through the header (`stamp_of`), within `control`.
    let stamp = if control.is_empty() { None } else { stamp_of(&msg) };
    Some((payload, stamp))
}

/// The kernel's receive time a `msghdr`'s control messages carry, in nanoseconds since the
/// epoch (`CLOCK_REALTIME`).
fn stamp_of(msg: &libc::msghdr) -> Option<u64> {
    if msg.msg_controllen == 0 || msg.msg_control.is_null() {
        return None;
    }
    // SAFETY: the header's control buffer and length are the ones the kernel just filled
    // (`msg_controllen` is what it wrote); the CMSG_* walk stays inside them.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !cmsg.is_null() {
        // SAFETY: `cmsg` is non-null and inside the control buffer (CMSG_FIRSTHDR/NXTHDR).
        let header = unsafe { &*cmsg };
        if header.cmsg_level == libc::SOL_SOCKET && header.cmsg_type == libc::SCM_TIMESTAMPNS {
            // SAFETY: an SCM_TIMESTAMPNS message carries one timespec; its data may be
            // unaligned for it, hence the unaligned read.
            let ts: libc::timespec = unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast()) };
            return u64::try_from(ts.tv_sec).ok().map(|s| s * 1_000_000_000 + ts.tv_nsec as u64);
        }
        // SAFETY: as above; NXTHDR returns null past the buffer's end.
        cmsg = unsafe { libc::CMSG_NXTHDR(msg, cmsg) };
    }
    None
}

/// Reads from a socket as `read` does, with the kernel's receive time of the last bytes read
/// (`None` when the socket carries none: timestamps off, or nothing read).
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
    let mut control = [0u64; CONTROL_WORDS];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: msghdr is plain integers and pointers, for which all zeroes is a valid value.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of::<[u64; CONTROL_WORDS]>() as _;
    // SAFETY: every pointer in `msg` points at a live local (or `buf`) of the length given,
    // for the length of the call.
    let n = unsafe { libc::recvmsg(fd, &raw mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, if n > 0 { stamp_of(&msg) } else { None }))
}

/// Holds the kernel's receive timestamping on for a run. The kernel stamps incoming packets
/// only while some socket asks for stamps, and turns that on a while after the first one asks
/// (a static key switched by a work queue: milliseconds, seconds on a loaded machine), so a
/// run's first sockets would find their packets unstamped. The keeper is a loopback UDP pair
/// with timestamps on: made before the run connects, it sends itself datagrams until one comes
/// back stamped (or `wait` passes), and keeps timestamping on until it is dropped.
#[derive(Debug)]
pub struct Keeper {
    _rx: std::net::UdpSocket,
}

impl Keeper {
    /// The keeper, and whether the kernel stamped a packet within `wait`.
    pub fn start(wait: std::time::Duration) -> io::Result<(Keeper, bool)> {
        use std::os::fd::AsRawFd;
        let rx = std::net::UdpSocket::bind("127.0.0.1:0")?;
        let tx = std::net::UdpSocket::bind("127.0.0.1:0")?;
        enable(rx.as_raw_fd())?;
        let to = rx.local_addr()?;
        let until = Instant::now() + wait;
        let mut buf = [0u8; 8];
        loop {
            tx.send_to(b"stamp?", to)?;
            // The datagram is on loopback: it is there, or a moment away.
            let mut got = None;
            for _ in 0..100 {
                match recv(rx.as_raw_fd(), &mut buf) {
                    Ok((_, stamp)) => {
                        got = Some(stamp.is_some());
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                    Err(e) => return Err(e),
                }
            }
            if got == Some(true) {
                return Ok((Keeper { _rx: rx }, true));
            }
            if Instant::now() >= until {
                return Ok((Keeper { _rx: rx }, false));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// A receive's `msghdr` for io_uring's `RECVMSG`, with its iovec and control buffer: boxed, so
/// that what the kernel writes through stays in place while the receive is in flight.
pub struct RingMsg {
    msg: libc::msghdr,
    iov: libc::iovec,
    control: [u64; CONTROL_WORDS],
}

impl std::fmt::Debug for RingMsg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RingMsg")
    }
}

impl RingMsg {
    pub fn new() -> Box<RingMsg> {
        // SAFETY: msghdr and iovec are plain integers and pointers: all zeroes is valid.
        Box::new(RingMsg { msg: unsafe { zeroed() }, iov: unsafe { zeroed() }, control: [0; CONTROL_WORDS] })
    }

    /// Points the header at `len` bytes from `buf` and at its own control buffer; the pointer
    /// to hand the ring. The box must not move or drop until the receive completes.
    pub fn prepare(&mut self, buf: *mut u8, len: usize) -> *mut libc::msghdr {
        self.iov = libc::iovec { iov_base: buf.cast(), iov_len: len };
        self.msg.msg_iov = &raw mut self.iov;
        self.msg.msg_iovlen = 1;
        self.msg.msg_control = self.control.as_mut_ptr().cast();
        self.msg.msg_controllen = size_of::<[u64; CONTROL_WORDS]>() as _;
        self.msg.msg_flags = 0;
        &raw mut self.msg
    }

    /// The receive time the completed receive carried.
    pub fn stamp(&self) -> Option<u64> {
        stamp_of(&self.msg)
    }
}

/// The kernel's `CLOCK_REALTIME` mapped onto the run's monotonic clock (`Instant`,
/// `CLOCK_MONOTONIC`). Both advance at the same rate (NTP slews them alike); they part only
/// when the wall clock is stepped, so the offset is measured once and again at every interval.
/// Measured as a monotonic reading between two wall-clock readings, the tightest of a few
/// tries: the offset is then known to within half the gap between the two wall readings.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    base: Instant,
    base_wall_ns: u64,
    /// How far the mapping may be off, at most, in nanoseconds.
    pub bound_ns: u64,
}

impl Clock {
    pub fn measure() -> Clock {
        let wall = || SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let mut best: Option<Clock> = None;
        for _ in 0..5 {
            let before = wall();
            let base = Instant::now();
            let after = wall();
            let gap = after.saturating_sub(before);
            if best.is_none_or(|b| gap / 2 < b.bound_ns) {
                best = Some(Clock { base, base_wall_ns: before + gap / 2, bound_ns: gap.div_ceil(2) });
            }
        }
        best.expect("measured five times")
    }

    /// Nanoseconds from `t` to the kernel's stamp `wall_ns`, 0 if the stamp is earlier.
    #[inline]
    pub fn after(&self, t: Instant, wall_ns: u64) -> u64 {
        let stamp = wall_ns as i128 - self.base_wall_ns as i128;
        let t = match t.checked_duration_since(self.base) {
            Some(d) => d.as_nanos() as i128,
            None => -(self.base.duration_since(t).as_nanos() as i128),
        };
        (stamp - t).max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_maps_the_wall_clock_onto_instants_within_its_bound() {
        let clock = Clock::measure();
        assert!(clock.bound_ns < 1_000_000, "{clock:?}");
        let t = Instant::now();
        let wall = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
        // The wall clock was read after `t`: a little later, never much.
        assert!(clock.after(t, wall) < 10_000_000 + clock.bound_ns);
        assert_eq!(clock.after(t, wall - 1_000_000_000), 0);
    }

    #[test]
    fn a_multishot_buffer_gives_its_payload_and_stamp() {
        // The kernel's layout: io_uring_recvmsg_out, the control bytes (room for
        // MULTI_CONTROL), the payload. One SCM_TIMESTAMPNS message of 5 s and 7 ns.
        let mut words = [0u64; 64]; // 8-aligned, as the kernel's buffers are
        // SAFETY: CMSG_LEN is arithmetic on its argument.
        let cmsg_len = unsafe { libc::CMSG_LEN(size_of::<libc::timespec>() as u32) } as u64;
        words[0] = cmsg_len << 32; // name length 0, control length written
        words[1] = 5; // payload length 5, flags 0
        words[2] = cmsg_len; // the control message: its length (a size_t) ...
        words[3] = (libc::SCM_TIMESTAMPNS as u64) << 32 | libc::SOL_SOCKET as u64; // ... level, type
        (words[4], words[5]) = (5, 7); // ... and its timespec
        words[MULTI_PAYLOAD / 8] = u64::from_ne_bytes(*b"+OK\r\n\0\0\0");
        // SAFETY: the bytes of a live local array, as long as it.
        let bytes: &[u8] = unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), size_of_val(&words)) };
        assert_eq!(multi_out(&bytes[..MULTI_PAYLOAD + 5]), Some((5, Some(5_000_000_007))));
        assert_eq!(&bytes[MULTI_PAYLOAD..MULTI_PAYLOAD + 5], b"+OK\r\n");
        // Cut short of its payload: not a buffer the kernel wrote.
        assert_eq!(multi_out(&bytes[..MULTI_PAYLOAD + 2]), None);
        assert_eq!(multi_out(&bytes[..6]), None);
        // No control message (timestamping not on yet): the payload, no stamp.
        words[0] = 0;
        // SAFETY: as above.
        let bytes: &[u8] = unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), size_of_val(&words)) };
        assert_eq!(multi_out(&bytes[..MULTI_PAYLOAD + 5]), Some((5, None)));
    }

    #[test]
    fn a_tcp_read_carries_the_kernels_receive_time() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        enable(client.as_raw_fd()).unwrap();
        // The kernel turns its timestamping of incoming packets on a little after the first
        // socket asks (a deferred static key): replies until one carries a stamp.
        for _ in 0..1000 {
            let before = Instant::now();
            let clock = Clock::measure();
            server.write_all(b"+OK\r\n").unwrap();
            let mut buf = [0u8; 16];
            let (n, stamp) = loop {
                match recv(client.as_raw_fd(), &mut buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                    other => break other.unwrap(),
                }
            };
            assert_eq!(&buf[..n], b"+OK\r\n");
            if let Some(stamp) = stamp {
                let elapsed = Instant::now().duration_since(before).as_nanos() as u64;
                assert!(clock.after(before, stamp) <= elapsed + clock.bound_ns);
                return;
            }
        }
        panic!("no receive time on 1000 replies");
    }
}
