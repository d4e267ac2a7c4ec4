//! Opening a worker's connections all at once: non-blocking dials (`net::Dial`) driven by one
//! poll loop, a bounded number in flight, so thousands of connections (and their TLS
//! handshakes and logins) overlap instead of taking turns on a few threads.
//!
//! A dial that fails is tried once more on the blocking path, whose errors say exactly what
//! went wrong (the TLS verdict, the refused login with its fix); one that stays silent past
//! the connect timeout fails as silent without waiting a second time.

use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use crate::config::ServerOptions;
use crate::net::{ConnectError, Dial, Login, Progress, Session, Transport};

/// Dials one worker keeps in flight. More does not connect faster: the server accepts and
/// handshakes one at a time, and redis-server's TLS accepts slowed down with more pending
/// (1,000 TLS connections took 1.5 s with 64 or 512 in flight, 1.0 s with 16).
const IN_FLIGHT: usize = 16;

/// An opened link: the transport, and any bytes read after the login's replies.
pub(super) type Opened = (Transport, Vec<u8>);

/// Opens a link to each of `targets` (one per connection and node), in that order.
pub(super) fn open_all(targets: &[&ServerOptions], timeout: Duration) -> Result<Vec<Opened>, ConnectError> {
    let mut opened: Vec<Option<Opened>> = (0..targets.len()).map(|_| None).collect();
    let mut blocking = Vec::new();
    dial(targets, timeout, &mut opened, &mut blocking)?;
    for j in blocking {
        let target = targets[j];
        let io = Session::open_within(target, timeout)?
            .into_transport()
            .map_err(|source| ConnectError::Io { target: target.target.to_string(), source })?;
        opened[j] = Some((io, Vec::new()));
    }
    Ok(opened.into_iter().map(|o| o.expect("every link opened or failed")).collect())
}

/// The non-blocking pass: fills `opened`, and lists in `blocking` the links left to the
/// blocking path (a dial that failed, or a login only it can do).
fn dial(
    targets: &[&ServerOptions],
    timeout: Duration,
    opened: &mut [Option<Opened>],
    blocking: &mut Vec<usize>,
) -> Result<(), ConnectError> {
    let poll_error = |source| ConnectError::Io { target: targets[0].target.to_string(), source };
    let mut poll = Poll::new().map_err(poll_error)?;
    let mut events = Events::with_capacity(1024);
    let mut dials: Vec<Option<Dial>> = (0..targets.len()).map(|_| None).collect();
    // Started in order with one timeout, so deadlines come in order too.
    let mut started = std::collections::VecDeque::new();
    let (mut next, mut in_flight) = (0, 0);
    // Every connection to a host shares one lookup: thousands of resolver calls (DNS for a
    // managed cache's name) would take longer than the connects.
    let mut addrs: Vec<(String, Option<std::net::SocketAddr>)> = Vec::new();
    loop {
        while in_flight < IN_FLIGHT && next < targets.len() {
            let j = next;
            next += 1;
            let Some(login) = Login::of(targets[j], false) else {
                blocking.push(j);
                continue;
            };
            let key = targets[j].target.to_string();
            let addr = match addrs.iter().find(|(k, _)| *k == key) {
                Some((_, addr)) => *addr,
                None => {
                    let addr = crate::net::resolve(targets[j]).ok();
                    addrs.push((key, addr));
                    addr
                }
            };
            if addr.is_none() && matches!(targets[j].target, crate::config::Target::Tcp { .. }) {
                blocking.push(j); // the blocking path says why the name does not resolve
                continue;
            }
            let dial = Dial::start(targets[j], addr, login, Instant::now() + timeout).and_then(|mut d| {
                let interest = Interest::READABLE | Interest::WRITABLE;
                poll.registry().register(d.source(), Token(j), interest).map_err(poll_error).map(|()| d)
            });
            match dial {
                Ok(d) => {
                    started.push_back((d.deadline, j));
                    dials[j] = Some(d);
                    in_flight += 1;
                }
                Err(_) => blocking.push(j),
            }
        }
        if in_flight == 0 {
            return Ok(());
        }
        let now = Instant::now();
        let wait = started.front().map(|(deadline, _)| deadline.saturating_duration_since(now));
        poll.poll(&mut events, wait)
            .or_else(|e| if e.kind() == std::io::ErrorKind::Interrupted { Ok(()) } else { Err(e) })
            .map_err(poll_error)?;
        for event in events.iter() {
            let j = event.token().0;
            let Some(d) = dials[j].as_mut() else { continue };
            let done = match d.advance() {
                Progress::Pending => continue,
                Progress::Ready => true,
                Progress::Failed(_) => false,
            };
            let mut d = dials[j].take().expect("dialing");
            let _ = poll.registry().deregister(d.source());
            in_flight -= 1;
            if done {
                opened[j] = Some(d.finish());
            } else {
                blocking.push(j);
            }
        }
        let now = Instant::now();
        while let Some(&(deadline, j)) = started.front() {
            if dials[j].is_none() {
                started.pop_front();
                continue;
            }
            if deadline > now {
                break;
            }
            // Silent for the whole timeout: asking again would only wait as long again.
            return Err(ConnectError::Silent {
                target: targets[j].target.to_string(),
                command: "the connection and login".into(),
                waited: timeout,
            });
        }
    }
}
