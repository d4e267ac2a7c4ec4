//! The epoll path (through mio): sockets registered once, edge-triggered, for reading and
//! writing; the worker reads and writes them itself. A paced worker sleeps on a timerfd
//! (`timer.rs`) since epoll's own timeout is whole milliseconds.

use std::io;
use std::time::Instant;

use mio::{Events, Interest, Poll, Token};

use super::timer::Timer;
use super::{Event, Stamps, Transport};

/// The token of the pacing timer (sockets use theirs).
const TIMER: Token = Token(usize::MAX);

pub struct Epoll {
    poll: Poll,
    events: Events,
    /// Paced workers only.
    timer: Option<Timer>,
    pub(super) stamps: Stamps,
}

impl Epoll {
    pub fn new(precise: bool, stamps: bool) -> io::Result<Epoll> {
        let poll = Poll::new()?;
        let timer = if precise {
            let timer = Timer::new()?;
            timer.register(poll.registry(), TIMER)?;
            Some(timer)
        } else {
            None
        };
        Ok(Epoll { poll, events: Events::with_capacity(1024), timer, stamps: Stamps { on: stamps, refused: None } })
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
            polled = self.poll.poll(&mut self.events, Some(std::time::Duration::ZERO));
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
}
