//! The writing half of a worker: writes what a link has queued, as far as the socket takes
//! it, and lets the written bytes go.

use std::io::{self, Write};
use std::time::Instant;

use super::conn::{self, Conn, Link};
use super::state::Worker;
use super::voice;
use crate::resp::Out;
use crate::stats::ErrorKind;

/// A link's written bytes are dropped from its buffer, moving the requests it holds to the
/// front, once they are this many times the held ones: each held byte is moved a fraction of
/// a time on average, and the buffer stays a few times the held requests' size.
const COMPACT_AFTER: usize = 4;

impl Worker<'_> {
    /// Writes what each of a connection's links has queued. A turn refills one link of a
    /// cluster connection, or a few: the others, with nothing to write, are passed over
    /// without a call; a standalone connection's one link is written without the check.
    #[inline]
    pub(super) fn flush_links(&mut self, conn: &mut Conn, at: Instant) {
        if conn.links.len() == 1 {
            self.flush_link(conn, 0, at);
            return;
        }
        for node in 0..conn.links.len() {
            if conn.links[node].as_ref().is_some_and(Link::has_output) {
                self.flush_link(conn, node, at);
            }
        }
    }

    /// Writes what a link has queued, as far as the socket takes it; its requests no write
    /// carried yet leave at `at`.
    pub(super) fn flush_link(&mut self, conn: &mut Conn, node: usize, at: Instant) {
        let Some(link) = conn.links[node].as_mut().filter(|l| l.io.is_some()) else { return };
        // A request leaves with the write that carries it: timed from a clock read just before
        // it, not the turn's, since a stall meanwhile (a stopped process, a wait for a core,
        // writes to other connections first) is the client's send lag.
        if link.unwritten > 0 && self.driver.sends_at_write() {
            conn::restamp_last(link, link.unwritten, at, &mut self.window.send_lag_ns);
        }
        link.unwritten = 0;
        let end = link.sendable_end();
        let io = link.io.as_mut().expect("a link that is up");
        let mut failed = None;
        while link.wpos < end {
            match io.write_buf(&link.wbuf, link.wpos..end) {
                Ok(n) => link.wpos += n,
                // The rest goes out on the next writable edge.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if failed.is_none() && link.wpos == link.wbuf.len() {
            link.wbuf.clear();
            link.wpos = 0;
        } else if failed.is_none() && link.wpos == end && link.wpos >= COMPACT_AFTER * link.held_len {
            // Held requests stay where they were encoded until their bytes are a small part
            // of the buffer: then what was written goes, and they move to its front.
            link.wbuf.consume_front(link.wpos);
            link.wpos = 0;
        }
        // TLS may hold encrypted bytes the socket did not take yet.
        if failed.is_none()
            && let Err(e) = io.flush()
            && e.kind() != io::ErrorKind::WouldBlock
        {
            failed = Some(e);
        }
        if let Some(e) = failed {
            self.fail_because(conn, node, ErrorKind::Io, voice::Lost::Error(&e), Instant::now());
        }
    }
}
