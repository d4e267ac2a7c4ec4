//! Waking an epoll worker to the microsecond (epoll_wait's timeout is whole milliseconds, which
//! would make every paced send up to a millisecond late): `epoll_pwait2`, whose timeout is in
//! nanoseconds, or where the kernel lacks it a timerfd registered with the poller.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

pub struct Timer {
    fd: OwnedFd,
    /// The expiry currently set, so an unchanged one costs no system call.
    armed: Option<Instant>,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain syscall; a non-negative result is a new descriptor we then own.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is valid and owned by no one else.
        Ok(Timer { fd: unsafe { OwnedFd::from_raw_fd(fd) }, armed: None })
    }

    pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut SourceFd(&self.fd.as_raw_fd()), token, Interest::READABLE)
    }

    /// Fires once at `at` (at least a microsecond from `now`: zero would disarm it). Setting a
    /// timerfd also resets its expiry count, so an expiry never needs to be read.
    pub fn arm(&mut self, at: Instant, now: Instant) -> io::Result<()> {
        if self.armed == Some(at) {
            return Ok(());
        }
        self.armed = Some(at);
        let after = at.saturating_duration_since(now).max(Duration::from_micros(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: after.as_secs() as libc::time_t, tv_nsec: after.subsec_nanos() as _ },
        };
        // SAFETY: fd is a timerfd; spec is a valid itimerspec; the old value is not wanted.
        let rc = unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// Notes that the timer fired: the next `arm` must set it again.
    pub fn fired(&mut self) {
        self.armed = None;
    }
}

/// `epoll_pwait2(fd, ready, timeout)`: fills `ready` (up to its capacity) with what is ready.
pub fn pwait2(fd: std::os::fd::RawFd, ready: &mut Vec<libc::epoll_event>, timeout: Duration) -> io::Result<()> {
    ready.clear();
    let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as _ };
    let max = ready.capacity().min(libc::c_int::MAX as usize) as libc::c_int;
    // SAFETY: the kernel writes at most `max` events into `ready`'s spare capacity and returns
    // how many; `ts` outlives the call; no signal mask is passed (its size is then unread).
    let n = unsafe {
        libc::syscall(
            libc::SYS_epoll_pwait2,
            fd,
            ready.as_mut_ptr(),
            max,
            &ts as *const libc::timespec,
            std::ptr::null::<libc::sigset_t>(),
            8usize,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel initialised the first `n` (at most `max`) events.
    unsafe { ready.set_len(n as usize) };
    Ok(())
}

/// Takes the calling thread's timer slack to 1 ns: `epoll_pwait2`'s timeout, like every
/// poll-family timeout, otherwise fires up to 50 µs (the default slack) late, which a paced
/// worker's schedule shows (a timerfd's expiry has no slack).
pub fn exact_timeouts() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}
