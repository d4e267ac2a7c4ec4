//! Received bytes dropped without a copy on a TCP socket read by the worker itself (epoll):
//! TCP's `recv` with `MSG_TRUNC` consumes the bytes in the kernel and copies none (tcp(7)),
//! so a large value's body costs the client no copy, as under io_uring's pooled receives.

use std::io;
use std::os::fd::RawFd;

/// Consumes up to `n` bytes of what TCP socket `fd` received, copying none. Returns as `read`
/// does: how many, `Ok(0)` at the end, `WouldBlock` when nothing is there.
pub fn discard(fd: RawFd, n: usize) -> io::Result<usize> {
    // SAFETY: with MSG_TRUNC a TCP socket writes nothing to the buffer: a null one is never
    // touched, whatever its length.
    let got = unsafe { libc::recv(fd, std::ptr::null_mut(), n, libc::MSG_TRUNC | libc::MSG_DONTWAIT) };
    if got < 0 { Err(io::Error::last_os_error()) } else { Ok(got as usize) }
}

/// The most a large body's wait asks to arrive before the worker is woken (`SO_RCVLOWAT`): the
/// kernel raises the socket's receive buffer to twice the mark, so it is kept to a few
/// loopback segments (a 1 MB body wakes the worker 4 times, not 16).
pub const WAKE_AFTER_MAX: usize = 256 * 1024;

/// Wakes the worker for TCP socket `fd` only once `n` bytes (at most [`WAKE_AFTER_MAX`]) are
/// there to read, or at its end (`SO_RCVLOWAT`, which epoll's readiness follows); `n` = 1 is
/// the default again. While a large body is dropped, the worker then takes it in a few reads
/// of many segments instead of one per segment, each racing the server's side of the socket.
pub fn wake_after(fd: RawFd, n: usize) -> io::Result<()> {
    super::sockopt::set(fd, libc::SO_RCVLOWAT, n.clamp(1, WAKE_AFTER_MAX) as libc::c_int)
}
