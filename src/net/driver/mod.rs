//! The I/O driver seam: how a worker's sockets are waited on, read and written. The worker
//! calls one [`Driver`] and never a poller directly, so the event loop is the same for both
//! paths: epoll through mio (`epoll.rs`, readiness, the worker's reads and writes are system
//! calls) and io_uring (`uring.rs`, completions: every send and receive of a loop turn goes to
//! the kernel in one `io_uring_enter`, the worker's reads and writes copy to and from buffers
//! the ring owns). `--io auto`, the default, takes io_uring when this kernel allows it:
//! measured, it costs less than epoll at pipeline 1 and 10,000 connections and as much at
//! pipeline 16 (BENCHMARKS.md).

mod error;
pub use error::IoUnavailable;
mod epoll;
mod event;
pub use event::{Event, Sent};
// unsafe: setsockopt(2) for the options std has no setter for; its block says why it is sound.
#[allow(unsafe_code)]
mod sockopt;
// unsafe: recvmsg(2)'s control messages (kernel receive timestamps) have no safe wrapper in
// std; each block says why it is sound.
#[allow(unsafe_code)]
pub mod stamp;
// unsafe: timerfd(2) and epoll_pwait2(2) have no safe wrapper in std; each block says why it
// is sound.
#[allow(unsafe_code)]
mod timer;
// unsafe: recv(2) with MSG_TRUNC has no safe wrapper in std; its block says why it is sound.
#[allow(unsafe_code)]
pub mod trunc;
// unsafe: the buffer ring is memory the kernel reads and writes; each block says why it is sound.
#[allow(unsafe_code)]
mod pbuf;
// unsafe: submission entries point at buffers the kernel fills; each block says why it is sound.
#[allow(unsafe_code)]
mod uring;

use std::io;
use std::sync::OnceLock;
use std::time::Instant;

pub use uring::RingSocket;

use super::Transport;

pub use crate::config::IoChoice;

/// The path a run takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    Epoll,
    Uring,
}

impl IoKind {
    /// As reports name it.
    pub fn name(self) -> &'static str {
        match self {
            IoKind::Epoll => "epoll",
            IoKind::Uring => "io_uring",
        }
    }
}

/// The smallest value from which `--io auto` takes epoll for a plain-TCP run: there a GET's
/// large body is dropped in the kernel (`recv` with `MSG_TRUNC`, [`trunc`]), where io_uring's
/// receives have copied it into their pool first. Measured (BENCHMARKS.md, large values): GETs of
/// 100 KB cost 1.5x on io_uring what they cost on epoll, 1 MB 2.6x; SETs of either cost the same.
/// Bodies of 64 KB and more take more than one of the pool's largest buffers.
pub const EPOLL_FROM_VALUE: usize = 64 * 1024;

/// The path a run of `config` takes: `--io`, where `auto` takes io_uring where the kernel allows
/// it, and epoll for plain-TCP runs whose every value is [`EPOLL_FROM_VALUE`] or more.
pub fn path_for(config: &crate::config::Config) -> IoKind {
    let large = config.server.tls.is_none() && config.values.min() >= EPOLL_FROM_VALUE;
    match config.extras.io {
        IoChoice::Auto if large => IoKind::Epoll,
        choice => choice.resolve().unwrap_or(IoKind::Epoll),
    }
}

impl IoChoice {
    /// The path to take: `--io uring` where io_uring is unavailable is an error naming why.
    pub fn resolve(self) -> Result<IoKind, IoUnavailable> {
        match (self, uring_support()) {
            (IoChoice::Epoll, _) | (IoChoice::Auto, Err(_)) => Ok(IoKind::Epoll),
            (IoChoice::Uring | IoChoice::Auto, Ok(())) => Ok(IoKind::Uring),
            (IoChoice::Uring, Err(why)) => {
                Err(format!("--io uring: io_uring is not available here ({why}); use --io epoll").into())
            }
        }
    }
}

/// Whether this process may use io_uring with what the driver needs (checked once).
fn uring_support() -> Result<(), IoUnavailable> {
    // A pure memo: what the kernel allows does not change while the process lives.
    static SUPPORT: OnceLock<Result<(), IoUnavailable>> = OnceLock::new();
    // On a thread of its own: closing a ring leaves the kernel work to do on the thread that
    // used it, which would interrupt that thread's next blocking read (EINTR) with a timeout.
    let probe = || std::thread::spawn(uring::probe).join().unwrap_or_else(|_| Err("the probe failed".into()));
    SUPPORT.get_or_init(probe).clone()
}

/// One worker's poller.
pub enum Driver {
    Epoll(epoll::Epoll),
    Uring(Box<uring::Uring>),
}

impl Driver {
    /// `precise`: the worker paces sends and must wake to the microsecond. `stamps`: every TCP
    /// socket registered gets kernel receive timestamps (`stamp.rs`). Either way send times
    /// are measured, so io_uring reports its sends' submits ([`sent`](Self::sent)).
    pub fn new(kind: IoKind, precise: bool, sockets: usize, stamps: bool) -> io::Result<Driver> {
        Ok(match kind {
            IoKind::Epoll => Driver::Epoll(epoll::Epoll::new(precise, stamps)?),
            IoKind::Uring => Driver::Uring(Box::new(uring::Uring::new(sockets, stamps, precise || stamps)?)),
        })
    }

    /// Takes a logged-in socket under the driver, as `token`; returns the socket to read and
    /// write (under io_uring, one whose reads and writes go through the ring).
    pub fn register(&mut self, io: Transport, token: usize) -> io::Result<Transport> {
        match self {
            Driver::Epoll(d) => d.register(io, token),
            Driver::Uring(d) => d.register(io, token),
        }
    }

    /// Why the kernel refused receive timestamps on a socket (the first refusal), if it did.
    pub fn stamps_refused(&self) -> Option<&io::Error> {
        match self {
            Driver::Epoll(d) => d.stamps.refused.as_ref(),
            Driver::Uring(d) => d.stamps.refused.as_ref(),
        }
    }

    /// Lets a socket go (it is closed when dropped).
    pub fn deregister(&mut self, io: &mut Transport) {
        if let Driver::Epoll(d) = self {
            d.deregister(io);
        }
    }

    /// Watches a connection attempt's socket for readiness (`net::Dial` reads and writes it
    /// itself, until it is logged in).
    pub fn register_dial(&mut self, io: &mut Transport, token: usize) -> io::Result<()> {
        match self {
            Driver::Epoll(d) => d.register_dial(io, token),
            Driver::Uring(d) => d.register_dial(io, token),
        }
    }

    /// Stops watching a connection attempt that failed.
    pub fn deregister_dial(&mut self, io: &mut Transport) {
        match self {
            Driver::Epoll(d) => d.deregister(io),
            Driver::Uring(d) => d.deregister_dial(io),
        }
    }

    /// A connection attempt logged in: its socket becomes a registered one.
    pub fn dialed(&mut self, mut io: Transport, token: usize) -> io::Result<Transport> {
        match self {
            Driver::Epoll(d) => {
                // Already registered under its token.
                d.stamps.enable_on(&mut io);
                Ok(io)
            }
            Driver::Uring(d) => {
                d.deregister_dial(&mut io);
                d.register(io, token)
            }
        }
    }

    /// Hands the kernel what registering and writing queued, without waiting (io_uring: the
    /// sockets' first receives; epoll has nothing queued).
    pub fn submit(&mut self) -> io::Result<()> {
        match self {
            Driver::Epoll(_) => Ok(()),
            Driver::Uring(d) => d.submit(),
        }
    }

    /// Whether a write is its send (epoll: a system call each), so the writer times it;
    /// io_uring's leave at the submit that carries them (see [`sent`](Self::sent)).
    pub fn sends_at_write(&self) -> bool {
        matches!(self, Driver::Epoll(_))
    }

    /// The sends the last `wait` handed to the kernel, when asked for at `new` (io_uring:
    /// writes leave at the submit that carries them; epoll's leave when written, a system call
    /// each, and it has none to report).
    pub fn sent(&self) -> &[Sent] {
        match self {
            Driver::Epoll(_) => &[],
            Driver::Uring(d) => d.sent(),
        }
    }

    /// Sends what was written since the last call and waits until something happens or
    /// `wake`, whichever is first; `events` gets what happened.
    pub fn wait(&mut self, wake: Instant, events: &mut Vec<Event>) -> io::Result<()> {
        events.clear();
        match self {
            Driver::Epoll(d) => d.wait(wake, events),
            Driver::Uring(d) => d.wait(wake, events),
        }
    }
}
