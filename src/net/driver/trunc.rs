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
