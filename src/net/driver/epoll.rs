//! The epoll path (through mio): sockets registered once, edge-triggered, for reading and
//! writing; the worker reads and writes them itself. The wait is `epoll_pwait2`, whose timeout
//! is in nanoseconds, so a paced worker wakes to the microsecond in the one system call; where
//! the kernel lacks it (before 5.11), `epoll_wait` (whole milliseconds) and, for a paced
//! worker, a timerfd (`timer.rs`) that costs a second system call per wake-up.

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use super::event::Event;
use super::stamp::Stamps;
use super::timer::{Timer, exact_timeouts, pwait2};
use crate::net::Transport;

/// The token of the pacing timer (sockets use theirs).
const TIMER: Token = Token(usize::MAX);

pub struct Epoll {
    poll: Poll,
    wait: Wait,
    pub(super) stamps: Stamps,
}

/// How this kernel lets the worker wait.
enum Wait {
    /// `epoll_pwait2` (5.11 and later), on the descriptor mio registered the sockets with.
    Pwait2 {
        /// The events it fills.
        ready: Vec<libc::epoll_event>,
        /// A paced worker's thread has yet to take its timer slack to 1 ns, which it does at
        /// its first wait (the driver is made on another thread).
        slack_due: bool,
    },
    /// mio's `epoll_wait`, and for a paced worker a timerfd.
    Mio { events: Events, timer: Option<Timer> },
}

/// As many events as one wait takes.
const EVENTS: usize = 1024;

/// Set (to anything): wait as kernels before 5.11 must, `epoll_wait` and a timerfd, so that
/// tests and measurements can take that path here too.
const TIMERFD_ENV: &str = "RESPBENCH_EPOLL_TIMERFD";

impl Epoll {
    pub fn new(precise: bool, stamps: bool) -> io::Result<Epoll> {
        let poll = Poll::new()?;
        let stamps = Stamps { on: stamps, refused: None };
        let mut ready = Vec::with_capacity(EVENTS);
        // A first wait that returns at once says whether the kernel has `epoll_pwait2`.
        let wait = if std::env::var_os(TIMERFD_ENV).is_none()
            && pwait2(poll.as_raw_fd(), &mut ready, Duration::ZERO).is_ok()
        {
            Wait::Pwait2 { ready, slack_due: precise }
        } else {
            let timer = if precise {
                let timer = Timer::new()?;
                timer.register(poll.registry(), TIMER)?;
                Some(timer)
            } else {
                None
            };
            Wait::Mio { events: Events::with_capacity(EVENTS), timer }
        };
        Ok(Epoll { poll, wait, stamps })
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
        let poll = &mut self.poll;
        match &mut self.wait {
            Wait::Pwait2 { ready, slack_due } => {
                if std::mem::take(slack_due) {
                    exact_timeouts();
                }
                let fd = poll.as_raw_fd();
                through_stop(|at_once| {
                    let timeout = if at_once { Duration::ZERO } else { wake.saturating_duration_since(Instant::now()) };
                    pwait2(fd, ready, timeout)
                })?;
                events.extend(ready.iter().map(|e| {
                    let flags = e.events as libc::c_int;
                    // As mio reads it: both halves closed, or the peer's FIN with the last bytes.
                    let read_closed =
                        flags & libc::EPOLLHUP != 0 || (flags & libc::EPOLLIN != 0 && flags & libc::EPOLLRDHUP != 0);
                    Event { token: e.u64 as usize, read_closed }
                }));
            }
            Wait::Mio { events: polled, timer } => {
                through_stop(|at_once| {
                    let now = Instant::now();
                    let timeout = if at_once { Duration::ZERO } else { wake.saturating_duration_since(now) };
                    match timer.as_mut() {
                        // The timerfd wakes us to the microsecond.
                        Some(timer) if !timeout.is_zero() => {
                            timer.arm(wake, now).and_then(|()| poll.poll(polled, None))
                        }
                        _ => poll.poll(polled, Some(timeout)),
                    }
                })?;
                for event in polled.iter() {
                    if event.token() == TIMER {
                        if let Some(timer) = timer.as_mut() {
                            timer.fired();
                        }
                        continue;
                    }
                    events.push(Event::from(event));
                }
            }
        }
        Ok(())
    }
}

/// Runs a wait (`at_once`: with a zero timeout). A stop and continue (SIGSTOP, SIGCONT)
/// interrupts it: then it takes at once what arrived meanwhile, before the worker sends again,
/// so that replies held in a socket are read (and stamped) apart from the replies to what it
/// sends next. Interrupted again, it returns with nothing.
fn through_stop(mut wait: impl FnMut(bool) -> io::Result<()>) -> io::Result<()> {
    let interrupted = |r: &io::Result<()>| matches!(r, Err(e) if e.kind() == io::ErrorKind::Interrupted);
    let mut polled = wait(false);
    if interrupted(&polled) {
        polled = wait(true);
    }
    if interrupted(&polled) { Ok(()) } else { polled }
}
