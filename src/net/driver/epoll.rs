//! The epoll path (through mio): sockets registered once, edge-triggered, for reading and
//! writing; the worker reads and writes them itself. The wait is `epoll_pwait2`, whose timeout
//! is in nanoseconds, so a paced worker wakes to the microsecond in the one system call; where
//! the kernel lacks it (before 5.11), `epoll_wait` (whole milliseconds) and, for a paced
//! worker, a timerfd (`timer.rs`) that costs a second system call per wake-up.

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use super::timer::{Timer, exact_timeouts, pwait2};
use super::{Event, Stamps, Transport};

/// The token of the pacing timer (sockets use theirs).
const TIMER: Token = Token(usize::MAX);

pub struct Epoll {
    poll: Poll,
    /// The events `epoll_pwait2` fills; empty (and `events` used) where the kernel lacks it.
    ready: Vec<libc::epoll_event>,
    events: Events,
    /// Paced workers without `epoll_pwait2` only.
    timer: Option<Timer>,
    /// A paced worker's thread has yet to take its timer slack to 1 ns (`epoll_pwait2`), which
    /// it does at its first wait (the driver is made on another thread).
    slack_due: bool,
    pub(super) stamps: Stamps,
}

/// As many events as one wait takes.
const EVENTS: usize = 1024;

/// Set (to anything): wait as kernels before 5.11 must, `epoll_wait` and a timerfd, so that
/// tests and measurements can take that path here too.
const TIMERFD_ENV: &str = "RESPBENCH_EPOLL_TIMERFD";

impl Epoll {
    pub fn new(precise: bool, stamps: bool) -> io::Result<Epoll> {
        let poll = Poll::new()?;
        let mut ready = Vec::with_capacity(EVENTS);
        // A first wait that returns at once says whether the kernel has `epoll_pwait2`.
        if std::env::var_os(TIMERFD_ENV).is_none() && pwait2(poll.as_raw_fd(), &mut ready, Duration::ZERO).is_ok() {
            let stamps = Stamps { on: stamps, refused: None };
            return Ok(Epoll {
                poll,
                ready,
                events: Events::with_capacity(0),
                timer: None,
                slack_due: precise,
                stamps,
            });
        }
        let timer = if precise {
            let timer = Timer::new()?;
            timer.register(poll.registry(), TIMER)?;
            Some(timer)
        } else {
            None
        };
        let events = Events::with_capacity(EVENTS);
        let stamps = Stamps { on: stamps, refused: None };
        Ok(Epoll { poll, ready: Vec::new(), events, timer, slack_due: false, stamps })
    }

    pub fn register(&mut self, mut io: Transport, token: usize) -> io::Result<Transport> {
        self.stamps.enable_on(&mut io);
        self.register_dial(&mut io, token)?;
        Ok(io)
    }

    pub fn register_dial(&mut self, io: &mut Transport, token: usize) -> io::Result<()> {
        // Edge-triggered: registered once, never re-armed per request.
        self.poll.registry().register(io, Token(token), Interest::READABLE | Interest::WRITABLE)
    }

    pub fn deregister(&mut self, io: &mut Transport) {
        let _ = self.poll.registry().deregister(io);
    }

    pub fn wait(&mut self, wake: Instant, events: &mut Vec<Event>) -> io::Result<()> {
        if self.ready.capacity() > 0 {
            return self.wait_pwait2(wake, events);
        }
        let now = Instant::now();
        let timeout = wake.saturating_duration_since(now);
        let mut polled = match self.timer.as_mut() {
            // The timerfd wakes us to the microsecond.
            Some(timer) if !timeout.is_zero() => {
                timer.arm(wake, now).and_then(|()| self.poll.poll(&mut self.events, None))
            }
            _ => self.poll.poll(&mut self.events, Some(timeout)),
        };
        // A stop and continue (SIGSTOP, SIGCONT) interrupts the wait: take what arrived meanwhile
        // before the worker sends again, so that replies held in a socket are read (and stamped)
        // apart from the replies to what it sends next.
        if matches!(&polled, Err(e) if e.kind() == io::ErrorKind::Interrupted) {
            polled = self.poll.poll(&mut self.events, Some(Duration::ZERO));
        }
        match polled {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            other => other?,
        }
        for event in self.events.iter() {
            if event.token() == TIMER {
                if let Some(timer) = self.timer.as_mut() {
                    timer.fired();
                }
                continue;
            }
            events.push(Event::from(event));
        }
        Ok(())
    }

    /// The wait through `epoll_pwait2`, on the descriptor mio registered the sockets with.
    fn wait_pwait2(&mut self, wake: Instant, events: &mut Vec<Event>) -> io::Result<()> {
        if std::mem::take(&mut self.slack_due) {
            exact_timeouts();
        }
        let fd = self.poll.as_raw_fd();
        let mut polled = pwait2(fd, &mut self.ready, wake.saturating_duration_since(Instant::now()));
        // Interrupted by a stop and continue: as above.
        if matches!(&polled, Err(e) if e.kind() == io::ErrorKind::Interrupted) {
            polled = pwait2(fd, &mut self.ready, Duration::ZERO);
        }
        match polled {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            other => other?,
        }
        events.extend(self.ready.iter().map(|e| {
            let flags = e.events as libc::c_int;
            // As mio reads it: both halves closed, or the peer's FIN with the last bytes.
            let read_closed =
                flags & libc::EPOLLHUP != 0 || (flags & libc::EPOLLIN != 0 && flags & libc::EPOLLRDHUP != 0);
            Event { token: e.u64 as usize, read_closed }
        }));
        Ok(())
    }
}
