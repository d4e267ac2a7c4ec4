//! Socket options std has no setter for (`SO_TIMESTAMPNS`, `SO_RCVLOWAT`), set in one place.

use std::io;
use std::os::fd::RawFd;

/// Sets a socket-level integer option (`SOL_SOCKET`); the error is the kernel's refusal.
pub fn set(fd: RawFd, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: setsockopt(2) reads `size_of::<c_int>()` bytes from a live local; a bad
    // descriptor is an error return, not undefined behaviour.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            (&raw const value).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}
