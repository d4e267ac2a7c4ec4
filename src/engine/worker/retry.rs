//! Requests sent again after an error reply (`--retry-errors`, memtier's `--retry-on-error`):
//! which errors are worth another try, the connection's queue of requests waiting out their
//! backoff, and the requests given up, kept for `--failed-keys`.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::conn::{Conn, InFlight, Retries, Waiting};
use super::faults::count_failed;
use super::journal::Journal;
use super::state::Worker;
use crate::config::MAX_BACKOFF;
use crate::engine::FailedKey;
use crate::resp::Out;
use crate::stats::ErrorKind;

/// Failed keys a worker keeps for `--failed-keys`; beyond, they are counted only.
const FAILED_KEYS_MAX: usize = 100_000;

/// Error replies no retry can fix: the request itself is wrong, or the client may not send it.
const PERMANENT: &[&[u8]] = &[
    b"WRONGTYPE",
    b"NOAUTH",
    b"NOPERM",
    b"WRONGPASS",
    b"NOSCRIPT",
    b"ERR syntax",
    b"ERR wrong number of arguments",
    b"ERR unknown command",
    b"ERR unknown subcommand",
    b"ERR value is not",
];

/// Whether an error reply (`msg`, without the `-`) is worth sending the request again:
/// one that starts with a prefix of `only` if any is given, else any that is not permanent.
pub(super) fn retriable(msg: &[u8], only: &[String]) -> bool {
    if only.is_empty() {
        return !PERMANENT.iter().any(|p| msg.starts_with(p));
    }
    only.iter().any(|p| msg.starts_with(p.as_bytes()))
}

/// The wait before try `tries + 1` of a request: the backoff, times the factor for each try
/// after the first (a factor of 0 keeps it constant), at most [`MAX_BACKOFF`].
pub(super) fn backoff(first: Duration, factor: f64, tries: u16) -> Duration {
    if factor < 1.0 || tries == 0 || first.is_zero() {
        return first.min(MAX_BACKOFF);
    }
    let secs = first.as_secs_f64() * factor.powi(i32::from(tries.min(64)));
    if secs.is_finite() { Duration::from_secs_f64(secs.min(MAX_BACKOFF.as_secs_f64())) } else { MAX_BACKOFF }
}

impl Worker<'_> {
    /// The queue's bound: `--max-retry-queue`, or `max(pipeline * 4, 64)`.
    pub(super) fn retry_cap(&self) -> usize {
        match self.plan.faults.max_retry_queue {
            0 => (self.plan.pipeline * 4).max(64),
            n => n,
        }
    }

    /// An error reply to `req` on `node`, whose bytes are the first `req.len` of `journal`:
    /// queues it to be sent again if the policy allows (true), else leaves it to be counted.
    pub(super) fn retry_reply(
        &mut self,
        retries: &mut Retries,
        node: usize,
        (req, msg): (&InFlight, &[u8]),
        journal: &mut Journal,
        now: Instant,
    ) -> bool {
        let faults = &self.plan.faults;
        let limit = faults.retry.min(u32::from(u16::MAX)) as u16;
        if req.asking || req.len == 0 || req.tries >= limit || !retriable(msg, self.plan.retry_on) {
            return false;
        }
        let due = now + backoff(faults.retry_backoff, faults.retry_backoff_factor, req.tries);
        retries.bytes.extend(journal.take(req.len as usize));
        retries.waiting.push_back(Waiting { due, node, req: InFlight { tries: req.tries + 1, ..*req } });
        self.window.retries += 1;
        self.retrying += 1;
        true
    }

    /// Sends again what is due of each connection's queue.
    pub(super) fn send_retries(&mut self, conns: &mut [Conn], now: Instant) {
        if self.retrying == 0 {
            return;
        }
        for conn in conns.iter_mut().filter(|c| !c.finished) {
            let mut sent = false;
            while conn.retries.waiting.front().is_some_and(|w| w.due <= now) {
                let Waiting { node, req, .. } = conn.retries.waiting.pop_front().expect("checked");
                self.retrying -= 1;
                let len = req.len as usize;
                let Some(link) = conn.links.get_mut(node).and_then(Option::as_mut) else {
                    // Its node left the cluster map meanwhile: it fails.
                    let bytes: Vec<u8> = conn.retries.bytes.drain(..len).collect();
                    self.give_up(conn, &req, &bytes, "node gone");
                    continue;
                };
                if link.held_len == 0 {
                    let start = link.wbuf.len();
                    link.wbuf.extend(conn.retries.bytes.drain(..len));
                    link.wbuf.pieces(start).for_each(|piece| link.journal.extend(piece));
                } else {
                    // Ahead of the requests the link holds.
                    let bytes: Vec<u8> = conn.retries.bytes.drain(..len).collect();
                    link.push_sendable(&bytes);
                    link.journal.extend(&bytes);
                }
                link.units += usize::from(req.ends_unit);
                link.inflight.push_back(InFlight { sent: now, ..req });
                link.unwritten += 1;
                sent = true;
            }
            if sent {
                for node in 0..conn.links.len() {
                    self.flush_link(conn, node, now);
                }
            }
        }
    }

    /// When the next request waiting to be sent again is due.
    pub(super) fn next_retry(&self, conns: &[Conn]) -> Option<Instant> {
        if self.retrying == 0 {
            return None;
        }
        conns.iter().filter(|c| !c.finished).filter_map(|c| c.retries.waiting.front().map(|w| w.due)).min()
    }

    /// The run is ending (or the connection given up) before its waiting requests could go
    /// again: each fails, as the error that held it back said.
    pub(super) fn fail_waiting(&mut self, conn: &mut Conn, why: &str) {
        while let Some(Waiting { req, .. }) = conn.retries.waiting.pop_front() {
            self.retrying -= 1;
            let bytes: Vec<u8> = conn.retries.bytes.drain(..req.len as usize).collect();
            if count_failed(&mut self.window, self.plan, &req) {
                self.window.errors.add(ErrorKind::Timeout, 1);
            }
            if req.ends_unit {
                conn.units_in_flight -= 1;
            }
            self.keep_failed(&req, &bytes, why);
        }
    }

    /// A request from the queue that cannot be sent: counted failed, its unit done.
    fn give_up(&mut self, conn: &mut Conn, req: &InFlight, bytes: &[u8], why: &str) {
        if count_failed(&mut self.window, self.plan, req) {
            self.window.errors.add(ErrorKind::Io, 1);
        }
        if req.ends_unit {
            conn.units_in_flight -= 1;
        }
        self.keep_failed(req, bytes, why);
    }

    /// Keeps a request given up for `--failed-keys` (`bytes`: its encoded command, whose key
    /// the row names); a warmup request is not kept, as it is not counted.
    pub(super) fn keep_failed(&mut self, req: &InFlight, bytes: &[u8], status: &str) {
        if !self.plan.faults.failed_keys || req.asking || req.intended < self.plan.measure_from {
            return;
        }
        if self.failed.len() >= FAILED_KEYS_MAX {
            self.failed_dropped += 1;
            return;
        }
        let key_arg = self.plan.key_args.get(req.command()).copied().flatten();
        let key = key_arg.and_then(|k| crate::resp::nth_arg(bytes, k)).unwrap_or_default().to_vec();
        let unix_us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64);
        self.failed.push(FailedKey {
            unix_us,
            command: req.command(),
            key,
            status: status.to_string(),
            retries: req.tries,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permanent_errors_are_not_retried_and_a_list_narrows_the_rest() {
        assert!(retriable(b"LOADING Redis is loading the dataset in memory", &[]));
        assert!(retriable(b"ERR max number of clients reached", &[]));
        assert!(!retriable(b"WRONGTYPE Operation against a key", &[]));
        assert!(!retriable(b"ERR unknown command 'FOO'", &[]));
        let only = ["LOADING".to_string(), "BUSY".to_string()];
        assert!(retriable(b"BUSY Redis is busy", &only));
        assert!(!retriable(b"TRYAGAIN Multiple keys", &only));
    }

    #[test]
    fn backoff_grows_by_the_factor_and_stops_at_a_minute() {
        let ms = Duration::from_millis;
        assert_eq!(backoff(ms(100), 0.0, 5), ms(100));
        assert_eq!(backoff(ms(100), 2.0, 0), ms(100));
        assert_eq!(backoff(ms(100), 2.0, 3), ms(800));
        assert_eq!(backoff(ms(100), 2.0, 60), MAX_BACKOFF);
        assert_eq!(backoff(Duration::from_secs(600), 0.0, 1), MAX_BACKOFF);
    }
}
