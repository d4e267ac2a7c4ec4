//! What a driver reports to the worker: readiness or completions, and io_uring's sends.

use std::time::Instant;

/// A readiness or completion on a registered socket: the worker reads it until `WouldBlock`.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub token: usize,
    /// The peer closed its side (the last bytes may have come with it).
    pub read_closed: bool,
}

impl From<&mio::event::Event> for Event {
    fn from(e: &mio::event::Event) -> Event {
        Event { token: e.token().0, read_closed: e.is_read_closed() }
    }
}

/// A send io_uring handed to the kernel: what socket `token`'s writes queued after `since` (the
/// previous such send's submit; `None`: its first) went in the `io_uring_enter` of `at` (the
/// clock read just before it). A send takes everything queued, so these are all of it.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    pub token: usize,
    pub since: Option<Instant>,
    pub at: Instant,
}
